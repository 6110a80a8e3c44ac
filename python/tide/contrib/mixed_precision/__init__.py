"""Automatic mixed precision for training, with Fluid's API (`fluid.contrib.mixed_precision`):
`decorate(optimizer)` rewrites the program so that the ops of the allow list compute in float16
(or bfloat16: `decorate_bf16`) where the run's device has kernels for that, keeps float32 master
weights and optimizer state, and scales the loss dynamically (docs/mixed_precision.md).
`bf16_inference(program, place)` puts a loaded inference program in bfloat16 where the place
computes it."""

from .amp_lists import (
    AutoMixedPrecisionLists,
    AutoMixedPrecisionListsBF16,
    AutoMixedPrecisionListsBF16Inference,
)
from .decorator import OptimizerWithMixedPrecision, decorate, decorate_bf16
from .inference import bf16_inference
from .rewrite import rewrite_program

__all__ = [
    "AutoMixedPrecisionLists",
    "AutoMixedPrecisionListsBF16",
    "AutoMixedPrecisionListsBF16Inference",
    "OptimizerWithMixedPrecision",
    "bf16_inference",
    "decorate",
    "decorate_bf16",
    "rewrite_program",
]
