"""int8 kernels for a model Paddle's quantization tools saved in QDQ form (issue 32): its
quantize_linear / dequantize_linear pairs give each activation's scale, its weights are stored as
int8 levels with a dequantize_linear (or as float32 behind a pair). As Paddle's
quant2_int8_mkldnn_pass does: take the scales from the QDQ ops, drop the ops (the weights
dequantized once into float32 parameters), run the inference fusions the pairs were in the way
of, and quantize the convolutions and fc ops with those scales (post_training's rewrite), no
calibration run needed. An op whose Input has no scale in the model stays float32."""

import numpy as np

from ...core import CPUPlace, dtype_code
from ...executor import global_scope
from ...transpiler import InferenceTranspiler
from .calibration import Ranges
from .post_training import QUANTIZABLE_OP_TYPES, _finish, _non_negative, _prepare

__all__ = ["has_qdq", "quantize_qdq"]


def has_qdq(program):
    """Whether `program` carries Paddle's quantize_linear ops (a QDQ model)."""
    return any(op.type == "quantize_linear" for op in program.global_block().ops)


def _value(scope, name):
    return np.array(scope.find_var(name).get_tensor(), copy=True)


def _levels(op):
    """Paddle's bin_cnt of a QDQ op: qmax where given, else 2^(bit_length - 1) - 1."""
    qmax = op.attr("qmax") if op.has_attr("qmax") else -1
    return float(qmax) if qmax > 0 else 2.0 ** (op.attr("bit_length") - 1) - 1


def _channel_shape(rank, axis, n):
    shape = [1] * rank
    if axis >= 0:
        shape[axis] = n
    return shape


def _store_weight(block, scope, place, name, value):
    """`name` becomes a persistable float32 parameter holding `value`."""
    var = block._var_recursive(name)
    var.desc.persistable = True
    var.desc.dtype = dtype_code("float32")
    scope.var(name).get_tensor().set(np.ascontiguousarray(value, np.float32), place, False)


def _rename_readers(block, start, old, new):
    for op in block.ops[start:]:
        if old in op.input_arg_names:
            op.desc.rename_input(old, new)


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
            q = _value(scope, op.input("X")[0]).astype(np.float64)
            s = _value(scope, op.input("Scale")[0]).astype(np.float64).reshape(-1)
            axis = op.attr("quant_axis") if s.size > 1 else -1
            w = q * s.reshape(_channel_shape(q.ndim, axis, s.size)) / _levels(op)
            _store_weight(block, scope, place, op.output("Y")[0], w)
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
        s = _value(scope, op.input("Scale")[0]).astype(np.float64).reshape(-1)
        if block._var_recursive(x).persistable:  # float32 weights behind a pair: fake-quantized
            w = _value(scope, x).astype(np.float64)
            bins = _levels(op)
            axis = op.attr("quant_axis") if s.size > 1 else -1
            scale = s.reshape(_channel_shape(w.ndim, axis, s.size))
            levels = np.clip(np.round(w * bins / scale), -bins - 1, bins)
            _store_weight(block, scope, place, out, levels * scale / bins)
        else:
            thresholds[x] = float(s.max())
            _rename_readers(block, i, out, x)
        block._remove_op(block.ops.index(deq))
        block._remove_op(i)
    block.program._bump()
    return thresholds


def quantize_qdq(program, scope=None, place=None, fetch_list=None):
    """Rewrites QDQ `program` (block 0) in place so that its convolutions and fc ops run on the
    int8 kernels with the model's own scales (the module says how); returns it.

    Args:
        program (Program): a loaded QDQ model (tide.io.load_inference_model's).
        scope (Scope): its parameters (default: the global scope).
        place (Place): where it will run (default: the CPU).
        fetch_list (list): values to be fetched besides the fetch ops': they stay float32.

    Returns:
        Program: `program`. Raises ValueError where it carries no quantize_linear op.
    """
    if not has_qdq(program):
        raise ValueError(
            "int8: the program carries no quantize_linear ops (a QDQ model's scales) and no "
            "calibration data was given: give calibration batches (quantize_post_training)"
        )
    scope = scope or global_scope()
    place = place if place is not None else CPUPlace()
    block = program.global_block()
    thresholds = _strip(block, scope, place)
    InferenceTranspiler().transpile(program, place, scope)
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
