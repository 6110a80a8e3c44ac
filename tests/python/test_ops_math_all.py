"""Op tests of the rest of the ops_math pack (test_ops_math.py has relu/sigmoid/tanh/square,
softmax on the last axis, mean, mul and axis-1 elementwise): each op's outputs against a numpy
reference written here, and every op with a gradient against central finite differences,
float32 and float64 (and the integer types where the pack registers them)."""

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
INT_DTYPES = ["int32", "int64"]
# float32 finite differences are coarse: looser tolerance, bigger step.
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}
# TideDataType codes (the cast / fill ops' dtype attributes).
CODE = {"bool": 0, "int32": 2, "int64": 3, "float32": 5, "float64": 6}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# scale
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias_after_scale", [True, False])
def test_scale(dtype, bias_after_scale, rng):
    x = rand(rng, (3, 4), dtype)
    s, b = 2.5, -0.75
    want = x * s + b if bias_after_scale else (x + b) * s
    t = make(
        "scale",
        {"X": x},
        {"Out": want.astype(dtype)},
        {"scale": s, "bias": b, "bias_after_scale": bias_after_scale},
    )
    t.check_output()
    # d Out / d X = scale whichever way round the bias goes.
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("bias_after_scale", [True, False])
def test_scale_integers(dtype, bias_after_scale):
    x = np.array([[-4, -1, 0], [2, 5, 9]], dtype)
    want = x * 3 + 2 if bias_after_scale else (x + 2) * 3
    make(
        "scale",
        {"X": x},
        {"Out": want.astype(dtype)},
        {"scale": 3.0, "bias": 2.0, "bias_after_scale": bias_after_scale},
    ).check_output()


# ---------------------------------------------------------------------------------------------
# sum (duplicable X)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_of_several_inputs(dtype, rng):
    xs = [("s%d" % i, rand(rng, (2, 3, 2), dtype)) for i in range(4)]
    want = xs[0][1] + xs[1][1] + xs[2][1] + xs[3][1]
    t = make("sum", {"X": xs}, {"Out": want})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))  # every part


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_sum_integers(dtype):
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    b = np.array([[-7, 3, 0], [1, 1, 100]], dtype)
    make("sum", {"X": [("a", a), ("b", b), ("c", a)]}, {"Out": a + b + a}).check_output()


def test_sum_single_input(rng):
    x = rand(rng, (5,), "float64")
    t = make("sum", {"X": [("only", x)]}, {"Out": x.copy()})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["only"], "Out", **grad_args("float64"))


def sum_sparse(parts, dtype="float32", height=10, width=4):
    """Runs sum over SelectedRows inputs given as (rows, values); returns (rows, values, height)."""
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        xs = [
            b.create_var(
                name="x%d" % i,
                type="SELECTED_ROWS",
                shape=[height, width],
                dtype=dtype,
                persistable=True,
            )
            for i in range(len(parts))
        ]
        out = b.create_var(
            name="out", type="SELECTED_ROWS", shape=[height, width], dtype=dtype, persistable=True
        )
        b.append_op("sum", inputs={"X": xs}, outputs={"Out": out})
    scope = tide.Scope()
    for i, (rows, values) in enumerate(parts):
        sr = scope.var("x%d" % i).get_selected_rows()
        sr.set_rows(list(rows))
        sr.set_height(height)
        sr.get_tensor().set(np.ascontiguousarray(values, dtype=dtype), tide.CPUPlace(), False)
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    sr = scope.find_var("out").get_selected_rows()
    return sr.rows(), np.array(sr.get_tensor()), sr.height()


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_selected_rows_merges_rows(dtype, rng):
    a, b = rand(rng, (2, 4), dtype), rand(rng, (3, 4), dtype)
    empty = np.zeros((0, 4), dtype)  # an input with no rows (its table was not touched)
    rows, values, height = sum_sparse([([1, 7], a), ([], empty), ([7, 0, 9], b)], dtype)
    # Fluid's MergeAdd: each row once, ascending, its values added (test_ops_selected_rows.py).
    assert rows == [0, 1, 7, 9] and height == 10
    np.testing.assert_array_equal(values, np.stack([b[1], a[0], a[1] + b[0], b[2]]))


def test_sum_selected_rows_checks_rows_against_values(rng):
    with pytest.raises(
        tide.TideError,
        match=r"sparse input 0 \('x0'\) lists 2 rows but its value "
        r"\[3, 4\] holds 3",
    ):
        sum_sparse([([1, 2], rand(rng, (3, 4), "float32")), ([3], rand(rng, (1, 4), "float32"))])
    with pytest.raises(
        tide.TideError,
        match=r"sparse input 1 \('x1'\) has rows of 2 values, an "
        r"earlier input of 4",
    ):
        sum_sparse([([1], rand(rng, (1, 4), "float32")), ([3], rand(rng, (1, 2), "float32"))])


# ---------------------------------------------------------------------------------------------
# matmul
def matmul_ref(x, y, tx, ty, alpha):
    """numpy's matmul with Fluid's conventions: a 1-D X is a row, a 1-D Y a column, transposed
    when asked; the unit dim of an untransposed vector is dropped from the result; a scalar
    result is [1]. Tide differs from Fluid 1.x on purpose: Fluid also drops an output dim of 1
    that comes from a matrix (X [1, K] x Y [K, N] gives [N] there, [1, N] here)."""
    xm = x[None, :] if x.ndim == 1 else x  # Fluid: a 1-D X is a row, a 1-D Y a column,
    ym = y[:, None] if y.ndim == 1 else y  # before the transposes apply
    xm = np.swapaxes(xm, -1, -2) if tx else xm
    ym = np.swapaxes(ym, -1, -2) if ty else ym
    out = alpha * np.matmul(xm, ym)
    if x.ndim == 1 and not tx:
        out = out[..., 0, :]
    if y.ndim == 1 and not ty:
        out = out[..., 0]
    return out.reshape(1) if out.ndim == 0 else out


MATMUL_CASES = [  # x shape, y shape, transpose_X, transpose_Y, alpha
    ((3, 4), (4, 5), False, False, 1.0),
    ((4, 3), (4, 5), True, False, 1.0),
    ((3, 4), (5, 4), False, True, 1.0),
    ((4, 3), (5, 4), True, True, 0.5),
    ((2, 3, 4), (2, 4, 5), False, False, 1.0),
    ((2, 4, 3), (2, 5, 4), True, True, -1.5),
    ((2, 2, 3, 4), (2, 2, 4, 2), False, False, 1.0),  # two batch dims
    ((2, 3, 4), (4, 5), False, False, 2.0),  # rank-2 Y broadcast over X's batch
    ((3, 4), (2, 4, 5), False, False, 1.0),  # rank-2 X broadcast over Y's batch
    ((4, 3), (2, 5, 4), True, True, 1.0),  # ... with transposes
    ((4,), (4, 5), False, False, 1.0),  # 1-D X: a row
    ((3, 4), (4,), False, False, 1.0),  # 1-D Y: a column
    ((4,), (4,), False, False, 3.0),  # dot product: [1]
    ((4,), (1, 5), True, False, 1.0),  # a transposed 1-D X is a column: outer product
    ((3, 1), (4,), False, True, 1.0),  # a transposed 1-D Y is a row
    ((4,), (4,), True, True, 1.0),  # column x row: [4, 4]
    ((2, 3, 4), (4,), False, False, 1.0),  # batched matrix-vector
    ((4,), (2, 4, 5), False, False, 1.0),  # vector-batched matrix
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,ys,tx,ty,alpha", MATMUL_CASES)
def test_matmul(xs, ys, tx, ty, alpha, dtype, rng):
    x, y = rand(rng, xs, dtype), rand(rng, ys, dtype)
    want = matmul_ref(x.astype(np.float64), y.astype(np.float64), tx, ty, alpha).astype(dtype)
    t = make(
        "matmul",
        {"X": x, "Y": y},
        {"Out": want},
        {"transpose_X": tx, "transpose_Y": ty, "alpha": alpha},
    )
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_mul_num_col_dims(dtype, rng):
    x = rand(rng, (2, 3, 2, 2), dtype)
    y = rand(rng, (2, 2, 3), dtype)
    want = (x.reshape(6, 4) @ y.reshape(4, 3)).reshape(2, 3, 3)
    t = make("mul", {"X": x, "Y": y}, {"Out": want}, {"x_num_col_dims": 2, "y_num_col_dims": 2})
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# softmax over an axis
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1, 2, -3])
def test_softmax_axis(axis, dtype, rng):
    x = rand(rng, (2, 3, 4), dtype, -3, 3)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    want = (e / e.sum(axis=axis, keepdims=True)).astype(dtype)
    t = make("softmax", {"X": x}, {"Out": want}, {"axis": axis})
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_softmax_large_logits_stay_finite():
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1002.0]], "float32")
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    want = (e / e.sum(axis=1, keepdims=True)).astype("float32")
    make("softmax", {"X": x}, {"Out": want}).check_output(rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# cast
CAST_TYPES = ["float32", "float64", "int32", "int64", "bool"]
CAST_SOURCE = {
    "float32": [-2.75, -1.0, -0.5, 0.0, 0.25, 1.5, 3.99, 100.0],
    "float64": [-2.75, -1.0, -0.5, 0.0, 0.25, 1.5, 3.99, 100.0],
    "int32": [-3, -1, 0, 1, 2, 7, 100, 65537],
    "int64": [-3, -1, 0, 1, 2, 7, 100, 65537],
    "bool": [True, False, True, True, False, False, True, False],
}


@pytest.mark.parametrize("src", CAST_TYPES)
@pytest.mark.parametrize("dst", CAST_TYPES)
def test_cast(src, dst):
    x = np.array(CAST_SOURCE[src], dtype=src).reshape(2, 4)
    # C++ conversions: float -> int truncates toward zero (numpy's astype does too), anything
    # nonzero -> true, bool -> 0 / 1.
    want = x.astype(dst)
    t = make("cast", {"X": x}, {"Out": want}, {"in_dtype": CODE[src], "out_dtype": CODE[dst]})
    got = t.check_output(rtol=0, atol=0)
    assert got[0].dtype() == dst
    if src in DTYPES and dst in DTYPES:  # the grad casts back
        t.check_grad(["X"], "Out", **grad_args("float32" if "float32" in (src, dst) else "float64"))


# ---------------------------------------------------------------------------------------------
# fill_constant, fill_zeros_like, assign
@pytest.mark.parametrize("dtype", DTYPES + INT_DTYPES)
@pytest.mark.parametrize("value", [1.5, -2.0, 0.0])
def test_fill_constant(dtype, value):
    want = np.full((2, 3, 1), value).astype(dtype)  # 1.5 -> 1 for the integer types
    t = make(
        "fill_constant",
        {},
        {"Out": want},
        {"shape": [2, 3, 1], "value": value, "dtype": CODE[dtype]},
    )
    got = t.check_output(rtol=0, atol=0)
    assert got[0].dtype() == dtype


@pytest.mark.parametrize("dtype", DTYPES + INT_DTYPES)
def test_fill_zeros_like(dtype, rng):
    x = (rng.uniform(-5, 5, (3, 2, 2)) + 1).astype(dtype)
    make("fill_zeros_like", {"X": x}, {"Out": np.zeros_like(x)}).check_output(rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES + INT_DTYPES + ["bool"])
def test_assign(dtype, rng):
    x = rng.uniform(-5, 5, (3, 4)).astype(dtype)
    t = make("assign", {"X": x}, {"Out": x.copy()})
    t.check_output(rtol=0, atol=0)
    if dtype in DTYPES:
        t.check_grad(["X"], "Out", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# clip, clip_by_norm, squared_l2_norm, sqrt, sign
def away_from(x, points, gap):
    """x with every element at least `gap` from each of `points` (for kinks)."""
    x = x.copy()
    for p in points:
        near = np.abs(x - p) < gap
        x[near] = p + np.where(x[near] >= p, gap, -gap) * 2
    return x


@pytest.mark.parametrize("dtype", DTYPES)
def test_clip(dtype, rng):
    lo, hi = -0.3, 0.4
    x = away_from(rand(rng, (4, 5), "float64"), [lo, hi], 0.05).astype(dtype)
    assert (x < lo).any() and (x > hi).any() and ((x > lo) & (x < hi)).any()
    # min and max are float attributes: the bounds are float32 values, whatever X's type.
    want = np.clip(x, np.float32(lo).astype(dtype), np.float32(hi).astype(dtype))
    t = make("clip", {"X": x}, {"Out": want}, {"min": lo, "max": hi})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))  # 0 outside (lo, hi), 1 inside


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_by_norm(dtype, max_norm, rng):
    x = rand(rng, (3, 4), dtype)
    norm = np.sqrt(np.sum(x.astype(np.float64) ** 2))
    want = x * (max_norm / norm) if norm > max_norm else x.copy()
    if max_norm == 100.0:
        np.testing.assert_array_equal(want, x)  # below the limit: unchanged
    make(
        "clip_by_norm", {"X": x}, {"Out": want.astype(dtype)}, {"max_norm": max_norm}
    ).check_output(rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_squared_l2_norm(dtype, rng):
    x = rand(rng, (3, 5), dtype)
    want = np.array([np.sum(x.astype(np.float64) ** 2)], dtype)
    t = make("squared_l2_norm", {"X": x}, {"Out": want})
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sqrt(dtype, rng):
    x = rand(rng, (3, 4), dtype, 0.3, 4.0)
    t = make("sqrt", {"X": x}, {"Out": np.sqrt(x)})
    t.check_output(rtol=1e-6, atol=1e-7)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sign(dtype, rng):
    x = rand(rng, (3, 4), dtype, -2, 2)
    x[0, :2] = 0
    x[1, 0] = -0.0
    want = np.sign(x)
    assert set(np.unique(want)) == {-1, 0, 1}
    make("sign", {"X": x}, {"Out": want}).check_output(rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------
# uniform_random, gaussian_random: statistics over many draws, seed determinism
def draw(op_type, dtype, shape, **attrs):
    attrs.update(shape=list(shape), dtype=CODE[dtype])
    t = make(op_type, {}, {"Out": np.zeros(shape, dtype)}, attrs)  # a placeholder: dtype only
    out = t.forward()["Out"]
    assert out.dtype == np.dtype(dtype) and out.shape == tuple(shape)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_uniform_random_statistics(dtype):
    lo, hi, n = -2.0, 3.0, 20000
    x = draw("uniform_random", dtype, (100, 200), min=lo, max=hi, seed=11).astype(np.float64)
    assert x.min() >= lo and x.max() < hi
    width = hi - lo
    # mean and variance of U[lo, hi), each within ~5 standard errors
    assert abs(x.mean() - (lo + hi) / 2) < 5 * width / np.sqrt(12 * n)
    assert abs(x.var() - width**2 / 12) < 5 * width**2 * np.sqrt(1 / 180.0 / n)
    # flat: each of 10 bins holds n/10 +- 5 sigma
    counts, _ = np.histogram(x, bins=10, range=(lo, hi))
    sigma = np.sqrt(n * 0.1 * 0.9)
    assert np.all(np.abs(counts - n / 10) < 5 * sigma), counts


def test_uniform_random_stays_below_max_on_a_coarse_grid():
    """float on [10000, 10001): lo + u * (hi - lo) can round up to hi; hi must never appear."""
    x = draw("uniform_random", "float32", (40000,), min=10000.0, max=10001.0, seed=3)
    assert x.min() >= 10000.0 and x.max() < 10001.0
    assert len(np.unique(x)) > 100  # still random


@pytest.mark.parametrize("dtype", DTYPES)
def test_gaussian_random_statistics(dtype):
    mean, std, n = 1.5, 0.5, 20000
    x = draw("gaussian_random", dtype, (20000,), mean=mean, std=std, seed=5).astype(np.float64)
    assert abs(x.mean() - mean) < 5 * std / np.sqrt(n)
    assert abs(x.std() - std) < 5 * std / np.sqrt(2 * n)
    within = np.mean(np.abs(x - mean) < std)  # 68.27% within one sigma
    assert abs(within - 0.6827) < 5 * np.sqrt(0.6827 * 0.3173 / n)
    within2 = np.mean(np.abs(x - mean) < 2 * std)  # 95.45% within two
    assert abs(within2 - 0.9545) < 5 * np.sqrt(0.9545 * 0.0455 / n)


@pytest.mark.parametrize(
    "op_type,attrs",
    [("uniform_random", {"min": -1.0, "max": 1.0}), ("gaussian_random", {"mean": 0.0, "std": 1.0})],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_random_seed_determinism(op_type, attrs, dtype):
    a = draw(op_type, dtype, (50,), seed=42, **attrs)
    b = draw(op_type, dtype, (50,), seed=42, **attrs)
    c = draw(op_type, dtype, (50,), seed=43, **attrs)
    np.testing.assert_array_equal(a, b)  # a fixed seed repeats its numbers
    assert not np.array_equal(a, c)
    d = draw(op_type, dtype, (50,), seed=0, **attrs)  # seed 0: fresh each run
    e = draw(op_type, dtype, (50,), seed=0, **attrs)
    assert not np.array_equal(d, e)
    assert len(np.unique(a)) == a.size


def test_random_op_reruns_with_fixed_seed_in_one_program(exe):
    """A fixed seed gives the same numbers on every run of the same program too."""
    out = tide.layers.uniform_random([30], seed=9)
    (first,) = exe.run(fetch_list=[out])
    (second,) = exe.run(fetch_list=[out])
    np.testing.assert_array_equal(first, second)
    assert first.min() >= -1.0 and first.max() < 1.0


# ---------------------------------------------------------------------------------------------
# elementwise ops: every broadcast form
EW = {
    "elementwise_add": np.add,
    "elementwise_sub": np.subtract,
    "elementwise_mul": np.multiply,
    "elementwise_div": np.divide,
    "elementwise_max": np.maximum,
    "elementwise_min": np.minimum,
}
# name: X dims, Y dims, axis, Y's dims as broadcast onto X by numpy
BROADCASTS = {
    "same_shape": ((2, 3, 4), (2, 3, 4), -1, (2, 3, 4)),
    "axis0": ((2, 3, 4), (2,), 0, (2, 1, 1)),
    "axis1": ((2, 3, 4), (3,), 1, (1, 3, 1)),
    "axis1_two_dims": ((2, 3, 4), (3, 4), 1, (1, 3, 4)),
    "trailing": ((2, 3, 4), (4,), -1, (1, 1, 4)),
    "trailing_two_dims": ((2, 3, 4), (3, 4), -1, (1, 3, 4)),
    "trailing_ones_dropped": ((2, 3, 4), (3, 1), 1, (1, 3, 1)),
    "leading_two_dims": ((2, 3, 4), (2, 3), 0, (2, 3, 1)),
    "scalar": ((2, 3, 4), (1,), -1, (1, 1, 1)),
    "scalar_with_axis": ((2, 3, 4), (1,), 1, (1, 1, 1)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", list(BROADCASTS))
@pytest.mark.parametrize("op", list(EW))
def test_elementwise_broadcast_forms(op, form, dtype, rng):
    xs, ys, axis, ybs = BROADCASTS[form]
    positive = op == "elementwise_div"
    x = rand(rng, xs, "float64", 0.5 if positive else -1, 2.0)
    y = rand(rng, ys, "float64", 0.5 if positive else -1, 2.0)
    yb = np.broadcast_to(y.reshape(ybs), xs)
    if op in ("elementwise_max", "elementwise_min"):  # no near-ties: finite differences stay valid
        close = np.abs(x - yb) < 0.05
        x[close] += 0.1
    x, y = x.astype(dtype), y.astype(dtype)
    want = EW[op](x, y.reshape(ybs)).astype(dtype)
    t = make(op, {"X": x, "Y": y}, {"Out": want}, {"axis": axis})
    t.check_output(rtol=1e-6, atol=1e-6)
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("form", ["same_shape", "axis1", "trailing", "scalar"])
@pytest.mark.parametrize("op", list(EW))
def test_elementwise_integers(op, form, dtype, rng):
    xs, ys, axis, ybs = BROADCASTS[form]
    x = rng.randint(-20, 21, xs).astype(dtype)
    y = rng.randint(1, 6, ys).astype(dtype) * rng.choice([-1, 1], ys).astype(dtype)
    yb = y.reshape(ybs)
    if op == "elementwise_div":  # C++ integer division truncates toward zero
        want = np.trunc(x.astype(np.float64) / yb).astype(dtype)
    else:
        want = EW[op](x, yb).astype(dtype)
    make(op, {"X": x, "Y": y}, {"Out": want}, {"axis": axis}).check_output(rtol=0, atol=0)


def test_elementwise_integer_division_by_zero_is_an_error():
    x = np.array([[4, 5], [6, 7]], "int32")
    y = np.array([1, 0], "int32")
    with pytest.raises(tide.TideError, match="division by zero"):
        make("elementwise_div", {"X": x, "Y": y}, {"Out": x}, {"axis": 1}).check_output()


def test_elementwise_max_min_ties_send_the_gradient_to_y():
    """Where X == Y, max's and min's gradient goes to Y (Fluid's rule; finite differences cannot
    check a kink, so this reads the grad ops' output directly)."""
    x = np.array([[1.0, 2.0, 3.0], [0.5, 2.0, -1.0]])
    y = np.array([1.0, 2.0, 0.0])
    d = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    for op in ("elementwise_max", "elementwise_min"):
        main, startup = tide.Program(), tide.Program()
        with tide.program_guard(main, startup):
            block = main.global_block()
            xv = block.create_var(name="x", shape=x.shape, dtype="float64", stop_gradient=False)
            yv = block.create_var(name="y", shape=y.shape, dtype="float64", stop_gradient=False)
            dv = block.create_var(name="d", shape=d.shape, dtype="float64", stop_gradient=True)
            out = block.create_var(name="out", dtype="float64")
            block.append_op(op, inputs={"X": xv, "Y": yv}, outputs={"Out": out}, attrs={"axis": -1})
            loss = tide.layers.mean(tide.layers.elementwise_mul(out, dv))  # dOut = d / 6
            tide.append_backward(loss, no_grad_set={"d"})
        gx, gy = tide.Executor(tide.CPUPlace()).run(
            main, feed={"x": x, "y": y, "d": d}, fetch_list=["x@GRAD", "y@GRAD"], scope=tide.Scope()
        )
        to_x = (x > y) if op == "elementwise_max" else (x < y)
        assert (x == y).sum() == 3
        np.testing.assert_allclose(gx, d / 6 * to_x, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(gy, (d / 6 * ~to_x).sum(axis=0), rtol=1e-12, atol=1e-15)


def test_elementwise_default_axis_with_trailing_ones_in_y():
    """axis=-1 aligns Y's full dims before its trailing 1s are dropped (Fluid, numpy)."""
    x = np.zeros((2, 3, 3))
    y = np.array([[1.0], [2.0], [3.0]])  # [3, 1]: Fluid and numpy put it on X's axis 1
    make("elementwise_add", {"X": x, "Y": y}, {"Out": x + y}, {"axis": -1}).check_output()


def test_sum_in_place_accumulation(rng):
    """Out may be one of the inputs (how backward accumulates gradients): the sum is right."""
    a, b, c = (rand(rng, (3, 2), "float64") for _ in range(3))
    want = a + b + c
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        blk = main.global_block()
        vs = [blk.create_var(name=n, shape=(3, 2), dtype="float64") for n in "abc"]
        blk.append_op("sum", inputs={"X": vs}, outputs={"Out": vs[1]})
    # Fed copies: a fed numpy array is shared, and Out = b writes into it.
    (got,) = tide.Executor(tide.CPUPlace()).run(
        main, feed={"a": a, "b": b.copy(), "c": c}, fetch_list=["b"], scope=tide.Scope()
    )
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert not np.allclose(got, b)


def test_lod_is_passed_on(rng):
    lod = [[1, 3]]
    x = rand(rng, (4, 3), "float64")
    y = rand(rng, (3,), "float64")
    make("elementwise_mul", {"X": (x, lod), "Y": y}, {"Out": (x * y, lod)}).check_output()
    w = rand(rng, (3, 2), "float64")
    make("mul", {"X": (x, lod), "Y": w}, {"Out": (x @ w, lod)}).check_output()
    make(
        "cast",
        {"X": (x, lod)},
        {"Out": (x.astype("float32"), lod)},
        {"in_dtype": CODE["float64"], "out_dtype": CODE["float32"]},
    ).check_output()
    make("sum", {"X": [("a", (x, lod)), ("b", x)]}, {"Out": (2 * x, lod)}).check_output()


def test_elementwise_default_axis_with_trailing_ones_and_longer_x():
    x = np.ones((2, 3, 4))
    y = np.array([[1.0], [2.0], [3.0]])  # [3, 1] on X's axis 1
    make("elementwise_mul", {"X": x, "Y": y}, {"Out": x * y}, {"axis": -1}).check_output()


# ---------------------------------------------------------------------------------------------
# Fluid semantics (issue 14): Y with size-1 dims inside its aligned range, integer division edge
# cases, cast of NaN / out-of-range floats, sign's zero gradient, matmul's 1-D transposes and
# unknown batch.
INNER_ONES = {  # X dims, Y dims, axis, Y as numpy broadcasts it onto X
    "middle_one": ((2, 3, 4), (2, 1, 4), -1, (2, 1, 4)),
    "leading_one": ((2, 3, 4), (1, 3, 4), -1, (1, 3, 4)),
    "two_ones": ((2, 3, 4, 5), (2, 1, 1, 5), -1, (2, 1, 1, 5)),
    "alternating": ((2, 3, 4, 5), (1, 3, 1, 5), -1, (1, 3, 1, 5)),
    "with_axis": ((2, 3, 4, 5), (3, 1), 1, (1, 3, 1, 1)),
    "axis_inner_one": ((2, 3, 4, 5), (3, 1, 5), 1, (1, 3, 1, 5)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", list(INNER_ONES))
@pytest.mark.parametrize("op", list(EW) + ["elementwise_pow"])
def test_elementwise_broadcast_size1_dims_inside(op, form, dtype, rng):
    xs, ys, axis, ybs = INNER_ONES[form]
    positive = op in ("elementwise_div", "elementwise_pow")
    x = rand(rng, xs, "float64", 0.5 if positive else -1, 2.0)
    y = rand(rng, ys, "float64", 0.5 if positive else -1, 2.0)
    if op in ("elementwise_max", "elementwise_min"):
        x[np.abs(x - np.broadcast_to(y.reshape(ybs), xs)) < 0.05] += 0.1
    x, y = x.astype(dtype), y.astype(dtype)
    fn = EW.get(op, np.power)
    t = make(op, {"X": x, "Y": y}, {"Out": fn(x, y.reshape(ybs)).astype(dtype)}, {"axis": axis})
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


def test_elementwise_size1_dim_needs_the_rest_to_fit():
    x = np.zeros((2, 3, 4), "float32")
    with pytest.raises(tide.TideError, match="cannot broadcast Y \\[2, 1, 3\\]"):
        make(
            "elementwise_add", {"X": x, "Y": np.zeros((2, 1, 3), "float32")}, {"Out": x}
        ).check_output()


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("form", ["same", "broadcast"])
def test_integer_division_edge_cases(dtype, form):
    """INT_MIN / -1 wraps to INT_MIN, INT_MIN % -1 is 0 (numpy's results), floordiv and mod round
    toward -inf (Python's // and %); never SIGFPE. Tide differs from Fluid 1.x on purpose: its
    elementwise_floordiv truncated toward 0 despite its name (later Paddle floors)."""
    lo = np.iinfo(dtype).min
    x = np.array([[lo, lo, 7, -7], [-7, 7, lo, 5]], dtype)
    y = (
        np.array([[-1, 3, -2, 2], [-1, 3, -2, 2]], dtype)
        if form == "same"
        else np.array([-1, 3, -2, 2], dtype)
    )
    yb = np.broadcast_to(y, x.shape)

    def trunc_div(a, b):  # exact, in Python ints; INT_MIN / -1 wraps
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return lo if q > np.iinfo(dtype).max else q

    want_div = np.array(
        [[trunc_div(int(a), int(b)) for a, b in zip(ra, rb)] for ra, rb in zip(x, yb)], dtype
    )
    with np.errstate(all="ignore"):
        want_fdiv = np.floor_divide(x, yb)
        want_mod = np.mod(x, yb)
    for op, want in (
        ("elementwise_div", want_div),
        ("elementwise_floordiv", want_fdiv),
        ("elementwise_mod", want_mod),
    ):
        make(op, {"X": x, "Y": y}, {"Out": want}).check_output(rtol=0, atol=0)


@pytest.mark.parametrize("op", ["elementwise_div", "elementwise_floordiv", "elementwise_mod"])
@pytest.mark.parametrize("form", ["same", "broadcast"])
def test_integer_division_by_zero_names_op_and_y(op, form):
    x = np.array([[4, 5], [6, 7]], "int64")
    y = np.array([[1, 0], [1, 1]], "int64") if form == "same" else np.array([0, 1], "int64")
    with pytest.raises(tide.TideError, match="%s.*division by zero.*y_in" % op):
        make(op, {"X": x, "Y": y}, {"Out": x}).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
def test_float_floordiv_mod_and_pow(dtype, rng):
    x = rand(rng, (3, 4), dtype, -5, 5)
    y = rand(rng, (4,), dtype, 0.5, 2) * np.array([1, -1, 1, -1], dtype)
    make("elementwise_floordiv", {"X": x, "Y": y}, {"Out": np.floor_divide(x, y)}).check_output()
    make("elementwise_mod", {"X": x, "Y": y}, {"Out": np.mod(x, y)}).check_output(atol=1e-5)
    xp = rand(rng, (3, 4), dtype, 0.5, 2)
    t = make("elementwise_pow", {"X": xp, "Y": y}, {"Out": np.power(xp, y)})
    t.check_output()
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", ["int32", "int64", "uint8"])
def test_cast_nan_and_out_of_range_saturate(src, dst):
    """tide/ops/cast.hpp's rule (C++ leaves these undefined): truncate toward 0, saturate at the
    limits, NaN -> 0."""
    info = np.iinfo(dst)
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.9, -2.9, 0.0, 300.5], src)
    want = np.array(
        [0, info.max, info.min, info.max, info.min, 2, max(-2, info.min), 0, min(300, info.max)],
        dst,
    )
    codes = dict(CODE, uint8=20)
    make(
        "cast", {"X": x}, {"Out": want}, {"in_dtype": codes[src], "out_dtype": codes[dst]}
    ).check_output()


def test_sign_gradient_is_zero():
    x = np.array([[-1.5, 0.0, 2.0]])
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        xv = tide.layers.data(name="x", shape=[1, 3], dtype="float64", append_batch_size=False)
        xv.stop_gradient = False
        loss = tide.layers.mean(tide.layers.elementwise_mul(tide.layers.sign(xv), xv))
        tide.append_backward(loss)
    (g,) = tide.Executor(tide.CPUPlace()).run(
        main, feed={"x": x}, fetch_list=["x@GRAD"], scope=tide.Scope()
    )
    np.testing.assert_allclose(g, np.sign(x) / 3)  # only the direct path: sign's is 0


def test_matmul_unknown_batch_at_build_time(exe):
    x = tide.layers.data(name="x", shape=[-1, 3, 4], dtype="float32", append_batch_size=False)
    y = tide.layers.data(name="y", shape=[2, 4, 5], dtype="float32", append_batch_size=False)
    out = tide.layers.matmul(x, y)
    assert list(out.shape) == [2, 3, 5]
    xs = np.random.RandomState(0).rand(2, 3, 4).astype("float32")
    ys = np.random.RandomState(1).rand(2, 4, 5).astype("float32")
    (got,) = exe.run(feed={"x": xs, "y": ys}, fetch_list=[out])
    np.testing.assert_allclose(got, xs @ ys, rtol=1e-5)
    with pytest.raises(tide.TideError, match="batch dims"):  # checked at run time
        exe.run(feed={"x": np.zeros((3, 3, 4), "float32"), "y": ys}, fetch_list=[out])


def test_elementwise_general_broadcast_of_empty_tensors():
    x, y = np.zeros((2, 0, 4), "float32"), np.zeros((1, 0, 4), "float32")
    make("elementwise_add", {"X": x, "Y": y}, {"Out": x + y}).check_output()


def test_integer_pow_rounds_to_nearest():
    x, y = np.array([2, 3, 5, -2], "int64"), np.array([-1, 2, 3, 3], "int64")
    make(
        "elementwise_pow", {"X": x, "Y": y}, {"Out": np.array([0, 9, 125, -8], "int64")}
    ).check_output()
