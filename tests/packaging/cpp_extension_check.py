"""tide.utils.cpp_extension.load end to end, against whichever tide is importable (the build
tree's, or a pip-installed one in tests/packaging/wheel_test.sh): builds cube_ops.cc (ext.cube,
Out = X^3, with a gradient) into a plugin, checks its forward and its gradient against numpy
(float64), trains a few SGD steps through it, checks that a second load of the same sources is a
cache hit (nothing rebuilt) and that a source that does not compile raises with the compiler's
output. Usage: python cpp_extension_check.py [CACHE_DIR] (default: a temporary directory)."""

import os
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
cache = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tide_ext_")
os.environ["TIDE_EXTENSIONS_DIR"] = cache

import tide  # noqa: E402
from tide.utils import cpp_extension  # noqa: E402

src = os.path.join(here, "cube_ops.cc")
record = cpp_extension.load("cube_ops", [src], extra_cflags=["-O2", "-DCUBE_OPS_CHECK=1"])
assert record["status"] == "loaded", record
assert "ext.cube" in record["ops"] and "ext.cube_grad" in record["ops"], record["ops"]
lib = record["file"]
assert lib.startswith(cache) and os.path.isfile(lib), (lib, cache)
assert os.path.isfile(os.path.join(os.path.dirname(lib), "build.ninja"))

# Forward and the weights' gradient through the op: loss = mean(cube(x W + b)), so
# dL/dW = x^T (3 h^2) / N and dL/db = sum(3 h^2) / N with h = x W + b (numpy, float64).
rng = np.random.RandomState(0)
xs = rng.uniform(-1, 1, (8, 3)).astype("float32")
main, startup = tide.Program(), tide.Program()
with tide.program_guard(main, startup), tide.unique_name.guard():
    x = tide.layers.data(name="x", shape=[3], dtype="float32")
    h = tide.layers.fc(input=x, size=2)
    c = tide.layers.ext_cube(h)
    loss = tide.layers.mean(c)
    params_grads = tide.append_backward(loss)
exe = tide.Executor(tide.CPUPlace())
scope = tide.Scope()
with tide.scope_guard(scope):
    exe.run(startup)
    names = [p.name for p, _ in params_grads]
    fetched = exe.run(
        main, feed={"x": xs}, fetch_list=[h, c, loss] + [g for _, g in params_grads] + names
    )
hv, cv, lv = (np.asarray(a, np.float64) for a in fetched[:3])
grads = dict(zip(names, fetched[3 : 3 + len(names)]))
values = dict(zip(names, fetched[3 + len(names) :]))
w = next(n for n in names if np.asarray(values[n]).ndim == 2)
b = next(n for n in names if n != w)
np.testing.assert_allclose(cv, hv**3, rtol=1e-5, atol=1e-6)
n = hv.size
np.testing.assert_allclose(
    grads[w], xs.astype(np.float64).T @ (3 * hv**2) / n, rtol=1e-4, atol=1e-6
)
np.testing.assert_allclose(np.ravel(grads[b]), (3 * hv**2).sum(0) / n, rtol=1e-4, atol=1e-6)

# Training through the op: fit y = (x a)^3 with pred = cube(fc(x)); the loss falls.
true_a = np.array([[0.5], [-0.3], [0.8]], np.float32)
ys = (xs @ true_a) ** 3
main, startup = tide.Program(), tide.Program()
main.random_seed = startup.random_seed = 1
with tide.program_guard(main, startup), tide.unique_name.guard():
    x = tide.layers.data(name="x", shape=[3], dtype="float32")
    y = tide.layers.data(name="y", shape=[1], dtype="float32")
    pred = tide.layers.ext_cube(tide.layers.fc(input=x, size=1))
    avg = tide.layers.mean(tide.layers.square_error_cost(input=pred, label=y))
    tide.optimizer.SGD(learning_rate=0.01).minimize(avg)
with tide.scope_guard(tide.Scope()):
    exe.run(startup)
    losses = [
        float(exe.run(main, feed={"x": xs, "y": ys}, fetch_list=[avg])[0][0]) for _ in range(40)
    ]
assert np.isfinite(losses).all() and losses[-1] < 0.1 * losses[0], losses

# The same sources and flags again: the cached plugin, not rebuilt (and already loaded).
mtime = os.path.getmtime(lib)
again = cpp_extension.load("cube_ops", [src], extra_cflags=["-O2", "-DCUBE_OPS_CHECK=1"])
assert again["file"] == lib and os.path.getmtime(lib) == mtime

# A compiler error is an exception showing the compiler's message.
bad = os.path.join(cache, "broken_ops.cc")
with open(bad, "w") as f:
    f.write("#include <tide/plugin.hpp>\nint broken() { return undeclared_name_42; }\n")
try:
    cpp_extension.load("broken_ops", [bad])
except cpp_extension.ExtensionBuildError as e:
    assert "undeclared_name_42" in str(e) and "broken_ops.cc" in str(e), str(e)
else:
    raise AssertionError("a source that does not compile loaded")
print(
    "cpp_extension: built, loaded, gradient checked, trained (loss %.4g -> %.4g), cached, errors shown"
    % (losses[0], losses[-1])
)
