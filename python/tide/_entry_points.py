"""Plugins shipped in other wheels, found by their entry points (group "tide.plugins").

A vendor's wheel declares, in its pyproject.toml,

    [project.entry-points."tide.plugins"]
    acme = "acme_tide.plugins"

naming a package directory (a dotted module path) that holds its plugin files (*.so); `import
tide` loads every plugin file there (docs/packaging.md). Only the installed distributions'
entry_points.txt files are read: no package is imported and no package directory but the named
ones is listed. importlib.metadata would do the same reading but costs ~50 ms to import, ten
times the budget `import tide` has for this, so this module reads the metadata itself (the
entry-point file format of the packaging specifications: an INI file, one section per group).
No import of tide's own modules here: `tide-plugins` and the tests use it before tide is loaded.
"""

import os
import sys

GROUP = "tide.plugins"


def _parse_group(text, group):
    """(name, value) of every entry in [group] of an entry_points.txt."""
    out, inside = [], False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[" and line[-1] == "]":
            inside = line[1:-1].strip() == group
        elif inside and "=" in line:
            name, value = line.split("=", 1)
            out.append((name.strip(), value.strip()))
    return out


def _dist_name(entry):
    # "acme_tide-1.0.dist-info" -> "acme_tide" (normalised as the spec says: case, - _ .)
    stem = entry.rsplit(".", 1)[0]
    return stem.split("-", 1)[0].lower().replace("-", "_").replace(".", "_")


def entry_points(group=GROUP, path=None):
    """[(distribution, name, value, distribution dir)] of the installed distributions' entry points
    in `group`, in sys.path order; a distribution found twice counts once (the first, as
    importlib.metadata does)."""
    seen, found = set(), []
    for d in sys.path if path is None else path:
        try:
            entries = sorted(
                e for e in os.listdir(d or ".") if e.endswith((".dist-info", ".egg-info"))
            )
        except OSError:  # not a directory (a zip file, a path that does not exist)
            continue
        for e in entries:
            dist = _dist_name(e)
            if dist in seen:
                continue
            seen.add(dist)
            try:
                with open(os.path.join(d or ".", e, "entry_points.txt"), encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            found.extend((dist, n, v, d or ".") for n, v in _parse_group(text, group))
    return found


def resolve(value, base):
    """The directory an entry point's value names: the dotted module path under `base` (the
    site directory its distribution is installed in), else anywhere on sys.path. None if absent.
    Raises ValueError for an object reference ("module:attr"): the contract is a directory."""
    if ":" in value:
        raise ValueError(
            "names an object ('%s'); a tide.plugins entry point names a package "
            "directory holding plugin files, e.g. 'acme_tide.plugins'" % value
        )
    parts = [p for p in value.strip().split(".") if p]
    if not parts or not all(p.isidentifier() for p in parts):
        raise ValueError("'%s' is not a dotted module path" % value)
    for root in [base] + [p for p in sys.path if p != base]:
        candidate = os.path.join(root or ".", *parts)
        if os.path.isdir(candidate):
            return os.path.abspath(candidate)
    return None


def plugin_dirs(group=GROUP):
    """[(entry point label, directory or None, error or None)] for every entry point in `group`."""
    out = []
    for dist, name, value, base in entry_points(group):
        label = "%s (entry point '%s = %s' of %s)" % (name, name, value, dist)
        try:
            d = resolve(value, base)
        except ValueError as e:
            out.append((label, None, str(e)))
            continue
        out.append(
            (label, d, None if d else "no directory '%s' on sys.path" % value.replace(".", "/"))
        )
    return out


def disabled():
    """Entry-point plugins are skipped when the plugin path is explicitly the only one."""
    only = os.environ.get("TIDE_PLUGIN_PATH_ONLY", "").strip().lower()
    return only not in ("", "0", "false", "no", "off") or bool(os.environ.get("FLAGS_plugin_path"))
