"""Paddle's extra element-wise and tensor ops (elem): isclose, allclose, equal_all, angle,
copysign, nextafter, bitwise_left_shift / bitwise_right_shift, logspace, broadcast_tensors,
unique_consecutive, fill_diagonal_tensor and clip of integers; against numpy references written
from Paddle's documented rules, gradients by central differences, and the errors of bad
inputs."""

import itertools

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(62)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]
INT_CODES = {"int32": 2, "int64": 3, "float32": 5, "float64": 6}


def tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-5} if dtype == "float32" else {"atol": 1e-12, "rtol": 1e-12}


# --- isclose / allclose / equal_all --------------------------------------------------------


def paddle_close(a, b, rtol, atol, equal_nan=False):
    """Paddle's rule (its isclose kernel), in a's type: |a - b| <= atol + rtol |b|, or equal, or
    within 1e-15 of the bound; so inf is close to -inf and 1 to inf (the bound is inf), unlike
    numpy's isclose."""
    t = a.dtype.type
    with np.errstate(invalid="ignore"):
        left = np.abs(a - b)
        right = (atol + rtol * np.abs(b.astype("float64"))).astype(a.dtype)
        close = (a == b) | (left <= right) | (np.abs(left - right) <= t(1e-15))
    nan = np.isnan(a) | np.isnan(b)
    return np.where(nan, equal_nan & np.isnan(a) & np.isnan(b), close)


def close_pair(dtype, shape):
    a = RNG.uniform(-2, 2, shape)
    b = a.copy()
    flat = b.reshape(-1)
    n = flat.size
    flat[: n // 3] += 1e-3  # clearly apart
    flat[n // 3 : 2 * n // 3] *= 1 + 1e-7  # within rtol
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), ()])
@pytest.mark.parametrize("tensors", [False, True])
def test_isclose_allclose(dtype, shape, tensors):
    a, b = close_pair(dtype, shape)
    if shape == (3, 4):
        a[0, 0], b[0, 0] = np.inf, np.inf  # equal infinities are close
        a[0, 1], b[0, 1] = np.inf, -np.inf  # close too: the bound is inf (Paddle's rule)
        a[0, 2], b[0, 2] = 1.0, np.inf
        a[0, 3], b[0, 3] = np.inf, 1.0  # not close
    for rtol, atol in [(1e-5, 1e-8), (1e-2, 0.0)]:
        want = paddle_close(a, b, rtol, atol)
        ins = {"Input": a, "Other": b}
        attrs = {}
        if tensors:
            ins.update(Rtol=np.array([rtol]), Atol=np.array([atol]))
            attrs = {"rtol": "0.5", "atol": "0.5"}  # the inputs win
        else:
            attrs = {"rtol": repr(rtol), "atol": repr(atol)}
        make("isclose", ins, {"Out": want}, attrs).check_output()
        make("allclose", ins, {"Out": np.array(want.all())}, attrs).check_output()
        close = {"Input": a, "Other": a * np.asarray(1 + 1e-7, dtype)}
        make("allclose", close, {"Out": np.array(True)}, attrs).check_output()


@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_nan(equal_nan):
    a = np.array([1.0, np.nan, np.nan, 2.0])
    b = np.array([1.0, np.nan, 3.0, np.nan])
    want = np.array([True, equal_nan, False, False])
    attrs = {"equal_nan": equal_nan}
    make("isclose", {"Input": a, "Other": b}, {"Out": want}, attrs).check_output()
    make(
        "allclose", {"Input": a[:2], "Other": b[:2]}, {"Out": np.array(equal_nan)}, attrs
    ).check_output()


def test_isclose_infinities():
    a = np.array([np.inf, np.inf, 1.0, np.inf, -np.inf])
    b = np.array([-np.inf, np.inf, np.inf, 1.0, 2.0])
    want = np.array([True, True, True, False, False])  # Paddle 3.3.1's results
    make("isclose", {"Input": a, "Other": b}, {"Out": want}).check_output()


def test_isclose_asymmetric():
    # |a - b| <= atol + rtol * |b|: Other's magnitude scales the tolerance.
    a, b = np.array([1.0]), np.array([2.0])
    attrs = {"rtol": "0.5", "atol": "0"}
    make("isclose", {"Input": a, "Other": b}, {"Out": np.array([True])}, attrs).check_output()
    make("isclose", {"Input": b, "Other": a}, {"Out": np.array([False])}, attrs).check_output()


def test_close_errors():
    x = np.zeros((3, 4))
    with pytest.raises(
        tide.TideError, match=r"isclose.*Input \[3, 4\] and Other \[4, 3\] must have the same dims"
    ):
        make("isclose", {"Input": x, "Other": x.T}, {"Out": x}).check_output()
    with pytest.raises(
        tide.TideError, match=r"allclose.*Input \[3, 4\] and Other \[1, 4\] must have the same dims"
    ):
        make("allclose", {"Input": x, "Other": x[:1]}, {"Out": np.array(True)}).check_output()
    xi = x.astype("int32")
    with pytest.raises(
        tide.TideError, match=r"isclose.*Input .* must be float32 or float64, got int32"
    ):
        make("isclose", {"Input": xi, "Other": xi}, {"Out": xi}).check_output()
    with pytest.raises(
        tide.TideError, match=r"isclose.*Input .* is float64 but Other .* is float32"
    ):
        make("isclose", {"Input": x, "Other": x.astype("float32")}, {"Out": x}).check_output()
    with pytest.raises(
        tide.TideError, match=r"isclose.*attribute rtol must be a number, got 'abc'"
    ):
        make("isclose", {"Input": x, "Other": x}, {"Out": x > 0}, {"rtol": "abc"}).check_output()
    with pytest.raises(
        tide.TideError, match=r"isclose.*Rtol .* must hold one float64, got float64 \[2\]"
    ):
        ins = {"Input": x, "Other": x, "Rtol": np.array([1e-5, 1e-5])}
        make("isclose", ins, {"Out": x > 0}).check_output()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_equal_all(dtype):
    x = RNG.randint(0, 2, (3, 4)).astype(dtype)
    make("equal_all", {"X": x, "Y": x.copy()}, {"Out": np.array(True)}).check_output()
    y = x.copy()
    y[2, 3] = not y[2, 3] if dtype == "bool" else y[2, 3] + 1
    make("equal_all", {"X": x, "Y": y}, {"Out": np.array(False)}).check_output()
    # Different dims (the same elements, or another rank) are not equal, as Paddle.
    make("equal_all", {"X": x, "Y": x.reshape(4, 3)}, {"Out": np.array(False)}).check_output()
    make("equal_all", {"X": x, "Y": x[None]}, {"Out": np.array(False)}).check_output()


def test_equal_all_nan_and_errors():
    x = np.array([1.0, np.nan])
    make("equal_all", {"X": x, "Y": x.copy()}, {"Out": np.array(False)}).check_output()
    with pytest.raises(tide.TideError, match=r"equal_all.*X .* is float64 but Y .* is int64"):
        make("equal_all", {"X": x, "Y": x.astype("int64")}, {"Out": np.array(False)}).check_output()


# --- angle, copysign, nextafter ------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_angle(dtype):
    x = RNG.uniform(-2, 2, (3, 5)).astype(dtype)
    x[np.abs(x) < 0.05] = 0.5
    x[0, :3] = [0.0, -0.0, np.nan]
    want = np.where(np.isnan(x), np.nan, np.where(x < 0, np.pi, 0.0))
    t = make("angle", {"X": x}, {"Out": want.astype(dtype)})
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t = make("angle", {"X": x[1:]}, {"Out": want[1:]})
        t.check_grad(["X"], "Out", **GRAD)  # zero


def test_angle_errors():
    with pytest.raises(
        tide.TideError,
        match=r"angle.*X .* must be float32, float64, complex64 or complex128, got int64",
    ):
        x = np.arange(3)
        make("angle", {"X": x}, {"Out": x}).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,ys", [((3, 4), (3, 4)), ((1, 4), (3, 1)), ((2, 3, 4), (4,))])
def test_copysign(dtype, xs, ys):
    x = RNG.uniform(-2, 2, xs)
    y = RNG.uniform(-2, 2, ys)
    x[np.abs(x) < 0.05] = 0.5
    y[np.abs(y) < 0.05] = -0.5
    x, y = x.astype(dtype), y.astype(dtype)
    want = np.abs(x.astype("float64")) * np.where(y < 0, -1.0, 1.0)
    t = make("copysign", {"x": x, "y": y}, {"out": want.astype(dtype)})
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["x", "y"], "out", **GRAD)  # y's gradient is 0


def test_copysign_zeros_and_ints():
    x = np.array([1.0, -2.0, 3.0, 0.0, -0.0])
    y = np.array([-0.0, 0.0, np.nan, -1.0, 1.0])
    want = np.array([-1.0, 2.0, 3.0, -0.0, 0.0])
    got = make("copysign", {"x": x, "y": y}, {"out": want}).forward()["out"]
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)
    for dtype in ["uint8", "int8", "int16", "int32", "int64"]:
        xi = np.array([1, 2, 3, 4], dtype)
        yi = np.array([-1, 1, 0, -5] if dtype != "uint8" else [1, 1, 0, 5], dtype)
        wi = np.where(yi.astype("int64") < 0, -xi.astype("int64"), xi.astype("int64")).astype(dtype)
        make("copysign", {"x": xi, "y": yi}, {"out": wi}).check_output()
    # x@GRAD is 0 where x is 0, as Paddle.
    x = np.array([0.0, 2.0, -3.0])
    y = np.array([-1.0, -1.0, 1.0])
    prog = tide.Program()
    with tide.program_guard(prog, tide.Program()):
        xv = tide.layers.data("x", [3], dtype="float64", append_batch_size=False)
        yv = tide.layers.data("y", [3], dtype="float64", append_batch_size=False)
        xv.stop_gradient = False
        out = tide.layers.copysign(xv, yv)
        loss = tide.layers.reduce_sum(out)
        ((_, gx),) = tide.backward.append_backward(loss, parameter_list=[xv.name])
    exe = tide.Executor(tide.CPUPlace())
    (g,) = exe.run(prog, feed={"x": x, "y": y}, fetch_list=[gx])
    np.testing.assert_array_equal(g, [0.0, -1.0, -1.0])


def test_copysign_errors():
    x = np.zeros((3, 4))
    with pytest.raises(tide.TideError, match=r"copysign.*x .* is float64 but y .* is float32"):
        make("copysign", {"x": x, "y": x.astype("float32")}, {"out": x}).check_output()
    with pytest.raises(tide.TideError, match=r"copysign.*\[3, 4\] and .*\[2, 4\] do not broadcast"):
        make("copysign", {"x": x, "y": x[:2]}, {"out": x}).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
def test_nextafter(dtype):
    x = RNG.uniform(-2, 2, (3, 4)).astype(dtype)
    y = RNG.uniform(-2, 2, (1, 4)).astype(dtype)
    x[0, 0], y[0, 0] = 1.0, 1.0  # equal: y
    x[1, 1] = 0.0
    want = np.nextafter(x, y)
    got = make("nextafter", {"x": x, "y": y}, {"out": want}).forward()["out"]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)


def test_nextafter_errors():
    x = np.arange(4, dtype="int32")
    with pytest.raises(
        tide.TideError, match=r"nextafter.*x .* must be float32 or float64, got int32"
    ):
        make("nextafter", {"x": x, "y": x}, {"out": x}).check_output()


# --- bitwise shifts ------------------------------------------------------------------------


def shift_ref(a, b, left, arithmetic):
    bits = a.dtype.itemsize * 8
    a, b = np.broadcast_arrays(a, b)
    out = np.zeros(a.shape, a.dtype)
    unsigned = np.dtype("uint%d" % bits)
    for idx in np.ndindex(a.shape):
        x, s = int(a[idx]), int(b[idx])
        if s < 0 or s >= bits:
            out[idx] = -1 if (not left and arithmetic and x < 0) else 0
        elif left:
            out[idx] = np.array((x << s) & ((1 << bits) - 1), unsigned).astype(a.dtype)
        elif arithmetic:
            out[idx] = x >> s
        else:
            out[idx] = np.array((x & ((1 << bits) - 1)) >> s, unsigned).astype(a.dtype)
    return out


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("arithmetic", [True, False])
def test_bitwise_shifts(dtype, arithmetic):
    info = np.iinfo(dtype)
    bits = np.dtype(dtype).itemsize * 8
    a = RNG.randint(max(info.min, -(2**40)), min(info.max, 2**40), (3, 6)).astype(dtype)
    a[0, :3] = [info.min, info.max, 0]
    b = np.array([0, 1, 3, bits - 1, bits, bits + 5], dtype="int64")
    if dtype != "uint8":
        b[4] = -1
    b = b.astype(dtype)
    for op, left in [("bitwise_left_shift", True), ("bitwise_right_shift", False)]:
        want = shift_ref(a, b, left, arithmetic)
        t = make(op, {"x": a, "y": b}, {"out": want}, {"is_arithmetic": arithmetic})
        t.check_output()
    # Broadcasting.
    a2, b2 = a[:, :1], np.array([[1, 2, 3]], dtype)
    want = shift_ref(a2, b2, True, arithmetic)
    make(
        "bitwise_left_shift", {"x": a2, "y": b2}, {"out": want}, {"is_arithmetic": arithmetic}
    ).check_output()


def test_bitwise_shift_errors():
    x = np.zeros((3,))
    with pytest.raises(
        tide.TideError,
        match=r"bitwise_left_shift.*x .* must be uint8, int8, int16, int32 or int64, got float64",
    ):
        make("bitwise_left_shift", {"x": x, "y": x}, {"out": x}).check_output()
    xi = x.astype("int32")
    with pytest.raises(
        tide.TideError, match=r"bitwise_right_shift.*x .* is int32 but y .* is int64"
    ):
        make("bitwise_right_shift", {"x": xi, "y": xi.astype("int64")}, {"out": xi}).check_output()


# --- logspace ------------------------------------------------------------------------------


def logspace_ref(start, stop, num, base, dtype):
    # Paddle's rule: start, stop and base in dtype, the step in double, the first half counted
    # up from start and the second down from stop.
    cast = np.dtype(dtype).type
    start, stop, base = cast(start), cast(stop), cast(base)
    if num == 1:
        return np.array([float(base) ** float(start)]).astype(dtype)
    step = float(cast(stop - start)) / (num - 1)
    e = [
        float(start) + step * i if i < num // 2 else float(stop) - step * (num - 1 - i)
        for i in range(num)
    ]
    with np.errstate(invalid="ignore"):
        return np.power(float(base), np.array(e)).astype(dtype)


@pytest.mark.parametrize(
    "start,stop,num,base,dtype",
    [
        (0.0, 2.0, 5, 10.0, "float32"),
        (-1.5, 3.0, 7, 2.0, "float64"),
        (2.0, -1.0, 4, 0.5, "float64"),
        (1.0, 3.0, 1, 3.0, "float32"),
        (0.0, 2.0, 5, 2.0, "int32"),
        (0.0, 2.0, 5, 10.0, "int64"),
        (2.0, 0.0, 4, -2.0, "float32"),  # a negative base: NaN at fractional powers
    ],
)
def test_logspace(start, stop, num, base, dtype):
    want = logspace_ref(start, stop, num, base, dtype)
    ins = {
        "Start": np.array([start], "float32"),
        "Stop": np.array([stop], "float64"),
        "Num": np.array([num], "int32"),
        "Base": np.array([base], "float32"),
    }
    t = make("logspace", ins, {"Out": want}, {"dtype": INT_CODES[dtype]})
    got = t.forward()["Out"]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13)


def test_logspace_errors():
    ins = {
        "Start": np.array([0.0], "float32"),
        "Stop": np.array([1.0], "float32"),
        "Num": np.array([0], "int32"),
        "Base": np.array([10.0], "float32"),
    }
    with pytest.raises(tide.TideError, match=r"logspace.*Num .* must be > 0, got 0"):
        make("logspace", ins, {"Out": np.zeros(0, "float32")}, {"dtype": 5}).check_output()
    ins["Num"] = np.array([3], "int32")
    ins["Base"] = np.array([10.0, 2.0], "float32")
    with pytest.raises(tide.TideError, match=r"logspace.*Base .* must hold one element"):
        make("logspace", ins, {"Out": np.zeros(3, "float32")}, {"dtype": 5}).check_output()


# --- broadcast_tensors ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [[(3, 1), (1, 4)], [(2, 1, 3), (4, 1), (3,)], [(2, 3), (2, 3)]])
def test_broadcast_tensors(dtype, shapes):
    xs = [RNG.uniform(-1, 1, s).astype(dtype) for s in shapes]
    outs = np.broadcast_arrays(*xs)
    t = make(
        "broadcast_tensors",
        {"X": [("x%d" % i, x) for i, x in enumerate(xs)]},
        {"Out": [("o%d" % i, np.ascontiguousarray(o)) for i, o in enumerate(outs)]},
    )
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X"], ["Out"], **GRAD)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_broadcast_tensors_ints(dtype):
    xs = [RNG.randint(0, 2, (2, 1, 3)).astype(dtype), RNG.randint(0, 2, (4, 1)).astype(dtype)]
    outs = np.broadcast_arrays(*xs)
    make(
        "broadcast_tensors",
        {"X": [("x0", xs[0]), ("x1", xs[1])]},
        {"Out": [("o0", np.ascontiguousarray(outs[0])), ("o1", np.ascontiguousarray(outs[1]))]},
    ).check_output()


def test_broadcast_tensors_errors():
    a, b = np.zeros((3, 4)), np.zeros((2, 4))
    with pytest.raises(
        tide.TideError,
        match=r"broadcast_tensors.*X\[1\] \[2, 4\] does not broadcast with the others \(dim 0 of the result: 3 vs 2\)",
    ):
        make(
            "broadcast_tensors", {"X": [("a", a), ("b", b)]}, {"Out": [("o0", a), ("o1", a)]}
        ).check_output()
    with pytest.raises(
        tide.TideError, match=r"broadcast_tensors.*X\[1\] .* is float32 but X\[0\] is float64"
    ):
        make(
            "broadcast_tensors",
            {"X": [("a", a), ("b", a.astype("float32"))]},
            {"Out": [("o0", a), ("o1", a)]},
        ).check_output()


# --- unique_consecutive --------------------------------------------------------------------


def unique_consecutive_ref(x, axis):
    if axis is None:
        items = list(x.reshape(-1))
        same = lambda p, q: p == q  # noqa: E731 (NaN equals nothing)
    else:
        items = [np.take(x, k, axis=axis) for k in range(x.shape[axis])]
        same = lambda p, q: bool(np.all(p == q))  # noqa: E731
    firsts, counts, inverse = [], [], []
    for k, it in enumerate(items):
        if k == 0 or not same(it, items[k - 1]):
            firsts.append(k)
            counts.append(0)
        counts[-1] += 1
        inverse.append(len(firsts) - 1)
    if axis is None:
        out = np.array([items[k] for k in firsts], x.dtype)
    else:
        out = np.take(x, firsts, axis=axis)
    return out, np.array(inverse), np.array(counts)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_unique_consecutive(dtype, axis, itype):
    x = RNG.randint(0, 2, (6, 4)).astype(dtype)
    x[2] = x[1]  # a repeated row
    x[:, 3] = x[:, 2]  # and a repeated column
    out, inverse, counts = unique_consecutive_ref(x, axis)
    attrs = {
        "axis": [] if axis is None else [axis],
        "dtype": INT_CODES[itype],
        "return_inverse": True,
        "return_counts": True,
    }
    want = {"Out": out, "Index": inverse.astype(itype), "Counts": counts.astype(itype)}
    make("unique_consecutive", {"X": x}, want, attrs).check_output(atol=0, rtol=0)


def test_unique_consecutive_out_only_nan_and_errors():
    x = np.array([1.0, 1.0, np.nan, np.nan, 2.0, 1.0])
    want = np.array([1.0, np.nan, np.nan, 2.0, 1.0])
    got = make("unique_consecutive", {"X": x}, {"Out": want}).forward()["Out"]
    np.testing.assert_array_equal(got, want)
    x3 = RNG.randint(0, 2, (2, 3, 2)).astype("int64")
    out, inverse, counts = unique_consecutive_ref(x3, 1)
    want3 = {"Out": out, "Index": inverse, "Counts": counts}
    make("unique_consecutive", {"X": x3}, want3, {"axis": [1]}).check_output()
    with pytest.raises(
        tide.TideError, match=r"unique_consecutive.*'dtype' .* must be int32 or int64, got float32"
    ):
        make("unique_consecutive", {"X": x}, {"Out": want}, {"dtype": 5}).check_output()
    with pytest.raises(
        tide.TideError, match=r"unique_consecutive.*axis 2 is out of range for rank 1"
    ):
        make("unique_consecutive", {"X": x}, {"Out": want}, {"axis": [2]}).check_output()
    with pytest.raises(
        tide.TideError, match=r"unique_consecutive.*axis must hold at most one dim, got 2"
    ):
        make("unique_consecutive", {"X": x}, {"Out": want}, {"axis": [0, 0]}).check_output()


# --- fill_diagonal_tensor ------------------------------------------------------------------


def diagonal_positions(shape, offset, dim1, dim2):
    """For each index of the other dims (row-major), the X indices of the diagonal."""
    r = len(shape)
    dim1, dim2 = dim1 % r, dim2 % r
    others = [d for d in range(r) if d not in (dim1, dim2)]
    n = (
        min(shape[dim1], shape[dim2] - offset)
        if offset >= 0
        else min(shape[dim1] + offset, shape[dim2])
    )
    rows = []
    for rest in itertools.product(*[range(shape[d]) for d in others]):
        row = []
        for j in range(n):
            idx = [0] * r
            for d, v in zip(others, rest):
                idx[d] = v
            idx[dim1], idx[dim2] = (j, j + offset) if offset >= 0 else (j - offset, j)
            row.append(tuple(idx))
        rows.append(row)
    return rows


def fill_diagonal_ref(x, y, offset, dim1, dim2):
    out = x.copy()
    rows = diagonal_positions(x.shape, offset, dim1, dim2)
    yf = y.reshape(len(rows), -1)
    for r, row in enumerate(rows):
        for j, idx in enumerate(row):
            out[idx] = yf[r, j]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,offset,dim1,dim2,yshape",
    [
        ((3, 3), 0, 0, 1, (1, 3)),
        ((3, 3), 0, 0, 1, (3,)),
        ((3, 4), 1, 0, 1, (3,)),
        ((3, 4), -1, 0, 1, (2,)),
        ((4, 3), 2, 1, 0, (2,)),
        ((2, 3, 4), 0, 0, 2, (3, 2)),
        ((2, 3, 4), -1, -1, 1, (2, 3)),
        ((2, 3, 4, 5), 1, 1, 3, (2, 4, 3)),
    ],
)
def test_fill_diagonal_tensor(dtype, shape, offset, dim1, dim2, yshape):
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    y = RNG.uniform(-1, 1, yshape).astype(dtype)
    want = fill_diagonal_ref(x, y, offset, dim1, dim2)
    attrs = {"offset": offset, "dim1": dim1, "dim2": dim2}
    t = make("fill_diagonal_tensor", {"X": x, "Y": y}, {"Out": want}, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X"], "Out", no_grad_set={"y_in"}, **GRAD)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "uint8", "bool"])
def test_fill_diagonal_tensor_ints(dtype):
    x = RNG.randint(0, 2, (3, 4)).astype(dtype)
    y = RNG.randint(0, 2, (3,)).astype(dtype)
    want = fill_diagonal_ref(x, y, 1, 0, 1)
    attrs = {"offset": 1, "dim1": 0, "dim2": 1}
    make("fill_diagonal_tensor", {"X": x, "Y": y}, {"Out": want}, attrs).check_output()


def test_fill_diagonal_tensor_errors():
    x = np.zeros((3, 4))

    def run(y, **attrs):
        a = {"offset": 0, "dim1": 0, "dim2": 1}
        a.update(attrs)
        make("fill_diagonal_tensor", {"X": x, "Y": y}, {"Out": x}, a).check_output()

    with pytest.raises(
        tide.TideError,
        match=r"fill_diagonal_tensor.*Y \[4\] must flatten to the diagonal's \[1, 3\]",
    ):
        run(np.zeros(4))
    with pytest.raises(
        tide.TideError,
        match=r"fill_diagonal_tensor.*dim1 \(1\) and dim2 \(-1\) must be different dims",
    ):
        run(np.zeros(3), dim1=1, dim2=-1)
    with pytest.raises(
        tide.TideError, match=r"fill_diagonal_tensor.*axis 2 is out of range for rank 2"
    ):
        run(np.zeros(3), dim2=2)
    with pytest.raises(tide.TideError, match=r"fill_diagonal_tensor.*offset 4 leaves no diagonal"):
        run(np.zeros(3), offset=4)
    with pytest.raises(
        tide.TideError, match=r"fill_diagonal_tensor.*X must have rank >= 2, got \[3\]"
    ):
        make(
            "fill_diagonal_tensor", {"X": np.zeros(3), "Y": np.zeros(1)}, {"Out": np.zeros(3)}
        ).check_output()
    with pytest.raises(
        tide.TideError, match=r"fill_diagonal_tensor.*X .* is float64 but Y .* is float32"
    ):
        run(np.zeros(3, "float32"))


# --- clip of integers ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_clip_int(dtype):
    x = RNG.randint(-20, 20, (3, 4)).astype(dtype)
    want = np.clip(x, 3, 9).astype(dtype)
    make("clip", {"X": x}, {"Out": want}, {"min": 3.0, "max": 9.0}).check_output(atol=0, rtol=0)
    ins = {"X": x, "Min": np.array([-2.0], "float32"), "Max": np.array([5.0], "float32")}
    make("clip", ins, {"Out": np.clip(x, -2, 5).astype(dtype)}).check_output(atol=0, rtol=0)
