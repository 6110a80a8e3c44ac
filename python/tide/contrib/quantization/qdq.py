"""int8 kernels for a model Paddle's quantization tools saved with its own scales (issue 32): in
QDQ form (quantize_linear / dequantize_linear pairs give each activation's scale; weights stored
as int8 levels with a dequantize_linear, or as float32 behind a pair), or with Paddle's older
fake-quant ops (fake_quant.py). As Paddle's quant2_int8_mkldnn_pass does: take the scales from
those ops (and the out_threshold attributes Paddle writes on other ops), drop the ops (the
weights dequantized once into float32 parameters), run the inference fusions the ops were in the
way of, and quantize the convolutions and fc ops with those scales (post_training's rewrite), no
calibration run needed. An op whose Input has no scale in the model stays float32."""

import numpy as np

from ...core import CPUPlace
from ...executor import global_scope
from ...transpiler import InferenceTranspiler
from .calibration import Ranges
from .fake_quant import has_fake_quant, strip_fake_quant
from .model_scales import fake_quantized, per_channel, rename_readers, store_weight, value
from .post_training import QUANTIZABLE_OP_TYPES, _finish, _non_negative, _prepare

__all__ = ["has_qdq", "has_model_scales", "quantize_qdq"]


def has_qdq(program):
    """Whether `program` carries Paddle's quantize_linear ops (a QDQ model)."""
    return any(op.type == "quantize_linear" for op in program.global_block().ops)


def has_model_scales(program):
    """Whether `program` carries its own int8 scales: QDQ ops or Paddle's fake-quant ops."""
    return has_qdq(program) or has_fake_quant(program)


def _levels(op):
    """Paddle's bin_cnt of a QDQ op: qmax where given, else 2^(bit_length - 1) - 1."""
    qmax = op.attr("qmax") if op.has_attr("qmax") else -1
    return float(qmax) if qmax > 0 else 2.0 ** (op.attr("bit_length") - 1) - 1


def _strip(block, scope, place):
    """Removes the QDQ ops; returns {activation name: its threshold (the QDQ Scale)}."""
    thresholds = {}
    readers = {}
    for op in block.ops:
        for n in op.input_arg_names:
            readers.setdefault(n, []).append(op)
    i = 0
    while i < len(block.ops):
        op = block.ops[i]
        if op.type == "dequantize_linear" and block._var_recursive(op.input("X")[0]).persistable:
            # Weights stored as levels: dequantized once into a float32 parameter.
            q = value(scope, op.input("X")[0]).astype(np.float64)
            s = value(scope, op.input("Scale")[0])
            w = q * per_channel(s, q.ndim, op.attr("quant_axis")) / _levels(op)
            store_weight(block, scope, place, op.output("Y")[0], w)
            block._remove_op(i)
            continue
        if op.type != "quantize_linear":
            i += 1
            continue
        x, y = op.input("X")[0], op.output("Y")[0]
        pair = [r for r in readers.get(y, []) if r.type == "dequantize_linear"]
        if len(pair) != 1 or len(readers.get(y, [])) != 1:
            i += 1
            continue
        deq = pair[0]
        out = deq.output("Y")[0]
        s = value(scope, op.input("Scale")[0]).astype(np.float64).reshape(-1)
        if block._var_recursive(x).persistable:  # float32 weights behind a pair: fake-quantized
            w = value(scope, x).astype(np.float64)
            scale = per_channel(s, w.ndim, op.attr("quant_axis"))
            store_weight(block, scope, place, out, fake_quantized(w, scale, _levels(op)))
        else:
            thresholds[x] = float(s.max())
            rename_readers(block, i, out, x)
        block._remove_op(block.ops.index(deq))
        block._remove_op(i)
    block.program._bump()
    return thresholds


def _out_thresholds(block):
    """{value: threshold} from the out_threshold attributes Paddle's quantization writes on the
    ops whose outputs it observed (0: none)."""
    found = {}
    for op in block.ops:
        if op.has_attr("out_threshold") and op.attr("out_threshold") > 0:
            for n in op.output_arg_names:
                if not block._var_recursive(n).persistable:
                    found[n] = float(op.attr("out_threshold"))
    return found


def quantize_qdq(program, scope=None, place=None, fetch_list=None, skip_passes=()):
    """Rewrites `program` (block 0), a model saved with its own scales (QDQ or fake-quant ops),
    in place so that its convolutions and fc ops run on the int8 kernels with those scales (the
    module says how); returns it.

    Args:
        program (Program): a loaded QDQ or fake-quant model (tide.io.load_inference_model's,
            with or without its InferenceTranspiler rewrite).
        scope (Scope): its parameters (default: the global scope).
        place (Place): where it will run (default: the CPU).
        fetch_list (list): values to be fetched besides the fetch ops': they stay float32.
        skip_passes (list): InferenceTranspiler passes not to run.

    Returns:
        Program: `program`. Raises ValueError where it carries neither QDQ nor fake-quant ops.
    """
    if not has_model_scales(program):
        raise ValueError(
            "int8: the program carries no quantize_linear ops nor fake-quant ops (a quantized "
            "model's own scales) and no calibration data was given: give calibration batches "
            "(quantize_post_training)"
        )
    scope = scope or global_scope()
    place = place if place is not None else CPUPlace()
    block = program.global_block()
    # The ops' own scales first: they are what each reader computed with.
    observed = _out_thresholds(block)
    thresholds = _strip(block, scope, place)
    thresholds.update(strip_fake_quant(block, scope, place))
    for n, t in observed.items():
        thresholds.setdefault(n, t)
    InferenceTranspiler().transpile(program, place, scope, skip_passes=skip_passes)
    prepared = _prepare(
        program, scope, place, QUANTIZABLE_OP_TYPES, fetch_list, known=set(thresholds)
    )
    if prepared is None:
        return program
    ops, split = prepared
    ops = [op for op in ops if op.input("Input")[0] in thresholds]  # a renamed one has none
    ranges = Ranges(thresholds)
    writer = {n: op for op in block.ops for n in op.output_arg_names}
    for n, t in thresholds.items():
        ranges.abs_max[n] = t
        # No data to see: a value is taken as never negative where its producer says so.
        ranges.min[n] = 0.0 if n in writer and _non_negative(writer[n]) else -t
    _finish(program, ops, split, ranges, "abs_max", 1.0, True, scope, place, fetch_list)
    return program
