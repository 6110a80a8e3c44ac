"""tide.contrib: Fluid's contrib namespace; `tide.contrib.mixed_precision` is automatic mixed
precision for training."""

from . import mixed_precision

__all__ = ["mixed_precision"]
