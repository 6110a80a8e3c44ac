"""Fluid's reduce_* ops (ops_math/reduce_dim_ops.cc): outputs against numpy over dim / keep_dim /
reduce_all, gradients against central finite differences, float32 and float64 (and the integer
and bool types the ops register), and their errors.

Where Tide differs from Fluid 1.x: reduce_prod's gradient is the product of the other elements
(exact where X holds zeros; Fluid divides Out by X). An empty `dim` reduces every dim."""

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


NP = {
    "reduce_sum": np.sum,
    "reduce_mean": np.mean,
    "reduce_max": np.max,
    "reduce_min": np.min,
    "reduce_prod": np.prod,
}

# dim, keep_dim, reduce_all
CASES = [
    ([0], False, False),
    ([1], True, False),
    ([-1], False, False),
    ([0, 2], False, False),
    ([1, 2], True, False),
    ([0], False, True),
    ([0], True, True),
    ([2, 0, 2], False, False),
]


def reference(op, x, dim, keep_dim, reduce_all):
    axes = tuple(range(x.ndim)) if reduce_all else tuple(sorted({d % x.ndim for d in dim}))
    out = NP[op](x, axis=axes, keepdims=keep_dim)
    return np.asarray(out).reshape(1) if np.ndim(out) == 0 else out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim,keep_dim,reduce_all", CASES)
@pytest.mark.parametrize("op", sorted(NP))
def test_reduce(op, dim, keep_dim, reduce_all, dtype, rng):
    x = rng.uniform(0.5, 1.5, (2, 3, 4)) * rng.choice([-1, 1], (2, 3, 4))
    if op in ("reduce_max", "reduce_min"):  # distinct values: no ties at the extreme
        x = (rng.permutation(24).reshape(2, 3, 4) - 12) / 7.0
    x = x.astype(dtype)
    want = reference(op, x.astype(np.float64), dim, keep_dim, reduce_all).astype(dtype)
    t = make(
        op, {"X": x}, {"Out": want}, {"dim": dim, "keep_dim": keep_dim, "reduce_all": reduce_all}
    )
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"])
def test_reduce_integers(op, dtype, rng):
    x = rng.randint(-5, 6, (3, 4)).astype(dtype)
    make(op, {"X": x}, {"Out": NP[op](x, axis=1).astype(dtype)}, {"dim": [1]}).check_output()


@pytest.mark.parametrize("op,fn", [("reduce_all", np.all), ("reduce_any", np.any)])
@pytest.mark.parametrize("dim,keep_dim,reduce_all", CASES)
def test_reduce_logical(op, fn, dim, keep_dim, reduce_all, rng):
    x = rng.rand(2, 3, 4) > 0.3
    axes = tuple(range(3)) if reduce_all else tuple(sorted({d % 3 for d in dim}))
    want = np.asarray(fn(x, axis=axes, keepdims=keep_dim))
    want = want.reshape(1) if want.ndim == 0 else want
    make(
        op, {"X": x}, {"Out": want}, {"dim": dim, "keep_dim": keep_dim, "reduce_all": reduce_all}
    ).check_output()


def test_reduce_max_ties_share_the_gradient():
    """Every element equal to the max gets the gradient (Fluid's rule)."""
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]])
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        xv = tide.layers.data(name="x", shape=[2, 3], dtype="float64", append_batch_size=False)
        xv.stop_gradient = False
        loss = tide.layers.reduce_sum(tide.layers.reduce_max(xv, dim=[1]))  # dim=None: all
        tide.append_backward(loss)
    (g,) = tide.Executor(tide.CPUPlace()).run(
        main, feed={"x": x}, fetch_list=["x@GRAD"], scope=tide.Scope()
    )
    np.testing.assert_array_equal(g, [[0, 1, 1], [1, 0, 0]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_prod_gradient_with_zeros(dtype):
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.5, 2.0, 4.0]], dtype)
    t = make("reduce_prod", {"X": x}, {"Out": np.prod(x, axis=1)}, {"dim": [1]})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_reduce_dim_out_of_range_is_an_error():
    x = np.ones((2, 3), "float32")
    with pytest.raises(tide.TideError, match="reduce_sum.*dim 2 is out of range"):
        make("reduce_sum", {"X": x}, {"Out": x}, {"dim": [2]}).check_output()


def test_layer_reduces_unknown_batch(exe):
    x = tide.layers.data(name="x", shape=[3, 4], dtype="float32")
    s = tide.layers.reduce_sum(x, dim=[1], keep_dim=True)
    assert list(s.shape) == [-1, 1, 4]
    m = tide.layers.reduce_mean(x, dim=-1)
    assert list(m.shape) == [-1, 3]
    xs = np.arange(24, dtype="float32").reshape(2, 3, 4)
    a, b = exe.run(feed={"x": xs}, fetch_list=[s, m])
    np.testing.assert_allclose(a, xs.sum(1, keepdims=True))
    np.testing.assert_allclose(b, xs.mean(-1))


def test_reduce_over_empty_tensors():
    """A reduction that keeps an empty dim gives an empty result (never a crash). Reducing an empty
    dim into kept elements gives the reduction's identity where it has one (sum 0, prod 1, all
    true, any false; mean NaN, as NumPy and Paddle), and for max / min an error naming the op and
    X. Their gradients are empty."""
    x = np.zeros((0, 3), "float32")
    make("reduce_sum", {"X": x}, {"Out": np.zeros((0,), "float32")}, {"dim": [1]}).check_output()
    for op, ref in [("reduce_sum", np.sum), ("reduce_prod", np.prod)]:
        for dtype in ["float32", "float64", "int32", "int64"]:
            xd = np.zeros((2, 0, 3), dtype)
            want = ref(xd, axis=1).astype(dtype)  # numpy widens int32 sums; Tide keeps X's type
            make(op, {"X": xd}, {"Out": want}, {"dim": [1]}).check_output()
            whole = ref(xd).astype(dtype).reshape(1)
            make(op, {"X": xd}, {"Out": whole}, {"reduce_all": True}).check_output()
    with np.errstate(invalid="ignore"):
        want = np.mean(x, axis=0)
    assert np.isnan(want).all()
    make("reduce_mean", {"X": x}, {"Out": want}, {"dim": [0]}).check_output()  # NaN == NaN here
    for op, ref in [("reduce_all", np.all), ("reduce_any", np.any)]:
        xb = np.zeros((0, 3), bool)
        make(op, {"X": xb}, {"Out": ref(xb, axis=0)}, {"dim": [0]}).check_output()
    for op in ["reduce_max", "reduce_min"]:
        with pytest.raises(tide.TideError, match=op + ".*x_in.*empty along a reduced dim"):
            make(op, {"X": x}, {"Out": np.zeros((3,), "float32")}, {"dim": [0]}).check_output()


def test_reduce_grads_over_empty_tensors(exe):
    """Backward through a sum or mean of an empty batch gives an empty X@GRAD, no crash."""
    x = tide.layers.data(name="x", shape=[3], dtype="float32")
    x.stop_gradient = False
    loss = tide.layers.reduce_sum(tide.layers.reduce_sum(x, dim=[0]) + tide.layers.reduce_mean(x))
    tide.append_backward(loss)
    out, g = exe.run(feed={"x": np.zeros((0, 3), "float32")}, fetch_list=[loss, "x@GRAD"])
    assert np.isnan(out).all()  # the mean of nothing
    assert np.asarray(g).shape == (0, 3)
