"""Per-op timing: with tide.profiler.profile(): ... then tide.profiler.report()."""
import contextlib

from . import _C


@contextlib.contextmanager
def profile():
    """Times every op run inside (the --profile_ops flag), from a clean slate."""
    _C.reset_op_profiles()
    _C.set_flag("profile_ops", "true")
    try:
        yield
    finally:
        _C.set_flag("profile_ops", "false")


def report():
    """A table of op kernels by total time."""
    return _C.op_profile_report()


def profiles():
    return _C.op_profiles()
