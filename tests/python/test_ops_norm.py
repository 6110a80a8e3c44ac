"""layer_norm, group_norm, instance_norm (ops_nn/norm_ops.cc), cross_entropy2 (ops_nn) and
lars_momentum (ops_optimizers): outputs against numpy, gradients against central finite
differences (float32 and float64), and their errors.

Where Tide differs from Fluid 1.x: the norm grads recompute the statistics from X instead of
reading the saved Mean/Variance (the same values)."""

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
GRAD_TOL = {"float32": (0.03, 0.01), "float64": (1e-5, 1e-5)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def normalise(x, axes, eps):
    m = x.mean(axis=axes, keepdims=True)
    v = x.var(axis=axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps), m, v


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("begin", [1, 2])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(begin, affine, dtype, rng):
    x = rand(rng, (3, 4, 5), dtype)
    xd = x.astype(np.float64)
    y, m, v = normalise(xd, tuple(range(begin, 3)), 1e-5)
    inputs = {"X": x}
    feat = int(np.prod(x.shape[begin:]))
    if affine:
        scale, bias = rand(rng, (feat,), dtype, 0.5, 1.5), rand(rng, (feat,), dtype)
        inputs.update(Scale=scale, Bias=bias)
        y = y * scale.reshape(x.shape[begin:]) + bias.reshape(x.shape[begin:])
    rows = int(np.prod(x.shape[:begin]))
    t = make(
        "layer_norm",
        inputs,
        {
            "Y": y.astype(dtype),
            "Mean": m.reshape(rows).astype(dtype),
            "Variance": v.reshape(rows).astype(dtype),
        },
        {"begin_norm_axis": begin, "epsilon": 1e-5},
    )
    t.check_output(atol=1e-5, rtol=1e-4)
    t.check_grad(list(inputs), "Y", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm(groups, dtype, rng):
    x = rand(rng, (2, 4, 3, 2), dtype)
    scale, bias = rand(rng, (4,), dtype, 0.5, 1.5), rand(rng, (4,), dtype)
    xg = x.astype(np.float64).reshape(2, groups, -1)
    yg, m, v = normalise(xg, (2,), 1e-5)
    y = yg.reshape(x.shape) * scale.reshape(1, 4, 1, 1) + bias.reshape(1, 4, 1, 1)
    t = make(
        "group_norm",
        {"X": x, "Scale": scale, "Bias": bias},
        {
            "Y": y.astype(dtype),
            "Mean": m.reshape(2, groups).astype(dtype),
            "Variance": v.reshape(2, groups).astype(dtype),
        },
        {"groups": groups, "epsilon": 1e-5},
    )
    t.check_output(atol=1e-5, rtol=1e-4)
    t.check_grad(["X", "Scale", "Bias"], "Y", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_instance_norm(dtype, rng):
    x = rand(rng, (2, 3, 2, 3), dtype)
    scale, bias = rand(rng, (3,), dtype, 0.5, 1.5), rand(rng, (3,), dtype)
    yn, m, v = normalise(x.astype(np.float64), (2, 3), 1e-5)
    y = yn * scale.reshape(1, 3, 1, 1) + bias.reshape(1, 3, 1, 1)
    t = make(
        "instance_norm",
        {"X": x, "Scale": scale, "Bias": bias},
        {
            "Y": y.astype(dtype),
            "SavedMean": m.reshape(6).astype(dtype),
            "SavedVariance": (1 / np.sqrt(v + 1e-5)).reshape(6).astype(dtype),
        },
        {"epsilon": 1e-5},
    )
    t.check_output(atol=1e-5, rtol=1e-4)
    t.check_grad(["X", "Scale", "Bias"], "Y", **grad_args(dtype))


def test_norm_errors():
    x = np.ones((2, 6, 2, 2), "float32")
    with pytest.raises(
        tide.TideError, match="group_norm.*groups \\(4\\) must divide the channels \\(6\\)"
    ):
        make(
            "group_norm", {"X": x}, {"Y": x, "Mean": None, "Variance": None}, {"groups": 4}
        ).check_output()
    with pytest.raises(tide.TideError, match="group_norm.*groups must be >= 1, got 0"):
        make(
            "group_norm", {"X": x}, {"Y": x, "Mean": None, "Variance": None}, {"groups": 0}
        ).check_output()
    with pytest.raises(tide.TideError, match="layer_norm.*Scale.*has 3 elements, expected 24"):
        make(
            "layer_norm",
            {"X": x, "Scale": np.ones(3, "float32")},
            {"Y": x, "Mean": None, "Variance": None},
            {},
        ).check_output()


def test_norm_layers_train(exe):
    x = tide.layers.data(name="x", shape=[4, 3, 3], dtype="float32")
    h = tide.layers.layer_norm(x, begin_norm_axis=1)
    h = tide.layers.group_norm(h, groups=2)
    h = tide.layers.instance_norm(h)
    loss = tide.layers.mean(tide.layers.square(h))
    tide.optimizer.SGD(learning_rate=0.1).minimize(loss)
    exe.run(tide.default_startup_program())
    xs = np.random.RandomState(0).rand(2, 4, 3, 3).astype("float32")
    (out,) = exe.run(feed={"x": xs}, fetch_list=[h])
    np.testing.assert_allclose(out.mean(axis=(2, 3)), 0, atol=1e-5)  # instance_norm's output


# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4)])
@pytest.mark.parametrize("label_rank", ["same", "minus_one"])
def test_cross_entropy2(shape, label_rank, dtype, rng):
    e = np.exp(rng.uniform(-1, 1, shape))
    x = (e / e.sum(-1, keepdims=True)).astype(dtype)
    label = rng.randint(0, 4, shape[:-1] + (1,)).astype("int64")
    label.reshape(-1)[0] = -100  # ignore_index: Y = 0, no gradient
    match = np.take_along_axis(x, np.maximum(label, 0), -1)
    y = np.where(label == -100, 0, -np.log(match.astype(np.float64)))
    match = np.where(label == -100, 1, match)
    if label_rank == "minus_one":  # Y has Label's dims (Fluid's); MatchX keeps X's, last 1
        label, y = label[..., 0], y[..., 0]
    t = make(
        "cross_entropy2",
        {"X": x, "Label": label},
        {"Y": y.astype(dtype), "MatchX": match.astype(dtype), "XShape": None},
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Y", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
def lars_ref(p, g, v, lr, mu, coeff, decay):
    pn, gn = np.linalg.norm(p), np.linalg.norm(g)
    local = lr * coeff * pn / (gn + decay * pn) if pn > 0 and gn > 0 else lr
    v_out = mu * v + local * (g + decay * p)
    return p - v_out, v_out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("zero_param", [False, True])
def test_lars_momentum(zero_param, dtype, rng):
    p = np.zeros((3, 4), dtype) if zero_param else rand(rng, (3, 4), dtype)
    g, v = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
    lr = np.array([0.1], dtype)
    attrs = {"mu": 0.9, "lars_coeff": 0.01, "lars_weight_decay": 0.001}
    p_out, v_out = lars_ref(
        p.astype(np.float64), g.astype(np.float64), v.astype(np.float64), 0.1, 0.9, 0.01, 0.001
    )
    make(
        "lars_momentum",
        {"Param": p, "Grad": g, "Velocity": v, "LearningRate": lr},
        {"ParamOut": p_out.astype(dtype), "VelocityOut": v_out.astype(dtype)},
        attrs,
    ).check_output(rtol=1e-5, atol=1e-6)
