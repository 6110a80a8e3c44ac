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


# --- bmm ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_bmm(dtype):
    x, y = rand(3, 2, 4, dtype=dtype), rand(3, 4, 5, dtype=dtype)
    t = make("bmm", {"X": x, "Y": y}, {"Out": np.matmul(x, y)})
    t.check_output(atol=1e-5, rtol=1e-5)
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


def test_bmm_errors():
    with pytest.raises(tide.TideError, match="bmm.*X must be 3-D"):
        make("bmm", {"X": rand(2, 3), "Y": rand(2, 3, 4)}, {"Out": rand(1)}).check_output()
    with pytest.raises(tide.TideError, match="bmm.*must have one batch size"):
        make("bmm", {"X": rand(2, 2, 3), "Y": rand(3, 3, 4)}, {"Out": rand(1)}).check_output()
    with pytest.raises(tide.TideError, match="bmm.*do not multiply"):
        make("bmm", {"X": rand(2, 2, 3), "Y": rand(2, 4, 4)}, {"Out": rand(1)}).check_output()


# --- index_select ------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_index_select(dim, index_dtype):
    x = rand(3, 4, 5)
    index = np.array([2, 0, 2], index_dtype)  # a repeat: its gradient adds up
    t = make(
        "index_select", {"X": x, "Index": index}, {"Out": np.take(x, index, axis=dim)}, {"dim": dim}
    )
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)


def test_index_select_types_and_errors():
    x = RNG.randint(0, 9, (3, 4)).astype("int64")
    idx = np.array([1, 3])
    make("index_select", {"X": x, "Index": idx}, {"Out": x[:, idx]}, {"dim": 1}).check_output()
    with pytest.raises(tide.TideError, match=r"index_select.*Index .*\[1\] = 4 is out of range"):
        make(
            "index_select", {"X": x, "Index": np.array([0, 4])}, {"Out": x}, {"dim": 1}
        ).check_output()
    with pytest.raises(tide.TideError, match="index_select.*Index .* must be int32 or int64"):
        make("index_select", {"X": x, "Index": np.array([0.0])}, {"Out": x}).check_output()


# --- one_hot_v2 --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 1)])
def test_one_hot_v2(shape):
    """Out is X's dims plus [depth] (one_hot's X ends in 1; v2's any dims)."""
    x = RNG.randint(0, 5, shape).astype("int64")
    make(
        "one_hot_v2", {"X": x}, {"Out": np.eye(5, dtype="float32")[x]}, {"depth": 5}
    ).check_output()


def test_one_hot_v2_depth_tensor_dtype_and_range():
    x = np.array([0, 2, 1], "int32")
    want = np.eye(3)[x]
    make(
        "one_hot_v2",
        {"X": x, "depth_tensor": np.array([3], "int32")},
        {"Out": want},
        {"dtype": 6},  # float64
    ).check_output()
    with pytest.raises(tide.TideError, match=r"one_hot_v2.*X .* holds 3, outside \[0, 3\)"):
        make("one_hot_v2", {"X": np.array([3])}, {"Out": want}, {"depth": 3}).check_output()
    want = np.array([[0, 1, 0], [0, 0, 0]], "float32")
    make(
        "one_hot_v2",
        {"X": np.array([1, 5])},
        {"Out": want},
        {"depth": 3, "allow_out_of_range": True},
    ).check_output()


# --- expand_as_v2 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x_shape,y_shape", [((1, 3), (4, 3)), ((3, 1), (2, 3, 5)), ((2, 3), (2, 3))]
)
def test_expand_as_v2(x_shape, y_shape):
    x, y = rand(*x_shape), rand(*y_shape)
    want = np.broadcast_to(x, y_shape)
    t = make("expand_as_v2", {"X": x, "Y": y}, {"Out": want}, {"target_shape": list(y_shape)})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)
    # without Y: the attribute (-1 keeps X's dim)
    target = [
        -1
        if i >= len(y_shape) - len(x_shape) and x_shape[i - len(y_shape) + len(x_shape)] == n
        else n
        for i, n in enumerate(y_shape)
    ]
    make("expand_as_v2", {"X": x}, {"Out": want}, {"target_shape": target}).check_output()


def test_expand_as_v2_errors():
    with pytest.raises(tide.TideError, match=r"expand_as_v2.*cannot expand to \[4, 3\]"):
        make("expand_as_v2", {"X": rand(2, 3), "Y": rand(4, 3)}, {"Out": rand(4, 3)}).check_output()


# --- p_norm ------------------------------------------------------------------------------------


def p_norm_ref(x, p, axis, keepdim, asvector):
    ax = None if asvector else axis
    a = np.abs(x)
    if p == np.inf:
        r = a.max(axis=ax, keepdims=keepdim)
    elif p == -np.inf:
        r = a.min(axis=ax, keepdims=keepdim)
    elif p == 0:
        r = (x != 0).sum(axis=ax, keepdims=keepdim).astype(x.dtype)
    else:
        r = (a**p).sum(axis=ax, keepdims=keepdim) ** (1.0 / p)
    return np.asarray(r, x.dtype)


@pytest.mark.parametrize(
    "p,axis,keepdim,asvector",
    [
        (2.0, -1, False, False),
        (2.0, 0, True, False),
        (3.0, 1, False, False),
        (1.0, 1, False, False),
        (2.0, -1, False, True),
        (2.0, -1, True, True),
        (np.inf, 1, False, False),
        (-np.inf, 0, False, False),
        (0.0, 1, False, False),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_p_norm(p, axis, keepdim, asvector, dtype):
    x = rand(2, 3, 4, dtype=dtype) + 0.1  # no zeros, where |X|^(p-1)'s derivative breaks
    x[0, 0, 0] = 0 if p == 0 else x[0, 0, 0]
    attrs = {"porder": float(p), "axis": axis, "keepdim": keepdim, "asvector": asvector}
    t = make("p_norm", {"X": x}, {"Out": p_norm_ref(x, p, axis, keepdim, asvector)}, attrs)
    t.check_output(atol=1e-5, rtol=1e-5)
    if p not in (0.0,) and dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_p_norm_axis_out_of_range():
    with pytest.raises(tide.TideError, match="p_norm.*axis 3 is out of range"):
        make("p_norm", {"X": rand(2, 3)}, {"Out": rand(2)}, {"axis": 3}).check_output()


# --- unbind ------------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unbind(axis):
    x = rand(2, 3, 4)
    parts = [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
    t = make(
        "unbind", {"X": x}, {"Out": [("out%d" % i, p) for i, p in enumerate(parts)]}, {"axis": axis}
    )
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)


def test_unbind_output_count_must_match():
    x = rand(2, 3)
    with pytest.raises(
        tide.TideError, match=r"unbind.*2 outputs Out for X \[2, 3\] with 3 at axis 1"
    ):
        make(
            "unbind", {"X": x}, {"Out": [("a", x[:, 0]), ("b", x[:, 1])]}, {"axis": 1}
        ).check_output()


# --- pad3d -------------------------------------------------------------------------------------

NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad3d_ref(x, p, mode, value, fmt):
    """paddings (left, right, top, bottom, front, back) as numpy's per-dim pairs."""
    spatial = [(p[4], p[5]), (p[2], p[3]), (p[0], p[1])]
    width = [(0, 0), (0, 0)] + spatial if fmt == "NCDHW" else [(0, 0)] + spatial + [(0, 0)]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x, width, mode=NP_MODE[mode], **kw)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("fmt", ["NCDHW", "NDHWC"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_pad3d(mode, fmt, dtype):
    x = rand(2, 3, 3, 3, 4, dtype=dtype)
    p = [1, 2, 0, 2, 1, 0]
    attrs = {"paddings": p, "mode": mode, "value": 0.5, "data_format": fmt}
    t = make("pad3d", {"X": x}, {"Out": pad3d_ref(x, p, mode, 0.5, fmt)}, attrs)
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_pad3d_paddings_tensor_and_errors():
    x = rand(1, 2, 1, 3, 3)
    p = np.array([1, 1, 2, 0, 0, 0], "int32")
    want = pad3d_ref(x, list(p), "replicate", 0, "NCDHW")
    t = make("pad3d", {"X": x, "Paddings": p}, {"Out": want}, {"mode": "replicate"})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)
    with pytest.raises(tide.TideError, match="pad3d.*reflect padding 3, 0 must be less than"):
        make(
            "pad3d", {"X": x}, {"Out": x}, {"paddings": [3, 0, 0, 0, 0, 0], "mode": "reflect"}
        ).check_output()
    with pytest.raises(tide.TideError, match="pad3d.*X must be 5-D"):
        make("pad3d", {"X": rand(2, 3, 4)}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match="mode.*must be one of"):
        make("pad3d", {"X": x}, {"Out": x}, {"mode": "edge"}).check_output()


def test_assign_value_fp64_values():
    """Paddle 2.6 holds a float64 array's values in fp64_values (the index_select model's
    assign_value has the attribute, empty); older programs put them in fp32_values."""
    want = np.array([[0.1, 2.0], [3.0, -1e-300]])
    attrs = {"shape": [2, 2], "dtype": 6, "fp64_values": list(want.ravel())}
    make("assign_value", {}, {"Out": want}, attrs).check_output(atol=0, rtol=0)
    attrs = {"shape": [2], "dtype": 6, "fp32_values": [0.5, 2.0]}
    make("assign_value", {}, {"Out": np.array([0.5, 2.0])}, attrs).check_output(atol=0, rtol=0)


# --- max_pool2d_with_index ---------------------------------------------------------------------


def max_pool_index_ref(x, windows_h, windows_w):
    """Out and Mask (h * W + w, the first of equal maxima) over the given windows."""
    n, c, h, w = x.shape
    out = np.zeros((n, c, len(windows_h), len(windows_w)), x.dtype)
    mask = np.zeros(out.shape, "int32")
    for i, (h0, h1) in enumerate(windows_h):
        for j, (w0, w1) in enumerate(windows_w):
            win = x[:, :, h0:h1, w0:w1].reshape(n, c, -1)
            k = win.argmax(axis=2)
            out[:, :, i, j] = win.max(axis=2)
            mask[:, :, i, j] = (h0 + k // (w1 - w0)) * w + w0 + k % (w1 - w0)
    return out, mask


def adaptive_windows(size, out):
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def strided_windows(size, k, s, p, ceil_mode=False):
    span = size + 2 * p - k
    n = (-(-span // s) if ceil_mode else span // s) + 1
    return [(max(i * s - p, 0), min(i * s - p + k, size)) for i in range(n)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_pool2d_with_index_adaptive(dtype):
    x = RNG.permutation(2 * 3 * 7 * 5).reshape(2, 3, 7, 5).astype(dtype)  # no ties
    out, mask = max_pool_index_ref(x, adaptive_windows(7, 3), adaptive_windows(5, 2))
    attrs = {"ksize": [3, 2], "adaptive": True}
    t = make("max_pool2d_with_index", {"X": x}, {"Out": out, "Mask": mask}, attrs)
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


@pytest.mark.parametrize(
    "ksize,strides,paddings,ceil_mode",
    [
        ([2, 2], [2, 2], [0, 0], False),
        ([3, 3], [2, 1], [1, 1], False),
        ([2, 2], [2, 2], [0, 1], True),
    ],
)
def test_max_pool2d_with_index_windows(ksize, strides, paddings, ceil_mode):
    x = RNG.permutation(2 * 2 * 5 * 6).reshape(2, 2, 5, 6).astype("float64")
    wh = strided_windows(5, ksize[0], strides[0], paddings[0], ceil_mode)
    ww = strided_windows(6, ksize[1], strides[1], paddings[1], ceil_mode)
    out, mask = max_pool_index_ref(x, wh, ww)
    attrs = {"ksize": ksize, "strides": strides, "paddings": paddings, "ceil_mode": ceil_mode}
    t = make("max_pool2d_with_index", {"X": x}, {"Out": out, "Mask": mask}, attrs)
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)


def test_max_pool2d_with_index_global_ties_and_errors():
    x = np.array([[[[1.0, 3.0], [3.0, 0.0]]]])
    make(
        "max_pool2d_with_index",
        {"X": x},
        {"Out": np.array([[[[3.0]]]]), "Mask": np.array([[[[1]]]], "int32")},  # the first 3
        {"ksize": [1, 1], "global_pooling": True},
    ).check_output()
    with pytest.raises(tide.TideError, match=r"max_pool2d_with_index.*X must be 4-D"):
        make(
            "max_pool2d_with_index", {"X": rand(2, 3)}, {"Out": x, "Mask": x}, {"ksize": [1, 1]}
        ).check_output()
    with pytest.raises(tide.TideError, match=r"max_pool2d_with_index.*window 3 is larger"):
        make(
            "max_pool2d_with_index", {"X": x}, {"Out": x, "Mask": x}, {"ksize": [3, 3]}
        ).check_output()


# --- select_input / select_output (Paddle 2.x's cond) -------------------------------------------


@pytest.mark.parametrize("mask", [0, 1])
def test_select_input_output(mask):
    a, b = rand(2, 3), rand(2, 3)
    m = np.array([mask], "int32")
    t = make("select_input", {"X": [("a", a), ("b", b)], "Mask": m}, {"Out": [a, b][mask]})
    t.check_output(atol=0, rtol=0)
    # the gradient goes to the branch taken (the other's, as in Paddle, is not written)
    t.check_grad(["ab"[mask]], "Out", **GRAD)


@pytest.mark.parametrize("mask", [0, 1])
def test_select_output_writes_the_branch_taken(mask, exe):
    x = tide.layers.data(name="x", shape=[3], dtype="float32")
    m = tide.layers.data(name="mask", shape=[1], dtype="int32", append_batch_size=False)
    block = tide.default_main_program().global_block()
    outs = [block.create_var(name="o%d" % i, dtype="float32") for i in range(2)]
    block.append_op("select_output", inputs={"X": x, "Mask": m}, outputs={"Out": outs})
    assert list(outs[0].shape) == [-1, 3]
    xs = rand(2, 3, dtype="float32")
    (got,) = exe.run(feed={"x": xs, "mask": np.array([mask], "int32")}, fetch_list=[outs[mask]])
    np.testing.assert_array_equal(got, xs)


def test_select_input_reads_only_the_branch_taken(exe):
    """The branch that did not run left its output without data: only X[Mask] is read."""
    x = tide.layers.data(name="x", shape=[3], dtype="float32")
    mask = tide.layers.data(name="mask", shape=[1], dtype="int32", append_batch_size=False)
    block = tide.default_main_program().global_block()
    unset = block.create_var(name="never_written", dtype="float32", shape=[-1, 3])
    out = block.create_var(name="selected", dtype="float32")
    block.append_op("select_input", inputs={"X": [unset, x], "Mask": mask}, outputs={"Out": out})
    xs = rand(2, 3, dtype="float32")
    (got,) = exe.run(feed={"x": xs, "mask": np.array([1], "int32")}, fetch_list=[out])
    np.testing.assert_array_equal(got, xs)
    with pytest.raises(
        tide.TideError, match=r"select_input.*Mask 'mask' holds 2, outside \[0, 2\)"
    ):
        exe.run(feed={"x": xs, "mask": np.array([2], "int32")}, fetch_list=[out])
    with pytest.raises(tide.TideError, match="select_input.*'never_written' holds no data"):
        exe.run(feed={"x": xs, "mask": np.array([0], "int32")}, fetch_list=[out])


# --- erf, flip, roll, logsumexp (priority 4) ---------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_erf(dtype):
    from math import erf

    x = rand(3, 4, dtype=dtype) * 2
    want = np.vectorize(erf)(x.astype("float64"))
    t = make("erf", {"X": x}, {"Out": want})
    t.check_output(atol=1e-6, rtol=1e-5)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("axis", [[0], [1, -1], [0, 1, 2], []])
@pytest.mark.parametrize("dtype", DTYPES + ["int64"])
def test_flip(axis, dtype):
    x = RNG.permutation(24).reshape(2, 3, 4).astype(dtype)
    t = make("flip", {"X": x}, {"Out": np.flip(x, axis=tuple(axis))}, {"axis": axis})
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_flip_repeated_axis():
    with pytest.raises(tide.TideError, match="flip.*names dim 1 twice"):
        make("flip", {"X": rand(2, 3)}, {"Out": rand(2, 3)}, {"axis": [1, -1]}).check_output()


@pytest.mark.parametrize(
    "shifts,axis", [([1], [0]), ([-2, 5], [1, 2]), ([7], []), ([1, 1], [1, 1])]
)
@pytest.mark.parametrize("dtype", DTYPES + ["int32"])
def test_roll(shifts, axis, dtype):
    x = RNG.permutation(24).reshape(2, 3, 4).astype(dtype)
    want = np.roll(x, shifts, axis=tuple(axis)) if axis else np.roll(x, shifts[0])
    t = make("roll", {"X": x}, {"Out": want}, {"shifts": shifts, "axis": axis})
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_roll_shifts_tensor_and_errors():
    x = rand(3, 4)
    make(
        "roll",
        {"X": x, "ShiftsTensor": np.array([2], "int64")},
        {"Out": np.roll(x, 2, axis=1)},
        {"axis": [1]},
    ).check_output()
    with pytest.raises(tide.TideError, match="roll.*must have one length"):
        make("roll", {"X": x}, {"Out": x}, {"shifts": [1, 2], "axis": [0]}).check_output()


@pytest.mark.parametrize(
    "axis,keepdim,reduce_all",
    [([0], False, False), ([1, -1], True, False), ([-1], False, False), ([0], False, True)],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_logsumexp(axis, keepdim, reduce_all, dtype):
    x = rand(2, 3, 4, dtype=dtype) * 2
    x64 = x.astype("float64")
    ax = None if reduce_all else tuple(a % 3 for a in axis)
    m = x64.max(axis=ax, keepdims=True)
    want = np.log(np.exp(x64 - m).sum(axis=ax, keepdims=True)) + m
    want = want if keepdim else np.squeeze(want, axis=ax)
    attrs = {"axis": axis, "keepdim": keepdim, "reduce_all": reduce_all}
    t = make("logsumexp", {"X": x}, {"Out": np.asarray(want)}, attrs)
    t.check_output(atol=1e-5, rtol=1e-5)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_logsumexp_large_and_minus_inf():
    x = np.array([[1000.0, 1000.0], [-np.inf, -np.inf]])
    out = np.array([1000.0 + np.log(2.0), -np.inf])
    make("logsumexp", {"X": x}, {"Out": out}, {"axis": [1]}).check_output()


# --- index_sample, take_along_axis, masked_select ----------------------------------------------


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_index_sample(index_dtype):
    x = rand(3, 5)
    index = np.array([[0, 4, 4], [1, 1, 2], [3, 0, 2]], index_dtype)
    t = make("index_sample", {"X": x, "Index": index}, {"Out": np.take_along_axis(x, index, 1)})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)
    with pytest.raises(tide.TideError, match=r"index_sample.*Index .*\[1\] = 5 is out of range"):
        make("index_sample", {"X": x, "Index": index * 0 + [[0, 5, 0]]}, {"Out": x}).check_output()


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis(axis):
    x = rand(3, 4, 5)
    shape = [3, 4, 5]
    shape[axis] = 2
    index = RNG.randint(0, x.shape[axis], shape).astype("int64")
    want = np.take_along_axis(x, index, axis)
    t = make("take_along_axis", {"Input": x, "Index": index}, {"Result": want}, {"Axis": axis})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["Input"], "Result", **GRAD)


def test_take_along_axis_errors():
    x = rand(3, 4)
    with pytest.raises(tide.TideError, match="take_along_axis.*must have Input's rank"):
        make(
            "take_along_axis", {"Input": x, "Index": np.zeros(3, "int64")}, {"Result": x}
        ).check_output()


@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (3, 1)])
def test_masked_select(mask_shape):
    x = rand(3, 4)
    mask = RNG.rand(*mask_shape) > 0.4
    want = x[np.broadcast_to(mask, x.shape)]
    t = make("masked_select", {"X": x, "Mask": mask}, {"Y": want})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Y", **GRAD)


def test_masked_select_mask_must_be_bool():
    x = rand(2, 2)
    with pytest.raises(tide.TideError, match="masked_select.*Mask .* must be bool"):
        make("masked_select", {"X": x, "Mask": x}, {"Y": x.ravel()}).check_output()


def test_unbind_layer(exe):
    """Fluid 1.8's layers.unbind: one part per index of the axis, each without it."""
    x = tide.layers.data(name="x", shape=[3, 4], dtype="float32")
    parts = tide.layers.unbind(x, axis=-1)
    assert len(parts) == 4 and list(parts[0].shape) == [-1, 3]
    xs = rand(2, 3, 4, dtype="float32")
    got = exe.run(feed={"x": xs}, fetch_list=parts)
    for i, g in enumerate(got):
        np.testing.assert_array_equal(g, xs[:, :, i])
    with pytest.raises(ValueError, match="unbind: input's dim 0 is unknown"):
        tide.layers.unbind(x, axis=0)
