"""Sequence layers over LoDTensors (the ops_sequence pack), with Fluid 1.x's names and
arguments. Where an op changes the LoD level of its output (which compile-time shape inference
cannot say through the SDK), the layer sets the output's lod_level."""

from ..core import convert_dtype, dtype_code
from ..framework import Variable
from ..layer_helper import LayerHelper
from .checks import check_var
from .nn import concat, fc, fill_constant

__all__ = [
    "sequence_pool",
    "sequence_first_step",
    "sequence_last_step",
    "sequence_softmax",
    "sequence_expand",
    "sequence_expand_as",
    "sequence_concat",
    "sequence_reshape",
    "sequence_slice",
    "sequence_pad",
    "sequence_unpad",
    "sequence_mask",
    "sequence_reverse",
    "sequence_enumerate",
    "lod_reset",
    "edit_distance",
]

_POOL_TYPES = ("SUM", "AVERAGE", "SQRT", "MAX", "LAST", "FIRST")


def _out(helper, dtype, stop_gradient=False):
    return helper.create_variable_for_type_inference(dtype, stop_gradient=stop_gradient)


def _set_lod_level(var, level):
    var.desc.lod_level = max(0, int(level))


def sequence_pool(input, pool_type, is_test=False, pad_value=0.0):
    """One row per sequence of input's last LoD level: SUM, AVERAGE, SQRT (sum / sqrt(len)),
    MAX, LAST or FIRST (case-insensitive); empty sequences give pad_value."""
    check_var("sequence_pool", "input", input)
    pool_type = str(pool_type).upper()
    if pool_type not in _POOL_TYPES:
        raise ValueError(
            "sequence_pool: pool_type must be one of %s, got %r" % (_POOL_TYPES, pool_type)
        )
    helper = LayerHelper("sequence_pool")
    out = _out(helper, input.dtype)
    max_index = _out(helper, "int32", stop_gradient=True)
    helper.append_op(
        "sequence_pool",
        inputs={"X": input},
        outputs={"Out": out, "MaxIndex": max_index},
        attrs={"pooltype": pool_type, "is_test": bool(is_test), "pad_value": float(pad_value)},
    )
    _set_lod_level(out, input.lod_level - 1)
    return out


def sequence_first_step(input):
    """The first step of each sequence of a LoD tensor.

    Args:
        input (Variable): a LoD tensor of level 1.

    Returns:
        Variable: one row per sequence.
    """
    return sequence_pool(input, "first")


def sequence_last_step(input):
    """The last step of each sequence of a LoD tensor.

    Args:
        input (Variable): a LoD tensor of level 1.

    Returns:
        Variable: one row per sequence.
    """
    return sequence_pool(input, "last")


def sequence_softmax(input, use_cudnn=False, name=None):
    """Softmax over the steps of each sequence.

    Args:
        input (Variable): a LoD tensor [T, 1].
        use_cudnn (bool): Fluid's argument; the kernel is chosen by place.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: input's shape and LoD.
    """
    check_var("sequence_softmax", "input", input)
    helper = LayerHelper("sequence_softmax", name=name)
    out = _out(helper, input.dtype)
    helper.append_op(
        "sequence_softmax",
        inputs={"X": input},
        outputs={"Out": out},
        attrs={"use_cudnn": bool(use_cudnn)},
    )
    return out


def sequence_expand(x, y, ref_level=-1, name=None):
    """Repeats the sequences (or rows) of `x` as often as y's LoD at `ref_level` says.

    Args:
        x (Variable): the input.
        y (Variable): a LoD tensor giving the repeats.
        ref_level (int): the LoD level of y used; -1: the last.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the expanded LoD tensor.
    """
    check_var("sequence_expand", "x", x)
    check_var("sequence_expand", "y", y)
    helper = LayerHelper("sequence_expand", name=name)
    out = _out(helper, x.dtype)
    helper.append_op(
        "sequence_expand",
        inputs={"X": x, "Y": y},
        outputs={"Out": out},
        attrs={"ref_level": int(ref_level)},
    )
    return out


def sequence_expand_as(x, y, name=None):
    """Repeats each row of `x` to the length of the matching sequence of `y`.

    Args:
        x (Variable): one row per sequence of y.
        y (Variable): a LoD tensor of level 1.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: a LoD tensor with y's LoD.
    """
    check_var("sequence_expand_as", "x", x)
    check_var("sequence_expand_as", "y", y)
    helper = LayerHelper("sequence_expand_as", name=name)
    out = _out(helper, x.dtype)
    helper.append_op("sequence_expand_as", inputs={"X": x, "Y": y}, outputs={"Out": out})
    _set_lod_level(out, max(1, y.lod_level))
    return out


def sequence_concat(input, name=None):
    """Concatenates the i-th sequences of each input, for every i.

    Args:
        input (list): LoD tensors with the same number of sequences.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the concatenated LoD tensor.
    """
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError("sequence_concat: input must be a non-empty list of Variables")
    for i, v in enumerate(input):
        check_var("sequence_concat", "input[%d]" % i, v)
    helper = LayerHelper("sequence_concat", name=name)
    out = _out(helper, input[0].dtype)
    helper.append_op("sequence_concat", inputs={"X": list(input)}, outputs={"Out": out})
    _set_lod_level(out, 1)
    return out


def sequence_reshape(input, new_dim):
    """Reshapes each sequence to rows of `new_dim` elements.

    Args:
        input (Variable): a LoD tensor of level 1 [T, D].
        new_dim (int): the new row width.

    Returns:
        Variable: [T * D / new_dim, new_dim] with a LoD to match.
    """
    check_var("sequence_reshape", "input", input)
    helper = LayerHelper("sequence_reshape")
    out = _out(helper, input.dtype)
    helper.append_op(
        "sequence_reshape",
        inputs={"X": input},
        outputs={"Out": out},
        attrs={"new_dim": int(new_dim)},
    )
    _set_lod_level(out, 1)
    return out


def sequence_slice(input, offset, length, name=None):
    """The sub-sequence of each sequence starting at `offset`, of `length` steps.

    Args:
        input (Variable): a LoD tensor of level 1.
        offset (Variable): int64 [N, 1], the start in each sequence.
        length (Variable): int64 [N, 1], the steps taken from each.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the slices as a LoD tensor.
    """
    for n, v in (("input", input), ("offset", offset), ("length", length)):
        check_var("sequence_slice", n, v)
    helper = LayerHelper("sequence_slice", name=name)
    out = _out(helper, input.dtype)
    offset.stop_gradient = True
    length.stop_gradient = True
    helper.append_op(
        "sequence_slice",
        inputs={"X": input, "Offset": offset, "Length": length},
        outputs={"Out": out},
    )
    _set_lod_level(out, 1)
    return out


def sequence_pad(x, pad_value, maxlen=None, name=None):
    """(out [num_seqs, maxlen or the longest, ...], length int64 [num_seqs]); pad_value is a
    Variable of 1 element or one step of x (a number is made into one)."""
    check_var("sequence_pad", "x", x)
    if not isinstance(pad_value, Variable):
        pad_value = fill_constant([1], x.dtype, float(pad_value))
    helper = LayerHelper("sequence_pad", name=name)
    out = _out(helper, x.dtype)
    length = _out(helper, "int64", stop_gradient=True)
    pad_value.stop_gradient = True
    helper.append_op(
        "sequence_pad",
        inputs={"X": x, "PadValue": pad_value},
        outputs={"Out": out, "Length": length},
        attrs={"padded_length": -1 if maxlen is None else int(maxlen)},
    )
    _set_lod_level(out, 0)
    return out, length


def sequence_unpad(x, length, name=None):
    """Padded sequences back to a LoD tensor.

    Args:
        x (Variable): padded sequences [N, L, ...].
        length (Variable): int64 [N], each sequence's length.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: a LoD tensor of level 1.
    """
    check_var("sequence_unpad", "x", x)
    check_var("sequence_unpad", "length", length)
    helper = LayerHelper("sequence_unpad", name=name)
    out = _out(helper, x.dtype)
    length.stop_gradient = True
    helper.append_op("sequence_unpad", inputs={"X": x, "Length": length}, outputs={"Out": out})
    _set_lod_level(out, 1)
    return out


def sequence_mask(x, maxlen=None, dtype="int64", name=None):
    """Masks of the lengths in `x`: mask[i, j] = j < x[i].

    Args:
        x (Variable): int lengths.
        maxlen (int|Variable): the mask's width; None: max(x).
        dtype (str): the mask's element type.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape plus a dim of maxlen.
    """
    check_var("sequence_mask", "x", x)
    helper = LayerHelper("sequence_mask", name=name)
    y = _out(helper, convert_dtype(dtype), stop_gradient=True)
    helper.append_op(
        "sequence_mask",
        inputs={"X": x},
        outputs={"Y": y},
        attrs={"maxlen": -1 if maxlen is None else int(maxlen), "out_dtype": dtype_code(dtype)},
    )
    return y


def sequence_reverse(x, name=None):
    """Reverses the steps of each sequence.

    Args:
        x (Variable): a LoD tensor.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape and LoD.
    """
    check_var("sequence_reverse", "x", x)
    helper = LayerHelper("sequence_reverse", name=name)
    y = _out(helper, x.dtype)
    helper.append_op("sequence_reverse", inputs={"X": x}, outputs={"Y": y})
    return y


def sequence_enumerate(input, win_size, pad_value=0, name=None):
    """Each element of an int sequence with the win_size - 1 that follow it in its sequence,
    pad_value past the sequence's end (Fluid's n-gram ids).

    Args:
        input (Variable): int32 or int64 [N, 1] with a one-level LoD.
        win_size (int): the window's length, >= 2.
        pad_value (int): the value past a sequence's end.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: [N, win_size], input's LoD.
    """
    check_var("sequence_enumerate", "input", input)
    helper = LayerHelper("sequence_enumerate", name=name)
    out = _out(helper, input.dtype, stop_gradient=True)
    helper.append_op(
        "sequence_enumerate",
        inputs={"X": input},
        outputs={"Out": out},
        attrs={"win_size": int(win_size), "pad_value": int(pad_value)},
    )
    return out


def lod_reset(x, y=None, target_lod=None):
    """x's data with y's LoD (or y's data as offsets when y has no LoD), or target_lod."""
    check_var("lod_reset", "x", x)
    helper = LayerHelper("lod_reset")
    out = _out(helper, x.dtype)
    if y is not None:
        check_var("lod_reset", "y", y)
        helper.append_op("lod_reset", inputs={"X": x, "Y": y}, outputs={"Out": out})
        _set_lod_level(out, y.lod_level if y.lod_level > 0 else 1)
    elif target_lod is not None:
        helper.append_op(
            "lod_reset",
            inputs={"X": x},
            outputs={"Out": out},
            attrs={"target_lod": [int(v) for v in target_lod]},
        )
        _set_lod_level(out, 1)
    else:
        raise ValueError("lod_reset: y and target_lod are both None; one must give the new LoD")
    return out


# -- recurrent layers and sequence_conv (ops lstm, gru, lstm_unit, gru_unit, sequence_conv) -----
__all__ += ["dynamic_lstm", "dynamic_gru", "lstm_unit", "gru_unit", "sequence_conv"]

_RNN_ACTIVATIONS = ("sigmoid", "tanh", "relu", "identity")


def _check_activation(layer, arg, act):
    if act not in _RNN_ACTIVATIONS:
        raise ValueError("%s: %s must be one of %s, got %r" % (layer, arg, _RNN_ACTIVATIONS, act))


def dynamic_lstm(
    input,
    size,
    h_0=None,
    c_0=None,
    param_attr=None,
    bias_attr=None,
    use_peepholes=True,
    is_reverse=False,
    gate_activation="sigmoid",
    cell_activation="tanh",
    candidate_activation="tanh",
    dtype="float32",
    name=None,
):
    """An LSTM over each sequence of input [T, size] (x already projected: size = 4 * D, gate
    columns [c~, i, f, o] as in Fluid). Returns (hidden, cell), each [T, D] with input's LoD."""
    check_var("dynamic_lstm", "input", input)
    if size % 4:
        raise ValueError("dynamic_lstm: size must be 4 * hidden size, got %d" % size)
    for arg, act in (
        ("gate_activation", gate_activation),
        ("cell_activation", cell_activation),
        ("candidate_activation", candidate_activation),
    ):
        _check_activation("dynamic_lstm", arg, act)
    dtype = convert_dtype(dtype)
    if input.dtype in ("float32", "float64") and dtype != input.dtype:
        raise ValueError(
            "dynamic_lstm: input '%s' is %s but dtype (the weights' and outputs') is %r; pass "
            "dtype='%s'" % (input.name, input.dtype, dtype, input.dtype)
        )
    helper = LayerHelper("lstm", param_attr=param_attr, bias_attr=bias_attr, name=name)
    d = size // 4
    weight = helper.create_parameter(param_attr, [d, 4 * d], dtype)
    bias = helper.create_parameter(
        bias_attr, [1, (7 if use_peepholes else 4) * d], dtype, is_bias=True
    )
    inputs = {"Input": input, "Weight": weight, "Bias": bias}
    for key, init in (("H0", h_0), ("C0", c_0)):
        if init is not None:
            check_var("dynamic_lstm", key.lower()[0] + "_0", init)
            inputs[key] = init
    hidden, cell = _out(helper, dtype), _out(helper, dtype)
    batch_gate, batch_cell_pre_act = _out(helper, dtype), _out(helper, dtype)
    helper.append_op(
        "lstm",
        inputs=inputs,
        outputs={
            "Hidden": hidden,
            "Cell": cell,
            "BatchGate": batch_gate,
            "BatchCellPreAct": batch_cell_pre_act,
        },
        attrs={
            "use_peepholes": bool(use_peepholes),
            "is_reverse": bool(is_reverse),
            "gate_activation": gate_activation,
            "cell_activation": cell_activation,
            "candidate_activation": candidate_activation,
        },
    )
    _set_lod_level(hidden, max(1, input.lod_level))
    _set_lod_level(cell, max(1, input.lod_level))
    return hidden, cell


def dynamic_gru(
    input,
    size,
    param_attr=None,
    bias_attr=None,
    is_reverse=False,
    gate_activation="sigmoid",
    candidate_activation="tanh",
    h_0=None,
    origin_mode=False,
):
    """A GRU over each sequence of input [T, 3 * size] (x already projected, gate columns
    [u, r, c~] as in Fluid); size is the hidden size D. Returns hidden [T, D]."""
    check_var("dynamic_gru", "input", input)
    _check_activation("dynamic_gru", "gate_activation", gate_activation)
    _check_activation("dynamic_gru", "candidate_activation", candidate_activation)
    helper = LayerHelper("gru", param_attr=param_attr, bias_attr=bias_attr)
    dtype = input.dtype
    weight = helper.create_parameter(param_attr, [size, 3 * size], dtype)
    inputs = {"Input": input, "Weight": weight}
    bias = helper.create_parameter(bias_attr, [1, 3 * size], dtype, is_bias=True)
    if bias is not None:
        inputs["Bias"] = bias
    if h_0 is not None:
        check_var("dynamic_gru", "h_0", h_0)
        inputs["H0"] = h_0
    hidden = _out(helper, dtype)
    helper.append_op(
        "gru",
        inputs=inputs,
        outputs={
            "Hidden": hidden,
            "BatchGate": _out(helper, dtype),
            "BatchResetHiddenPrev": _out(helper, dtype),
            "BatchHidden": _out(helper, dtype),
        },
        attrs={
            "is_reverse": bool(is_reverse),
            "gate_activation": gate_activation,
            "activation": candidate_activation,
            "origin_mode": bool(origin_mode),
        },
    )
    _set_lod_level(hidden, max(1, input.lod_level))
    return hidden


def lstm_unit(
    x_t, hidden_t_prev, cell_t_prev, forget_bias=0.0, param_attr=None, bias_attr=None, name=None
):
    """One LSTM step: fc([x_t, hidden_t_prev]) -> gates [i, f, o, g]; returns (h, c)."""
    for arg, v in (("x_t", x_t), ("hidden_t_prev", hidden_t_prev), ("cell_t_prev", cell_t_prev)):
        check_var("lstm_unit", arg, v)
        if len(v.shape) != 2:
            raise ValueError("lstm_unit: %s must be 2-D, got shape %s" % (arg, list(v.shape)))
    size = cell_t_prev.shape[1]
    helper = LayerHelper("lstm_unit", name=name)
    fc_out = fc(
        input=concat(input=[x_t, hidden_t_prev], axis=1),
        size=4 * size,
        param_attr=param_attr,
        bias_attr=bias_attr,
    )
    c, h = _out(helper, x_t.dtype), _out(helper, x_t.dtype)
    helper.append_op(
        "lstm_unit",
        inputs={"X": fc_out, "C_prev": cell_t_prev},
        outputs={"C": c, "H": h},
        attrs={"forget_bias": float(forget_bias)},
    )
    return h, c


_GRU_UNIT_ACTIVATIONS = {"identity": 0, "sigmoid": 1, "tanh": 2, "relu": 3}


def gru_unit(
    input,
    hidden,
    size,
    param_attr=None,
    bias_attr=None,
    activation="tanh",
    gate_activation="sigmoid",
    origin_mode=False,
):
    """One GRU step on input [N, size] (x projected, size = 3 * D) and hidden [N, D]. Returns
    (updated_hidden, reset_hidden_pre, gate)."""
    check_var("gru_unit", "input", input)
    check_var("gru_unit", "hidden", hidden)
    for arg, act in (("activation", activation), ("gate_activation", gate_activation)):
        if act not in _GRU_UNIT_ACTIVATIONS:
            raise ValueError(
                "gru_unit: %s must be one of %s, got %r" % (arg, sorted(_GRU_UNIT_ACTIVATIONS), act)
            )
    helper = LayerHelper("gru_unit", param_attr=param_attr, bias_attr=bias_attr)
    dtype = input.dtype
    d = size // 3
    weight = helper.create_parameter(param_attr, [d, 3 * d], dtype)
    inputs = {"Input": input, "HiddenPrev": hidden, "Weight": weight}
    bias = helper.create_parameter(bias_attr, [1, 3 * d], dtype, is_bias=True)
    if bias is not None:
        inputs["Bias"] = bias
    gate, reset_hidden_pre, updated_hidden = (
        _out(helper, dtype),
        _out(helper, dtype),
        _out(helper, dtype),
    )
    helper.append_op(
        "gru_unit",
        inputs=inputs,
        outputs={"Gate": gate, "ResetHiddenPrev": reset_hidden_pre, "Hidden": updated_hidden},
        attrs={
            "activation": _GRU_UNIT_ACTIVATIONS[activation],
            "gate_activation": _GRU_UNIT_ACTIVATIONS[gate_activation],
            "origin_mode": bool(origin_mode),
        },
    )
    return updated_hidden, reset_hidden_pre, gate


def sequence_conv(
    input,
    num_filters,
    filter_size=3,
    filter_stride=1,
    padding=True,
    padding_start=None,
    bias_attr=None,
    param_attr=None,
    act=None,
    name=None,
):
    """A convolution along each sequence: row t sees rows t + padding_start .. t + padding_start
    + filter_size - 1 of its sequence (zeros outside it); padding_start defaults to
    -(filter_size // 2), centring the window. `padding` is accepted for Fluid compatibility."""
    check_var("sequence_conv", "input", input)
    helper = LayerHelper("sequence_conv", bias_attr=bias_attr, act=act, name=name)
    dtype = input.dtype
    filter_param = helper.create_parameter(
        param_attr, [filter_size * input.shape[1], num_filters], dtype
    )
    if padding_start is None:
        padding_start = -int(filter_size // 2)
    pre_bias = _out(helper, dtype)
    helper.append_op(
        "sequence_conv",
        inputs={"X": input, "Filter": filter_param},
        outputs={"Out": pre_bias},
        attrs={
            "contextStride": int(filter_stride),
            "contextStart": int(padding_start),
            "contextLength": int(filter_size),
        },
    )
    _set_lod_level(pre_bias, max(1, input.lod_level))
    return helper.append_activation(helper.append_bias_op(pre_bias))


def edit_distance(
    input, label, normalized=True, ignored_tokens=None, input_length=None, label_length=None
):
    """The Levenshtein distance of each int64 hypothesis sequence in `input` to its reference in
    `label` (LoD sequences, or padded [batch, max_len] with input_length / label_length), divided
    by the reference's length when normalized; tokens in ignored_tokens are erased from both
    first. Returns (distances float32 [batch, 1], the number of sequences int64 [1]), as Fluid."""
    check_var("edit_distance", "input", input)
    check_var("edit_distance", "label", label)
    if (input_length is None) != (label_length is None):
        raise ValueError(
            "edit_distance: give both input_length and label_length (padded "
            "sequences) or neither (LoD sequences)"
        )
    helper = LayerHelper("edit_distance")
    if ignored_tokens:
        tokens = [int(t) for t in ignored_tokens]
        erased = []
        for seq in (input, label):
            out = _out(helper, "int64", stop_gradient=True)
            helper.append_op(
                "sequence_erase",
                inputs={"X": [seq]},
                outputs={"Out": [out]},
                attrs={"tokens": tokens},
            )
            erased.append(out)
        input, label = erased
    inputs = {"Hyps": [input], "Refs": [label]}
    if input_length is not None:
        inputs["HypsLength"] = [input_length]
        inputs["RefsLength"] = [label_length]
    distances = _out(helper, "float32", stop_gradient=True)
    sequence_num = _out(helper, "int64", stop_gradient=True)
    helper.append_op(
        "edit_distance",
        inputs=inputs,
        outputs={"Out": [distances], "SequenceNum": [sequence_num]},
        attrs={"normalized": bool(normalized)},
    )
    return distances, sequence_num
