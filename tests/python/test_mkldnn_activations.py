"""device_mkldnn's activation kernels (devices/mkldnn/activation_kernels.cc) from Python: each op
with use_mkldnn set on it and on its grad op runs the oneDNN kernels (the executor's kernel
choices say so; the piecewise-linear ones run the plain kernels on plain data, as the plugin's
speed rule has it) and matches float64 numpy references of Fluid's formulas, forward and gradient,
with default and other attribute values; a conv output goes through them blocked; round and
hard_swish, which oneDNN does not compute as Fluid does, run their plain kernels."""

import math

import numpy as np
import pytest
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn

import tide

pytestmark = pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)

_erf = np.vectorize(math.erf)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def gelu(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def gelu_grad(x, approximate=False):
    if approximate:
        k = np.sqrt(2 / np.pi)
        t = np.tanh(k * (x + 0.044715 * x**3))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    return 0.5 * (1 + _erf(x / np.sqrt(2))) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)


# (test id, op, attrs, f(x), df/dx(x), input range, atol). Kinks are avoided by the ranges'
# random draws (float32 inputs never land on them in practice); atol is looser where oneDNN's
# float32 approximation is (log: ~7e-6 absolute; softplus / logsigmoid: ~8e-6 near 0).
CASES = [
    ("relu", "relu", {}, lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0, (-3, 3), 1e-6),
    ("tanh", "tanh", {}, np.tanh, lambda x: 1 - np.tanh(x) ** 2, (-3, 3), 1e-6),
    ("sigmoid", "sigmoid", {}, sigmoid, lambda x: sigmoid(x) * (1 - sigmoid(x)), (-4, 4), 1e-6),
    ("abs", "abs", {}, np.abs, np.sign, (-3, 3), 1e-6),
    ("exp", "exp", {}, np.exp, np.exp, (-3, 3), 1e-6),
    ("log", "log", {}, np.log, lambda x: 1 / x, (0.1, 5), 1e-5),
    ("sqrt", "sqrt", {}, np.sqrt, lambda x: 0.5 / np.sqrt(x), (0.1, 5), 1e-6),
    ("square", "square", {}, np.square, lambda x: 2 * x, (-3, 3), 1e-6),
    ("reciprocal", "reciprocal", {}, lambda x: 1 / x, lambda x: -1 / x**2, (0.3, 3), 1e-6),
    ("rsqrt", "rsqrt", {}, lambda x: x**-0.5, lambda x: -0.5 * x**-1.5, (0.2, 4), 1e-6),
    ("softplus", "softplus", {}, softplus, sigmoid, (-20, 20), 1e-5),
    (
        "logsigmoid",
        "logsigmoid",
        {},
        lambda x: -softplus(-x),
        lambda x: sigmoid(-x),
        (-20, 20),
        1e-5,
    ),
    (
        "leaky_relu",
        "leaky_relu",
        {"alpha": 0.25},
        lambda x: np.where(x > 0, x, 0.25 * x),
        lambda x: np.where(x > 0, 1, 0.25),
        (-3, 3),
        1e-6,
    ),
    (
        "elu",
        "elu",
        {"alpha": 0.5},
        lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)),
        lambda x: np.where(x > 0, 1, 0.5 * np.exp(x)),
        (-4, 3),
        1e-6,
    ),
    (
        "relu6",
        "relu6",
        {"threshold": 2.5},
        lambda x: np.clip(x, 0, 2.5),
        lambda x: ((x > 0) & (x < 2.5)) * 1.0,
        (-2, 4),
        1e-6,
    ),
    (
        "brelu",
        "brelu",
        {"t_min": -1.0, "t_max": 1.5},
        lambda x: np.clip(x, -1, 1.5),
        lambda x: ((x > -1) & (x < 1.5)) * 1.0,
        (-3, 3),
        1e-6,
    ),
    (
        "swish",
        "swish",
        {"beta": 2.0},
        lambda x: x * sigmoid(2 * x),
        lambda x: sigmoid(2 * x) + 2 * x * sigmoid(2 * x) * (1 - sigmoid(2 * x)),
        (-5, 5),
        1e-6,
    ),
    ("gelu_erf", "gelu", {}, gelu, gelu_grad, (-4, 4), 1e-6),
    (
        "gelu_tanh",
        "gelu",
        {"approximate": True},
        lambda x: gelu(x, True),
        lambda x: gelu_grad(x, True),
        (-4, 4),
        1e-6,
    ),
    ("pow", "pow", {"factor": 3.0}, lambda x: x**3, lambda x: 3 * x**2, (-2, 2), 1e-6),
]


# Piecewise-linear functions the oneDNN plugin leaves to the plain kernels on plain data (issue
# 17's speed rule, devices/mkldnn/eltwise_kernels.cc); on a conv's blocked output oneDNN runs them.
PLAIN_ON_PLAIN_DATA = {"relu", "abs", "leaky_relu", "relu6", "brelu"}


def kernels(exe, op_type):
    return [k for op, k in exe.last_run_info()["kernels"] if op == op_type]


def build(op, attrs, shape):
    """x -> op -> mean(op(x) * w): x@GRAD is w * f'(x) / numel."""
    x = tide.layers.data(name="x", shape=list(shape), dtype="float32", append_batch_size=False)
    w = tide.layers.data(name="w", shape=list(shape), dtype="float32", append_batch_size=False)
    x.stop_gradient = False
    y = getattr(tide.layers, op)(x, **attrs)
    loss = tide.layers.mean(tide.layers.elementwise_mul(y, w))
    tide.append_backward(loss)
    return y


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_activation_runs_onednn_and_matches_numpy(case, fresh_programs, exe, rng):
    _, op, attrs, f, df, (lo, hi), atol = case
    main, _ = fresh_programs
    shape = (2, 16, 3, 3)
    y = build(op, attrs, shape)
    marked = 0
    for o in main.global_block().ops:  # use_mkldnn on the op and its grad op only
        if o.type in (op, op + "_grad"):
            o._set_attr("use_mkldnn", True)
            marked += 1
    assert marked == 2
    x = rng.uniform(lo, hi, shape).astype("float32")
    w = rng.uniform(-1, 1, shape).astype("float32")
    out, dx = exe.run(main, feed={"x": x, "w": w}, fetch_list=[y, "x@GRAD"])
    onednn = op not in PLAIN_ON_PLAIN_DATA
    for t in (op, op + "_grad"):
        ks = kernels(exe, t)
        assert ks and all(("mkldnn" in k) == onednn for k in ks), (t, ks)
    assert all("mkldnn" not in k for k in kernels(exe, "mean")), "only the marked ops use oneDNN"
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out, f(x64), rtol=1e-5, atol=atol)
    np.testing.assert_allclose(dx * x.size, w * df(x64), rtol=1e-5, atol=atol)


def test_conv_output_goes_through_activations_blocked(fresh_programs, exe, rng):
    """With --use_mkldnn, conv2d's blocked output feeds gelu / swish / relu6 with no layout
    transform by the core, and each result is the float64 formula applied to the conv output."""
    main, startup = fresh_programs
    x = tide.layers.data(name="x", shape=[8, 6, 6], dtype="float32")
    c = tide.layers.conv2d(x, num_filters=16, filter_size=3, padding=1, bias_attr=False)
    outs = [
        (tide.layers.gelu(c, approximate=True), lambda v: gelu(v, True)),
        (tide.layers.swish(c, beta=1.5), lambda v: v * sigmoid(1.5 * v)),
        (tide.layers.relu6(c, threshold=0.5), lambda v: np.clip(v, 0, 0.5)),
    ]
    exe.run(startup)
    tide.set_flags({"use_mkldnn": True})
    try:
        got = exe.run(
            main,
            feed={"x": rng.uniform(-1, 1, (2, 8, 6, 6)).astype("float32")},
            fetch_list=[c] + [o for o, _ in outs],
        )
        info = exe.last_run_info()
    finally:
        tide.set_flags({"use_mkldnn": False})
    for op in ("conv2d", "gelu", "swish", "relu6"):
        ks = kernels(exe, op)
        assert ks and all("mkldnn" in k for k in ks), (op, ks)
    assert info["transforms"]["layouts"] == 0, info
    conv = got[0].astype(np.float64)
    for (_, ref), value in zip(outs, got[1:]):
        np.testing.assert_allclose(value, ref(conv), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "op,attrs,ref",
    [
        ("round", {}, lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)),
        (
            "hard_swish",
            {"threshold": 4.0, "scale": 5.0, "offset": 2.0},
            lambda x: x * np.clip(x + 2, 0, 4) / 5,
        ),
    ],
)
def test_ops_onednn_differs_on_run_plain(op, attrs, ref, fresh_programs, exe):
    """oneDNN rounds halves to even and its hardswish is fixed to Fluid's default attributes:
    these ops have no oneDNN kernel, so under use_mkldnn their plain kernels give Fluid's values."""
    main, _ = fresh_programs
    x = tide.layers.data(name="x", shape=[6], dtype="float32", append_batch_size=False)
    y = getattr(tide.layers, op)(x, **attrs)
    xs = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], "float32")
    tide.set_flags({"use_mkldnn": True})
    try:
        (out,) = exe.run(main, feed={"x": xs}, fetch_list=[y])
    finally:
        tide.set_flags({"use_mkldnn": False})
    ks = kernels(exe, op)
    assert ks and all("plain" in k for k in ks), ks
    np.testing.assert_allclose(out, ref(xs.astype(np.float64)), rtol=1e-6)
