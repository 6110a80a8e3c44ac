"""Plugins at run time: what loaded, and loading more."""

import re
import warnings

from . import _C, _entry_points, layers
from .core import PluginError, TideError
from .layer_names import layer_name_collisions


def load_plugin(path):
    """Loads a plugin file now; its ops are usable at once (tide.layers.<op>). Returns its load
    record; raises PluginError with the loader's reason if it fails. What loaded but breaks a
    convention (an op without a vendor prefix), never runs (a kernel for an op no loaded
    plugin defines: a misspelt op type) or shares its layer name with another op ("ac_me.x" and
    "ac.me_x": tide.layers.op_layer reaches each) is a UserWarning."""
    try:
        record = _C.load_plugin(str(path))
    except TideError as e:
        raise PluginError(str(e)) from None
    for w in (
        record["warnings"]
        + _orphan_summaries(_C.orphan_kernel_warnings(record["file"]))
        + layer_name_collisions(record["ops"])
        + _shadowed_layers(record["ops"])
    ):
        warnings.warn("tide: " + w, UserWarning, stacklevel=2)
    return record


_ORPHAN = re.compile(
    r"kernel (\S+) .*\((.+)\): no loaded (plugin defines op|device plugin provides place kind) "
)


def _orphan_summaries(lines, keep=3):
    """`lines` (one per orphaned kernel) with each plugin file's beyond `keep` said once: an op
    pack that failed to load leaves hundreds, which would bury the one line saying why."""
    by_file = {}
    for line in lines:
        m = _ORPHAN.match(line)
        by_file.setdefault((m.group(2), m.group(3)) if m else None, []).append((line, m))
    out = []
    failed = None  # the plugins that did not load, read once when a file is summarised
    for key, items in by_file.items():
        if key is None or len(items) <= keep:
            out += [line for line, _ in items]
            continue
        file, why = key
        ops = sorted({m.group(1) for _, m in items})
        if failed is None:
            failed = [r["file"] for r in _C.plugins() if r["status"] != "loaded"]
        why = "their ops" if why.startswith("plugin") else "their place kinds"
        out.append(
            f"{len(items)} kernels of {file} never run: no loaded plugin provides {why} "
            f"(ops {', '.join(repr(o) for o in ops[:5])}{', ...' if len(ops) > 5 else ''})"
            + (
                f"; a plugin that did not load may: {', '.join(failed)} (tide.plugins() says why)"
                if failed
                else ""
            )
        )
    return out


def _shadowed_layers(op_types):
    """A message for each vendor op whose layer name is one of Tide's own layers (written in
    Python), which wins: "dynamic.lstm" is not tide.layers.dynamic_lstm."""
    out = []
    for t in op_types:
        name = t.replace(".", "_")
        if "." in t and name in vars(layers):
            out.append(
                "op '%s' is not tide.layers.%s, which is Tide's own layer; "
                "tide.layers.op_layer(%r) is the op's" % (t, name, t)
            )
    return out


def _warn_orphan_kernels():
    """At import, once every plugin of the path and the entry points loaded: a kernel for an op
    none of them defines never runs (what `tide-plugins --strict` fails on) and is a UserWarning,
    a plugin file's many said once."""
    for w in _orphan_summaries(_C.orphan_kernel_warnings()):
        warnings.warn("tide: " + w, UserWarning, stacklevel=3)


def plugins():
    """Every plugin file seen: name, version, file, abi, status, error, ops, kernels, devices,
    warnings (what `tide-plugins --json` shows)."""
    return _C.plugins()


def plugin_search_path():
    """The directories and files the core searched at start-up (--plugin_path, else
    $TIDE_PLUGIN_PATH's entries then the default directory; docs/packaging.md)."""
    return _C.plugin_search_path()


_entry_point_dirs = []


def entry_point_plugin_dirs():
    """The plugin directories named by installed distributions' "tide.plugins" entry points
    (those `import tide` loaded from; empty when TIDE_PLUGIN_PATH_ONLY / --plugin_path said that
    the plugin path is the only one)."""
    return list(_entry_point_dirs)


def _load_entry_point_plugins():
    """Loads the plugin files of every "tide.plugins" entry point (called by `import tide`, after
    the search path's plugins, so a vendor plugin may require Tide's own). A broken entry point or
    plugin is a warning naming it, never an import error: the other plugins still load."""
    if _entry_points.disabled() or _C.get_flag("plugin_path"):
        return
    for label, d, error in _entry_points.plugin_dirs():
        if error:
            warnings.warn(
                "tide: plugin entry point %s: %s" % (label, error), RuntimeWarning, stacklevel=3
            )
            continue
        _entry_point_dirs.append(d)
        if d in _C.plugin_search_path():
            continue  # loaded already (TIDE_PLUGIN_PATH names it too)
        try:
            _C.load_plugin(d)
        except TideError as e:
            # Every file's reason is in its load record (tide.plugins(), tide-plugins) as well.
            warnings.warn(
                "tide: plugin entry point %s: %s" % (label, e), RuntimeWarning, stacklevel=3
            )


def is_compiled_with_cuda():
    """True when a CUDA device plugin is loaded (it registers the "gpu" place kind)."""
    return any("gpu" in r["devices"] for r in _C.plugins() if r["status"] == "loaded")
