"""Tide: a plugin-based deep-learning runtime with a PaddlePaddle-Fluid-style Python API.

    import tide
    x = tide.layers.data(name="x", shape=[13])
    y = tide.layers.fc(input=x, size=1)
    ...
    exe = tide.Executor(tide.CPUPlace())
    exe.run(tide.default_startup_program())

Importing tide loads the plugins on the plugin path ($TIDE_PLUGIN_PATH's entries, then the
install's lib/tide/plugins; --plugin_path or TIDE_PLUGIN_PATH_ONLY=1 for only the given ones) and
those of other wheels' "tide.plugins" entry points (docs/packaging.md); tide.load_plugin adds more
at any time.
"""

__version__ = "0.1.0"  # first: modules may read it while the package is still importing

from . import _C

_C.initialize()
from .plugins import _load_entry_point_plugins, _warn_orphan_kernels  # noqa: E402

_load_entry_point_plugins()
_warn_orphan_kernels()

from . import (  # noqa: E402  # noqa: E402,F401  # noqa: E402,F401  # noqa: E402,F401  # noqa: E402,F401
    aot,
    clip,
    contrib,
    core,
    cuda,
    debugger,
    distributed,
    evaluator,
    fft,
    initializer,
    io,
    layers,
    memory,
    metrics,
    nets,
    optimizer,
    profiler,
    reader,
    regularizer,
    transpiler,
    unique_name,
)
from .backward import append_backward  # noqa: E402,F401
from .core import (
    CPUPlace,
    CUDAPlace,
    InvalidArgumentError,
    LoDTensor,
    NotFoundError,
    Place,
    PluginError,
    PreconditionError,
    ResourceExhaustedError,
    Scope,  # noqa: E402,F401
    TideError,
    UnavailableError,
    convert_dtype,
)
from .data_feeder import DataFeeder  # noqa: E402,F401
from .executor import Executor, global_scope, scope_guard  # noqa: E402,F401
from .framework import (
    Operator,
    Parameter,
    Program,
    Variable,
    default_main_program,  # noqa: E402,F401
    default_startup_program,
    program_guard,
)
from .layers import Switch as switch  # noqa: E402,F401  (Fluid's fluid.switch())
from .lod_tensor import create_lod_tensor, create_random_int_lodtensor  # noqa: E402,F401
from .param_attr import ParamAttr  # noqa: E402,F401
from .plugins import (
    entry_point_plugin_dirs,
    is_compiled_with_cuda,  # noqa: E402,F401
    load_plugin,
    plugin_search_path,
    plugins,
)
from .reader import batch  # noqa: E402,F401
from .transpiler import (
    DistributeTranspiler,
    DistributeTranspilerConfig,  # noqa: E402,F401
    memory_optimize,
    release_memory,
)

from_dlpack = _C.from_dlpack


def to_dlpack(tensor):
    """A DLPack capsule of a LoDTensor (consumers usually call tensor.__dlpack__ themselves)."""
    return tensor.__dlpack__()


def device_count(kind):
    """How many devices of place kind `kind` ("cpu", "gpu", a vendor's kind) the loaded device
    plugins provide; 0 when none provides it."""
    return _C.device_count(kind)


def device_unavailable_reason(kind):
    """Why place kind `kind` has no device, in the words of its device plugin (e.g. "no OpenCL
    platform (is an ICD installed?)"), or that no loaded plugin provides it; "" when it has
    devices or its plugin gives no reason. Using a place of such a kind fails with the same
    reason."""
    return _C.device_unavailable_reason(kind)


def device_properties(place):
    """What the device plugin reports of `place` (a Place or "gpu:0"): a dict of name, vendor,
    driver_version, compute_capability, total_memory (bytes) and multiprocessor_count; strings
    are "" where the plugin does not say."""
    if isinstance(place, str):
        place = _C.parse_place(place)
    return _C.device_properties(place)


def places(kind=None):
    """Every place of the loaded device plugins (or of one kind), e.g. [Place(cpu:0),
    Place(gpu:0), Place(gpu:1)]."""
    kinds = [kind] if kind is not None else _C.device_kinds()
    return [Place(k, i) for k in kinds for i in range(_C.device_count(k))]


def shutdown():
    """Ends the devices' and plugins' lives now rather than at exit: waits for every device's
    queued work, destroys the device contexts, gives the memory the core's pools hold back to the
    devices, calls each device's finalize and then each plugin's tide_plugin_finalize (last
    loaded first). Once per process; the exit does nothing more. Afterwards no device can be used
    (an error says it was shut down); tensors still alive give their memory back when dropped."""
    _C.shutdown()


def _flag_name(name):
    """Fluid and Paddle spell core flags ``FLAGS_<name>`` (``FLAGS_check_nan_inf``); the core,
    ``<name>``."""
    if not isinstance(name, str):
        raise TypeError(
            "tide flags: a flag name is a str, got %s (%r)" % (type(name).__name__, name)
        )
    return name[len("FLAGS_") :] if name.startswith("FLAGS_") else name


def set_flags(flags):
    """Sets core flags from a dict, e.g. tide.set_flags({"cpu_threads": "2"}); a name may carry
    Paddle's ``FLAGS_`` prefix (``{"FLAGS_check_nan_inf": True}``). A kernel library's flag
    (use_mkldnn) exists once its plugin is loaded; turning one off that does not exist does
    nothing (there is nothing to turn off), turning it on is an error naming the flag."""
    if not isinstance(flags, dict):
        raise TypeError(
            "tide.set_flags: expected a dict of flag name to value, e.g. "
            '{"check_nan_inf": True}, got %s' % type(flags).__name__
        )
    for name, value in flags.items():
        name = _flag_name(name)
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if name.startswith("use_") and text in ("false", "0") and _C.get_flag(name) is None:
            continue
        _C.set_flag(name, text)


def get_flag(name):
    """The value of core flag `name` (see set_flags; ``FLAGS_<name>`` too), or None when no such
    flag exists."""
    return _C.get_flag(_flag_name(name))


def get_flags(flags):
    """Paddle's get_flags: the values of core flags `flags` (a name or a list of names, each with
    or without the ``FLAGS_`` prefix) as {name as given: value}. Values are the core's text, as
    get_flag gives them ("true", "2"), so set_flags takes the dict back. A name no flag has is a
    NotFoundError, as in set_flags."""
    if isinstance(flags, str):
        flags = [flags]
    elif not isinstance(flags, (list, tuple)):
        raise TypeError(
            "tide.get_flags: expected a flag name or a list of names, got %s" % type(flags).__name__
        )
    values = {}
    for name in flags:
        value = _C.get_flag(_flag_name(name))
        if value is None:
            raise NotFoundError("no flag named '%s'" % name)
        values[name] = value
    return values


# The public API: `from tide import *` takes these, and the reference (docs/) has an entry for each.
__all__ = [
    # modules
    "aot",
    "backward",
    "clip",
    "contrib",
    "core",
    "cuda",
    "data_feeder",
    "data_loader",
    "debugger",
    "distributed",
    "evaluator",
    "executor",
    "fft",
    "framework",
    "initializer",
    "io",
    "layers",
    "lod_tensor",
    "memory",
    "metrics",
    "nets",
    "optimizer",
    "param_attr",
    "profiler",
    "reader",
    "regularizer",
    "transpiler",
    "unique_name",
    # programs and running them
    "Program",
    "Operator",
    "Parameter",
    "Variable",
    "default_main_program",
    "default_startup_program",
    "program_guard",
    "append_backward",
    "Executor",
    "Scope",
    "global_scope",
    "scope_guard",
    "ParamAttr",
    "DataFeeder",
    "batch",
    "switch",
    "DistributeTranspiler",
    "DistributeTranspilerConfig",
    "memory_optimize",
    "release_memory",
    # tensors and places
    "LoDTensor",
    "create_lod_tensor",
    "create_random_int_lodtensor",
    "convert_dtype",
    "from_dlpack",
    "to_dlpack",
    "Place",
    "CPUPlace",
    "CUDAPlace",
    "places",
    "device_count",
    "device_unavailable_reason",
    "device_properties",
    "is_compiled_with_cuda",
    # plugins, flags and the runtime
    "plugins",
    "load_plugin",
    "plugin_search_path",
    "entry_point_plugin_dirs",
    "set_flags",
    "get_flag",
    "get_flags",
    "shutdown",
    # errors
    "TideError",
    "InvalidArgumentError",
    "NotFoundError",
    "PluginError",
    "PreconditionError",
    "ResourceExhaustedError",
    "UnavailableError",
]
