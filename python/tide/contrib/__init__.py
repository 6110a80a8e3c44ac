"""tide.contrib: Fluid's contrib namespace; `tide.contrib.mixed_precision` is automatic mixed
precision for training (and bf16 inference), `tide.contrib.quantization` int8 post-training
quantization."""

from . import mixed_precision, quantization

__all__ = ["mixed_precision", "quantization"]
