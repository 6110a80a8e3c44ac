"""Fluid's activations (ops_math/activation_ops.cc): each op's output against a numpy reference
written here from Fluid 1.x's activation_op.h formulas, and its gradient against central finite
differences, float32 and float64, with Fluid's attribute defaults and with other values.

Where Tide deliberately differs from Fluid 1.x:
- hard_swish's gradient where X + offset >= threshold is threshold / scale (the derivative);
  Fluid's is 1 (the same for the defaults threshold = scale = 6).
- softplus and logsigmoid are computed without overflow (max(x, 0) + log1p(exp(-|x|))).
"""

import math

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


_erf = np.vectorize(math.erf)

# op: (numpy reference f(x, **attrs), input range, attrs to try besides the defaults, kinks)
# `kinks` are points where the op is not differentiable: inputs near them are moved away so
# finite differences stay valid.
ACTS = {
    "relu": (lambda x: np.maximum(x, 0), (-2, 2), {}, [0]),
    "sigmoid": (sigmoid, (-3, 3), {}, []),
    "tanh": (np.tanh, (-2, 2), {}, []),
    "square": (np.square, (-2, 2), {}, []),
    "abs": (np.abs, (-2, 2), {}, [0]),
    "acos": (np.arccos, (-0.9, 0.9), {}, []),
    "asin": (np.arcsin, (-0.9, 0.9), {}, []),
    "atan": (np.arctan, (-3, 3), {}, []),
    "cos": (np.cos, (-3, 3), {}, []),
    "sin": (np.sin, (-3, 3), {}, []),
    "exp": (np.exp, (-2, 2), {}, []),
    "log": (np.log, (0.2, 3), {}, []),
    "reciprocal": (lambda x: 1 / x, (0.5, 2), {}, []),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.3, 3), {}, []),
    "ceil": (np.ceil, (-3, 3), {}, [-2, -1, 0, 1, 2]),
    "floor": (np.floor, (-3, 3), {}, [-2, -1, 0, 1, 2]),
    "round": (
        lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
        (-3, 3),
        {},
        [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5],
    ),
    "logsigmoid": (lambda x: -softplus(-x), (-4, 4), {}, []),
    "softplus": (softplus, (-4, 4), {}, []),
    "softsign": (lambda x: x / (1 + np.abs(x)), (-3, 3), {}, [0]),
    "tanh_shrink": (lambda x: x - np.tanh(x), (-2, 2), {}, []),
    "brelu": (
        lambda x, t_min=0.0, t_max=24.0: np.clip(x, t_min, t_max),
        (-2, 30),
        {"t_min": -1.0, "t_max": 1.0},
        ["t_min", "t_max"],
    ),
    "elu": (
        lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x)),
        (-3, 3),
        {"alpha": 0.5},
        [0],
    ),
    "hard_shrink": (
        lambda x, threshold=0.5: np.where(np.abs(x) > threshold, x, 0),
        (-2, 2),
        {"threshold": 1.2},
        ["threshold", "-threshold"],
    ),
    "hard_sigmoid": (
        lambda x, slope=0.2, offset=0.5: np.clip(slope * x + offset, 0, 1),
        (-4, 4),
        {"slope": 0.5, "offset": 0.25},
        ["hs_lo", "hs_hi"],
    ),
    "hard_swish": (
        lambda x, threshold=6.0, scale=6.0, offset=3.0: (
            x * np.clip(x + offset, 0, threshold) / scale
        ),
        (-5, 5),
        {"threshold": 4.0, "scale": 5.0, "offset": 2.0},
        ["sw_lo", "sw_hi"],
    ),
    "leaky_relu": (
        lambda x, alpha=0.02: np.where(x > 0, x, alpha * x),
        (-2, 2),
        {"alpha": 0.3},
        [0],
    ),
    "pow": (lambda x, factor=1.0: np.power(x, factor), (0.3, 2), {"factor": 2.5}, []),
    "relu6": (
        lambda x, threshold=6.0: np.clip(x, 0, threshold),
        (-2, 8),
        {"threshold": 3.0},
        [0, "threshold"],
    ),
    "soft_relu": (
        lambda x, threshold=40.0: softplus(np.clip(x, -threshold, threshold)),
        (-3, 3),
        {"threshold": 1.5},
        ["threshold", "-threshold"],
    ),
    "softshrink": (
        lambda x, **a: np.where(
            x > a.get("lambda", 0.5),
            x - a.get("lambda", 0.5),
            np.where(x < -a.get("lambda", 0.5), x + a.get("lambda", 0.5), 0),
        ),
        (-2, 2),
        {"lambda": 1.0},
        ["lambda", "-lambda"],
    ),
    "stanh": (
        lambda x, scale_a=0.67, scale_b=1.7159: scale_b * np.tanh(scale_a * x),
        (-3, 3),
        {"scale_a": 1.5, "scale_b": 0.5},
        [],
    ),
    "swish": (lambda x, beta=1.0: x * sigmoid(beta * x), (-3, 3), {"beta": 2.0}, []),
    "thresholded_relu": (
        lambda x, threshold=1.0: np.where(x > threshold, x, 0),
        (-2, 3),
        {"threshold": 0.5},
        ["threshold"],
    ),
    "gelu": (
        lambda x, approximate=False: (
            0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
            if approximate
            else 0.5 * x * (1 + _erf(x / np.sqrt(2)))
        ),
        (-3, 3),
        {"approximate": True},
        [],
    ),
}

# Fluid's defaults, for resolving named kinks.
DEFAULTS = {
    "brelu": {"t_min": 0.0, "t_max": 24.0},
    "hard_shrink": {"threshold": 0.5},
    "hard_sigmoid": {"slope": 0.2, "offset": 0.5},
    "hard_swish": {"threshold": 6.0, "scale": 6.0, "offset": 3.0},
    "relu6": {"threshold": 6.0},
    "soft_relu": {"threshold": 40.0},
    "softshrink": {"lambda": 0.5},
    "thresholded_relu": {"threshold": 1.0},
}


def kink_points(op, attrs):
    a = dict(DEFAULTS.get(op, {}), **attrs)
    pts = []
    for k in ACTS[op][3]:
        if isinstance(k, (int, float)):
            pts.append(k)
        elif k == "hs_lo":
            pts.append(-a["offset"] / a["slope"])
        elif k == "hs_hi":
            pts.append((1 - a["offset"]) / a["slope"])
        elif k == "sw_lo":
            pts.append(-a["offset"])
        elif k == "sw_hi":
            pts.append(a["threshold"] - a["offset"])
        elif k.startswith("-"):
            pts.append(-a[k[1:]])
        else:
            pts.append(a[k])
    return pts


def make_input(op, attrs, dtype, rng, shape=(3, 7)):
    lo, hi = ACTS[op][1]
    x = rng.uniform(lo, hi, shape)
    for p in kink_points(op, attrs):  # keep clear of kinks by more than the finite-difference step
        near = np.abs(x - p) < 0.05
        x[near] = p + 0.1 * np.sign(x[near] - p + 1e-12)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("with_attrs", [False, True])
@pytest.mark.parametrize("op", sorted(ACTS))
def test_activation(op, with_attrs, dtype, rng):
    fn, _, other, _ = ACTS[op]
    if with_attrs and not other:
        pytest.skip("no attributes")
    attrs = dict(other) if with_attrs else {}
    x = make_input(op, attrs, dtype, rng)
    want = fn(x.astype(np.float64), **attrs).astype(dtype)
    t = make(op, {"X": x}, {"Out": want}, attrs)
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_attribute_defaults_are_fluids():
    """The registered defaults are Fluid 1.x's (activation_op.cc)."""
    import tide._C as C

    for op, defaults in dict(
        DEFAULTS,
        leaky_relu={"alpha": 0.02},
        elu={"alpha": 1.0},
        pow={"factor": 1.0},
        swish={"beta": 1.0},
        stanh={"scale_a": 0.67, "scale_b": 1.7159},
        gelu={"approximate": False},
    ).items():
        got = {a["name"]: a.get("default") for a in C.op_proto(op)["attrs"]}
        for k, v in defaults.items():
            assert got[k] == pytest.approx(v), (op, k, got[k], v)


def test_piecewise_constant_ops_have_zero_gradients():
    x = np.array([[-1.7, -0.2, 0.3, 2.6]])
    for op in ("ceil", "floor", "round"):
        main = tide.Program()
        with tide.program_guard(main, tide.Program()):
            xv = tide.layers.data(name="x", shape=[4], dtype="float64", append_batch_size=False)
            xv.stop_gradient = False
            loss = tide.layers.mean(getattr(tide.layers, op)(xv))
            tide.append_backward(loss)
        (g,) = tide.Executor(tide.CPUPlace()).run(
            main, feed={"x": x.reshape(4)}, fetch_list=["x@GRAD"], scope=tide.Scope()
        )
        np.testing.assert_array_equal(g, np.zeros(4))


def test_generated_layers_take_fluids_keywords(exe):
    x = tide.layers.data(name="x", shape=[3], dtype="float32")
    out = tide.layers.leaky_relu(x, alpha=0.1)
    y = tide.layers.hard_sigmoid(x=x, slope=0.5)
    xs = np.array([[-2.0, 0.5, 3.0]], "float32")
    exe.run(tide.default_startup_program())
    a, b = exe.run(feed={"x": xs}, fetch_list=[out, y])
    np.testing.assert_allclose(a, np.where(xs > 0, xs, 0.1 * xs), rtol=1e-6)
    np.testing.assert_allclose(b, np.clip(0.5 * xs + 0.5, 0, 1), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# prelu
def prelu_ref(x, alpha, mode):
    if mode == "all":
        a = alpha.reshape(1)[0]
    elif mode == "channel":
        a = alpha.reshape((1, x.shape[1]) + (1,) * (x.ndim - 2))
    else:
        a = alpha.reshape((1,) + x.shape[1:])
    return np.where(x > 0, x, a * x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "mode,alpha_shape", [("all", (1,)), ("channel", (3,)), ("element", (3, 2, 2))]
)
def test_prelu(mode, alpha_shape, dtype, rng):
    x = rng.uniform(-1, 1, (2, 3, 2, 2))
    x[np.abs(x) < 0.05] = 0.2
    x = x.astype(dtype)
    alpha = rng.uniform(0.1, 0.5, alpha_shape).astype(dtype)
    t = make(
        "prelu",
        {"X": x, "Alpha": alpha},
        {"Out": prelu_ref(x, alpha, mode).astype(dtype)},
        {"mode": mode},
    )
    t.check_output()
    t.check_grad(["X", "Alpha"], "Out", **grad_args(dtype))


def test_prelu_wrong_alpha_size_is_an_error():
    x = np.ones((2, 3, 4), "float32")
    with pytest.raises(tide.TideError, match="prelu.*Alpha.*needs 3"):
        make(
            "prelu", {"X": x, "Alpha": np.ones(2, "float32")}, {"Out": x}, {"mode": "channel"}
        ).check_output()
    with pytest.raises(tide.TideError, match="mode"):
        make(
            "prelu", {"X": x, "Alpha": np.ones(1, "float32")}, {"Out": x}, {"mode": "rows"}
        ).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
def test_pow_square_is_exact(dtype, rng):
    """pow with factor 2 (RMSNorm's x^2) takes x * x: the correctly rounded square, as pow's,
    so bit for bit numpy's square in the same type (negatives, zeros, infinities, NaN too);
    its grad 2 x g."""
    x = rng.uniform(-3, 3, (4, 50)).astype(dtype)
    x.reshape(-1)[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    t = make("pow", {"X": x}, {"Out": np.square(x)}, {"factor": 2.0})
    t.check_output(rtol=0, atol=0)
    y = rng.uniform(-3, 3, (3, 4)).astype(dtype)
    make("pow", {"X": y}, {"Out": np.square(y)}, {"factor": 2.0}).check_grad(
        ["X"], "Out", **grad_args(dtype)
    )
