"""Plugins at run time: what loaded, and loading more."""
from . import _C
from .core import PluginError, TideError


def load_plugin(path):
    """Loads a plugin file now; its ops are usable at once (tide.layers.<op>). Returns its load
    record; raises PluginError with the loader's reason if it fails."""
    try:
        return _C.load_plugin(str(path))
    except TideError as e:
        raise PluginError(str(e)) from None


def plugins():
    """Every plugin file seen: name, version, file, abi, status, error, ops, kernels, devices
    (what `tide-plugins --json` shows)."""
    return _C.plugins()


def plugin_search_path():
    return _C.plugin_search_path()


def is_compiled_with_cuda():
    """True when a CUDA device plugin is loaded (it registers the "gpu" place kind)."""
    return any("gpu" in r["devices"] for r in _C.plugins() if r["status"] == "loaded")
