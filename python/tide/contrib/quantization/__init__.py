"""int8 post-training quantization (issue 32; docs/mixed_precision.md, "int8 inference"):
`quantize_post_training(program, executor, scope, calib_feeds, ...)` rewrites an inference program
so that its convolutions and fc ops compute in int8 (tide/ops/int8.hpp's kernels: oneDNN's where
device_mkldnn is loaded, the plain ones elsewhere), and `PostTrainingQuantization` is the same
with Paddle's class and parameter names (paddle.static.quantization.PostTrainingQuantization). `quantize_qdq(program)` runs a model Paddle's quantization
tools saved in QDQ form (quantize_linear / dequantize_linear) or with their older fake-quant ops
(fake_quantize_*, fake_*dequantize_max_abs) on the int8 kernels with its own scales."""

from .calibration import ALGOS
from .fake_quant import has_fake_quant
from .post_training import QUANTIZABLE_OP_TYPES, quantize_post_training
from .ptq_class import PostTrainingQuantization
from .qdq import has_model_scales, has_qdq, quantize_qdq

__all__ = [
    "ALGOS",
    "QUANTIZABLE_OP_TYPES",
    "PostTrainingQuantization",
    "has_fake_quant",
    "has_model_scales",
    "has_qdq",
    "quantize_post_training",
    "quantize_qdq",
]
