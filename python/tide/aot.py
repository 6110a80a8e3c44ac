"""Programs compiled ahead of time (issue 34; docs/aot.md): the frozen plan and C++ source::

    tide.aot.freeze(program, ["x"], [y], tide.CPUPlace(), {"x": [(1, 64), 3, 224, 224]},
                    "model.tideaot")
    model = tide.aot.FrozenModel("model.tideaot", tide.CPUPlace())
    (out,) = model.run({"x": batch})

freeze prepares the program the executor's way, runs it on zero-filled feeds at the declared
shapes, and writes what those runs did as one file: every op's kernel by its key, every
variable's shape, the input transforms, one memory arena with an offset per temporary (reused by
liveness) and the parameters. FrozenModel loads it without parsing a program and calls the
kernels in order: no kernel choice, no shape inference, no allocation but the results'.

compile writes a plan as C++ source a system compiler builds (model.h's C API, model.cc's
constant tables, params.bin, main.cc, CMakeLists.txt): a library and an executable that link
libtide_core alone and load only the plugins the plan names::

    tide.aot.compile("model.tideaot", "model_src")
    # cmake -S model_src -B build <tide.aot.cmake_args()> && cmake --build build
"""

import os

import numpy as np

from . import _C, sdk
from .core import CPUPlace, LoDTensor
from .executor import global_scope
from .framework import Program, Variable

__all__ = ["freeze", "FrozenModel", "compile", "cmake_args"]

_TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "aot_template")


def _dim_ranges(name, dims):
    """[(lower, upper)] per dim: an int is fixed, a (lower, upper) pair is the variable one."""
    if not isinstance(dims, (list, tuple)):
        raise TypeError("shapes[%r] must be a list of dims, got %r" % (name, dims))
    out = []
    for d in dims:
        if isinstance(d, (tuple, list)) and len(d) == 2:
            out.append((int(d[0]), int(d[1])))
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            out.append((int(d), int(d)))
        else:
            raise TypeError(
                "shapes[%r]: each dim is an int or a (lower, upper) range, got %r" % (name, d)
            )
    return out


def freeze(program, feed_names, fetch_names, place, shapes, path, scope=None):
    """Freezes block 0 of `program` (feeding `feed_names`, fetching `fetch_names`: names or
    Variables) on `place` into the file `path`, with the parameters `scope` holds (default: the
    global scope). `shapes` gives each feed's dims: an int per fixed dim, a (lower, upper) pair
    for the variable one (the batch: one range for all feeds), e.g. {"x": [(1, 64), 3, 224, 224]};
    a feed left out takes its declared shape, which must be fully known. Refuses control flow
    (ops that run sub-blocks) and anything else the plan cannot run, naming the op. Returns
    `path`."""
    if not isinstance(program, Program):
        raise TypeError("freeze: program must be a tide.Program, got %r" % (program,))
    fetches = [f.name if isinstance(f, Variable) else f for f in fetch_names]
    ranges = {name: _dim_ranges(name, dims) for name, dims in (shapes or {}).items()}
    _C.aot_freeze(
        program.desc,
        list(feed_names),
        fetches,
        place,
        ranges,
        os.fspath(path),
        scope if scope is not None else global_scope(),
    )
    return path


class FrozenModel:
    """A frozen plan loaded on `place` (default: the CPU). Loading checks every kernel the plan
    names is registered by a loaded plugin (an error names the op, the kernel key and the plugin
    file it came from) and allocates the arena once.

    With `capture` (off by default), a place whose device can capture and replay (CUDA graphs;
    TideDeviceGraphs in the plugin ABI) records the second run at a batch size and replays it on
    every later run at that size: no kernel is called on the host, so per-op overhead vanishes.
    Feeds are then copied into the model's own device memory before each run. `capture_note`
    says what capture does ("warming up", "captured") or why the plan runs op by op."""

    def __init__(self, path, place=None, capture=False):
        self.place = place if place is not None else CPUPlace()
        self._core = _C.FrozenModel(os.fspath(path), self.place)
        self.capture = capture

    @property
    def capture(self):
        """Whether runs are captured and replayed where the place's device can (see the class)."""
        return self._core.capture

    @capture.setter
    def capture(self, on):
        self._core.capture = bool(on)

    @property
    def capture_note(self):
        """ "" with capture off; else "warming up", "captured", or why the plan runs op by op."""
        return self._core.capture_note

    @property
    def replays(self):
        """How many runs launched a captured graph instead of calling the kernels."""
        return self._core.replays

    @property
    def feed_names(self):
        """The feeds, in the order run takes them as a list."""
        return list(self._core.feed_names)

    @property
    def fetch_names(self):
        """The fetch targets, in the order run returns them."""
        return list(self._core.fetch_names)

    @property
    def arena_bytes(self):
        """The bytes of the arena every temporary lives in."""
        return self._core.arena_bytes

    @property
    def num_ops(self):
        """The kernel calls of a run."""
        return self._core.num_ops

    @property
    def num_ops_inferring_shapes(self):
        """How many of them infer their shapes at run time: ops whose output dims do not follow
        the variable dimension linearly, or all of them when a feed carries LoD."""
        return self._core.num_ops_inferring_shapes

    @property
    def batch_range(self):
        """(lower, upper) of the variable dimension ((0, 0) when every dim is fixed)."""
        return tuple(self._core.range)

    def run(self, feed, return_numpy=True):
        """Runs the plan on `feed` ({name: ndarray | LoDTensor}, or a list in feed_names order);
        returns the fetched values in fetch_names order, as numpy arrays unless return_numpy is
        False. A feed outside the plan's shapes is refused, naming the feed and the dimension."""
        names = self.feed_names
        if isinstance(feed, dict):
            unknown = sorted(set(feed) - set(names))
            missing = [n for n in names if n not in feed]
            if unknown or missing:
                raise ValueError(
                    "FrozenModel.run: the plan feeds %s; missing %s, unknown %s"
                    % (names, missing, unknown)
                )
            values = [feed[n] for n in names]
        else:
            values = list(feed)
        tensors = [v if isinstance(v, LoDTensor) else LoDTensor(np.asarray(v)) for v in values]
        results = self._core.run(tensors)
        return [r.numpy() for r in results] if return_numpy else results


def compile(plan, out_dir, name="model", embed_params=False):  # noqa: A001 (as the issue names it)
    """Writes the frozen plan `plan` (a file tide.aot.freeze wrote) as C++ source into `out_dir`
    (made when missing): <name>.h (the C API: tide_<name>_create, tide_<name>_run,
    tide_<name>_destroy, tide_<name>_last_error, tide_<name>_plan), <name>.cc (the plan as
    constant tables: every kernel by its key, the arena offsets, the typed attributes, the
    plugins to load; the SDK's header-only CPU kernels, from tide/kernels/, included and called
    directly, so their op packs need not be loaded), params.bin (the parameters, 64-byte
    aligned), main.cc (an example that runs the model and prints its outputs) and
    CMakeLists.txt (builds lib<name>.so and <name>_main against libtide_core; see cmake_args).
    `name` (a C identifier; "model" by default) lets several compiled models link into one
    program. With `embed_params`, <name>_params.S puts params.bin into the library, and
    tide_<name>_create(NULL, ...) uses it: the library is the whole model. The plugins the plan
    needs are taken from those loaded in this process. Returns `out_dir`."""
    out_dir = os.fspath(out_dir)
    if not isinstance(name, str):
        raise TypeError("tide.aot.compile: name must be a str, got %r" % (name,))
    _C.aot_compile(os.fspath(plan), out_dir, name, bool(embed_params))
    for template, target, renames in (
        (
            "model.h",
            name + ".h",
            [
                ("tide_model_", "tide_%s_" % name),
                ("TIDE_COMPILED_MODEL_MODEL_H_", "TIDE_COMPILED_MODEL_%s_H_" % name.upper()),
                ("/* model.h:", "/* %s.h:" % name),
                ("model.cc holds", "%s.cc holds" % name),
            ],
        ),
        (
            "main.cc",
            "main.cc",
            [
                ("tide_model_", "tide_%s_" % name),
                ('#include "model.h"', '#include "%s.h"' % name),
                ("model_main", name + "_main"),
            ],
        ),
        (
            "CMakeLists.txt",
            "CMakeLists.txt",
            [("set(TIDE_MODEL_NAME model)", "set(TIDE_MODEL_NAME %s)" % name)],
        ),
    ):
        with open(os.path.join(_TEMPLATE_DIR, template)) as f:
            text = f.read()
        for old, new in renames:
            text = text.replace(old, new)
        with open(os.path.join(out_dir, target), "w") as f:
            f.write(text)
    return out_dir


def _core_library():
    """The libtide_core this process runs (the one tide._C links)."""
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split(None, 5)[-1].strip() if len(line.split()) >= 6 else ""
            if os.path.basename(path).startswith("libtide_core.so"):
                plain = os.path.join(os.path.dirname(path), "libtide_core.so")
                return plain if os.path.exists(plain) else path
    raise FileNotFoundError("tide.aot: libtide_core is not mapped in this process")


def cmake_args():
    """The -D arguments that point a compiled model's CMakeLists.txt at this tide's headers and
    libtide_core (a build tree has no CMake package; an install's find_package(Tide) works too)."""
    return ["-DTIDE_INCLUDE_DIR=" + sdk.include_dir(), "-DTIDE_CORE_LIBRARY=" + _core_library()]
