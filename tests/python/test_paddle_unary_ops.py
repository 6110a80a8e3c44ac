"""Paddle 2.x's elementwise math ops (plugins/ops_math/paddle_math_activations.h): log1p, expm1,
sinh, cosh, asinh, acosh, atanh, trunc, selu, celu, logit, erfinv, lgamma, digamma, each against
an independent float64 reference (numpy, Python's math module; digamma by differences of
math.lgamma, its gradient trigamma against known values and differences of digamma), gradients
by central differences; and isnan_v2 / isinf_v2 / isfinite_v2 (plugins/ops_math/isfinite_ops.cc)."""

import math

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(11)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
GRAD32 = {"max_relative_error": 0.02, "numeric_grad_delta": 0.01}
DTYPES = ["float32", "float64"]
# selu's defaults, as the float32 attributes hold them (Paddle's too).
SELU_SCALE = float(np.float32(1.0507009873554804934193349852946))
SELU_ALPHA = float(np.float32(1.6732632423543772848170429916717))
EULER = 0.57721566490153286061


def uniform(lo, hi, shape=(3, 5)):
    return RNG.uniform(lo, hi, shape)


def vec(fn):
    return np.vectorize(fn, otypes=[np.float64])


def selu(x):
    return SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))


def celu(x, alpha):
    return np.where(x < 0, alpha * np.expm1(x / alpha), x)


def logit(x, eps):
    p = np.clip(x, eps, 1 - eps)
    return np.log(p / (1 - p))


def digamma_ref(x):
    """d/dx lgamma by central differences of math.lgamma, Richardson-extrapolated (O(h^4))."""
    lg = vec(math.lgamma)

    def d(h):
        return (lg(x + h) - lg(x - h)) / (2 * h)

    h = 1e-3
    return (4 * d(h / 2) - d(h)) / 3


# (op, X's domain, reference, attrs); the domains stay away from the ops' poles and branch points.
CASES = [
    ("log1p", (-0.6, 3.0), np.log1p, {}),
    ("expm1", (-2.0, 2.0), np.expm1, {}),
    ("sinh", (-2.0, 2.0), np.sinh, {}),
    ("cosh", (-2.0, 2.0), np.cosh, {}),
    ("asinh", (-3.0, 3.0), np.arcsinh, {}),
    ("acosh", (1.2, 4.0), np.arccosh, {}),
    ("atanh", (-0.8, 0.8), np.arctanh, {}),
    ("selu", (-2.0, 2.0), selu, {}),
    ("celu", (-2.0, 2.0), lambda x: celu(x, 1.0), {}),
    ("celu", (-2.0, 2.0), lambda x: celu(x, 0.5), {"alpha": 0.5}),
    ("logit", (0.05, 0.95), lambda x: logit(x, 1e-6), {}),
    ("lgamma", (0.2, 6.0), vec(math.lgamma), {}),
    ("lgamma", (-2.9, -2.1), vec(math.lgamma), {}),
    ("digamma", (0.2, 12.0), digamma_ref, {}),
    ("digamma", (-2.9, -2.1), digamma_ref, {}),
]


def case_id(c):
    return (
        c[0]
        + ("_" + "_".join("%s%s" % kv for kv in c[3].items()) if c[3] else "")
        + ("_neg" if c[1][0] < 0 and c[0] in ("lgamma", "digamma") else "")
    )


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary(case, dtype):
    op, (lo, hi), ref, attrs = case
    x = uniform(lo, hi).astype(dtype)
    want = ref(x.astype("float64"))
    t = make(op, {"X": x}, {"Out": want.astype(dtype)}, attrs)
    tol = 1e-9 if dtype == "float64" else 2e-6
    t.check_output(atol=tol, rtol=tol)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)
    elif op not in ("lgamma", "digamma"):  # their float32 differences are too coarse near poles
        t.check_grad(["X"], "Out", **GRAD32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_trunc(dtype):
    x = np.array([[-2.7, -1.0, -0.5, 0.0, 0.4, 1.5, 3.9]], dtype)
    t = make("trunc", {"X": x}, {"Out": np.trunc(x)})
    t.check_output(atol=0, rtol=0)
    # The gradient is 0 (the op is piecewise constant), away from the jumps too.
    got = make("trunc_grad", {"X": x, "Out@GRAD": np.ones_like(x)}, {"X@GRAD": np.zeros_like(x)})
    got.check_output(atol=0, rtol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_erfinv(dtype):
    x = np.concatenate([uniform(-0.999, 0.999, (20,)), [0.0, 0.5, -0.9999, 0.999999]]).astype(dtype)
    out = make("erfinv", {"X": x}, {"Out": x}).forward()["Out"]
    # Independent check: erf(erfinv(x)) = x, by Python's erf.
    back = vec(math.erf)(out.astype("float64"))
    np.testing.assert_allclose(
        back, x.astype("float64"), rtol=0, atol=1e-14 if dtype == "float64" else 1e-6
    )
    np.testing.assert_allclose(out[-3], 0.4769362762044699, rtol=1e-6)  # erfinv(1/2)
    if dtype == "float64":
        t = make("erfinv", {"X": x[:20]}, {"Out": out[:20]})
        t.check_grad(["X"], "Out", **GRAD)
    # +-inf from +-1 on (Paddle's kernel), NaN stays NaN.
    edge = np.array([1.0, -1.0, 2.0, -3.0, np.nan], dtype)
    want = np.array([np.inf, -np.inf, np.inf, -np.inf, np.nan], dtype)
    make("erfinv", {"X": edge}, {"Out": want}).check_output(atol=0, rtol=0)


def test_logit_eps():
    """Paddle's rule: X clipped to [eps, 1 - eps], the gradient 0 outside; with eps 0 NaN outside
    [0, 1] and +-inf at the ends."""
    x = np.array([-0.2, 0.0, 0.001, 0.3, 0.995, 1.0, 1.4])
    eps = float(np.float32(0.01))  # the attribute is float32
    t = make("logit", {"X": x}, {"Out": logit(x, eps)}, {"eps": 0.01})
    t.check_output(atol=1e-12, rtol=1e-12)
    inside = (x >= eps) & (x <= 1 - eps)
    g = np.where(inside, 1.0 / np.where(inside, x * (1 - x), 1.0), 0.0)
    make(
        "logit_grad", {"X": x, "Out@GRAD": np.ones_like(x)}, {"X@GRAD": g}, {"eps": 0.01}
    ).check_output(atol=1e-12, rtol=1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where((x < 0) | (x > 1), np.nan, np.log(x / (1 - x)))
    make("logit", {"X": x}, {"Out": want}, {"eps": 0.0}).check_output(atol=1e-12, rtol=1e-12)


def test_selu_attrs():
    x = uniform(-2, 2).astype("float64")
    want = 2.0 * np.where(x > 0, x, 0.5 * np.expm1(x))
    t = make("selu", {"X": x}, {"Out": want}, {"scale": 2.0, "alpha": 0.5})
    t.check_output(atol=1e-12, rtol=1e-12)
    t.check_grad(["X"], "Out", **GRAD)


def test_digamma_trigamma_known_values():
    """digamma(1) = -gamma, digamma(1/2) = -gamma - 2 ln 2; trigamma (digamma's gradient)
    (1) = pi^2/6, (1/2) = pi^2/2, (-1/2) = pi^2/2 + 4, (30) by its series; the poles as Paddle
    gives them."""
    x = np.array([1.0, 0.5, -0.5, 30.0, 200.0])
    out = make("digamma", {"X": x}, {"Out": x}).forward()["Out"]
    np.testing.assert_allclose(out[:2], [-EULER, -EULER - 2 * math.log(2)], rtol=1e-14)
    np.testing.assert_allclose(out[2:], digamma_ref(x[2:]), rtol=1e-9)
    k = np.arange(1e6)
    n = 30 + 1e6
    tri30 = np.sum(1 / (30 + k) ** 2) + 1 / n + 1 / (2 * n * n)  # the tail: Euler-Maclaurin
    want = [math.pi**2 / 6, math.pi**2 / 2, math.pi**2 / 2 + 4, tri30, np.nan]
    got = make("digamma_grad", {"X": x, "Out@GRAD": np.ones_like(x)}, {"X@GRAD": x}).forward()
    np.testing.assert_allclose(got["X@GRAD"][:4], want[:4], rtol=1e-11)
    # trigamma(200) against second differences of lgamma.
    lg = vec(math.lgamma)
    h = 1e-2
    np.testing.assert_allclose(
        got["X@GRAD"][4], (lg(200 + h) - 2 * lg(200.0) + lg(200 - h)) / h**2, rtol=1e-6
    )
    poles = np.array([0.0, -1.0, -2.0])
    out = make("digamma", {"X": poles}, {"Out": poles}).forward()["Out"]
    assert out[0] == -np.inf and np.isnan(out[1:]).all()
    lg_poles = make("lgamma", {"X": poles}, {"Out": poles}).forward()["Out"]
    assert (lg_poles == np.inf).all()


@pytest.mark.parametrize("dtype", DTYPES + ["int32", "int64"])
def test_isnan_isinf_isfinite(dtype):
    if dtype.startswith("float"):
        x = np.array([[0.0, np.nan, np.inf], [-np.inf, -1.5, 3.0]], dtype)
    else:
        x = np.array([[0, -7, 3], [2**20, 1, 0]], dtype)
    for op, ref in [("isnan_v2", np.isnan), ("isinf_v2", np.isinf), ("isfinite_v2", np.isfinite)]:
        make(op, {"X": x}, {"Out": ref(x)}).check_output(atol=0, rtol=0)


def test_errors():
    with pytest.raises(tide.TideError, match="isnan_v2.*X .* must be float32, float64, int32 or"):
        x = np.array([True, False])
        make("isnan_v2", {"X": x}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match="log1p.*no kernel for {cpu, int32"):
        x = np.array([1, 2], "int32")  # the activations have float kernels only
        make("log1p", {"X": x}, {"Out": x}).check_output()
