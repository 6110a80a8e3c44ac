"""Paddle's shape and rearrangement ops: pixel_shuffle, pixel_unshuffle, channel_shuffle,
diagonal, trace, size (paddle.numel), meshgrid, linspace, reduce_amax / reduce_amin (the grad
split among ties) and cumprod (zeros in X), each against a numpy reference of Paddle's rule,
gradients by central finite differences (float64), and the errors of bad inputs."""

import numpy as np
import pytest
from op_test import make

import tide
from tide import layers

RNG = np.random.RandomState(11)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]


def rand(*shape, dtype="float64"):
    return RNG.uniform(-1, 1, shape).astype(dtype)


# --- pixel_shuffle / pixel_unshuffle / channel_shuffle -----------------------------------------


def pixel_shuffle(x, r, fmt):
    if fmt == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    y = x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3)
    y = y.reshape(n, c // (r * r), h * r, w * r)
    return y.transpose(0, 2, 3, 1) if fmt == "NHWC" else y


def pixel_unshuffle(x, r, fmt):
    if fmt == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // r, r, w // r, r).transpose(0, 1, 3, 5, 2, 4)
    y = y.reshape(n, c * r * r, h // r, w // r)
    return y.transpose(0, 2, 3, 1) if fmt == "NHWC" else y


def channel_shuffle(x, g, fmt):
    if fmt == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    y = x.reshape(n, g, c // g, h, w).transpose(0, 2, 1, 3, 4).reshape(n, c, h, w)
    return y.transpose(0, 2, 3, 1) if fmt == "NHWC" else y


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_pixel_shuffle(fmt, dtype):
    shape = (2, 8, 3, 2) if fmt == "NCHW" else (2, 3, 2, 8)
    x = rand(*shape, dtype=dtype)
    attrs = {"upscale_factor": 2, "data_format": fmt}
    t = make("pixel_shuffle", {"X": x}, {"Out": pixel_shuffle(x, 2, fmt)}, attrs)
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_pixel_unshuffle(fmt, dtype):
    shape = (2, 2, 6, 4) if fmt == "NCHW" else (2, 6, 4, 2)
    x = rand(*shape, dtype=dtype)
    attrs = {"downscale_factor": 2, "data_format": fmt}
    t = make("pixel_unshuffle", {"X": x}, {"Out": pixel_unshuffle(x, 2, fmt)}, attrs)
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_channel_shuffle(fmt, dtype):
    shape = (2, 6, 2, 3) if fmt == "NCHW" else (2, 2, 3, 6)
    x = rand(*shape, dtype=dtype)
    attrs = {"groups": 3, "data_format": fmt}
    t = make("channel_shuffle", {"X": x}, {"Out": channel_shuffle(x, 3, fmt)}, attrs)
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_shuffle_int_types():
    x = RNG.randint(-9, 9, (1, 4, 2, 2)).astype("int64")
    make(
        "pixel_shuffle", {"X": x}, {"Out": pixel_shuffle(x, 2, "NCHW")}, {"upscale_factor": 2}
    ).check_output()


def test_shuffle_errors():
    x = rand(1, 6, 2, 2)
    with pytest.raises(
        tide.TideError, match=r"pixel_shuffle.*channels \(6\).*upscale_factor\^2 \(4\)"
    ):
        make("pixel_shuffle", {"X": x}, {"Out": x}, {"upscale_factor": 2}).check_output()
    with pytest.raises(tide.TideError, match=r"pixel_unshuffle.*height and width \(2, 2\).*\(3\)"):
        make("pixel_unshuffle", {"X": x}, {"Out": x}, {"downscale_factor": 3}).check_output()
    with pytest.raises(tide.TideError, match=r"channel_shuffle.*channels \(6\).*groups \(4\)"):
        make("channel_shuffle", {"X": x}, {"Out": x}, {"groups": 4}).check_output()
    with pytest.raises(tide.TideError, match=r"channel_shuffle.*X must be 4-D.*\[6, 2\]"):
        make("channel_shuffle", {"X": rand(6, 2)}, {"Out": x}, {"groups": 2}).check_output()
    with pytest.raises(tide.TideError, match="data_format.*NCHW, NHWC.*got 'NCDHW'"):
        make("pixel_shuffle", {"X": x}, {"Out": x}, {"data_format": "NCDHW"}).check_output()


# --- diagonal / trace --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,offset,axis1,axis2",
    [
        ((3, 4), 0, 0, 1),
        ((3, 4), 1, 0, 1),
        ((3, 4), -2, 0, 1),
        ((2, 3, 4), 1, 2, 0),
        ((2, 3, 4), -1, -1, 1),
        ((3, 4), 5, 0, 1),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_diagonal_trace(shape, offset, axis1, axis2, dtype):
    x = rand(*shape, dtype=dtype)
    attrs = {"offset": offset, "axis1": axis1, "axis2": axis2}
    want = np.diagonal(x, offset, axis1, axis2)
    t = make("diagonal", {"Input": x}, {"Out": want.copy()}, attrs)
    t.check_output(atol=0, rtol=0)
    tr = np.asarray(np.trace(x, offset, axis1, axis2), dtype=dtype)
    t2 = make("trace", {"Input": x}, {"Out": tr}, attrs)
    t2.check_output(atol=1e-6, rtol=1e-6)
    if dtype == "float64" and want.size:
        t.check_grad(["Input"], "Out", **GRAD)
        t2.check_grad(["Input"], "Out", **GRAD)


def test_trace_of_matrix_is_0d():
    x = rand(3, 3)
    out = make("trace", {"Input": x}, {"Out": np.asarray(np.trace(x))}).check_output()
    assert np.asarray(out[0]).shape == ()


def test_diagonal_errors():
    x = rand(3, 4)
    with pytest.raises(tide.TideError, match="diagonal.*axis1 and axis2 must name different dims"):
        make("diagonal", {"Input": x}, {"Out": x}, {"axis1": 1, "axis2": -1}).check_output()
    with pytest.raises(tide.TideError, match=r"trace.*Input must have rank >= 2, got \[3\]"):
        make("trace", {"Input": rand(3)}, {"Out": x}).check_output()


# --- size (numel) ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 3, 4), (), (0, 5)])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_size(shape, dtype):
    x = np.zeros(shape, dtype)
    out = make("size", {"Input": x}, {"Out": np.asarray(x.size, np.int64)}).check_output()
    assert np.asarray(out[0]).shape == () and np.asarray(out[0]).dtype == np.int64


# --- meshgrid ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_meshgrid(dtype):
    a, b, c = rand(3, dtype=dtype), rand(2, dtype=dtype), rand(4, dtype=dtype)
    grids = np.meshgrid(a, b, c, indexing="ij")
    t = make(
        "meshgrid",
        {"X": [("a", a), ("b", b), ("c", c)]},
        {"Out": [("ga", grids[0]), ("gb", grids[1]), ("gc", grids[2])]},
    )
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["a", "b", "c"], "Out", **GRAD)


def test_meshgrid_errors():
    with pytest.raises(tide.TideError, match=r"meshgrid.*X\[1\] must be 1-D or 0-D, got \[2, 2\]"):
        a = rand(3)
        make(
            "meshgrid", {"X": [("a", a), ("b", rand(2, 2))]}, {"Out": [("o1", a), ("o2", a)]}
        ).check_output()


# --- linspace ----------------------------------------------------------------------------------

DTYPE_CODE = {"float32": 5, "float64": 6, "int32": 2, "int64": 3}


def linspace(start, stop, num, dtype):
    """Paddle's kernel: start and stop in dtype, the step in double, the second half counted
    down from stop."""
    t = np.dtype(dtype).type
    start, stop = float(t(start)), float(t(stop))
    if num == 1:
        return np.array([start], dtype)
    step = (stop - start) / (num - 1)
    vals = [start + step * i if i < num // 2 else stop - step * (num - i - 1) for i in range(num)]
    return np.array([t(v) if dtype.startswith("float") else int(v) for v in vals], dtype)


@pytest.mark.parametrize(
    "start,stop,num,dtype",
    [
        (0.0, 1.0, 5, "float32"),
        (-2.5, 3.0, 7, "float64"),
        (2.0, 10.0, 4, "int32"),
        (10.0, -3.0, 6, "int64"),
        (1.5, 9.0, 1, "float32"),
    ],
)
def test_linspace(start, stop, num, dtype):
    inputs = {
        "Start": np.array([start], np.float32),
        "Stop": np.array([stop], np.float64),
        "Num": np.array([num], np.int32),
    }
    want = linspace(start, stop, num, dtype)
    t = make("linspace", inputs, {"Out": want}, {"dtype": DTYPE_CODE[dtype]})
    t.check_output(atol=0, rtol=0)


def test_linspace_errors():
    ins = {"Start": np.array([0.0]), "Stop": np.array([1.0]), "Num": np.array([0], np.int32)}
    with pytest.raises(tide.TideError, match=r"linspace.*Num.*must be > 0, got 0"):
        make("linspace", ins, {"Out": np.zeros(1, np.float32)}).check_output()
    ins = {"Start": np.array([0.0, 1.0]), "Stop": np.array([1.0]), "Num": np.array([3], np.int32)}
    with pytest.raises(tide.TideError, match=r"linspace.*Start.*must hold one element, got \[2\]"):
        make("linspace", ins, {"Out": np.zeros(3, np.float32)}).check_output()


# --- reduce_amax / reduce_amin -----------------------------------------------------------------


def amax_grad(x, dim, keep, fn):
    """Paddle's amax grad: the output gradient split evenly among the tied extremes."""
    out = fn(x, axis=dim, keepdims=True)
    mask = (x == out).astype(x.dtype)
    return mask / mask.sum(axis=dim, keepdims=True)


@pytest.mark.parametrize("op,fn", [("reduce_amax", np.max), ("reduce_amin", np.min)])
@pytest.mark.parametrize("dim,keep", [([1], False), ([0, 2], True), ([-1], False)])
@pytest.mark.parametrize("dtype", DTYPES + ["int32", "int64"])
def test_amax_amin(op, fn, dim, keep, dtype):
    x = RNG.randint(-5, 6, (3, 4, 5)).astype(dtype)  # small ints: many ties
    want = fn(x, axis=tuple(dim), keepdims=keep)
    t = make(op, {"X": x}, {"Out": want}, {"dim": dim, "keep_dim": keep})
    t.check_output(atol=0, rtol=0)


@pytest.mark.parametrize("op,fn", [("reduce_amax", np.max), ("reduce_amin", np.min)])
@pytest.mark.parametrize(
    "dim,keep,reduce_all", [([1], False, False), ([0, 2], True, False), ([0], False, True)]
)
def test_amax_amin_grad_splits_ties(op, fn, dim, keep, reduce_all):
    """dX = dOut / (the number of ties) on each tied extreme: checked against the exact rule
    (finite differences do not hold at ties) and, without ties, by finite differences."""
    x = RNG.randint(-2, 3, (3, 4, 5)).astype("float64")
    axes = tuple(range(3)) if reduce_all else tuple(dim)
    attrs = {"dim": dim, "keep_dim": keep, "reduce_all": reduce_all}
    want = fn(x, axis=axes, keepdims=keep)
    if want.ndim == 0:
        want = want.reshape(1)
    t = make(op, {"X": x}, {"Out": want}, attrs)
    t.check_output(atol=0, rtol=0)
    dx = weighted_grad(op, x, attrs)
    np.testing.assert_allclose(dx, amax_grad(x, axes, keep, fn), rtol=1e-12)
    distinct = RNG.permutation(60).reshape(3, 4, 5).astype("float64") / 7
    t = make(
        op,
        {"X": distinct},
        {"Out": fn(distinct, axis=axes, keepdims=keep).reshape(want.shape)},
        attrs,
    )
    t.check_grad(["X"], "Out", **GRAD)


def weighted_grad(op, x, attrs, w=None):
    """d(sum(w * Out))/dX (w: ones when None) through the op's grad op."""
    xv = layers.data(
        name="x", shape=list(x.shape), dtype="float64", append_batch_size=False, stop_gradient=False
    )
    block = tide.default_main_program().global_block()
    out = block.create_var(name="out", dtype="float64")
    block.append_op(type=op, inputs={"X": [xv]}, outputs={"Out": [out]}, attrs=attrs)
    feed = {"x": x}
    if w is not None:
        feed["w"] = w
        wv = layers.data(name="w", shape=list(w.shape), dtype="float64", append_batch_size=False)
        out = layers.elementwise_mul(out, wv)
    tide.append_backward(layers.reduce_sum(out), parameter_list=["x"])
    return tide.Executor(tide.CPUPlace()).run(feed=feed, fetch_list=["x@GRAD"])[0]


# --- cumprod -----------------------------------------------------------------------------------


def cumprod(x, dim, exclusive=False, reverse=False):
    y = np.flip(x, dim) if reverse else x
    out = np.cumprod(y, axis=dim)
    if exclusive:
        ones = np.ones_like(np.take(y, [0], axis=dim))
        out = np.concatenate([ones, np.delete(out, -1, axis=dim)], axis=dim)
    return np.flip(out, dim) if reverse else out


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize(
    "exclusive,reverse", [(False, False), (True, False), (False, True), (True, True)]
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cumprod(dim, exclusive, reverse, dtype):
    x = rand(3, 4, 5, dtype=dtype) + np.asarray(0.2, dtype)
    attrs = {"dim": dim, "exclusive": exclusive, "reverse": reverse}
    t = make("cumprod", {"X": x}, {"Out": cumprod(x, dim, exclusive, reverse)}, attrs)
    t.check_output(atol=1e-6, rtol=1e-5)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, True)])
def test_cumprod_grad_with_zeros(exclusive, reverse):
    """Zeros (one, two, adjacent) in X: the gradient is exact (cumprod is a polynomial, so central
    differences hold there too)."""
    x = rand(4, 6)
    x[0, 2] = 0.0
    x[1, 1] = x[1, 4] = 0.0
    x[2, 0] = x[2, 1] = 0.0
    attrs = {"dim": 1, "exclusive": exclusive, "reverse": reverse}
    t = make("cumprod", {"X": x}, {"Out": cumprod(x, 1, exclusive, reverse)}, attrs)
    t.check_output(atol=1e-12, rtol=1e-12)
    t.check_grad(["X"], "Out", **GRAD)


def test_cumprod_paddle_zero_grad():
    """Paddle 3.3.1's own gradient for x = [2, 0, 3, 0, 5], dOut = [1, 2, 3, 4, 5]."""
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    t = make("cumprod", {"X": x}, {"Out": np.cumprod(x)}, {"dim": 0})
    t.check_output()
    dx = weighted_grad("cumprod", x, {"dim": 0}, w=np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    np.testing.assert_allclose(dx, [1.0, 22.0, 0.0, 0.0, 0.0])


def test_cumprod_dim_out_of_range():
    x = rand(2, 3)
    with pytest.raises(tide.TideError, match="cumprod.*2.*out of range"):
        make("cumprod", {"X": x}, {"Out": x}, {"dim": 2}).check_output()


# --- kron --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x_shape,y_shape", [((2, 3), (3, 2)), ((2,), (3,)), ((2, 1, 3), (2, 2)), ((3,), (2, 2, 1))]
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_kron(x_shape, y_shape, dtype):
    x, y = rand(*x_shape, dtype=dtype), rand(*y_shape, dtype=dtype)
    t = make("kron", {"X": x, "Y": y}, {"Out": np.kron(x, y)})
    t.check_output(atol=1e-6, rtol=1e-6)
    if dtype == "float64":
        t.check_grad(["X", "Y"], "Out", **GRAD)


def test_kron_int():
    x = RNG.randint(-4, 5, (2, 2)).astype("int64")
    y = RNG.randint(-4, 5, (3, 1)).astype("int64")
    make("kron", {"X": x, "Y": y}, {"Out": np.kron(x, y)}).check_output()


def test_kron_type_mismatch():
    x = rand(2, 2)
    with pytest.raises(tide.TideError, match="kron.*X is float64 but Y is float32"):
        make("kron", {"X": x, "Y": x.astype("float32")}, {"Out": x}).check_output()


# --- repeat_interleave -------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_interleave_int_repeats(dim, dtype):
    x = rand(2, 3, 4, dtype=dtype)
    t = make(
        "repeat_interleave",
        {"X": x},
        {"Out": np.repeat(x, 3, axis=dim)},
        {"Repeats": 3, "dim": dim},
    )
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


@pytest.mark.parametrize("rep_dtype", ["int32", "int64"])
def test_repeat_interleave_tensor_repeats(rep_dtype):
    x = rand(2, 4, 3)
    reps = np.array([1, 0, 3, 2], rep_dtype)  # a count of 0 drops the slice
    t = make(
        "repeat_interleave",
        {"X": x, "RepeatsTensor": reps},
        {"Out": np.repeat(x, reps, axis=1)},
        {"dim": 1},
    )
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)


def test_repeat_interleave_errors():
    x = rand(2, 3)
    with pytest.raises(tide.TideError, match=r"repeat_interleave.*RepeatsTensor.*\(3\), got 2"):
        reps = np.array([1, 2], np.int64)
        make(
            "repeat_interleave", {"X": x, "RepeatsTensor": reps}, {"Out": x}, {"dim": 1}
        ).check_output()
    with pytest.raises(tide.TideError, match="repeat_interleave.*must be >= 0, got -1"):
        reps = np.array([1, -1], np.int64)
        make("repeat_interleave", {"X": x, "RepeatsTensor": reps}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match="repeat_interleave.*axis 2 is out of range"):
        make("repeat_interleave", {"X": x}, {"Out": x}, {"Repeats": 2, "dim": 2}).check_output()


def test_amax_axis_tensor_refused():
    """Paddle 2.x's reduce_amax declares AxisTensor (dims from a tensor): refused, naming it."""
    x = rand(2, 3)
    with pytest.raises(tide.TideError, match="reduce_amax.*AxisTensor.*not supported"):
        ins = {"X": x, "AxisTensor": np.array([1], np.int64)}
        make("reduce_amax", ins, {"Out": x.max(1)}).check_output()
