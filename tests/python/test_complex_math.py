"""ops_math's elementwise math on complex64 / complex128 values: sin, cos, tan, sinh, cosh, tanh,
asin, acos, atan, asinh, acosh, atanh, log, log2, log10, log1p, expm1, sqrt, rsqrt, square,
reciprocal, sigmoid, pow (a real factor), elementwise_pow (complex operands) and where. Each op's
output against numpy's (values in all four quadrants, points on and beside the branch cuts with
either sign of zero), its gradient against central differences of the real and imaginary parts
(OpTest.check_grad; Paddle's and PyTorch's convention, z@GRAD = dL/dRe(z) + i dL/dIm(z), so a
holomorphic f gives dX = dOut * conj(f'(X))), complex128 tight and complex64 loose; the grads at
singular points (infinite or NaN, never a finite wrong value) and pow's at 0; a chain of the ops
through append_backward against finite differences of the program; the Fluid layers that now
take complex values; bad input."""

import itertools

import numpy as np
import pytest
from op_test import make

import tide

CDTYPES = ["complex64", "complex128"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}
# (max_relative_error, numeric_grad_delta): complex64's loss is summed in float32.
GRAD_TOL = {"complex64": (0.02, 0.01), "complex128": (1e-6, 1e-5)}
OUT_TOL = {"complex64": {"atol": 1e-5, "rtol": 1e-5}, "complex128": {"atol": 1e-13, "rtol": 1e-12}}
DOUT, DX, DY = "Out@GRAD", "X@GRAD", "Y@GRAD"


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


# op: numpy's function (rsqrt and sigmoid have none: their formulas).
UNARY = {
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "expm1": np.expm1,
    "sqrt": np.sqrt,
    "rsqrt": lambda z: 1 / np.sqrt(z),
    "square": np.square,
    "reciprocal": lambda z: 1 / z,  # np.reciprocal(0j) is NaN + NaNj, 1 / 0j inf + NaNj
    "sigmoid": sigmoid,
}
# Each op's branch cuts, as points on them: z = c + 0j approached from either side of the real
# axis, or z = 0 + c j from either side of the imaginary axis.
CUTS = {
    "log": [("re", -2.0), ("re", -0.5)],
    "log2": [("re", -2.0)],
    "log10": [("re", -3.0)],
    "sqrt": [("re", -2.0), ("re", -0.25)],
    "rsqrt": [("re", -2.0)],
    "log1p": [("re", -3.0), ("re", -1.5)],
    "asin": [("re", 2.0), ("re", -1.5)],
    "acos": [("re", 2.0), ("re", -1.5)],
    "atanh": [("re", 2.0), ("re", -1.5)],
    "acosh": [("re", -2.0), ("re", 0.5), ("re", -0.5)],
    "atan": [("im", 2.0), ("im", -1.5)],
    "asinh": [("im", 2.0), ("im", -1.5)],
}


def quadrant_values(rng, n, lo, hi):
    """n complex values with |real| and |imaginary| parts in [lo, hi], the four sign patterns
    each taken in turn (n >= 4: every quadrant)."""
    signs = np.array(list(itertools.islice(itertools.cycle([1, -1, 1, -1]), n)))
    im_signs = np.array(list(itertools.islice(itertools.cycle([1, 1, -1, -1]), n)))
    return signs * rng.uniform(lo, hi, n) + 1j * im_signs * rng.uniform(lo, hi, n)


def grid():
    """A grid over the four quadrants and the axes, from small to large parts."""
    parts = [-2.5, -0.7, 0.0, 0.3, 1.6]
    return np.array([complex(a, b) for a in parts for b in parts])


def cut_points(op):
    """Points on op's branch cuts with either sign of zero, and 1e-7 to either side."""
    pts = []
    for axis, c in CUTS.get(op, []):
        for off in (0.0, -0.0, 1e-7, -1e-7):
            pts.append(complex(c, off) if axis == "re" else complex(off, c))
    return np.array(pts, dtype=complex)


def assert_parts_close(got, want, **tol):
    """Real and imaginary parts compared apart (infinities and NaNs in place)."""
    np.testing.assert_allclose(got.real, want.real, **tol)
    np.testing.assert_allclose(got.imag, want.imag, **tol)


# --- unary functions ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_forward_against_numpy(op, dtype):
    """Over a grid of all four quadrants and both axes, and on and beside the op's branch cuts
    (numpy's side of each cut by the sign of the zero, C99's Annex G)."""
    fn = UNARY[op]
    x = np.concatenate([grid(), cut_points(op)]).astype(dtype)
    with np.errstate(all="ignore"):
        # complex64 against numpy in complex128, rounded: numpy's own complex64 log1p is
        # log(|1 + z|), whose rounding the kernel avoids
        want = fn(x.astype("complex128")).astype(dtype)
    finite = np.isfinite(want)
    x, want = x[finite], want[finite]  # the poles on the grid: tested below
    got = make(op, {"X": x}, {"Out": want}).check_output(**OUT_TOL[dtype])[0].numpy()
    assert got.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_log1p_and_expm1_keep_the_digits_of_small_values(dtype):
    """Near 0, log1p(z) and expm1(z) are their Taylor series' first four terms to rounding
    (numpy's complex log1p, log(|1 + z|), loses them: 1e-10 + 1e-10j gives a real part of
    1.00000008e-10), in all four quadrants."""
    z = np.array([1e-10 + 1e-10j, -3e-9 + 2e-9j, -1e-6 - 4e-7j, 2e-5 - 3e-5j, 1e-30 - 1e-30j])
    log1p = z - z**2 / 2 + z**3 / 3 - z**4 / 4
    expm1 = z + z**2 / 2 + z**3 / 6 + z**4 / 24
    tol = {"rtol": 1e-6 if dtype == "complex64" else 1e-14, "atol": 0}
    x = z.astype(dtype)
    make("log1p", {"X": x}, {"Out": log1p.astype(dtype)}).check_output(**tol)
    make("expm1", {"X": x}, {"Out": expm1.astype(dtype)}).check_output(**tol)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_gradient(op, dtype, rng):
    """X@GRAD against central differences, with |Re| and |Im| in [0.3, 1.2]: off every op's
    branch cuts (all on the axes) and poles."""
    x = quadrant_values(rng, 6, 0.3, 1.2).reshape(2, 3).astype(dtype)
    with np.errstate(all="ignore"):
        want = UNARY[op](x.astype("complex128")).astype(dtype)
    t = make(op, {"X": x}, {"Out": want})
    t.check_output(**OUT_TOL[dtype])
    err, delta = GRAD_TOL[dtype]
    t.check_grad(["X"], "Out", max_relative_error=err, numeric_grad_delta=delta)


# op: its derivative f'(z), for the grad ops run alone.
DERIV = {
    "sin": np.cos,
    "cos": lambda z: -np.sin(z),
    "tan": lambda z: 1 / np.cos(z) ** 2,
    "sinh": np.cosh,
    "cosh": np.sinh,
    "tanh": lambda z: 1 - np.tanh(z) ** 2,
    "asin": lambda z: 1 / np.sqrt(1 - z * z),
    "acos": lambda z: -1 / np.sqrt(1 - z * z),
    "atan": lambda z: 1 / (1 + z * z),
    "asinh": lambda z: 1 / np.sqrt(1 + z * z),
    "acosh": lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1)),
    "atanh": lambda z: 1 / (1 - z * z),
    "log": lambda z: 1 / z,
    "log2": lambda z: 1 / (z * np.log(2)),
    "log10": lambda z: 1 / (z * np.log(10)),
    "log1p": lambda z: 1 / (1 + z),
    "expm1": np.exp,
    "sqrt": lambda z: 0.5 / np.sqrt(z),
    "rsqrt": lambda z: -0.5 * z**-1.5,
    "square": lambda z: 2 * z,
    "reciprocal": lambda z: -1 / z**2,
    "sigmoid": lambda z: sigmoid(z) * (1 - sigmoid(z)),
}
# The grad ops that read Out (as the real ones do); the others read X.
FROM_OUT = {"tanh", "sigmoid", "expm1", "sqrt", "rsqrt", "reciprocal"}


@pytest.mark.parametrize("dtype", CDTYPES)
def test_grad_ops_are_dout_times_the_conjugate_derivative(dtype, rng):
    """Each grad op alone: X@GRAD = Out@GRAD * conj(f'(X)), f' numpy's formula, read from X or
    Out as the op's real grad op reads; also for acosh left of the imaginary axis, where
    1 / sqrt(z^2 - 1) would have the wrong sign."""
    x = np.concatenate([quadrant_values(rng, 8, 0.2, 2.5), [-2 + 0.5j, -0.5 - 2j]]).astype(dtype)
    g = quadrant_values(rng, x.size, 0.5, 1.5).astype(dtype)
    for op, deriv in sorted(DERIV.items()):
        wide = x.astype("complex128")
        want = (g * np.conj(deriv(wide))).astype(dtype)
        ins = {"Out": UNARY[op](wide).astype(dtype)} if op in FROM_OUT else {"X": x}
        ins[DOUT] = g
        tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "complex64" else OUT_TOL[dtype]
        make(op + "_grad", ins, {DX: want}).check_output(**tol)


SINGULAR = {
    "log": [0j],
    "log2": [0j],
    "log10": [0j],
    "log1p": [-1 + 0j],
    "sqrt": [0j],
    "rsqrt": [0j],
    "reciprocal": [0j],
    "atanh": [1 + 0j, -1 + 0j],
    "asin": [1 + 0j, -1 + 0j],
    "acos": [1 + 0j, -1 + 0j],
    "acosh": [1 + 0j, -1 + 0j],
    "atan": [1j, -1j],
    "asinh": [1j, -1j],
}


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", sorted(SINGULAR))
def test_singular_points(op, dtype):
    """At a singular point Out is numpy's (log 0 = -inf, 1 / sqrt(0) infinite, atanh(1) = inf,
    ...) and X@GRAD is infinite or NaN, as numpy's formula gives (never a finite value)."""
    x = np.array(SINGULAR[op], dtype)
    with np.errstate(all="ignore"):
        want = UNARY[op](x.astype("complex128")).astype(dtype)
    got = make(op, {"X": x}, {"Out": want}).forward()["Out"]
    assert_parts_close(got, want, rtol=1e-6)
    g = np.ones_like(x)
    ins = {"Out": got} if op in FROM_OUT else {"X": x}
    ins[DOUT] = g
    dx = make(op + "_grad", ins, {DX: x}).forward()[DX]
    assert not np.isfinite(dx).any(), (op, dx)


# --- pow (a real factor) and elementwise_pow ------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("factor", [2.0, 3.0, 7.0, -2.0, 0.5, 2.5, -1.5, 0.0])
def test_pow_with_a_real_factor(factor, dtype, rng):
    """numpy's z ** factor: whole factors by repeated products (exactly numpy's rounding), the
    others exp(factor log z); the grad factor * z^(factor - 1), 0 for factor 0."""
    x = np.concatenate([quadrant_values(rng, 6, 0.3, 1.2), [-2 + 0j, complex(-2, -0.0)]])
    x = x.astype(dtype)
    want = (x**factor).astype(dtype)
    t = make("pow", {"X": x}, {"Out": want}, {"factor": factor})
    t.check_output(**OUT_TOL[dtype])
    # differences on the negative real axis would straddle the cut: the grad off it
    x = x[:6].reshape(2, 3)
    t = make("pow", {"X": x}, {"Out": (x**factor).astype(dtype)}, {"factor": factor})
    err, delta = GRAD_TOL[dtype]
    t.check_grad(["X"], "Out", max_relative_error=err, numeric_grad_delta=delta)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_pow_factor_tensor(dtype, rng):
    x = quadrant_values(rng, 4, 0.3, 1.2).astype(dtype)
    ins = {"X": x, "FactorTensor": np.array([3.0], "float32")}
    t = make("pow", ins, {"Out": (x**3).astype(dtype)}, {"factor": 9.0})
    t.check_output(**OUT_TOL[dtype])
    err, delta = GRAD_TOL[dtype]
    t.check_grad(["X"], "Out", err, delta, no_grad_set={"factortensor_in"})


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize(
    "xs,ys,axis",
    [((2, 3), (2, 3), -1), ((2, 3), (3,), -1), ((3, 1), (1, 2), -1), ((2, 3, 2), (3,), 1)],
)
def test_elementwise_pow(xs, ys, axis, dtype, rng):
    """Complex z ** w against numpy (broadcast both ways and Fluid's axis); the grads
    dX = dOut conj(w z^(w-1)), dY = dOut conj(log(z) z^w) against central differences."""
    x = quadrant_values(rng, int(np.prod(xs)), 0.3, 1.2).reshape(xs).astype(dtype)
    y = (rng.uniform(-1.5, 2.5, ys) + 1j * rng.uniform(-0.5, 0.5, ys)).astype(dtype)
    y.reshape(-1)[0] = 2  # a whole exponent: numpy's repeated products
    y_as = y.reshape(3, 1) if axis == 1 else y
    want = (x**y_as).astype(dtype)
    t = make("elementwise_pow", {"X": x, "Y": y}, {"Out": want}, {"axis": axis})
    t.check_output(**OUT_TOL[dtype])
    err, delta = GRAD_TOL[dtype]
    t.check_grad(["X", "Y"], "Out", max_relative_error=err, numeric_grad_delta=delta)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_elementwise_pow_at_zero(dtype):
    """numpy's 0 ** w: 1 for w = 0, 0 for Re(w) > 0, else NaN. The grads there: dX = w 0^(w-1),
    so dOut for w = 1, 0 for w = 0 (the power is 1 for every z) and for Re(w) > 1, NaN for other
    w; dY = 0 where 0 ** w is 0 or 1 around w (Re(w) > 0 or w = 0, PyTorch's 0 too), else NaN."""
    w = np.array([0, 1, 2, 2 + 1j, 3, 0.5, 1j, -1, 0.5 + 2j], dtype)
    z = np.zeros_like(w)
    with np.errstate(all="ignore"):
        want = (z**w).astype(dtype)
    got = make("elementwise_pow", {"X": z, "Y": w}, {"Out": want}).forward()["Out"]
    assert_parts_close(got, want, rtol=0, atol=0)
    g = (np.arange(w.size) + 1 + 0.5j).astype(dtype)
    nan = complex(np.nan, np.nan)
    dx = [0, g[1], 0, 0, 0, nan, nan, nan, nan]
    dy = [0, 0, 0, 0, 0, 0, nan, nan, 0]
    ins = {"X": z, "Y": w, DOUT: g}
    got = make("elementwise_pow_grad", ins, {DX: z, DY: w}, {"axis": -1}).forward()
    for got_g, want_g in ((got[DX], dx), (got[DY], dy)):
        want_g = np.array(want_g, dtype)
        assert np.array_equal(np.isnan(got_g), np.isnan(want_g)), (got_g, want_g)
        ok = ~np.isnan(want_g)
        np.testing.assert_array_equal(got_g[ok], want_g[ok])


# --- where ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("cs,xs,ys", [((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), (2, 1))])
def test_where(cs, xs, ys, dtype, rng):
    """Out = Condition ? X : Y; the grad routes Out@GRAD (summed over broadcast dims)."""
    c = rng.uniform(size=cs) > 0.5
    c.reshape(-1)[:2] = [True, False]
    x = quadrant_values(rng, int(np.prod(xs)), 0.1, 2).reshape(xs).astype(dtype)
    y = quadrant_values(rng, int(np.prod(ys)), 0.1, 2).reshape(ys).astype(dtype)
    t = make("where", {"Condition": c, "X": x, "Y": y}, {"Out": np.where(c, x, y)})
    t.check_output(atol=0, rtol=0)
    err, delta = GRAD_TOL[dtype]
    t.check_grad(["X", "Y"], "Out", max_relative_error=err, numeric_grad_delta=delta)


# --- a chain through append_backward --------------------------------------------------------


def append(block, op, ins, dtype, attrs=None):
    out = block.create_var(name=tide.unique_name.generate(op), dtype=dtype)
    block.append_op(op, inputs=ins, outputs={"Out": out}, attrs=attrs or {})
    return out


@pytest.mark.parametrize("dtype", CDTYPES)
def test_chain_through_append_backward(dtype):
    """loss = mean(w * as_real(log1p(pow(where(c, sqrt(sin z) ** y, tanh(z)), 3)))) +
    mean(|reciprocal(sigmoid(z))|): z's and y's gradients from append_backward against central
    differences of the whole program's loss."""
    rdt = REAL_OF[dtype]
    inputs = {
        "z": np.array([0.4 + 0.8j, -0.6 + 0.5j, 0.9 - 0.7j], dtype),
        "y": np.array([1.5 - 0.5j, 2 + 0j, 0.5 + 0.25j], dtype),
        "c": np.array([True, False, True]),
        "w": np.linspace(0.5, 1.5, 6).reshape(3, 2).astype(rdt),
    }
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        block = main.global_block()
        v = {
            n: block.create_var(
                name=n, shape=a.shape, dtype=a.dtype.name, stop_gradient=n not in ("z", "y")
            )
            for n, a in inputs.items()
        }

        def op(kind, ins, out_dtype=dtype, **attrs):
            return append(block, kind, ins, out_dtype, attrs)

        root = op("sqrt", {"X": op("sin", {"X": v["z"]})})
        powered = op("elementwise_pow", {"X": root, "Y": v["y"]}, axis=-1)
        chosen = op("where", {"Condition": v["c"], "X": powered, "Y": op("tanh", {"X": v["z"]})})
        logs = op("log1p", {"X": op("pow", {"X": chosen}, factor=3.0)})
        parts = op("elementwise_mul", {"X": op("as_real", {"X": logs}, rdt), "Y": v["w"]}, rdt)
        recip = op("reciprocal", {"X": op("sigmoid", {"X": v["z"]})})
        terms = [
            op("mean", {"X": parts}, rdt),
            op("mean", {"X": op("abs", {"X": recip}, rdt)}, rdt),
        ]
        loss = op("sum", {"X": terms}, rdt)
        forward = main.clone()
        tide.append_backward(loss)
    exe = tide.Executor(tide.CPUPlace())

    def run(program, feeds, fetch):
        with tide.scope_guard(tide.Scope()):
            feed = {n: tide.LoDTensor(np.ascontiguousarray(a)) for n, a in feeds.items()}
            return [np.array(t) for t in exe.run(program, feed=feed, fetch_list=fetch)]

    err, delta = GRAD_TOL[dtype]
    analytic = run(main, inputs, ["z@GRAD", "y@GRAD"])
    for name, got in zip("zy", analytic):
        base = inputs[name]
        numeric = np.zeros(base.shape, complex)
        for i, step in itertools.product(range(base.size), [delta, 1j * delta]):
            hi, lo = base.copy(), base.copy()
            hi[i] += step
            lo[i] -= step
            diff = run(forward, dict(inputs, **{name: hi}), [loss.name])[0].item()
            diff -= run(forward, dict(inputs, **{name: lo}), [loss.name])[0].item()
            numeric[i] += diff / (2 * delta) * (step / delta)
        assert got.dtype == base.dtype, (name, got.dtype)
        np.testing.assert_allclose(got, numeric, rtol=err, atol=err, err_msg=name)


# --- the Fluid layers -------------------------------------------------------------------------


def test_layers_take_complex_values(exe, rng):
    """tide.layers' sin ... reciprocal, sigmoid, tanh, square, pow and elementwise_pow build
    complex ops (the dtype checks pass them) that run and match numpy."""
    xv = quadrant_values(rng, 4, 0.3, 1.2).astype("complex128")
    yv = (xv[::-1] * 0.5).astype("complex128")
    L = tide.layers
    x = L.data(name="x", shape=[4], dtype="complex128", append_batch_size=False)
    y = L.data(name="y", shape=[4], dtype="complex128", append_batch_size=False)
    cases = [
        (L.sin(x), np.sin(xv)),
        (L.cos(x), np.cos(xv)),
        (L.asin(x), np.arcsin(xv)),
        (L.acos(x), np.arccos(xv)),
        (L.atan(x), np.arctan(xv)),
        (L.log(x), np.log(xv)),
        (L.sqrt(x), np.sqrt(xv)),
        (L.rsqrt(x), 1 / np.sqrt(xv)),
        (L.reciprocal(x), 1 / xv),
        (L.sigmoid(x), sigmoid(xv)),
        (L.tanh(x), np.tanh(xv)),
        (L.square(x), xv * xv),
        (L.pow(x, 2.5), xv**2.5),
        (L.elementwise_pow(x, y), xv**yv),
    ]
    got = exe.run(feed={"x": xv, "y": yv}, fetch_list=[v for v, _ in cases])
    for (var, want), g in zip(cases, got):
        assert var.dtype == "complex128"
        np.testing.assert_allclose(np.array(g), want, rtol=1e-12, atol=1e-13)


# --- bad input ------------------------------------------------------------------------------


def test_bad_input_names_the_op_and_the_type(rng):
    c64 = quadrant_values(rng, 6, 0.3, 1.2).reshape(2, 3).astype("complex64")
    # Real-only ops (they compare or round values, or have no complex meaning in Paddle)
    for op in ("floor", "erf", "softplus", "logsigmoid", "silu"):
        with pytest.raises(tide.TideError, match=op + r".*complex64"):
            make(op, {"X": c64}, {"Out": c64}).forward()
    # A complex base with a real exponent tensor (Paddle's program casts one of them first)
    f32 = np.ones((2, 3), "float32")
    with pytest.raises(
        tide.TideError, match=r"elementwise_pow.*(complex64.*float32|float32.*complex64)"
    ):
        make("elementwise_pow", {"X": c64, "Y": f32}, {"Out": c64}).forward()
    # where's X and Y of two types
    c = np.ones((2, 3), bool)
    ins = {"Condition": c, "X": c64, "Y": c64.astype("complex128")}
    with pytest.raises(tide.TideError, match=r"where.*complex64 but Y .* is complex128"):
        make("where", ins, {"Out": c64}).forward()
    # Out@GRAD of the wrong dims
    for op, src in (("sin_grad", "X"), ("sqrt_grad", "Out"), ("pow_grad", "X")):
        ins = {src: c64, DOUT: c64[:1]}
        with pytest.raises(tide.TideError, match=op + r".*Out@GRAD"):
            make(op, ins, {DX: c64}, {"factor": 2.0} if op == "pow_grad" else {}).forward()
    # The layers of real-only ops refuse complex values, naming the layer and the type
    x = tide.layers.data(name="xc", shape=[3], dtype="complex64", append_batch_size=False)
    for layer in (tide.layers.floor, tide.layers.softplus, tide.layers.relu):
        with pytest.raises(TypeError, match=layer.__name__ + r".*complex64"):
            layer(x)
    with pytest.raises(TypeError, match=r"elementwise_mod.*complex64"):
        tide.layers.elementwise_mod(x, x)
