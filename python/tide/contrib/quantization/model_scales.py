"""What qdq.py and fake_quant.py share in reading a quantized model's own scales: a parameter's
value, weights stored back as float32 parameters (dequantized, or fake-quantized as the model
computed them), readers moved to another value."""

import numpy as np

from ...core import dtype_code


def value(scope, name):
    """A copy of `name`'s tensor in `scope` (a view would mark it written)."""
    return np.array(scope.find_var(name).get_tensor(), copy=True)


def channel_shape(rank, axis, n):
    """The shape that broadcasts n per-channel scales along `axis` of a rank-`rank` tensor (one
    scale: axis -1)."""
    shape = [1] * rank
    if axis >= 0:
        shape[axis] = n
    return shape


def per_channel(scales, rank, axis):
    """`scales` (one, or one per index of `axis`) shaped to broadcast over a rank-`rank` tensor."""
    s = np.asarray(scales, np.float64).reshape(-1)
    return s.reshape(channel_shape(rank, axis if s.size > 1 else -1, s.size))


def fake_quantized(w, scale, bins, round_type=0):
    """`w` rounded to its integer levels by `scale` (bins levels each side) and scaled back, as
    Paddle's quant-dequant kernels compute it: round_type 0 rounds ties to even (levels clipped
    to [-bins - 1, bins]), 1 ties away from zero (clipped to [-bins, bins])."""
    v = w * bins / scale
    if round_type == 1:
        levels = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), -bins, bins)
    else:
        levels = np.clip(np.round(v), -bins - 1, bins)
    return levels * scale / bins


def store_weight(block, scope, place, name, w):
    """`name` becomes a persistable float32 parameter holding `w`."""
    var = block._var_recursive(name)
    var.desc.persistable = True
    var.desc.dtype = dtype_code("float32")
    scope.var(name).get_tensor().set(np.ascontiguousarray(w, np.float32), place, False)


def rename_readers(block, start, old, new):
    """The ops from block.ops[start] on read `new` for `old`."""
    for op in block.ops[start:]:
        if old in op.input_arg_names:
            op.desc.rename_input(old, new)
