"""Sequence labelling layers with Fluid 1.x's names and arguments: the linear-chain CRF cost
(linear_chain_crf), its Viterbi decoding (crf_decoding) and the chunk metric (chunk_eval), over the
ops of the same names in the ops_sequence pack.

Sequences are LoDTensors ([N, D] emissions, [N, 1] int64 labels, one LoD level), or padded
tensors ([S, T, D] emissions, [S, T] labels) with an int64 `length` / `seq_length` of [S]."""

from ..layer_helper import LayerHelper
from ..param_attr import ParamAttr
from .checks import check_var

__all__ = ["linear_chain_crf", "crf_decoding", "chunk_eval"]

_SCHEMES = ("IOB", "IOE", "IOBES", "plain")


def _check_var(layer, name, v, optional=False):
    if not (optional and v is None):
        check_var(layer, name, v)


def _tags(layer, input, length):
    """D, the number of tags: input's last dim ([N, D], or [S, T, D] with length)."""
    want = 3 if length is not None else 2
    shape = list(input.shape)
    if len(shape) != want:
        raise ValueError(
            "%s: input must be %s, got shape %s"
            % (
                layer,
                "[batch, max_len, tags] with length" if want == 3 else "[N, tags] (a LoDTensor)",
                shape,
            )
        )
    if shape[-1] is None or int(shape[-1]) <= 0:
        raise ValueError(
            "%s: input's number of tags (last dim) must be known, got %s" % (layer, shape)
        )
    return int(shape[-1])


def linear_chain_crf(input, label, param_attr=None, length=None):
    """The linear-chain CRF cost of each sequence: a [S, 1] tensor of NEGATIVE log-likelihoods of
    `label` given the emission scores `input`, as Fluid's. The transition parameter is
    [D + 2, D] (start weights, end weights, then one row per tag) and named by param_attr, so that
    crf_decoding can share it."""
    _check_var("linear_chain_crf", "input", input)
    _check_var("linear_chain_crf", "label", label)
    _check_var("linear_chain_crf", "length", length, optional=True)
    size = _tags("linear_chain_crf", input, length)
    helper = LayerHelper("linear_chain_crf")
    transition = helper.create_parameter(param_attr, [size + 2, size], input.dtype)
    if transition is None:
        raise ValueError(
            "linear_chain_crf: param_attr=False; the CRF needs its transition parameter"
        )
    outs = {
        p: helper.create_variable_for_type_inference(input.dtype)
        for p in ("Alpha", "EmissionExps", "TransitionExps", "LogLikelihood")
    }
    inputs = {"Emission": input, "Transition": transition, "Label": label}
    if length is not None:
        inputs["Length"] = length
    helper.append_op("linear_chain_crf", inputs=inputs, outputs=outs)
    return outs["LogLikelihood"]


def crf_decoding(input, param_attr, label=None, length=None):
    """The Viterbi tag path of each sequence (int64, [N, 1] with input's LoD, or [S, T] with
    length) under the transition parameter that linear_chain_crf created under param_attr's
    name. With `label`, 1 where the path equals the label and 0 where it does not."""
    _check_var("crf_decoding", "input", input)
    _check_var("crf_decoding", "label", label, optional=True)
    _check_var("crf_decoding", "length", length, optional=True)
    size = _tags("crf_decoding", input, length)
    attr = ParamAttr.to_attr(param_attr)
    if not attr or not attr.name:
        raise ValueError(
            "crf_decoding: param_attr must name the transition parameter that "
            "linear_chain_crf created (e.g. ParamAttr(name='crfw')), got %r" % (param_attr,)
        )
    helper = LayerHelper("crf_decoding")
    transition = helper.main_program.global_block().vars.get(attr.name)
    if transition is None:
        raise ValueError(
            "crf_decoding: no parameter named '%s' in the program; create it with "
            "linear_chain_crf(..., param_attr=ParamAttr(name='%s')) first" % (attr.name, attr.name)
        )
    if list(transition.shape) != [size + 2, size]:
        raise ValueError(
            "crf_decoding: parameter '%s' has shape %s; %d tags need [%d, %d]"
            % (attr.name, list(transition.shape), size, size + 2, size)
        )
    path = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    inputs = {"Emission": input, "Transition": transition}
    if label is not None:
        inputs["Label"] = label
    if length is not None:
        inputs["Length"] = length
    helper.append_op("crf_decoding", inputs=inputs, outputs={"ViterbiPath": path})
    return path


def chunk_eval(
    input, label, chunk_scheme, num_chunk_types, excluded_chunk_types=None, seq_length=None
):
    """Chunk precision, recall and F1 of the tags `input` against `label` (int64 tag values
    type * K + tag, K tags per chunk_scheme: IOB 2, IOE 2, IOBES 4, plain 1; num_chunk_types * K
    is outside). Returns (precision, recall, f1_score, num_infer_chunks, num_label_chunks,
    num_correct_chunks), as Fluid does."""
    _check_var("chunk_eval", "input", input)
    _check_var("chunk_eval", "label", label)
    _check_var("chunk_eval", "seq_length", seq_length, optional=True)
    if chunk_scheme not in _SCHEMES:
        raise ValueError(
            "chunk_eval: chunk_scheme must be one of %s, got %r" % (_SCHEMES, chunk_scheme)
        )
    if (
        isinstance(num_chunk_types, bool)
        or not isinstance(num_chunk_types, int)
        or num_chunk_types <= 0
    ):
        raise TypeError(
            "chunk_eval: num_chunk_types must be a positive int, got %r" % (num_chunk_types,)
        )
    excluded = [int(t) for t in (excluded_chunk_types or [])]
    helper = LayerHelper("chunk_eval")
    names = (
        "Precision",
        "Recall",
        "F1-Score",
        "NumInferChunks",
        "NumLabelChunks",
        "NumCorrectChunks",
    )
    outs = {
        n: helper.create_variable_for_type_inference(
            "float32" if i < 3 else "int64", stop_gradient=True
        )
        for i, n in enumerate(names)
    }
    inputs = {"Inference": input, "Label": label}
    if seq_length is not None:
        inputs["SeqLength"] = seq_length
    helper.append_op(
        "chunk_eval",
        inputs=inputs,
        outputs=outs,
        attrs={
            "num_chunk_types": int(num_chunk_types),
            "chunk_scheme": chunk_scheme,
            "excluded_chunk_types": excluded,
        },
    )
    return tuple(outs[n] for n in names)
