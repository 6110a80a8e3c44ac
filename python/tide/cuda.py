"""tide.cuda: GPUs through the CUDA device plugin (place kind "gpu")."""

from . import _C


def device_count():
    """Visible GPUs; 0 when the CUDA plugin is not loaded or there is no GPU."""
    return _C.device_count("gpu")


def is_available():
    """Whether a CUDA device is there: the gpu device plugin loaded and found at least one."""
    return device_count() > 0
