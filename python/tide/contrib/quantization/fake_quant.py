"""The scales of a model saved with Paddle's older fake-quant ops (PaddleSlim's and Paddle 2.x's
quantization-aware training without onnx_format; plugins/ops_nn/quant_ops.cc runs them as saved),
read as Paddle's quant2_int8_mkldnn_pass reads them, for qdq.quantize_qdq's int8 rewrite:

- an activation's fake-quant op (fake_quantize_dequantize_moving_average_abs_max,
  fake_quantize_moving_average_abs_max: InScale; moving_average_abs_max_scale: OutScale) gives
  that value's range; fake_quantize_dequantize_abs_max keeps none (its scale is each run's);
- a weight's ``fake_(channel_wise_)quantize_dequantize_abs_max`` is folded: the parameter holds
  the fake-quantized weights the model computed with;
- a weight stored as int8 levels behind a ``fake_(channel_wise_)dequantize_max_abs`` is
  dequantized once; one such op after a convolution or product (the freeze pass's form: the op computed with
  levels, Out = X * scales / range) dequantizes that op's weights instead.

Every op is removed and its readers read its X."""

import numpy as np

from .model_scales import fake_quantized, per_channel, rename_readers, store_weight, value

__all__ = ["FAKE_QUANT_OP_TYPES", "has_fake_quant", "strip_fake_quant"]

_ACTIVATION_SCALE = {  # op type -> the input / output holding the value's range (None: none kept)
    "fake_quantize_dequantize_moving_average_abs_max": "InScale",
    "fake_quantize_moving_average_abs_max": "InScale",
    "fake_quantize_dequantize_abs_max": None,
    "moving_average_abs_max_scale": "OutScale",
}
_WEIGHT_QDQ = ("fake_quantize_dequantize_abs_max", "fake_channel_wise_quantize_dequantize_abs_max")
_DEQUANTIZE = ("fake_dequantize_max_abs", "fake_channel_wise_dequantize_max_abs")
_WEIGHTS = {  # a product's weights, which the freeze pass's form stores as levels
    "conv2d": "Filter",
    "depthwise_conv2d": "Filter",
    "mul": "Y",
    "matmul": "Y",
    "matmul_v2": "Y",
}
FAKE_QUANT_OP_TYPES = (
    "fake_quantize_dequantize_moving_average_abs_max",
    "fake_quantize_moving_average_abs_max",
    "fake_quantize_dequantize_abs_max",
    "fake_quantize_abs_max",
    "fake_channel_wise_quantize_dequantize_abs_max",
    "fake_channel_wise_quantize_abs_max",
    "fake_dequantize_max_abs",
    "fake_channel_wise_dequantize_max_abs",
    "moving_average_abs_max_scale",
)


def has_fake_quant(program):
    """Whether `program` carries Paddle's fake-quant ops."""
    return any(op.type in FAKE_QUANT_OP_TYPES for op in program.global_block().ops)


def _bins(bits):
    return 2.0 ** (bits - 1) - 1


def _persistable(block, name):
    return block._var_recursive(name).persistable


def _scale_value(scope, op, param):
    """The largest of op's stored scale `param` (an input, or an output saved with the model);
    None where it has none in the scope."""
    args = op.desc.inputs().get(param) or op.desc.outputs().get(param) or []
    if not args or scope.find_var(args[0]) is None or not scope.find_var(args[0]).is_initialized():
        return None
    return float(np.abs(value(scope, args[0])).max())


def _dequantized(op, scope, levels, weight_form):
    """`levels` (weights as integer levels) scaled back by dequantize op `op`'s weight scales.
    `weight_form`: op reads the weights (Out = X * scales / range, its own rule); else op reads
    the product of the activation's levels and these (the freeze pass's form), and the
    activation's part of its scale goes with the activation's fake-quant op, as Paddle's pass
    assumes (8 bits)."""
    if op.type == "fake_dequantize_max_abs":
        r = float(op.attr("max_range"))
        if weight_form:
            return levels * float(value(scope, op.input("Scale")[0]).reshape(-1)[0]) / r
        return levels * 127.0 / r  # max_range = (127 / s_w) * 127: the weights' part, s_w / 127
    scales = value(scope, op.input("Scales")[0]).astype(np.float64).reshape(-1)
    bins = _bins(op.attr("quant_bits")[0])
    w = levels.shape
    if weight_form:
        return levels * per_channel(scales, len(w), op.attr("quant_axis")) / bins
    # Paddle's rule: the scales go along the weights' dim 0 (a convolution's), else dim 1 (mul's).
    axis = 0 if scales.size in (1, w[0]) else 1 if len(w) > 1 and scales.size == w[1] else None
    if axis is None:
        raise ValueError(
            "int8: op '%s' (Out '%s') holds %d weight scales for weights of shape %s"
            % (op.type, op.output("Out")[0], scales.size, list(w))
        )
    return levels * per_channel(scales, len(w), axis) / bins


def _abs_max_scales(w, axis):
    """Each index of `axis`'s largest |w| (axis -1: one for all), shaped to broadcast."""
    if axis < 0:
        return per_channel([np.abs(w).max()], w.ndim, -1)
    top = np.moveaxis(np.abs(w), axis, 0).reshape(w.shape[axis], -1).max(axis=1)
    return per_channel(top, w.ndim, axis)


def strip_fake_quant(block, scope, place):
    """Removes the fake-quant ops of `block` (the module says how); returns {activation name: its
    threshold}. Raises ValueError, naming the op and its X, for one whose rewrite is unknown."""
    thresholds = {}
    writer = {n: op for op in block.ops for n in op.output_arg_names}
    i = 0
    while i < len(block.ops):
        op = block.ops[i]
        if op.type not in FAKE_QUANT_OP_TYPES:
            i += 1
            continue
        x, out = op.input("X")[0], op.output("Out")[0]
        weight = _persistable(block, x)
        if weight and op.type in _WEIGHT_QDQ:
            # The op's scales are the weights' own abs max (as its kernel computes them).
            w = value(scope, x).astype(np.float64)
            axis = op.attr("quant_axis") if op.has_attr("quant_axis") else -1
            scale = np.maximum(_abs_max_scales(w, axis), 1e-30)
            bins = _bins(op.attr("bit_length"))
            store_weight(block, scope, place, out, fake_quantized(w, scale, bins, _round(op)))
        elif weight and op.type in _DEQUANTIZE:
            levels = value(scope, x).astype(np.float64)
            store_weight(block, scope, place, out, _dequantized(op, scope, levels, True))
        elif not weight and op.type in _DEQUANTIZE:
            product = writer.get(x)
            param = _WEIGHTS.get(product.type) if product is not None else None
            w = product.input(param)[0] if param else None
            if w is None or not _persistable(block, w):
                raise ValueError(
                    "int8: op '%s' dequantizes '%s', which is not the output of a convolution "
                    "or product with int8 weights: its rewrite is unknown" % (op.type, x)
                )
            levels = value(scope, w).astype(np.float64)
            store_weight(block, scope, place, w, _dequantized(op, scope, levels, False))
            rename_readers(block, i + 1, out, x)
        elif not weight and op.type in _ACTIVATION_SCALE:
            param = _ACTIVATION_SCALE[op.type]
            t = _scale_value(scope, op, param) if param else None
            if t is not None and t > 0:
                thresholds[x] = t
            rename_readers(block, i + 1, out, x)
        else:
            raise ValueError(
                "int8: op '%s' on '%s' (%s): its scale is each run's, not the model's; load it "
                "with precision='float32' or give calibration batches"
                % (op.type, x, "a parameter" if weight else "an activation")
            )
        block._remove_op(i)
    block.program._bump()
    return thresholds


def _round(op):
    return op.attr("round_type") if op.has_attr("round_type") else 1
