"""Paddle's binary and selection math ops: atan2, elementwise_fmax / elementwise_fmin (NaN
ignored), elementwise_heaviside, logcumsumexp, dist, kthvalue, mode and median, each against a
numpy reference of Paddle's rule, gradients by central finite differences (float64) and the
errors of bad inputs."""

import numpy as np
import pytest
from float64_grad import central_diff
from op_test import make

import tide
from tide import layers

RNG = np.random.RandomState(23)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]


def rand(*shape, dtype="float64"):
    return RNG.uniform(-1, 1, shape).astype(dtype)


# --- atan2 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_atan2(shapes, dtype):
    x1, x2 = rand(*shapes[0], dtype=dtype), rand(*shapes[1], dtype=dtype)
    t = make("atan2", {"X1": x1, "X2": x2}, {"Out": np.arctan2(x1, x2)})
    t.check_output(atol=1e-6, rtol=1e-6)
    if dtype == "float64":
        t.check_grad(["X1", "X2"], "Out", **GRAD)


def test_atan2_errors():
    with pytest.raises(
        tide.TideError, match=r"atan2.*X1 \[3, 4\] and X2 \[3, 5\] do not broadcast"
    ):
        make("atan2", {"X1": rand(3, 4), "X2": rand(3, 5)}, {"Out": rand(3, 4)}).check_output()


# --- elementwise_fmax / elementwise_fmin / elementwise_heaviside ----------------------------

NAN = float("nan")


def with_nans_and_ties(shape_x, shape_y):
    x, y = rand(*shape_x), rand(*shape_y)
    x.flat[0], x.flat[1] = NAN, 0.0
    y.flat[-1] = NAN
    if x.shape == y.shape:
        x.flat[2] = y.flat[2]  # a tie: the gradient goes to X
        x.flat[-1] = NAN  # both NaN: NaN, the gradient to X
    return x, y


def fminmax_grads(x, y, op):
    """Paddle's rule: X takes dOut where x >= y (fmax) / x <= y (fmin) or y is NaN."""
    xb, yb = np.broadcast_arrays(x, y)
    to_x = ((xb >= yb) if op == "fmax" else (xb <= yb)) | np.isnan(yb)
    return to_x.astype(x.dtype), (~to_x).astype(x.dtype)


def reduce_to(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    for i, d in enumerate(shape):
        if d == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdims=True)
    return g


@pytest.mark.parametrize("op", ["fmax", "fmin"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (1, 4)), ((3, 1), (1, 4))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fmax_fmin(op, shapes, dtype):
    x, y = with_nans_and_ties(*shapes)
    x, y = x.astype(dtype), y.astype(dtype)
    ref = np.fmax(x, y) if op == "fmax" else np.fmin(x, y)
    make(f"elementwise_{op}", {"X": x, "Y": y}, {"Out": ref}).check_output(atol=0, rtol=0)


@pytest.mark.parametrize("op", ["fmax", "fmin"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4))])
def test_fmax_fmin_grad_rule(op, shapes):
    """NaNs and ties have no finite differences: the grads against Paddle's rule directly."""
    x, y = with_nans_and_ties(*shapes)
    dx, dy = fminmax_grads(x, y, op)
    gx, gy = grads_of(f"elementwise_{op}", {"X": x, "Y": y})
    np.testing.assert_array_equal(gx, reduce_to(dx, x.shape))
    np.testing.assert_array_equal(gy, reduce_to(dy, y.shape))


@pytest.mark.parametrize("op", ["fmax", "fmin"])
def test_fmax_fmin_finite_differences(op):
    x, y = rand(3, 4), rand(1, 4)  # no ties, no NaNs
    ref = np.fmax(x, y) if op == "fmax" else np.fmin(x, y)
    make(f"elementwise_{op}", {"X": x, "Y": y}, {"Out": ref}).check_grad(["X", "Y"], "Out", **GRAD)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_fmax_fmin_ints(dtype):
    x, y = RNG.randint(-5, 5, (3, 4)).astype(dtype), RNG.randint(-5, 5, (4,)).astype(dtype)
    make("elementwise_fmax", {"X": x, "Y": y}, {"Out": np.fmax(x, y)}).check_output(atol=0)
    make("elementwise_fmin", {"X": x, "Y": y}, {"Out": np.fmin(x, y)}).check_output(atol=0)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4))])
@pytest.mark.parametrize("dtype", DTYPES + ["int64"])
def test_heaviside(shapes, dtype):
    x = RNG.randint(-2, 3, shapes[0]).astype(dtype)  # zeros among them
    y = RNG.randint(-9, 9, shapes[1]).astype(dtype)
    make("elementwise_heaviside", {"X": x, "Y": y}, {"Out": np.heaviside(x, y)}).check_output(
        atol=0, rtol=0
    )


def test_heaviside_grad():
    x = np.array([[-1.0, 0.0, 2.0], [0.0, 0.0, -3.0]])
    y = rand(1, 3)
    gx, gy = grads_of("elementwise_heaviside", {"X": x, "Y": y})
    np.testing.assert_array_equal(gx, np.zeros_like(x))  # Paddle's: zero for X
    np.testing.assert_array_equal(gy, [[1.0, 2.0, 0.0]])
    make("elementwise_heaviside", {"X": x, "Y": y}, {"Out": np.heaviside(x, y)}).check_grad(
        ["Y"], "Out", **GRAD
    )


# --- logcumsumexp -------------------------------------------------------------------------

LOWEST = {"float32": np.finfo(np.float32).min, "float64": np.finfo(np.float64).min}


def logcumsumexp(x, axis, flatten=False, exclusive=False, reverse=False):
    """Paddle's rule in float64 by an explicit log of prefix sums (shifted by the max)."""
    if flatten:
        x, axis = x.reshape(-1), 0
    y = np.flip(x, axis) if reverse else x
    m = np.max(y, axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        out = np.log(np.cumsum(np.exp(y.astype("float64") - m), axis=axis)) + m
    if exclusive:
        first = np.full_like(np.take(out, [0], axis=axis), LOWEST[str(x.dtype)])
        out = np.concatenate([first, np.delete(out, -1, axis=axis)], axis=axis)
    return (np.flip(out, axis) if reverse else out).astype(x.dtype)


@pytest.mark.parametrize(
    "axis,flatten,exclusive,reverse",
    [
        (1, False, False, False),
        (0, False, True, False),
        (-1, False, False, True),
        (1, False, True, True),
        (-1, True, False, False),
        (0, True, True, True),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_logcumsumexp(axis, flatten, exclusive, reverse, dtype):
    x = (rand(3, 4, 5) * 5).astype(dtype)
    attrs = {"axis": axis, "flatten": flatten, "exclusive": exclusive, "reverse": reverse}
    want = logcumsumexp(x, axis, flatten, exclusive, reverse)
    t = make("logcumsumexp", {"X": x}, {"Out": want}, attrs)
    t.check_output(atol=1e-5, rtol=1e-5)
    if dtype == "float64" and not exclusive:
        t.check_grad(["X"], "Out", **GRAD)
    if dtype == "float64" and exclusive:  # the empty sums (lowest) left out of the loss
        dx = grads_of("logcumsumexp", {"X": x}, attrs)[0]

        def loss(v):
            out = logcumsumexp(v, axis, flatten, exclusive, reverse)
            return out[out != LOWEST["float64"]].sum()

        np.testing.assert_allclose(dx, central_diff(loss, x), rtol=1e-5, atol=1e-7)


def test_logcumsumexp_is_stable():
    x = np.array([[1000.0, 1000.0, -1000.0, 999.0]], dtype="float32")
    want = logcumsumexp(x.astype("float64"), 1).astype("float32")
    make("logcumsumexp", {"X": x}, {"Out": want}, {"axis": 1}).check_output(atol=1e-3, rtol=0)
    dx = grads_of("logcumsumexp", {"X": x.astype("float64")}, {"axis": 1})[0]
    assert np.all(np.isfinite(dx)), dx


def test_logcumsumexp_errors():
    with pytest.raises(tide.TideError, match="logcumsumexp.*axis 2.*flattened.*expected -1 or 0"):
        make(
            "logcumsumexp", {"X": rand(3, 4)}, {"Out": rand(12)}, {"axis": 2, "flatten": True}
        ).check_output()
    with pytest.raises(tide.TideError, match="logcumsumexp.*axis"):
        make("logcumsumexp", {"X": rand(3, 4)}, {"Out": rand(3, 4)}, {"axis": 3}).check_output()


# --- dist ----------------------------------------------------------------------------------


def dist(x, y, p):
    z = np.abs(x - y).astype("float64").ravel()
    if p == 0:
        return np.array(np.count_nonzero(z), dtype=x.dtype)
    if np.isinf(p):
        return np.array(z.max() if p > 0 else z.min(), dtype=x.dtype)
    return np.array(np.sum(z**p) ** (1.0 / p), dtype=x.dtype)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.5, 0.5, 0.0, float("inf"), float("-inf")])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_dist(p, shapes, dtype):
    x, y = rand(*shapes[0], dtype=dtype), rand(*shapes[1], dtype=dtype)
    t = make("dist", {"X": x, "Y": y}, {"Out": dist(x, y, p)}, {"p": p})
    t.check_output(atol=1e-5, rtol=1e-5)
    if dtype == "float64" and p != 0:
        t.check_grad(["X", "Y"], "Out", **GRAD)


def test_dist_grad_special_cases():
    x, y = np.array([1.0, -2.0, 2.0, 0.5]), np.zeros(4)
    gx, gy = grads_of("dist", {"X": x, "Y": y}, {"p": float("inf")})
    np.testing.assert_array_equal(gx, [0, -1, 1, 0])  # every tie takes dOut, as Paddle's
    np.testing.assert_array_equal(gy, [0, 1, -1, 0])
    gx, _ = grads_of("dist", {"X": x, "Y": y}, {"p": 0.0})
    np.testing.assert_array_equal(gx, np.zeros(4))
    gx, _ = grads_of("dist", {"X": x, "Y": x.copy()}, {"p": 2.0})  # Out 0: no NaN
    np.testing.assert_array_equal(gx, np.zeros(4))


def test_dist_errors():
    with pytest.raises(tide.TideError, match=r"dist.*X \[3, 4\] and Y \[2, 4\] do not broadcast"):
        make("dist", {"X": rand(3, 4), "Y": rand(2, 4)}, {"Out": rand()}).check_output()


# --- kthvalue / mode / median ----------------------------------------------------------------


def pick_grad(x, axis, idx):
    """dX of sum(Out) for a pick along `axis` at `idx` (Out's dims with keepdim)."""
    dx = np.zeros_like(x)
    np.put_along_axis(dx, idx, 1.0, axis=axis)
    return dx


@pytest.mark.parametrize("axis,keepdim", [(1, False), (-1, True), (0, False)])
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("dtype", DTYPES + ["int32", "int64"])
def test_kthvalue(axis, keepdim, k, dtype):
    x = RNG.permutation(4 * 5 * 6).reshape(4, 5, 6).astype(dtype)  # distinct: one answer
    idx = np.take(np.argsort(x, axis=axis, kind="stable"), [k - 1], axis=axis)
    val = np.take_along_axis(x, idx, axis=axis)
    if not keepdim:
        val, idx = val.squeeze(axis), idx.squeeze(axis)
    attrs = {"k": k, "axis": axis, "keepdim": keepdim}
    t = make("kthvalue", {"X": x}, {"Out": val, "Indices": idx.astype("int64")}, attrs)
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        dx = grads_of("kthvalue", {"X": x}, attrs, [("Indices", "int64")])[0]
        np.testing.assert_array_equal(
            dx, pick_grad(x, axis, np.expand_dims(idx, axis) if not keepdim else idx)
        )
        t.check_grad(["X"], "Out", **GRAD)


def test_kthvalue_ties_and_nan():
    """Ties: the index names an element of the k-th value; NaN sorts last."""
    x = np.array([[3.0, 1.0, 1.0, 3.0, 2.0], [np.nan, 0.5, 2.0, 0.5, 1.0]], dtype="float32")
    for k, want in [(2, [1.0, 0.5]), (4, [3.0, 2.0]), (5, [3.0, np.nan])]:
        out = run_selection("kthvalue", x, {"k": k, "axis": 1})
        np.testing.assert_array_equal(out[0], want)
        np.testing.assert_array_equal(np.take_along_axis(x, out[1][:, None], 1)[:, 0], want)


def test_kthvalue_errors():
    with pytest.raises(tide.TideError, match=r"kthvalue.*k must be in \[1, 5\].*got 6"):
        run_selection("kthvalue", rand(3, 5), {"k": 6, "axis": 1})


def mode_ref(x):
    """Paddle's mode of each row: the most frequent value, the smallest of ties; its last index."""
    vals, idxs = [], []
    for row in x:
        uniq, counts = np.unique(row, return_counts=True)
        v = uniq[np.argmax(counts)]  # argmax: the first (smallest) of the most frequent
        vals.append(v)
        idxs.append(np.flatnonzero(row == v)[-1])
    return np.array(vals, dtype=x.dtype), np.array(idxs, dtype="int64")


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", DTYPES + ["int64"])
def test_mode(keepdim, dtype):
    x = RNG.randint(0, 4, (5, 9)).astype(dtype)  # rows of 9 (<= 16): the last index of the run
    val, idx = mode_ref(x)
    if keepdim:
        val, idx = val[:, None], idx[:, None]
    attrs = {"axis": 1, "keepdim": keepdim}
    make("mode", {"X": x}, {"Out": val, "Indices": idx}, attrs).check_output(atol=0, rtol=0)
    # along axis 0: the transposed rows
    val0, idx0 = mode_ref(x.T)
    make("mode", {"X": x}, {"Out": val0, "Indices": idx0}, {"axis": 0}).check_output(atol=0)


def test_mode_grad():
    x = RNG.randint(0, 3, (4, 7)).astype("float64")
    _, idx = mode_ref(x)
    dx = grads_of("mode", {"X": x}, {"axis": -1}, [("Indices", "int64")])[0]
    np.testing.assert_array_equal(dx, pick_grad(x, 1, idx[:, None]))
    x = RNG.permutation(24).reshape(4, 6).astype("float64")  # no repeats: every element a mode
    val, idx = mode_ref(x)
    t = make("mode", {"X": x}, {"Out": val, "Indices": idx}, {"axis": 1})
    t.check_grad(["X"], "Out", **GRAD)


def median_ref(x, axes, keepdim, mode):
    """Paddle's median: the reduced dims (ascending) moved last and flattened."""
    axes = sorted(a % x.ndim for a in axes) if axes and x.ndim > 1 else list(range(x.ndim))
    kept = [a for a in range(x.ndim) if a not in axes]
    rows = x.transpose(kept + axes).reshape([x.shape[a] for a in kept] + [-1])
    s = np.sort(rows, axis=-1)
    n = s.shape[-1]
    right = s[..., n // 2]
    left = s[..., n // 2 - 1] if n % 2 == 0 else right
    out = ((left + right) / 2).astype(x.dtype) if mode == "avg" else left
    if keepdim:
        out = out.reshape([1 if a in axes else x.shape[a] for a in range(x.ndim)])
    return out, rows, left, right


@pytest.mark.parametrize("axes", [[1], [0, 2], [-1, 0], []])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("mode", ["avg", "min"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_median(axes, keepdim, mode, dtype):
    x = RNG.randint(0, 5, (2, 3, 4)).astype(dtype)  # ties
    want, rows, left, right = median_ref(x, axes, keepdim, mode)
    attrs = {"axis": axes, "keepdim": keepdim, "mode": mode}
    out, index = run_selection("median", x, attrs, index="MedianIndex")
    np.testing.assert_array_equal(out, want)
    index = index.reshape(left.shape + ((2,) if mode == "avg" else (1,)))
    # the indices name elements with the middle values (which of equal ones: Paddle's top-k's)
    np.testing.assert_array_equal(np.take_along_axis(rows, index[..., :1], -1)[..., 0], left)
    if mode == "avg":
        np.testing.assert_array_equal(np.take_along_axis(rows, index[..., 1:], -1)[..., 0], right)


def test_median_grad():
    """'min' over one axis: dOut to the index; otherwise dOut split among the elements equal to
    Out, else halved between the two middle ones (Paddle's rule, exact at ties)."""
    x = np.array([[3.0, 1.0, 1.0, 3.0, 2.0, 0.0], [4.0, 4.0, 4.0, 1.0, 9.0, 9.0]])
    dx = grads_of("median", {"X": x}, {"axis": [1], "mode": "avg"}, [("MedianIndex", "int64")])[0]
    np.testing.assert_allclose(dx, [[0, 0, 0.5, 0, 0.5, 0], [1 / 3, 1 / 3, 1 / 3, 0, 0, 0]])
    dx = grads_of("median", {"X": x}, {"axis": [1], "mode": "min"}, [("MedianIndex", "int64")])[0]
    assert dx[0].tolist() in ([0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0])
    assert dx[1].sum() == 1 and dx[1][:3].sum() == 1
    # 'min' over all (or several) dims: split evenly among the equal elements, as 'avg'
    dx = grads_of("median", {"X": x}, {"axis": [], "mode": "min"}, [("MedianIndex", "int64")])[0]
    np.testing.assert_allclose(dx, (x == 3.0) / 2)  # sorted: 0 1 1 1 2 3 | 3 4 ...: 3
    dx = grads_of("median", {"X": x}, {"axis": [0, 1], "mode": "min"}, [("MedianIndex", "int64")])
    np.testing.assert_allclose(dx[0], (x == 3.0) / 2)
    xn = np.array([[3.0, np.nan, 1.0, np.nan]])
    dx = grads_of("median", {"X": xn}, {"axis": [1]}, [("MedianIndex", "int64")])[0]
    np.testing.assert_array_equal(dx, [[0, 0.5, 0, 0.5]])  # NaN: its NaNs share dOut
    x = RNG.permutation(30).reshape(5, 6).astype("float64")  # distinct: finite differences hold
    for mode in ["avg", "min"]:
        attrs = {"axis": [0], "mode": mode}
        want = median_ref(x, [0], False, mode)[0]
        idx_dims = (6, 2) if mode == "avg" else (6,)
        t = make(
            "median", {"X": x}, {"Out": want, "MedianIndex": np.zeros(idx_dims, "int64")}, attrs
        )
        t.check_grad(["X"], "Out", **GRAD)


def test_median_nan_and_errors():
    x = np.array([[3.0, np.nan, 1.0, 2.0]], dtype="float32")
    out, index = run_selection("median", x, {"axis": [1]}, index="MedianIndex")
    assert np.isnan(out[0]) and index.tolist() == [[1, 1]]
    with pytest.raises(tide.TideError, match="median.*mode must be 'avg' or 'min', got 'max'"):
        run_selection("median", x, {"axis": [1], "mode": "max"}, index="MedianIndex")


def run_selection(op_type, x, attrs, index="Indices"):
    """Out and the index output of a selection op."""
    with tide.program_guard(tide.Program(), tide.Program()):
        xv = layers.data(name="x", shape=list(x.shape), dtype=str(x.dtype), append_batch_size=False)
        block = tide.default_main_program().global_block()
        out = block.create_var(name="out", dtype=str(x.dtype))
        ind = block.create_var(name="ind", dtype="int64")
        block.append_op(
            type=op_type, inputs={"X": [xv]}, outputs={"Out": [out], index: [ind]}, attrs=attrs
        )
        exe = tide.Executor(tide.CPUPlace())
        return exe.run(tide.default_main_program(), feed={"x": x}, fetch_list=[out, ind])


def grads_of(op_type, inputs, attrs=None, extra_outputs=()):
    """d(sum(Out))/d(each input), in the order of `inputs`, through the op's grad op (a
    program of its own)."""
    with tide.program_guard(tide.Program(), tide.Program()):
        return _grads_in_program(op_type, inputs, attrs, extra_outputs)


def _grads_in_program(op_type, inputs, attrs, extra_outputs):
    block = tide.default_main_program().global_block()
    ins = {}
    for name, arr in inputs.items():
        ins[name] = layers.data(
            name=name.lower(),
            shape=list(arr.shape),
            dtype=str(arr.dtype),
            append_batch_size=False,
            stop_gradient=False,
        )
    out = block.create_var(name="out", dtype=str(next(iter(inputs.values())).dtype))
    outs = {"Out": [out]}
    for name, dtype in extra_outputs:
        outs[name] = [block.create_var(name=name.lower(), dtype=dtype)]
    block.append_op(
        type=op_type, inputs={k: [v] for k, v in ins.items()}, outputs=outs, attrs=attrs or {}
    )
    tide.append_backward(layers.reduce_sum(out), parameter_list=[n.lower() for n in inputs])
    feed = {n.lower(): a for n, a in inputs.items()}
    fetch = [n.lower() + "@GRAD" for n in inputs]
    return tide.Executor(tide.CPUPlace()).run(
        tide.default_main_program(), feed=feed, fetch_list=fetch
    )
