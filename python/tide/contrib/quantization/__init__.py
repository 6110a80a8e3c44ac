"""int8 post-training quantization (issue 32; docs/mixed_precision.md, "int8 inference"):
`quantize_post_training(program, executor, scope, calib_feeds, ...)` rewrites an inference program
so that its convolutions and fc ops compute in int8 (tide/ops/int8.hpp's kernels: oneDNN's where
device_mkldnn is loaded, the plain ones elsewhere), and `PostTrainingQuantization` is the same
with Paddle's class and parameter names (paddle.static.quantization.PostTrainingQuantization). `quantize_qdq(program)` runs a model Paddle's quantization
tools saved in QDQ form (quantize_linear / dequantize_linear) on the int8 kernels with its own
scales."""

from .calibration import ALGOS
from .post_training import QUANTIZABLE_OP_TYPES, quantize_post_training
from .ptq_class import PostTrainingQuantization
from .qdq import has_qdq, quantize_qdq

__all__ = [
    "ALGOS",
    "QUANTIZABLE_OP_TYPES",
    "PostTrainingQuantization",
    "has_qdq",
    "quantize_post_training",
    "quantize_qdq",
]
