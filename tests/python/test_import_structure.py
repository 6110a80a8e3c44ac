"""The tide package's imports (issue 29): no import order dependency and no circle through
tide.layers. Every public module imports first thing in a fresh interpreter, through the
package's __init__ and without it (its own imports suffice); the modules tide.layers builds on
(framework, initializer, param_attr, layer_helper, ...) never import tide.layers, Variable's
operators being set by tide.layers itself (layers/math_op_patch.py); and an import inside a
function is there only to break a real cycle, which its comment names."""

import ast
import concurrent.futures
import functools
import os
import subprocess
import sys

import pytest

SOURCE = os.environ.get("TIDE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGE = os.path.join(SOURCE, "python", "tide")


def _sources():
    """{module name: (path, is a package)} of the package's source files."""
    out = {}
    root = os.path.dirname(PACKAGE)
    for d, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                is_pkg = parts[-1] == "__init__"
                out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


SOURCES = _sources()
PUBLIC = sorted(m for m in SOURCES if not any(p.startswith("_") for p in m.split(".")))
# Modules that read the package's own attributes, so need its __init__ to have run.
NEEDS_PACKAGE_INIT = {"tide.utils.cpp_extension": "hashes tide.__version__ into build dirs"}
BARE = [m for m in PUBLIC if m != "tide" and m not in NEEDS_PACKAGE_INIT]

_FRESH_IMPORT = """
import {}
from tide.framework import Variable
assert "__add__" in vars(Variable) and "__lt__" in vars(Variable)
"""
_BARE_IMPORT = """
import importlib, importlib.util, sys, types
spec = importlib.util.find_spec("tide")
package = types.ModuleType("tide")  # the package without running its __init__
package.__path__, package.__spec__ = list(spec.submodule_search_locations), spec
sys.modules["tide"] = package
importlib.import_module(sys.argv[1])
print("\\n".join(m for m in sys.modules if m.startswith("tide.")))
"""


def _side_by_side(modules, args):
    """{module: its python process's stdout}, the processes run side by side (each mostly waits
    on its start-up); a failed one's stderr instead, marked."""

    def run(module):
        r = subprocess.run(
            [sys.executable, *args(module)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return r.stdout if r.returncode == 0 else "FAILED\n" + r.stderr[-3000:]

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        return dict(zip(modules, pool.map(run, modules)))


@functools.cache
def _fresh_imports():
    return _side_by_side(PUBLIC, lambda m: ["-c", _FRESH_IMPORT.format(m)])


@functools.cache
def _bare_imports():
    return _side_by_side(BARE, lambda m: ["-c", _BARE_IMPORT, m])


def _bare_import(module):
    """The tide modules importing `module` loads when the package's __init__ did not run."""
    out = _bare_imports()[module]
    assert not out.startswith("FAILED"), f"importing {module} without tide's __init__: {out}"
    return set(out.split())


@pytest.mark.parametrize("module", PUBLIC)
def test_module_imports_first_in_a_fresh_interpreter(module):
    """Whichever module comes first, it imports, and Variable has its operators (tide's __init__
    imports tide.layers, which sets them)."""
    out = _fresh_imports()[module]
    assert not out.startswith("FAILED"), f"import {module} first: {out}"


@pytest.mark.parametrize("module", BARE)
def test_module_imports_without_the_package_init(module):
    """A module's own imports are enough: it does not lean on tide/__init__.py's import order."""
    assert module in _bare_import(module)


def _in_layers(module):
    return module == "tide.layers" or module.startswith("tide.layers.")


@pytest.fixture(scope="module")
def layers_foundation():
    """The modules outside tide.layers that importing tide.layers loads."""
    found = sorted(m for m in _bare_import("tide.layers") if m in SOURCES and not _in_layers(m))
    core = {"tide.framework", "tide.initializer", "tide.param_attr", "tide.layer_helper"}
    assert core <= set(found), found
    return found


def test_layers_foundation_does_not_load_layers(layers_foundation):
    for module in layers_foundation:
        loaded = sorted(m for m in _bare_import(module) if _in_layers(m))
        assert not loaded, f"importing {module} loads {loaded}"


@functools.cache
def _imports(module):
    """[(target module, line, inside a function)] of `module`'s imports of tide modules. Importing
    a.b.c also runs the __init__ of a.b (and a), which counts only where the importer is not
    inside them (its own packages are imported before it), or inside a function, importing a name
    of its own package (`from .. import x`)."""
    path, is_pkg = SOURCES[module]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(id(n) for n in ast.walk(node) if n is not node)
    package = module.split(".") if is_pkg else module.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join(base + ([node.module] if node.module else []))
            names = [
                base + "." + a.name if base + "." + a.name in SOURCES else base for a in node.names
            ]
        else:
            continue
        deferred = id(node) in in_function
        for name in names:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                target = ".".join(parts[:i])
                own_package = module.startswith(target + ".")  # named itself: `from .. import x`
                if (
                    target in SOURCES
                    and target != module
                    and (not own_package or (deferred and i == len(parts)))
                ):
                    out.append((target, node.lineno, deferred))
    return out


def test_layers_foundation_never_imports_layers(layers_foundation):
    """Not even inside a function: a deferred import is still a circle."""
    found = [
        f"{m}:{line} imports {target}"
        for m in layers_foundation
        for target, line, _ in _imports(m)
        if _in_layers(target)
    ]
    assert not found


def _reaches(start, goal):
    """Whether importing `start` imports `goal` at module level, directly or through others."""
    seen, todo = {start}, [start]
    while todo:
        for target, _, deferred in _imports(todo.pop()):
            if target == goal and not deferred:
                return True
            if not deferred and target not in seen:
                seen.add(target)
                todo.append(target)
    return False


def test_function_level_imports_break_a_named_cycle():
    """An import inside a function only where the module it imports imports this one back at
    module level, with a comment naming that cycle: `# breaks the cycle nn -> tensor_args -> nn`."""
    needless, unnamed = [], []
    for module in sorted(SOURCES):
        with open(SOURCES[module][0], encoding="utf-8") as f:
            lines = f.read().splitlines()
        # One statement imports a module and the packages above it (their __init__ runs first):
        # it is needed where any of them imports this module back.
        deferred_targets = {}
        for target, line, deferred in _imports(module):
            if deferred:
                deferred_targets.setdefault(line, []).append(target)
        for line, targets in sorted(deferred_targets.items()):
            where = f"{module}:{line} ({max(targets, key=len)})"
            if not any(_reaches(target, module) for target in targets):
                needless.append(where)
            elif "# breaks the cycle" not in lines[line - 1]:
                unnamed.append(where)
    assert not needless, f"imports inside functions that no cycle needs: {needless}"
    assert not unnamed, f"imports inside functions without '# breaks the cycle ...': {unnamed}"
