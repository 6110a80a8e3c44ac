"""Sphinx extension: the Python reference of tide, generated from the package at each build.

Every public name gets an entry: the names in a module's __all__, or, in a module without one,
the functions and classes it defines whose names do not start with "_". An object reachable by
several public names (tide.Executor is tide.executor.Executor) is documented once, under its
canonical name (the shortest public path, the defining module first), and every other name links
there. Each public module gets a page in api/ (written before the sources are read; the folder is
generated, not edited). At the end of the build, a public name whose canonical entry is not in the
Python domain, or a public function or class without a docstring that is not in
docs/undocumented.txt, is a warning, which fails scripts/docs.sh (-W).
"""

import importlib
import inspect
import os
import pkgutil

from sphinx.util import logging

logger = logging.getLogger(__name__)

# Modules that are internal plumbing, not API: helpers of other modules and command-line mains.
INTERNAL_MODULES = {
    "tide.layer_helper",
    "tide.layer_names",
    "tide.layers.checks",
    "tide.layers.generated",
    "tide.layers.math_op_patch",
    "tide.layers.tensor_args",
    "tide.utils.plugins_cli",
}


def public_modules(package="tide"):
    """Every public module of the package, the package first, by name."""
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if info.name in INTERNAL_MODULES or any(p.startswith("_") for p in info.name.split(".")):
            continue
        names.append(info.name)
    return [importlib.import_module(n) for n in sorted(names)]


def public_names(module):
    """The public names of a module: its __all__, else the functions and classes it defines."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and getattr(obj, "__module__", None) == module.__name__
    ]


class PublicApi:
    """The public (module, name) pairs and the canonical full name of each object."""

    def __init__(self, modules):
        self.modules = modules
        self.names = {m.__name__: public_names(m) for m in modules}
        module_names = set(self.names)
        paths = {}  # id(obj) -> [(module name, name)]
        self.objects = {}
        for module in modules:
            for name in self.names[module.__name__]:
                obj = getattr(module, name)
                self.objects[id(obj)] = obj
                paths.setdefault(id(obj), []).append((module.__name__, name))
        self.canonical = {}
        for key, where in paths.items():
            obj = self.objects[key]
            defined_in = getattr(obj, "__module__", None)

            def rank(pair, defined_in=defined_in):
                module_name, name = pair
                shadows = module_name + "." + name in module_names  # tide.distributed.world
                top = module_name == "tide"  # the convenience namespace re-exports
                return (
                    shadows,
                    top,
                    module_name.count("."),
                    module_name != defined_in,
                    module_name,
                )

            module_name, name = min(where, key=rank)
            self.canonical[key] = (
                obj.__name__ if inspect.ismodule(obj) else module_name + "." + name
            )

    def canonical_name(self, module_name, name):
        module = importlib.import_module(module_name)
        return self.canonical[id(getattr(module, name))]

    def pairs(self):
        for module_name, names in self.names.items():
            for name in names:
                yield module_name, name


def _directive(obj):
    if inspect.ismodule(obj):
        return None
    if inspect.isclass(obj):
        return "autoclass", ["   :members:"]
    if callable(obj):
        return "autofunction", []
    return "autodata", ["   :annotation:"]


def _title(text, char):
    return [text, char * len(text), ""]


def module_page(api, module):
    """The reST of one module's page."""
    mod_name = module.__name__
    lines = _title(mod_name, "=") + [".. automodule:: " + mod_name, ""]
    here, elsewhere = [], []
    for name in api.names[mod_name]:
        full = api.canonical_name(mod_name, name)
        is_here = full == mod_name + "." + name and not inspect.ismodule(getattr(module, name))
        (here if is_here else elsewhere).append((name, full))
    if here:
        lines += [".. autosummary::", ""] + ["   " + name for name, _ in here] + [""]
    if elsewhere:
        lines += _title("Also here", "-")
        lines += [
            "Names this module re-exports; each is documented where it is defined.",
            "",
            ".. list-table::",
            "   :widths: 30 70",
            "",
        ]
        for name, full in elsewhere:
            obj = getattr(module, name)
            role = "mod" if inspect.ismodule(obj) else "obj"
            lines += ["   * - ``%s``" % name, "     - :py:%s:`%s`" % (role, full)]
        lines.append("")
    # Entries, grouped by the module that defines them when they come from several.
    groups = {}
    for name, full in here:
        obj = getattr(module, name)
        groups.setdefault(getattr(obj, "__module__", mod_name) or mod_name, []).append(full)
    for group, fulls in groups.items():
        if len(groups) > 1:
            lines += _title(group if group != mod_name else mod_name + " itself", "-")
        for full in fulls:
            directive, options = _directive(api.objects[id(_resolve(full))])
            lines += [".. %s:: %s" % (directive, full)] + options + [""]
    return "\n".join(lines) + "\n"


def _resolve(full):
    module_name, name = full.rsplit(".", 1)
    return getattr(importlib.import_module(module_name), name)


def index_page(api):
    lines = _title("Python API reference", "=")
    lines += [
        "Every public name of the ``tide`` package and its subpackages, generated from the",
        "docstrings. Layers made at run time from a loaded plugin's ops (``tide.layers.<op>``)",
        "carry their op's comment, inputs and attributes as their docstring: "
        "``help(tide.layers.relu6)``.",
        "",
        ".. toctree::",
        "   :maxdepth: 1",
        "",
    ]
    lines += ["   " + m.__name__ for m in api.modules]
    return "\n".join(lines) + "\n"


def write_pages(app):
    api = PublicApi(public_modules())
    out = os.path.join(app.srcdir, "api")
    os.makedirs(out, exist_ok=True)
    pages = {"index.rst": index_page(api)}
    for module in api.modules:
        pages[module.__name__ + ".rst"] = module_page(api, module)
    for name in set(os.listdir(out)) - set(pages):
        os.remove(os.path.join(out, name))
    for name, text in pages.items():
        path = os.path.join(out, name)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:  # unchanged pages keep their time stamp: no rebuild
            with open(path, "w") as f:
                f.write(text)


def _undocumented_allowed(app):
    path = os.path.join(app.srcdir, "undocumented.txt")
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def check_coverage(app, exception):
    """Warns of a public name without an entry, or a function or class without a docstring."""
    if exception is not None:
        return
    env = app.env
    api = PublicApi(public_modules())
    documented = set(env.get_domain("py").objects)
    allowed = _undocumented_allowed(app)
    seen = set()
    for module_name, name in api.pairs():
        obj = getattr(importlib.import_module(module_name), name)
        full = api.canonical_name(module_name, name)
        if full not in documented:
            logger.warning("tide API: %s.%s has no entry (%s)", module_name, name, full)
        if full in seen or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        seen.add(full)
        has_doc = bool((obj.__doc__ or "").strip())
        if not has_doc and full not in allowed:
            logger.warning("tide API: %s has no docstring (say what it does and its args)", full)
        if has_doc and full in allowed:
            logger.warning("tide API: %s has a docstring now: drop it from undocumented.txt", full)


def setup(app):
    app.connect("builder-inited", write_pages, priority=100)
    app.connect("build-finished", check_coverage)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
