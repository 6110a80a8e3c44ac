"""device_mkldnn's layer_norm, prelu, reduce_*, bilinear_interp / nearest_interp (and their v2),
conv2d_transpose and hard_swish kernels from Python: each op with use_mkldnn set on it and its
grad op runs the oneDNN kernel where it has one (the executor's kernel choices say so), matches a float64 numpy reference of
Fluid's formula, and its gradients (oneDNN's, or the plain grad kernels reading the oneDNN
forward's outputs) match central finite differences of that reference. What a kernel declines
(attributes oneDNN computes differently, shapes the plain kernel runs faster: see
devices/mkldnn/README.md) runs the plain kernel with the same values."""

import numpy as np
import pytest
from float64_grad import numeric_grad
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn

import tide

pytestmark = pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)

OUTS = {"layer_norm": ["Y", "Mean", "Variance"], "conv2d_transpose": ["Output"]}


def run(op, inputs, attrs, out_shape, wrt=(), seed=5):
    """Runs `op` on float32 `inputs` ({param: array}) with use_mkldnn on it and its grad op, and
    loss = sum(w * first output) with random w of `out_shape`. Returns ({output param: array},
    {input param: d loss / d input}, w, {op type: [kernel]})."""
    main = tide.default_main_program()
    block = main.global_block()
    feed, ins = {}, {}
    for param, value in inputs.items():
        v = tide.layers.data(
            name=param.lower(),
            shape=list(value.shape),
            dtype=value.dtype.name,
            append_batch_size=False,
            stop_gradient=param not in wrt,
        )
        ins[param] = [v]
        feed[v.name] = value
    outs = {p: [block.create_var(name=p.lower(), dtype="float32")] for p in OUTS.get(op, ["Out"])}
    block.append_op(type=op, inputs=ins, outputs=outs, attrs=attrs)
    out = outs[OUTS.get(op, ["Out"])[0]][0]
    w = np.random.RandomState(seed).uniform(0.5, 1.5, out_shape).astype("float32")
    wv = tide.layers.data(name="w", shape=list(w.shape), dtype="float32", append_batch_size=False)
    feed["w"] = w
    if wrt:  # mean, not reduce_sum: the op under test may be one (d loss / d out = w / n)
        tide.append_backward(tide.layers.mean(tide.layers.elementwise_mul(out, wv)))
    for o in block.ops:
        if o.type in (op, op + "_grad"):
            o._set_attr("use_mkldnn", True)
    fetch = [outs[p][0] for p in OUTS.get(op, ["Out"])] + [p.lower() + "@GRAD" for p in wrt]
    exe = tide.Executor(tide.CPUPlace())
    got = exe.run(main, feed=feed, fetch_list=fetch)
    kernels = {}
    for t, k in exe.last_run_info()["kernels"]:
        kernels.setdefault(t, []).append(k)
    n = len(OUTS.get(op, ["Out"]))
    grads = {p: g * w.size for p, g in zip(wrt, got[n:])}  # of sum(w * out)
    return dict(zip(OUTS.get(op, ["Out"]), got[:n])), grads, w, kernels


def onednn(kernels, op):
    return bool(kernels.get(op)) and all("mkldnn" in k for k in kernels[op])


def plain(kernels, op):
    return bool(kernels.get(op)) and all("plain" in k for k in kernels[op])


def check_grads(f, inputs, grads, w, rng, samples=200, rtol=1e-3, atol=1e-4):
    """Each of `grads` against central differences of sum(w * f) in float64, at `samples` random
    elements (all when fewer)."""
    for param, g in grads.items():
        n = inputs[param].size
        idx = np.arange(n) if n <= samples else rng.choice(n, samples, False)
        want = numeric_grad(f, inputs, param, w, idx)
        np.testing.assert_allclose(g.reshape(-1)[idx], want, rtol=rtol, atol=atol, err_msg=param)


# ---- layer_norm ---------------------------------------------------------------------------------
def layer_norm_ref(axis, eps=1e-5, with_scale=True, with_bias=True):
    def f(X, Scale=None, Bias=None, stats=False):
        rows = X.reshape(int(np.prod(X.shape[:axis])), -1)
        mean, var = rows.mean(1), rows.var(1)
        y = (rows - mean[:, None]) / np.sqrt(var[:, None] + eps)
        if with_scale:
            y = y * Scale.reshape(-1)
        if with_bias:
            y = y + Bias.reshape(-1)
        y = y.reshape(X.shape)
        return (y, mean, var) if stats else y

    return f


@pytest.mark.parametrize(
    "shape,axis,with_scale,with_bias",
    [
        ((8, 32, 32), 1, True, True),
        ((8, 32, 32), 2, True, False),
        ((4, 8, 16, 16), 3, False, True),
        ((64, 128), 1, False, False),
    ],
)
def test_layer_norm(shape, axis, with_scale, with_bias, rng):
    right = int(np.prod(shape[axis:]))
    inputs = {"X": rng.uniform(-2, 3, shape).astype("float32")}
    if with_scale:
        inputs["Scale"] = rng.uniform(0.5, 1.5, right).astype("float32")
    if with_bias:
        inputs["Bias"] = rng.uniform(-1, 1, right).astype("float32")
    wrt = tuple(inputs)
    outs, grads, w, kernels = run(
        "layer_norm", inputs, {"begin_norm_axis": axis, "epsilon": 1e-5}, shape, wrt
    )
    assert onednn(kernels, "layer_norm") and onednn(kernels, "layer_norm_grad"), kernels
    f = layer_norm_ref(axis, with_scale=with_scale, with_bias=with_bias)
    y, mean, var = f(**{k: v.astype(np.float64) for k, v in inputs.items()}, stats=True)
    np.testing.assert_allclose(outs["Y"], y, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(outs["Mean"], mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs["Variance"], var, rtol=1e-5, atol=1e-6)
    check_grads(f, inputs, grads, w, rng)


def test_layer_norm_small_runs_plain(rng):
    inputs = {
        "X": rng.uniform(-2, 3, (16, 64)).astype("float32"),
        "Scale": rng.uniform(0.5, 1.5, 64).astype("float32"),
        "Bias": rng.uniform(-1, 1, 64).astype("float32"),
    }
    outs, _, _, kernels = run("layer_norm", inputs, {"begin_norm_axis": 1}, (16, 64), ("X",))
    assert plain(kernels, "layer_norm") and plain(kernels, "layer_norm_grad"), kernels
    np.testing.assert_allclose(
        outs["Y"],
        layer_norm_ref(1)(**{k: v.astype(np.float64) for k, v in inputs.items()}),
        rtol=1e-5,
        atol=2e-5,
    )


# ---- prelu --------------------------------------------------------------------------------------
def prelu_ref(mode):
    def f(X, Alpha):
        if mode == "all":
            a = Alpha.reshape(-1)[0]
        elif mode == "channel":
            a = Alpha.reshape((1, -1) + (1,) * (X.ndim - 2))
        else:
            a = Alpha.reshape((1,) + X.shape[1:])
        return np.where(X > 0, X, a * X)

    return f


@pytest.mark.parametrize(
    "mode,shape,alpha_shape",
    [
        ("channel", (2, 16, 16, 16), (16,)),
        ("channel", (64, 200), (200,)),
        ("all", (2, 16, 16, 16), (1,)),
        ("element", (4, 8, 16, 16), (8, 16, 16)),
    ],
)
def test_prelu(mode, shape, alpha_shape, rng):
    inputs = {
        "X": rng.uniform(-2, 2, shape).astype("float32"),
        "Alpha": rng.uniform(-0.5, 1, alpha_shape).astype("float32"),
    }
    # keep finite differences away from the kink at 0
    inputs["X"][np.abs(inputs["X"]) < 0.01] = 0.5
    outs, grads, w, kernels = run("prelu", inputs, {"mode": mode}, shape, ("X", "Alpha"))
    assert onednn(kernels, "prelu") and onednn(kernels, "prelu_grad"), kernels
    f = prelu_ref(mode)
    x64 = {k: v.astype(np.float64) for k, v in inputs.items()}
    np.testing.assert_allclose(outs["Out"], f(**x64), rtol=1e-6, atol=1e-7)
    check_grads(f, inputs, grads, w, rng)


def test_prelu_small_runs_plain(rng):
    inputs = {
        "X": rng.uniform(-2, 2, (2, 16, 8, 8)).astype("float32"),
        "Alpha": rng.uniform(0, 1, 16).astype("float32"),
    }
    outs, _, _, kernels = run("prelu", inputs, {"mode": "channel"}, (2, 16, 8, 8), ("X",))
    assert plain(kernels, "prelu") and plain(kernels, "prelu_grad"), kernels
    np.testing.assert_allclose(
        outs["Out"],
        prelu_ref("channel")(**{k: v.astype(np.float64) for k, v in inputs.items()}),
        rtol=1e-6,
    )


# ---- reduce_* -----------------------------------------------------------------------------------
REDUCERS = {
    "reduce_sum": np.sum,
    "reduce_mean": np.mean,
    "reduce_max": np.max,
    "reduce_min": np.min,
    "reduce_prod": np.prod,
}


@pytest.mark.parametrize("op", sorted(REDUCERS))
@pytest.mark.parametrize(
    "shape,dim,keep_dim,reduce_all",
    [
        ((16, 1024), [1], False, False),
        ((4, 8, 32, 32), [2, 3], True, False),
        ((128, 128), [0], False, True),
    ],
)
def test_reduce(op, shape, dim, keep_dim, reduce_all, rng):
    n = int(np.prod(shape))
    if op == "reduce_prod":  # values near 1 keep the product finite
        x = rng.uniform(0.98, 1.02, shape)
    else:  # distinct values 2 / n apart: no ties for max / min, even under finite differences
        x = (rng.permutation(n).reshape(shape) - n / 2) * (2.0 / n)
    inputs = {"X": x.astype("float32")}
    axes = None if reduce_all else tuple(dim)

    def f(X):
        out = REDUCERS[op](X, axis=axes, keepdims=keep_dim)
        return np.reshape(out, (1,)) if reduce_all and not keep_dim else out

    # the grads stay on the plain kernels, reading oneDNN's Out
    outs, grads, w, kernels = run(
        op,
        inputs,
        {"dim": dim, "keep_dim": keep_dim, "reduce_all": reduce_all},
        f(inputs["X"].astype(np.float64)).shape,
        ("X",),
    )
    assert onednn(kernels, op) and plain(kernels, op + "_grad"), kernels
    np.testing.assert_allclose(
        outs["Out"],
        f(inputs["X"].astype(np.float64)),
        rtol=1e-4 if op == "reduce_prod" else 1e-5,
        atol=1e-5,
    )
    check_grads(f, inputs, grads, w, rng)


@pytest.mark.parametrize("shape,dim", [((64, 1024), [0]), ((1024, 16), [1]), ((8, 1024), [1])])
def test_reduce_declined_shapes_run_plain(shape, dim, rng):
    """Leading-dim reductions (oneDNN's reference loop), short reduced runs and small X."""
    x = rng.uniform(-1, 1, shape).astype("float32")
    want = x.astype(np.float64).sum(axis=tuple(dim))
    outs, _, _, kernels = run("reduce_sum", {"X": x}, {"dim": dim}, want.shape)
    assert plain(kernels, "reduce_sum"), kernels
    np.testing.assert_allclose(outs["Out"], want, rtol=1e-5, atol=1e-5)


# ---- bilinear_interp / nearest_interp -----------------------------------------------------------
def interp_ref(op, out_hw, align_corners, align_mode):
    """Fluid's coordinate rules (tide/ops/interp_pad2d.hpp) in float64."""

    def taps(n_in, n_out):
        ratio = 0.0 if n_out <= 1 else ((n_in - 1) / (n_out - 1) if align_corners else n_in / n_out)
        k = np.arange(n_out)
        if op == "nearest_interp":
            src = ratio * k
            i = np.floor(src + 0.5) if align_corners else np.floor(src)
            i = np.minimum(i.astype(int), n_in - 1)
            return i, i, np.zeros(n_out)
        src = ratio * (k + 0.5) - 0.5 if align_mode == 0 and not align_corners else ratio * k
        src = np.maximum(src, 0)
        lo = np.minimum(src.astype(int), n_in - 1)
        return lo, np.minimum(lo + 1, n_in - 1), src - lo

    def f(X):
        (hl, hh, hw), (wl, wh, ww) = taps(X.shape[2], out_hw[0]), taps(X.shape[3], out_hw[1])
        rows = X[:, :, hl, :] * (1 - hw)[:, None] + X[:, :, hh, :] * hw[:, None]
        return rows[:, :, :, wl] * (1 - ww) + rows[:, :, :, wh] * ww

    return f


@pytest.mark.parametrize(
    "op,shape,out_hw,grad_kernel",
    [
        ("bilinear_interp", (2, 16, 16, 16), (24, 40), "plain"),
        ("bilinear_interp", (1, 16, 64, 48), (32, 20), "plain"),
        ("nearest_interp", (2, 16, 16, 16), (32, 48), "mkldnn"),
    ],
)
def test_interp(op, shape, out_hw, grad_kernel, rng):
    inputs = {"X": rng.uniform(-1, 1, shape).astype("float32")}
    attrs = {"out_h": out_hw[0], "out_w": out_hw[1], "align_corners": False, "align_mode": 0}
    outs, grads, w, kernels = run(op, inputs, attrs, shape[:2] + out_hw, ("X",))
    assert onednn(kernels, op), kernels
    # oneDNN 2.6's linear backward is never faster than the plain kernel: none is registered
    assert (onednn if grad_kernel == "mkldnn" else plain)(kernels, op + "_grad"), kernels
    f = interp_ref(op, out_hw, False, 0)
    np.testing.assert_allclose(outs["Out"], f(inputs["X"].astype(np.float64)), rtol=1e-5, atol=1e-5)
    check_grads(f, inputs, grads, w, rng)


@pytest.mark.parametrize(
    "op,grad_kernel", [("bilinear_interp", "plain"), ("nearest_interp", "mkldnn")]
)
def test_interp_nhwc(op, grad_kernel, rng):
    """data_layout NHWC: X [N, H, W, C], Out [N, out_h, out_w, C]."""
    out_hw = (32, 48)
    inputs = {"X": rng.uniform(-1, 1, (2, 16, 16, 12)).astype("float32")}
    attrs = {
        "out_h": out_hw[0],
        "out_w": out_hw[1],
        "align_corners": False,
        "align_mode": 0,
        "data_layout": "NHWC",
    }
    outs, grads, w, kernels = run(op, inputs, attrs, (2,) + out_hw + (12,), ("X",))
    assert onednn(kernels, op), kernels
    assert (onednn if grad_kernel == "mkldnn" else plain)(kernels, op + "_grad"), kernels
    nchw = interp_ref(op, out_hw, False, 0)

    def f(X):
        return nchw(X.transpose(0, 3, 1, 2)).transpose(0, 2, 3, 1)

    np.testing.assert_allclose(outs["Out"], f(inputs["X"].astype(np.float64)), rtol=1e-5, atol=1e-5)
    check_grads(f, inputs, grads, w, rng)


@pytest.mark.parametrize(
    "op,out_hw,align_corners,align_mode",
    [
        ("bilinear_interp", (40, 40), True, 1),  # Fluid's default attributes
        ("bilinear_interp", (40, 40), False, 1),
        ("nearest_interp", (40, 40), False, 1),  # not a multiple of 16
        ("nearest_interp", (32, 32), True, 1),
    ],
)
def test_interp_other_rules_run_plain(op, out_hw, align_corners, align_mode, rng):
    x = rng.uniform(-1, 1, (1, 16, 16, 16)).astype("float32")
    attrs = {
        "out_h": out_hw[0],
        "out_w": out_hw[1],
        "align_corners": align_corners,
        "align_mode": align_mode,
    }
    outs, _, _, kernels = run(op, {"X": x}, attrs, (1, 16) + out_hw)
    assert plain(kernels, op), kernels
    np.testing.assert_allclose(
        outs["Out"],
        interp_ref(op, out_hw, align_corners, align_mode)(x.astype(np.float64)),
        rtol=1e-5,
        atol=1e-6,
    )


# ---- hard_swish ---------------------------------------------------------------------------------
def hard_swish_ref(X):
    return X * np.clip(X + 3, 0, 6) / 6


@pytest.mark.parametrize(
    "shape,grad",
    [
        ((4, 16, 64, 64), "mkldnn"),
        ((4, 16, 16, 16), "mkldnn"),
        ((2, 16, 8, 8), "plain"),  # below the grad's speed bound
    ],
)
def test_hard_swish(shape, grad, rng):
    """On plain X the forward is the plain kernel's (as fast at every size); the grad is oneDNN's
    from 16384 elements."""
    x = rng.uniform(-6, 6, shape).astype("float32")
    x[np.abs(np.abs(x) - 3) < 0.01] = 1.0  # finite differences away from the kinks at +-3
    outs, grads, w, kernels = run("hard_swish", {"X": x}, {}, shape, ("X",))
    assert plain(kernels, "hard_swish"), kernels
    assert (onednn if grad == "mkldnn" else plain)(kernels, "hard_swish_grad"), kernels
    np.testing.assert_allclose(
        outs["Out"], hard_swish_ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6
    )
    check_grads(hard_swish_ref, {"X": x}, grads, w, rng)


def test_hard_swish_after_conv_runs_onednn_blocked(fresh_programs, exe, rng):
    """A oneDNN conv2d's blocked output goes through oneDNN's hardswish with no layout transform."""
    main, startup = fresh_programs
    x = tide.layers.data(name="x", shape=[8, 12, 12], dtype="float32")
    c = tide.layers.conv2d(x, num_filters=16, filter_size=3, padding=1, bias_attr=False)
    y = tide.layers.hard_swish(c)
    exe.run(startup)
    tide.set_flags({"use_mkldnn": True})
    try:
        conv, out = exe.run(
            main,
            feed={"x": rng.uniform(-3, 3, (2, 8, 12, 12)).astype("float32")},
            fetch_list=[c, y],
        )
        info = exe.last_run_info()
    finally:
        tide.set_flags({"use_mkldnn": False})
    ks = [k for op, k in info["kernels"] if op == "hard_swish"]
    assert ks and all("mkldnn" in k for k in ks), ks
    assert info["transforms"]["layouts"] == 0, info
    np.testing.assert_allclose(out, hard_swish_ref(conv.astype(np.float64)), rtol=1e-5, atol=1e-6)


# ---- the v2 interps and conv2d_transpose (PaddleOCR's DB neck and head) -------------------------
@pytest.mark.parametrize(
    "op,align_mode,grad_kernel",
    [("bilinear_interp_v2", 0, "plain"), ("nearest_interp_v2", 1, "mkldnn")],
)
def test_interp_v2_scale(op, align_mode, grad_kernel, rng):
    """F.upsample(scale_factor=2): scale [2, 2], the step 1 / 2 is oneDNN's too."""
    shape = (2, 16, 16, 16)
    inputs = {"X": rng.uniform(-1, 1, shape).astype("float32")}
    attrs = {"scale": [2.0, 2.0], "align_corners": False, "align_mode": align_mode}
    outs, grads, w, kernels = run(op, inputs, attrs, shape[:2] + (32, 32), ("X",))
    assert onednn(kernels, op), kernels
    assert (onednn if grad_kernel == "mkldnn" else plain)(kernels, op + "_grad"), kernels
    f = interp_ref(op[: -len("_v2")], (32, 32), False, align_mode)
    np.testing.assert_allclose(outs["Out"], f(inputs["X"].astype(np.float64)), rtol=1e-5, atol=1e-5)
    check_grads(f, inputs, grads, w, rng)


def test_interp_v2_inexact_scale_runs_plain(rng):
    """scale 1.5 of 21 gives 31 rows at the step 1 / 1.5, not oneDNN's 21 / 31: declined."""
    inputs = {"X": rng.uniform(-1, 1, (2, 16, 21, 21)).astype("float32")}
    attrs = {"scale": [1.5, 1.5], "align_corners": False, "align_mode": 0}
    _, _, _, kernels = run("bilinear_interp_v2", inputs, attrs, (2, 16, 31, 31))
    assert plain(kernels, "bilinear_interp_v2"), kernels


@pytest.mark.parametrize(
    "strides,paddings,groups,extra,kernel",
    [
        ([2, 2], [0, 0], 1, {}, "mkldnn"),  # DBHead's
        ([2, 1], [1, 0, 0, 1], 2, {}, "mkldnn"),
        ([2, 2], [1, 1], 1, {"output_padding": [1, 1]}, "plain"),  # oneDNN has no such term
    ],
)
def test_conv2d_transpose(strides, paddings, groups, extra, kernel, rng):
    from test_paddle_family_ops import conv_transpose_ref

    x = rng.uniform(-1, 1, (2, 8, 5, 6)).astype("float32")
    f = rng.uniform(-1, 1, (8, 3, 3, 2)).astype("float32")
    p4 = paddings if len(paddings) == 4 else [paddings[0]] * 2 + [paddings[1]] * 2
    op_pad = extra.get("output_padding", [0, 0])
    out_hw = tuple(
        (x.shape[2 + a] - 1) * strides[a] - p4[2 * a] - p4[2 * a + 1] + f.shape[2 + a] + op_pad[a]
        for a in range(2)
    )
    attrs = {"strides": strides, "paddings": paddings, "groups": groups, **extra}
    inputs = {"Input": x, "Filter": f}
    outs, grads, w, kernels = run(
        "conv2d_transpose", inputs, attrs, (2, 3 * groups) + out_hw, ("Input", "Filter")
    )
    assert (onednn if kernel == "mkldnn" else plain)(kernels, "conv2d_transpose"), kernels

    def ref(Input, Filter):
        return conv_transpose_ref(Input, Filter, strides, p4, [1, 1], groups, out_hw)

    np.testing.assert_allclose(
        outs["Output"], ref(x.astype(np.float64), f.astype(np.float64)), rtol=1e-5, atol=1e-5
    )
    check_grads(ref, inputs, grads, w, rng, samples=20)  # the reference loops in Python
