"""Ops that ordinary Paddle 2.x/3.x models use (the walkthrough's F3 list): where, log_softmax,
tile, top_k_v2, silu, mish, each against a numpy reference of Paddle's rule (float32 and float64,
and the integer types the op registers), gradients by central finite differences (float64), and
the errors of bad inputs."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(3)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
GRAD32 = {"max_relative_error": 0.02, "numeric_grad_delta": 0.01}
DTYPES = ["float32", "float64"]


def rand(*shape, dtype="float64"):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def grad_args(dtype):
    return GRAD if dtype == "float64" else GRAD32


# --- where -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "c_shape,x_shape,y_shape",
    [
        ((3, 4), (3, 4), (3, 4)),  # Paddle 2.6's layer gives the op equal dims
        ((3, 4), (3, 4), (1,)),  # a scalar Y
        ((3, 1), (1, 4), (3, 4)),  # numpy's rule, each operand repeated
        ((4,), (2, 3, 4), (3, 1)),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_where(c_shape, x_shape, y_shape, dtype):
    c = RNG.rand(*c_shape) > 0.5
    x, y = rand(*x_shape, dtype=dtype), rand(*y_shape, dtype=dtype)
    t = make("where", {"Condition": c, "X": x, "Y": y}, {"Out": np.where(c, x, y)})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_where_other_types(dtype):
    c = RNG.rand(2, 5) > 0.5
    x = RNG.randint(0, 2, (2, 5)).astype(dtype)
    y = RNG.randint(0, 2, (2, 5)).astype(dtype)
    make("where", {"Condition": c, "X": x, "Y": y}, {"Out": np.where(c, x, y)}).check_output()


def test_where_errors():
    x = rand(2, 3)
    with pytest.raises(tide.TideError, match="where.*Condition .* must be bool, got float64"):
        make("where", {"Condition": x, "X": x, "Y": x}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match=r"where.*\[2, 3\].*\[2, 4\] do not broadcast"):
        c = np.ones((2, 3), bool)
        make("where", {"Condition": c, "X": x, "Y": rand(2, 4)}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match="where.*X .* is float64 but Y .* is float32"):
        c = np.ones((2, 3), bool)
        make("where", {"Condition": c, "X": x, "Y": x.astype("float32")}, {"Out": x}).check_output()


# --- log_softmax -------------------------------------------------------------------------------


def log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("dtype", DTYPES)
def test_log_softmax(axis, dtype):
    x = rand(2, 3, 4, dtype=dtype) * 3
    t = make(
        "log_softmax", {"X": x}, {"Out": log_softmax(x.astype("float64"), axis)}, {"axis": axis}
    )
    t.check_output(atol=1e-5, rtol=1e-5)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_log_softmax_large_values_stay_finite():
    x = np.array([[1000.0, 0.0, -1000.0]])
    out = make("log_softmax", {"X": x}, {"Out": log_softmax(x, -1)}).check_output()
    assert np.isfinite(np.asarray(out[0])).all()


def test_log_softmax_axis_out_of_range():
    with pytest.raises(tide.TideError, match="log_softmax.*axis 2 is out of range"):
        x = rand(2, 3)
        make("log_softmax", {"X": x}, {"Out": x}, {"axis": 2}).check_output()


# --- tile --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,times",
    [((2, 3), [2, 1]), ((2, 3), [3]), ((3,), [2, 2]), ((2, 1, 3), [1, 4, 2]), ((4,), [])],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tile(shape, times, dtype):
    """numpy's tile: the shorter of X's dims and the repeats gets 1s in front."""
    x = rand(*shape, dtype=dtype)
    t = make("tile", {"X": x}, {"Out": np.tile(x, times)}, {"repeat_times": times})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_tile_other_types(dtype):
    x = RNG.randint(0, 2, (2, 3)).astype(dtype)
    make("tile", {"X": x}, {"Out": np.tile(x, [2, 2])}, {"repeat_times": [2, 2]}).check_output()


def test_tile_repeats_from_tensors():
    x = rand(2, 3)
    want = np.tile(x, [3, 2])
    t = make("tile", {"X": x, "RepeatTimes": np.array([3, 2], "int32")}, {"Out": want})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)
    parts = [("r0", np.array([3], "int64")), ("r1", np.array([2], "int64"))]
    t = make("tile", {"X": x, "repeat_times_tensor": parts}, {"Out": want}, {"repeat_times": [1]})
    t.check_output(atol=0, rtol=0)


def test_tile_errors():
    x = rand(2, 3)
    with pytest.raises(tide.TideError, match=r"tile.*holds 0 at 1; each repeat must be >= 1"):
        make("tile", {"X": x}, {"Out": x}, {"repeat_times": [1, 0]}).check_output()
    with pytest.raises(tide.TideError, match="tile.*at most 6 dims"):
        make("tile", {"X": x}, {"Out": x}, {"repeat_times": [1] * 7}).check_output()


# --- top_k_v2 ----------------------------------------------------------------------------------


def topk_ref(x, k, axis, largest):
    """Sorted by value (stable: equal values keep the lower index first)."""
    key = -x if largest else x
    order = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype("int64")


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", DTYPES + ["int32", "int64"])
def test_top_k_v2(axis, largest, dtype):
    x = RNG.permutation(60).reshape(3, 4, 5).astype(dtype)
    out, idx = topk_ref(x, 2, axis, largest)
    t = make(
        "top_k_v2",
        {"X": x},
        {"Out": out, "Indices": idx},
        {"k": 2, "axis": axis, "largest": largest},
    )
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_top_k_v2_ties_nan_unsorted_and_k_tensor():
    x = np.array([[3.0, 1.0, 5.0, 2.0, 5.0, 4.0], [1.0, np.nan, 0.0, 2.0, 2.0, 7.0]])
    # Paddle's CPU kernel: equal values by index, NaN the largest
    want = np.array([[5.0, 5.0, 4.0], [np.nan, 7.0, 2.0]]), np.array([[2, 4, 5], [1, 5, 3]])
    make("top_k_v2", {"X": x}, {"Out": want[0], "Indices": want[1]}, {"k": 3}).check_output()
    # unsorted: the same k, in X's order (Paddle leaves their order unspecified)
    make(
        "top_k_v2",
        {"X": x},
        {
            "Out": np.array([[5.0, 5.0, 4.0], [np.nan, 2.0, 7.0]]),
            "Indices": np.array([[2, 4, 5], [1, 3, 5]]),
        },
        {"k": 3, "sorted": False},
    ).check_output()
    k = np.array([2], "int32")
    make(
        "top_k_v2",
        {"X": x[:1], "K": k},
        {"Out": np.array([[5.0, 5.0]]), "Indices": np.array([[2, 4]])},
        {"k": 1},
    ).check_output()


def test_top_k_v2_errors():
    x = rand(2, 3)
    with pytest.raises(tide.TideError, match=r"top_k_v2.*k = 4 must be in \[1, dim 1 of X"):
        make("top_k_v2", {"X": x}, {"Out": x, "Indices": x}, {"k": 4}).check_output()
    with pytest.raises(tide.TideError, match="top_k_v2.*axis 2 is out of range"):
        make("top_k_v2", {"X": x}, {"Out": x, "Indices": x}, {"axis": 2}).check_output()


def test_top_k_unchanged():
    """top_k (Fluid's, last axis) shares top_k_v2's selection."""
    x = np.array([[3.0, 1.0, 5.0, 2.0, 5.0]])
    make(
        "top_k",
        {"X": x},
        {"Out": np.array([[5.0, 5.0, 3.0]]), "Indices": np.array([[2, 4, 0]])},
        {"k": 3},
    ).check_output()


# --- silu, mish --------------------------------------------------------------------------------


def softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_silu(dtype):
    x = rand(3, 4, dtype=dtype) * 4
    t = make("silu", {"X": x}, {"Out": x / (1 + np.exp(-x.astype("float64")))})
    t.check_output(atol=1e-6, rtol=1e-5)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("threshold", [20.0, 0.5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_mish(threshold, dtype):
    """X * tanh(softplus(X)), softplus taken as X above the threshold (Paddle's rule)."""
    x = rand(3, 4, dtype=dtype) * 4
    x64 = x.astype("float64")
    sp = np.where(x64 > threshold, x64, softplus(x64))
    t = make("mish", {"X": x}, {"Out": x64 * np.tanh(sp)}, {"threshold": threshold})
    t.check_output(atol=1e-6, rtol=1e-5)
    if threshold == 20.0:  # the threshold's kink is no place for finite differences
        t.check_grad(["X"], "Out", **grad_args(dtype))


def test_layers():
    """The generated layers: tide.layers.<op>(inputs..., attrs...). (tide.layers.where is Fluid's
    layer, the where_index op.)"""
    x = tide.layers.data(name="x", shape=[2, 3], dtype="float32", append_batch_size=False)
    outs = [
        tide.layers.log_softmax(x, axis=0),
        tide.layers.silu(x),
        tide.layers.mish(x),
        tide.layers.tile(x, repeat_times=[2, 1]),
        tide.layers.top_k_v2(x, k=2)[0],
    ]
    xs = np.arange(6, dtype="float32").reshape(2, 3) - 2
    got = tide.Executor(tide.CPUPlace()).run(feed={"x": xs}, fetch_list=outs)
    np.testing.assert_allclose(got[0], log_softmax(xs.astype("float64"), 0), rtol=1e-5)
    np.testing.assert_allclose(got[3], np.tile(xs, [2, 1]))
    np.testing.assert_allclose(got[4], -np.sort(-xs, axis=1)[:, :2])
