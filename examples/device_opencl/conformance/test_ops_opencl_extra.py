"""Op tests for what Tide's own op tests leave out of the plugin's kernels, in the conformance
kit's form (run with `tide-conformance --tests <this directory>`): matmul_v2 in float32 / float64
(Tide's suite tests its complex types only, so the kit listed the float kernels as exercised by
no test), and elementwise broadcasts the plugin's kernels compute or decline (a decline runs the
CPU's kernel: "not covered", never a failure). References in float64 numpy."""

import numpy as np
import pytest

from tide.testing.op_test import make

DTYPES = ["float32", "float64"]
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


@pytest.fixture
def rng():
    return np.random.RandomState(4321)


MATMUL_CASES = {
    "2d": ((5, 7), (7, 3), False, False),
    "trans_x": ((7, 5), (7, 3), True, False),
    "trans_y": ((5, 7), (3, 7), False, True),
    "both": ((7, 5), (3, 7), True, True),
    "batched": ((2, 5, 7), (2, 7, 3), False, False),
    "y_broadcast": ((2, 3, 5, 7), (7, 17), False, False),
    "x_broadcast": ((5, 7), (4, 7, 3), False, False),
    "vector_y": ((5, 7), (7,), False, False),
    "tiles": ((33, 40), (40, 19), False, False),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(MATMUL_CASES))
def test_matmul_v2(case, dtype, rng):
    xs, ys, tx, ty = MATMUL_CASES[case]
    x = rng.uniform(-1, 1, xs).astype(dtype)
    y = rng.uniform(-1, 1, ys).astype(dtype)
    a = np.swapaxes(x, -1, -2) if tx else x
    b = np.swapaxes(y, -1, -2) if ty else y
    want = np.matmul(a.astype("float64"), b.astype("float64")).astype(dtype)
    t = make("matmul_v2", {"X": x, "Y": y}, {"Out": want}, {"trans_x": tx, "trans_y": ty})
    t.check_output(rtol=1e-5, atol=1e-5)
    if case in ("2d", "trans_y", "batched"):
        t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


# X, Y, axis: Fluid's rule ([pre, n, post]: computed), a size-1 dim inside Y and numpy's rule
# (declined: the CPU's kernel).
BROADCASTS = {
    "row": ((4, 5), (5,), -1),
    "middle": ((2, 3, 4), (3,), 1),
    "scalar": ((3, 4), (1,), -1),
    "inner_one": ((2, 3, 4), (2, 1, 4), -1),
    "numpy": ((3, 1), (1, 4), -1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(BROADCASTS))
@pytest.mark.parametrize("op", ["elementwise_add", "elementwise_sub", "elementwise_mul"])
def test_broadcast(op, case, dtype, rng):
    xs, ys, axis = BROADCASTS[case]
    x = rng.uniform(-1, 1, xs).astype(dtype)
    y = rng.uniform(-1, 1, ys).astype(dtype)
    yb = y.reshape(y.shape + (1,) * (len(xs) - axis - len(ys))) if axis >= 0 else y
    f = {"elementwise_add": np.add, "elementwise_sub": np.subtract, "elementwise_mul": np.multiply}
    want = f[op](x.astype("float64"), yb.astype("float64")).astype(dtype)
    t = make(op, {"X": x, "Y": y}, {"Out": want}, {"axis": axis})
    t.check_output()
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))
