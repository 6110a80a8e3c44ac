"""Op tests of the ops_nn pack: each op's outputs against a numpy reference written here, and
every op with a gradient against central finite differences, float32 and float64. Integer
inputs (labels, ids) are int64 and never take gradients. Shapes are small so that finite
differences stay fast."""

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
# float32 finite differences are coarse: looser tolerance, bigger step.
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def distinct(rng, shape, dtype, step=0.05):
    """Values at least `step` apart (no near-ties for max / top-k under finite differences)."""
    n = int(np.prod(shape))
    return ((rng.permutation(n) - n / 2) * step).reshape(shape).astype(dtype)


def run_program(main, feed, fetch, scope=None):
    return tide.Executor(tide.CPUPlace()).run(
        main, feed=feed, fetch_list=fetch, scope=scope if scope is not None else tide.Scope()
    )


# ---------------------------------------------------------------------------------------------
# conv2d, depthwise_conv2d
def conv2d_ref(x, w, strides, pads, dils, groups):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = strides, pads, dils
    oh = (h + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    ow = (wd + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    xp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    xp[:, :, ph : ph + h, pw : pw + wd] = x
    out = np.zeros((n, m, oh, ow))
    mg = m // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    i * dh : i * dh + sh * (oh - 1) + 1 : sh,
                    j * dw : j * dw + sw * (ow - 1) + 1 : sw,
                ]
                out[:, g * mg : (g + 1) * mg] += np.einsum(
                    "ncyx,mc->nmyx", patch, w[g * mg : (g + 1) * mg, :, i, j]
                )
    return out


CONV_CASES = {  # input dims, filter dims, strides, paddings, dilations, groups
    "basic": ((2, 3, 5, 5), (4, 3, 3, 3), [1, 1], [0, 0], [1, 1], 1),
    "stride2_pad1": ((1, 2, 6, 5), (3, 2, 3, 3), [2, 2], [1, 1], [1, 1], 1),
    "dilation2": ((1, 2, 7, 7), (2, 2, 3, 3), [1, 1], [2, 2], [2, 2], 1),
    "groups2": ((1, 4, 5, 5), (6, 2, 3, 3), [1, 1], [1, 1], [1, 1], 2),
    "asymmetric": ((1, 2, 6, 7), (3, 2, 2, 3), [1, 2], [1, 0], [2, 1], 1),
    "pointwise": ((2, 3, 3, 4), (5, 3, 1, 1), [1, 1], [0, 0], [1, 1], 1),
    "pointwise_groups": ((1, 4, 3, 3), (4, 2, 1, 1), [1, 1], [0, 0], [1, 1], 2),
    "1x1_stride2": ((1, 3, 5, 5), (2, 3, 1, 1), [2, 2], [0, 0], [1, 1], 1),
    "1x1_padded": ((1, 2, 3, 3), (2, 2, 1, 1), [1, 1], [1, 1], [1, 1], 1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CONV_CASES))
def test_conv2d(case, dtype, rng):
    xs, fs, strides, pads, dils, groups = CONV_CASES[case]
    x, w = rand(rng, xs, dtype), rand(rng, fs, dtype)
    want = conv2d_ref(x.astype(np.float64), w.astype(np.float64), strides, pads, dils, groups)
    t = make(
        "conv2d",
        {"Input": x, "Filter": w},
        {"Output": want.astype(dtype)},
        {"strides": strides, "paddings": pads, "dilations": dils, "groups": groups},
    )
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["Input", "Filter"], "Output", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("multiplier,strides,pads", [(1, [1, 1], [1, 1]), (2, [2, 2], [0, 1])])
def test_depthwise_conv2d(multiplier, strides, pads, dtype, rng):
    c = 3
    x = rand(rng, (2, c, 5, 5), dtype)
    w = rand(rng, (c * multiplier, 1, 3, 3), dtype)
    want = conv2d_ref(x.astype(np.float64), w.astype(np.float64), strides, pads, [1, 1], c)
    t = make(
        "depthwise_conv2d",
        {"Input": x, "Filter": w},
        {"Output": want.astype(dtype)},
        {"strides": strides, "paddings": pads, "dilations": [1, 1], "groups": c},
    )
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["Input", "Filter"], "Output", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# pool2d
def pool2d_ref(
    x,
    ksize,
    strides,
    pads,
    ptype,
    global_pooling=False,
    ceil_mode=False,
    exclusive=True,
    adaptive=False,
):
    """Fluid 1.x pooling: a window is clipped to the image (padding never wins a max); an
    exclusive avg divides by the clipped window's size, a non-exclusive one by kh * kw; a window
    wholly outside the image gives 0."""
    n, c, h, w = x.shape
    if global_pooling:
        red = np.max if ptype == "max" else np.mean
        return red(x, axis=(2, 3), keepdims=True)
    if adaptive:
        oh, ow = ksize
        ys = [(i * h // oh, -(-(i + 1) * h // oh)) for i in range(oh)]
        xs = [(j * w // ow, -(-(j + 1) * w // ow)) for j in range(ow)]
        out = np.zeros((n, c, oh, ow))
        for i, (y0, y1) in enumerate(ys):
            for j, (x0, x1) in enumerate(xs):
                win = x[:, :, y0:y1, x0:x1]
                out[:, :, i, j] = win.max(axis=(2, 3)) if ptype == "max" else win.mean(axis=(2, 3))
        return out
    (kh, kw), (sh, sw) = ksize, strides
    ph, phe, pw, pwe = pads if len(pads) == 4 else (pads[0], pads[0], pads[1], pads[1])

    def size(i, k, p, pe, s):
        return (i - k + p + pe + (s - 1 if ceil_mode else 0)) // s + 1

    oh, ow = size(h, kh, ph, phe, sh), size(w, kw, pw, pwe, sw)
    # Pad with -inf (max) / 0 (sum) far enough for every window, and count the real cells.
    bottom, right = max(0, (oh - 1) * sh + kh - h - ph), max(0, (ow - 1) * sw + kw - w - pw)
    fill = -np.inf if ptype == "max" else 0.0
    xp = np.full((n, c, ph + h + bottom, pw + w + right), fill)
    xp[:, :, ph : ph + h, pw : pw + w] = x
    valid = np.zeros(xp.shape[2:])
    valid[ph : ph + h, pw : pw + w] = 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * sh : i * sh + kh, j * sw : j * sw + kw]
            cells = valid[i * sh : i * sh + kh, j * sw : j * sw + kw].sum()
            if cells == 0:
                continue
            if ptype == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                out[:, :, i, j] = win.sum(axis=(2, 3)) / (cells if exclusive else kh * kw)
    return out


POOL_CASES = {  # input dims, attrs
    "max_2x2_s2": ((2, 2, 4, 4), dict(pooling_type="max", ksize=[2, 2], strides=[2, 2])),
    "max_3x3_s2_p1": (
        (1, 2, 5, 5),
        dict(pooling_type="max", ksize=[3, 3], strides=[2, 2], paddings=[1, 1]),
    ),
    "avg_3x3_p1_exclusive": (
        (1, 2, 4, 5),
        dict(pooling_type="avg", ksize=[3, 3], strides=[1, 1], paddings=[1, 1], exclusive=True),
    ),
    "avg_3x3_p1_inclusive": (
        (1, 2, 4, 5),
        dict(pooling_type="avg", ksize=[3, 3], strides=[1, 1], paddings=[1, 1], exclusive=False),
    ),
    "avg_2x3_asymmetric": (
        (1, 2, 5, 6),
        dict(pooling_type="avg", ksize=[2, 3], strides=[1, 2], paddings=[0, 1]),
    ),
    "global_max": ((2, 3, 3, 4), dict(pooling_type="max", ksize=[1, 1], global_pooling=True)),
    "global_avg": (
        (2, 3, 3, 4),
        dict(pooling_type="avg", ksize=[1, 1], global_pooling=True, paddings=[1, 1]),
    ),
    "ceil_max": (
        (1, 2, 5, 5),
        dict(pooling_type="max", ksize=[2, 2], strides=[2, 2], ceil_mode=True),
    ),
    "ceil_avg_exclusive": (
        (1, 2, 5, 5),
        dict(pooling_type="avg", ksize=[2, 2], strides=[2, 2], ceil_mode=True, exclusive=True),
    ),
    "ceil_avg_inclusive": (
        (1, 2, 5, 5),
        dict(pooling_type="avg", ksize=[2, 2], strides=[2, 2], ceil_mode=True, exclusive=False),
    ),
    "ceil_max_padded": (
        (1, 1, 6, 6),
        dict(pooling_type="max", ksize=[3, 3], strides=[2, 2], paddings=[1, 1], ceil_mode=True),
    ),
    # ceil_mode's last window lies wholly past the image: output 0, no gradient
    "ceil_max_empty_window": (
        (1, 1, 5, 5),
        dict(pooling_type="max", ksize=[2, 2], strides=[4, 4], paddings=[1, 1], ceil_mode=True),
    ),
    "ceil_avg_empty_window": (
        (1, 1, 5, 5),
        dict(pooling_type="avg", ksize=[2, 2], strides=[4, 4], paddings=[1, 1], ceil_mode=True),
    ),
    "adaptive_avg": ((1, 2, 5, 7), dict(pooling_type="avg", ksize=[3, 2], adaptive=True)),
    "adaptive_max": ((1, 2, 5, 7), dict(pooling_type="max", ksize=[2, 3], adaptive=True)),
    "adaptive_avg_1x1": ((2, 2, 3, 3), dict(pooling_type="avg", ksize=[1, 1], adaptive=True)),
    "adaptive_max_upsample": ((1, 1, 3, 3), dict(pooling_type="max", ksize=[5, 4], adaptive=True)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(POOL_CASES))
def test_pool2d(case, dtype, rng):
    xs, attrs = POOL_CASES[case]
    # Negative and distinct: zero padding would win a max if it took part; no near-ties.
    x = (distinct(rng, xs, "float64") - 10.0).astype(dtype)
    a = dict(attrs)
    want = pool2d_ref(
        x.astype(np.float64),
        a["ksize"],
        a.get("strides", [1, 1]),
        a.get("paddings", [0, 0]),
        a["pooling_type"],
        a.get("global_pooling", False),
        a.get("ceil_mode", False),
        a.get("exclusive", True),
        a.get("adaptive", False),
    )
    t = make("pool2d", {"X": x}, {"Out": want.astype(dtype)}, a)
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_pool2d_output_sizes():
    """ceil_mode rounds the output size up; the plain rule rounds down."""
    x = np.zeros((1, 1, 5, 5), "float32")
    floor = make(
        "pool2d",
        {"X": x},
        {"Out": np.zeros((1, 1, 2, 2), "float32")},
        dict(pooling_type="max", ksize=[2, 2], strides=[2, 2]),
    )
    ceil = make(
        "pool2d",
        {"X": x},
        {"Out": np.zeros((1, 1, 3, 3), "float32")},
        dict(pooling_type="max", ksize=[2, 2], strides=[2, 2], ceil_mode=True),
    )
    floor.check_output()
    ceil.check_output()


# ---------------------------------------------------------------------------------------------
# batch_norm
def bn_inputs(rng, xs, dtype, layout):
    c = xs[1] if layout == "NCHW" else xs[-1]
    return dict(
        X=rand(rng, xs, dtype, -2, 3),
        Scale=rand(rng, (c,), dtype, 0.5, 1.5),
        Bias=rand(rng, (c,), dtype),
        Mean=rand(rng, (c,), dtype),
        Variance=rand(rng, (c,), dtype, 0.5, 2.0),
    )


def bn_axes(x, layout):
    """The reduction axes and the reshape that broadcasts a [C] vector over X."""
    if layout == "NHWC":
        return tuple(range(x.ndim - 1)), (1,) * (x.ndim - 1) + (-1,)
    return (0,) + tuple(range(2, x.ndim)), (1, -1) + (1,) * (x.ndim - 2)


BN_CASES = {
    "nchw": ((2, 3, 2, 2), "NCHW"),
    "nhwc": ((2, 2, 2, 3), "NHWC"),
    "2d": ((4, 3), "NCHW"),
    "5d": ((2, 2, 1, 2, 2), "NCHW"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(BN_CASES))
def test_batch_norm_train(case, dtype, rng):
    xs, layout = BN_CASES[case]
    ins = bn_inputs(rng, xs, dtype, layout)
    eps, momentum = 1e-5, 0.8
    f = {k: v.astype(np.float64) for k, v in ins.items()}
    axes, shape = bn_axes(f["X"], layout)
    mu = f["X"].mean(axis=axes)
    var = f["X"].var(axis=axes)  # biased, as the kernel uses it
    inv_std = 1 / np.sqrt(var + eps)
    y = (f["X"] - mu.reshape(shape)) * inv_std.reshape(shape) * f["Scale"].reshape(shape) + f[
        "Bias"
    ].reshape(shape)
    out = {
        "Y": y,
        "MeanOut": f["Mean"] * momentum + mu * (1 - momentum),
        "VarianceOut": f["Variance"] * momentum + var * (1 - momentum),
        "SavedMean": mu,
        "SavedVariance": inv_std,
    }
    t = make(
        "batch_norm",
        ins,
        {k: v.astype(dtype) for k, v in out.items()},
        {"epsilon": eps, "momentum": momentum, "is_test": False, "data_layout": layout},
    )
    t.check_output(rtol=1e-4, atol=1e-5)
    t.check_grad(["X", "Scale", "Bias"], "Y", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["is_test", "use_global_stats"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_batch_norm_global_stats(mode, layout, dtype, rng):
    xs = (2, 3, 2, 2) if layout == "NCHW" else (2, 2, 2, 3)
    ins = bn_inputs(rng, xs, dtype, layout)
    eps = 1e-4
    f = {k: v.astype(np.float64) for k, v in ins.items()}
    _, shape = bn_axes(f["X"], layout)
    inv_std = 1 / np.sqrt(f["Variance"] + eps)
    y = (f["X"] - f["Mean"].reshape(shape)) * (inv_std * f["Scale"]).reshape(shape) + f[
        "Bias"
    ].reshape(shape)
    # The running statistics pass through; the saved ones are those used.
    out = {
        "Y": y,
        "MeanOut": f["Mean"],
        "VarianceOut": f["Variance"],
        "SavedMean": f["Mean"],
        "SavedVariance": inv_std,
    }
    t = make(
        "batch_norm",
        ins,
        {k: v.astype(dtype) for k, v in out.items()},
        {"epsilon": eps, "momentum": 0.9, "data_layout": layout, mode: True},
    )
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["X", "Scale", "Bias"], "Y", **grad_args(dtype))


def test_batch_norm_updates_running_stats_in_place(rng):
    """MeanOut / VarianceOut as the same variables as Mean / Variance (as layers.batch_norm
    builds it): two training steps move the running statistics twice."""
    xs = [rand(rng, (3, 2, 2, 2), "float64", -1, 4) for _ in range(2)]
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        b = main.global_block()
        x = b.create_var(name="x", shape=(3, 2, 2, 2), dtype="float64")
        names = ["scale", "bias", "mean", "var"]
        vs = {n: b.create_var(name=n, shape=(2,), dtype="float64", persistable=True) for n in names}
        y = b.create_var(name="y", dtype="float64")
        sm = b.create_var(name="sm", dtype="float64")
        sv = b.create_var(name="sv", dtype="float64")
        b.append_op(
            "batch_norm",
            inputs={
                "X": x,
                "Scale": vs["scale"],
                "Bias": vs["bias"],
                "Mean": vs["mean"],
                "Variance": vs["var"],
            },
            outputs={
                "Y": y,
                "MeanOut": vs["mean"],
                "VarianceOut": vs["var"],
                "SavedMean": sm,
                "SavedVariance": sv,
            },
            attrs={"momentum": 0.75, "epsilon": 1e-5},
        )
    scope = tide.Scope()
    init = {"scale": [1.0, 2.0], "bias": [0.0, 0.5], "mean": [0.2, -0.3], "var": [1.0, 3.0]}
    for n, v in init.items():
        scope.var(n).get_tensor().set(np.array(v), tide.CPUPlace(), False)
    mean, var = np.array(init["mean"]), np.array(init["var"])
    for xv in xs:
        run_program(main, {"x": xv}, ["y"], scope)
        mean = mean * 0.75 + xv.mean(axis=(0, 2, 3)) * 0.25
        var = var * 0.75 + xv.var(axis=(0, 2, 3)) * 0.25
    np.testing.assert_allclose(np.array(scope.find_var("mean").get_tensor()), mean, rtol=1e-12)
    np.testing.assert_allclose(np.array(scope.find_var("var").get_tensor()), var, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# dropout
def dropout_run(x, **attrs):
    t = make("dropout", {"X": x}, {"Out": np.zeros_like(x), "Mask": np.zeros_like(x)}, attrs)
    r = t.forward()
    return r["Out"], r["Mask"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("impl", ["downgrade_in_infer", "upscale_in_train"])
def test_dropout_train_mask(impl, dtype, rng):
    p = 0.35
    x = rand(rng, (40, 50), dtype, 0.5, 1.5)  # no zeros: a dropped element is visible in Out
    out, mask = dropout_run(x, dropout_prob=p, fix_seed=True, seed=17, dropout_implementation=impl)
    keep = 1.0 / (1.0 - p) if impl == "upscale_in_train" else 1.0
    kept = mask != 0
    # Mask holds dOut/dX per element: 0 (dropped) or the keep factor.
    np.testing.assert_allclose(mask[kept], np.full(kept.sum(), keep, dtype), rtol=1e-6)
    np.testing.assert_allclose(out, x * mask, rtol=1e-6, atol=0)
    assert np.all((out == 0) == ~kept)
    n = x.size
    assert abs((~kept).mean() - p) < 5 * np.sqrt(p * (1 - p) / n)
    # The same seed drops the same elements; another seed others.
    out2, mask2 = dropout_run(
        x, dropout_prob=p, fix_seed=True, seed=17, dropout_implementation=impl
    )
    np.testing.assert_array_equal(mask2, mask)
    np.testing.assert_array_equal(out2, out)
    _, mask3 = dropout_run(x, dropout_prob=p, fix_seed=True, seed=18, dropout_implementation=impl)
    assert not np.array_equal(mask3, mask)
    # Without fix_seed each run draws afresh.
    _, a = dropout_run(x, dropout_prob=p, dropout_implementation=impl)
    _, b = dropout_run(x, dropout_prob=p, dropout_implementation=impl)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("impl", ["downgrade_in_infer", "upscale_in_train"])
def test_dropout_is_test(impl, dtype, rng):
    p = 0.3
    x = rand(rng, (3, 4), dtype)
    factor = 1.0 if impl == "upscale_in_train" else 1.0 - p
    want = (x.astype(np.float64) * np.float32(factor)).astype(dtype)
    t = make(
        "dropout",
        {"X": x},
        {"Out": want, "Mask": np.full(x.shape, factor, dtype)},
        {"dropout_prob": p, "is_test": True, "dropout_implementation": impl},
    )
    t.check_output(rtol=1e-6, atol=1e-7)
    t.check_grad(["X"], "Out", **grad_args(dtype))  # dX = dOut * factor


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p,keep_all", [(0.0, True), (1.0, False)])
def test_dropout_extremes(p, keep_all, dtype, rng):
    x = rand(rng, (4, 5), dtype, 0.5, 1.5)
    out, mask = dropout_run(x, dropout_prob=p, fix_seed=True, seed=3)
    np.testing.assert_array_equal(mask, np.full(x.shape, 1.0 if keep_all else 0.0, dtype))
    np.testing.assert_array_equal(out, x if keep_all else np.zeros_like(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("impl", ["downgrade_in_infer", "upscale_in_train"])
def test_dropout_grad_is_dout_times_mask(impl, dtype, rng):
    x = rand(rng, (4, 6), dtype)
    attrs = {"dropout_prob": 0.5, "fix_seed": True, "seed": 5, "dropout_implementation": impl}
    out, mask = dropout_run(x, **attrs)
    assert 0 < (mask == 0).sum() < mask.size
    t = make("dropout", {"X": x}, {"Out": out, "Mask": mask}, attrs)
    t.check_output(rtol=0, atol=0)
    # A fixed seed fixes the mask, so finite differences see d(mean(w * Out))/dX = w * Mask / n.
    t.check_grad(["X"], "Out", **grad_args(dtype))
    # And directly: X@GRAD == Out@GRAD * Mask.
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        b = main.global_block()
        xv = b.create_var(name="x", shape=x.shape, dtype=dtype, stop_gradient=False)
        o = b.create_var(name="o", dtype=dtype)
        m = b.create_var(name="m", dtype=dtype)
        b.append_op("dropout", inputs={"X": xv}, outputs={"Out": o, "Mask": m}, attrs=attrs)
        d = b.create_var(name="d", shape=x.shape, dtype=dtype)
        loss = tide.layers.mean(tide.layers.elementwise_mul(o, d))
        tide.append_backward(loss, no_grad_set={"d"})
    dd = rand(rng, x.shape, dtype)
    (gx,) = run_program(main, {"x": x, "d": dd}, ["x@GRAD"])
    np.testing.assert_allclose(gx, dd / x.size * mask, rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# lookup_table
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ids_shape", [(5, 1), (5,), (2, 3, 1)])
@pytest.mark.parametrize("padding_idx", [-1, 2])
def test_lookup_table(ids_shape, padding_idx, dtype, rng):
    w = rand(rng, (6, 4), dtype)
    ids = rng.randint(0, 6, ids_shape).astype("int64")
    ids.reshape(-1)[:3] = [2, 4, 2]  # repeats, and the padding row when there is one
    want = w[ids.reshape(-1)].reshape(ids.shape[:-1] + (4,) if len(ids_shape) > 1 else (5, 4))
    if padding_idx >= 0:
        want = want.copy()
        want[ids.reshape(want.shape[:-1]) == padding_idx] = 0
    t = make("lookup_table", {"W": w, "Ids": ids}, {"Out": want}, {"padding_idx": padding_idx})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["W"], "Out", **grad_args(dtype))  # dense W@GRAD, none for the padding row


def _lookup_grad_program(dtype, v, d, n, is_sparse, padding_idx):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        b = main.global_block()
        w = b.create_var(name="w", shape=(v, d), dtype=dtype, stop_gradient=False)
        ids = b.create_var(name="ids", shape=(n, 1), dtype="int64")
        out = b.create_var(name="out", dtype=dtype)
        b.append_op(
            "lookup_table",
            inputs={"W": w, "Ids": ids},
            outputs={"Out": out},
            attrs={"is_sparse": is_sparse, "padding_idx": padding_idx},
        )
        dv = b.create_var(name="d", shape=(n, d), dtype=dtype)
        loss = tide.layers.mean(tide.layers.elementwise_mul(out, dv))
        tide.append_backward(loss, no_grad_set={"d"})
    return main


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding_idx", [-1, 1])
def test_lookup_table_sparse_grad_is_selected_rows(padding_idx, dtype, rng):
    v, d = 7, 3
    ids = np.array([[3], [1], [3], [6], [0]], "int64")
    n = len(ids)
    w = rand(rng, (v, d), dtype)
    dd = rand(rng, (n, d), dtype)
    dout = dd / (n * d)  # d mean(out * dd) / d out
    main = _lookup_grad_program(dtype, v, d, n, True, padding_idx)
    assert main.global_block().var("w@GRAD").type == "SELECTED_ROWS"
    main.global_block().var("w@GRAD").persistable = True  # keep it in our scope to read
    scope = tide.Scope()
    run_program(main, {"w": w, "ids": ids, "d": dd}, [], scope)
    sr = scope.find_var("w@GRAD").get_selected_rows()
    assert list(sr.rows()) == list(ids[:, 0])  # one row per id, repeats kept, in order
    assert sr.height() == v
    value = sr.get_tensor().numpy()
    want = dout.copy()
    want[ids[:, 0] == padding_idx] = 0
    assert value.dtype == np.dtype(dtype)
    np.testing.assert_allclose(value, want, rtol=1e-6, atol=1e-9)
    # The same gradient as the dense one, once scattered.
    dense_main = _lookup_grad_program(dtype, v, d, n, False, padding_idx)
    assert dense_main.global_block().var("w@GRAD").type == "LOD_TENSOR"
    (dense,) = run_program(dense_main, {"w": w, "ids": ids, "d": dd}, ["w@GRAD"])
    scattered = np.zeros((v, d))
    np.add.at(scattered, ids[:, 0], value.astype(np.float64))
    np.testing.assert_allclose(dense, scattered, rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# softmax_with_cross_entropy
def log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ignore", [False, True])
def test_softmax_with_cross_entropy_hard(ignore, dtype, rng):
    logits = rand(rng, (5, 4), dtype, -3, 3)
    label = np.array([[0], [3], [1], [2], [3]], "int64")
    attrs = {}
    if ignore:
        label[[1, 3]] = -1
        attrs["ignore_index"] = -1
    ls = log_softmax(logits.astype(np.float64), 1)
    loss = np.array([[0.0 if l == -1 else -ls[i, l]] for i, l in enumerate(label[:, 0])])
    t = make(
        "softmax_with_cross_entropy",
        {"Logits": logits, "Label": label},
        {"Softmax": np.exp(ls).astype(dtype), "Loss": loss.astype(dtype)},
        attrs,
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["Logits"], "Loss", **grad_args(dtype))  # 0 for the ignored rows


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("normalised", [True, False])
def test_softmax_with_cross_entropy_soft(normalised, dtype, rng):
    logits = rand(rng, (3, 5), dtype, -2, 2)
    label = rand(rng, (3, 5), dtype, 0.1, 1.0)
    if normalised:
        label = (label / label.sum(axis=1, keepdims=True)).astype(dtype)
    ls = log_softmax(logits.astype(np.float64), 1)
    loss = -(label.astype(np.float64) * ls).sum(axis=1, keepdims=True)
    t = make(
        "softmax_with_cross_entropy",
        {"Logits": logits, "Label": label},
        {"Softmax": np.exp(ls).astype(dtype), "Loss": loss.astype(dtype)},
        {"soft_label": True},
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    # The grad is (Softmax * sum(Label) - Label) * dLoss: right for unnormalised labels too.
    t.check_grad(["Logits"], "Loss", no_grad_set={"label_in"}, **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("soft", [False, True])
def test_softmax_with_cross_entropy_axis(soft, dtype, rng):
    logits = rand(rng, (2, 4, 3), dtype, -2, 2)
    ls = log_softmax(logits.astype(np.float64), 1)
    if soft:
        label = rand(rng, (2, 4, 3), dtype, 0, 1)
        loss = -(label.astype(np.float64) * ls).sum(axis=1, keepdims=True)
    else:
        label = rng.randint(0, 4, (2, 1, 3)).astype("int64")
        loss = -np.take_along_axis(ls, label, axis=1)
    t = make(
        "softmax_with_cross_entropy",
        {"Logits": logits, "Label": label},
        {"Softmax": np.exp(ls).astype(dtype), "Loss": loss.astype(dtype)},
        {"axis": 1, "soft_label": soft},
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["Logits"], "Loss", no_grad_set={"label_in"}, **grad_args(dtype))


def test_softmax_with_cross_entropy_large_logits_are_stable():
    logits = np.array([[1000.0, 0.0, -1000.0], [50.0, 60.0, 70.0]], "float32")
    label = np.array([[1], [2]], "int64")
    ls = log_softmax(logits.astype(np.float64), 1)
    loss = -np.take_along_axis(ls, label, axis=1)
    assert loss[0, 0] == pytest.approx(1000.0)
    make(
        "softmax_with_cross_entropy",
        {"Logits": logits, "Label": label},
        {"Softmax": np.exp(ls).astype("float32"), "Loss": loss.astype("float32")},
    ).check_output(rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# cross_entropy
def probs(rng, shape, dtype):
    e = np.exp(rng.uniform(-1, 1, shape))
    return (e / e.sum(axis=-1, keepdims=True)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ignore", [False, True])
def test_cross_entropy_hard(ignore, dtype, rng):
    x = probs(rng, (5, 4), dtype)
    label = np.array([[1], [0], [3], [2], [1]], "int64")
    attrs = {}
    if ignore:
        label[2] = 7
        attrs["ignore_index"] = 7
    y = np.array(
        [
            [0.0 if l == 7 else -np.log(x[i, l].astype(np.float64))]
            for i, l in enumerate(label[:, 0])
        ]
    )
    t = make("cross_entropy", {"X": x, "Label": label}, {"Y": y.astype(dtype)}, attrs)
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Y", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_soft(dtype, rng):
    x = probs(rng, (3, 4), dtype)
    label = probs(rng, (3, 4), dtype)
    y = -(label.astype(np.float64) * np.log(x.astype(np.float64))).sum(axis=1, keepdims=True)
    t = make(
        "cross_entropy", {"X": x, "Label": label}, {"Y": y.astype(dtype)}, {"soft_label": True}
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Y", no_grad_set={"label_in"}, **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xshape", [(5, 4), (2, 3, 4)])
def test_cross_entropy_hard_label_of_rank_x_minus_1(xshape, dtype, rng):
    """Fluid accepts a hard Label without the trailing 1 (rank(X) - 1); Y has Label's dims, as
    Fluid's InferShape sets them (issue 37)."""
    x = probs(rng, xshape, dtype)
    label = rng.randint(0, 4, xshape[:-1]).astype("int64")
    y = -np.log(np.take_along_axis(x.astype(np.float64), label[..., None], axis=-1))[..., 0]
    t = make("cross_entropy", {"X": x, "Label": label}, {"Y": y.astype(dtype)})
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Y", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_rank3(dtype, rng):
    x = probs(rng, (2, 3, 4), dtype)
    label = rng.randint(0, 4, (2, 3, 1)).astype("int64")
    y = -np.log(np.take_along_axis(x.astype(np.float64), label, axis=2))
    t = make("cross_entropy", {"X": x, "Label": label}, {"Y": y.astype(dtype)})
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Y", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_log_of_zero_is_tolerable(dtype):
    """log(0) is taken as -1e20: a zero probability at the label gives 1e20, and a soft label's
    0 * log(0) gives 0, never NaN."""
    x = np.array([[0.0, 1.0], [0.5, 0.5]], dtype)
    hard = make(
        "cross_entropy",
        {"X": x, "Label": np.array([[0], [1]], "int64")},
        {"Y": np.array([[1e20], [np.log(2.0)]], dtype)},
    )
    hard.check_output(rtol=1e-6, atol=0)
    soft = make(
        "cross_entropy",
        {"X": x, "Label": np.array([[0.0, 1.0], [0.25, 0.75]], dtype)},
        {"Y": np.array([[0.0], [np.log(2.0)]], dtype)},
        {"soft_label": True},
    )
    soft.check_output(rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# accuracy, top_k
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_accuracy(k, dtype, rng):
    scores = rand(rng, (6, 5), dtype)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    label = np.array([[order[0, 0]], [order[1, -1]], [4], [0], [order[4, 0]], [2]], "int64")
    correct = sum(int(label[i, 0] in order[i]) for i in range(6))
    vals = np.take_along_axis(scores, order, axis=1)
    t = make(
        "accuracy",
        {"Out": vals, "Indices": order.astype("int64"), "Label": label},
        {
            "Accuracy": np.array([correct / 6.0], "float32"),
            "Correct": np.array([correct], "int32"),
            "Total": np.array([6], "int32"),
        },
    )
    t.check_output(rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,k", [((3, 6), 2), ((2, 3, 5), 3), ((4,), 4), ((2, 5), 1)])
def test_top_k(shape, k, dtype, rng):
    x = distinct(rng, shape, dtype)
    idx = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    t = make(
        "top_k",
        {"X": x},
        {"Out": np.take_along_axis(x, idx, axis=-1), "Indices": idx.astype("int64")},
        {"k": k},
    )
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES + ["int32", "int64"])
def test_top_k_ties_keep_the_lower_index_first(dtype):
    x = np.array([[1, 3, 3, 0, 3], [2, 2, 2, 2, 2]], dtype)
    t = make(
        "top_k",
        {"X": x},
        {
            "Out": np.array([[3, 3, 3, 1], [2, 2, 2, 2]], dtype),
            "Indices": np.array([[1, 2, 4, 0], [0, 1, 2, 3]], "int64"),
        },
        {"k": 4},
    )
    t.check_output(rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------
# transpose, transpose2
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["transpose", "transpose2"])
@pytest.mark.parametrize(
    "shape,perm",
    [
        ((2, 3, 4), [1, 2, 0]),
        ((2, 3, 4), [2, 0, 1]),
        ((3, 4), [1, 0]),
        ((2, 1, 3, 2), [3, 1, 0, 2]),
        ((2, 3), [0, 1]),
    ],
)
def test_transpose(op, shape, perm, dtype, rng):
    x = rand(rng, shape, dtype)
    outs = {"Out": np.transpose(x, perm)}
    if op == "transpose2":
        outs["XShape"] = None  # [0] + X's dims, no data: not fetched
    t = make(op, {"X": x}, outs, {"axis": perm})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_transpose2_xshape_dims():
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        b = main.global_block()
        x = b.create_var(name="x", shape=(2, 3, 4), dtype="float32")
        o, xs = b.create_var(name="o"), b.create_var(name="xs")
        b.append_op(
            "transpose2",
            inputs={"X": x},
            outputs={"Out": o, "XShape": xs},
            attrs={"axis": [2, 0, 1]},
        )
    assert o.shape == (4, 2, 3) and xs.shape == (0, 2, 3, 4)


# Large enough for the kernel to split the rows over the CPU pool (each range starts its odometer
# mid-tensor): the last axis kept (a KV cache's [B, S, H, D] -> [B, H, S, D]) and moved, forward
# and the grad (which permutes back), exactly.
@pytest.mark.parametrize(
    "shape,perm",
    [((4, 67, 4, 64), [0, 2, 1, 3]), ((3, 50, 7, 33), [3, 1, 0, 2]), ((300, 257), [1, 0])],
)
def test_transpose_large(shape, perm, rng):
    x = rand(rng, shape, "float32")
    make(
        "transpose2", {"X": x}, {"Out": np.transpose(x, perm), "XShape": None}, {"axis": perm}
    ).check_output(rtol=0, atol=0)
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        b = main.global_block()
        xv = b.create_var(name="x", shape=x.shape, dtype="float32", stop_gradient=False)
        o, xs = b.create_var(name="o", dtype="float32"), b.create_var(name="xs")
        b.append_op(
            "transpose2", inputs={"X": xv}, outputs={"Out": o, "XShape": xs}, attrs={"axis": perm}
        )
        d = b.create_var(name="d", shape=np.transpose(x, perm).shape, dtype="float32")
        loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(o, d))
        tide.append_backward(loss, no_grad_set={"d"})
    dd = rand(rng, np.transpose(x, perm).shape, "float32")
    (gx,) = run_program(main, {"x": x, "d": dd}, ["x@GRAD"])
    np.testing.assert_array_equal(gx, np.transpose(dd, np.argsort(perm)))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_transpose_integers(dtype):
    x = np.arange(24, dtype=dtype).reshape(2, 3, 4)
    make("transpose", {"X": x}, {"Out": x.transpose(2, 0, 1)}, {"axis": [2, 0, 1]}).check_output()


# ---------------------------------------------------------------------------------------------
# split, concat
SPLIT_CASES = {  # X dims, attrs, numpy split points along the axis
    "num_axis1": ((2, 6, 3), {"axis": 1, "num": 3}, 1, [2, 4]),
    "num_axis0": ((4, 3), {"axis": 0, "num": 2}, 0, [2]),
    "sections": ((2, 6, 3), {"axis": 1, "sections": [1, 3, 2]}, 1, [1, 4]),
    "sections_minus1": ((2, 3, 7), {"axis": -1, "sections": [2, -1, 1]}, 2, [2, 6]),
    "sections_zero": ((5, 2), {"axis": 0, "sections": [3, 0, 2]}, 0, [3, 3]),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(SPLIT_CASES))
def test_split(case, dtype, rng):
    shape, attrs, axis, points = SPLIT_CASES[case]
    x = rand(rng, shape, dtype)
    parts = np.split(x, points, axis=axis)
    t = make("split", {"X": x}, {"Out": [("part%d" % i, p) for i, p in enumerate(parts)]}, attrs)
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))  # every part weighted in the loss


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
def test_concat(axis, dtype, rng):
    base = [2, 3, 2]
    parts = []
    for i, extra in enumerate([1, 2, 3]):
        shape = list(base)
        shape[axis] = extra
        parts.append(("c%d" % i, rand(rng, shape, dtype)))
    want = np.concatenate([p for _, p in parts], axis=axis)
    t = make("concat", {"X": parts}, {"Out": want}, {"axis": axis})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))  # every input


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_split_concat_integers(dtype):
    x = np.arange(12, dtype=dtype).reshape(3, 4)
    make(
        "split",
        {"X": x},
        {"Out": [("a", x[:, :1]), ("b", x[:, 1:])]},
        {"axis": 1, "sections": [1, 3]},
    ).check_output()
    make(
        "concat", {"X": [("a", x), ("b", x[:1])]}, {"Out": np.concatenate([x, x[:1]])}, {"axis": 0}
    ).check_output()


def test_split_grad_with_unused_parts(rng):
    """Parts the loss does not use get a zero gradient: X@GRAD is 0 on their slices."""
    x = rand(rng, (2, 6), "float64")
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        b = main.global_block()
        xv = b.create_var(name="x", shape=x.shape, dtype="float64", stop_gradient=False)
        parts = [b.create_var(name="p%d" % i, dtype="float64") for i in range(3)]
        b.append_op("split", inputs={"X": xv}, outputs={"Out": parts}, attrs={"axis": 1, "num": 3})
        d = b.create_var(name="d", shape=(2, 2), dtype="float64")
        used = tide.layers.elementwise_add(parts[0], tide.layers.elementwise_mul(parts[2], d))
        tide.append_backward(tide.layers.mean(used), no_grad_set={"d"})
    dd = rand(rng, (2, 2), "float64")
    (g,) = run_program(main, {"x": x, "d": dd}, ["x@GRAD"])
    np.testing.assert_allclose(
        g,
        np.concatenate([np.full((2, 2), 0.25), np.zeros((2, 2)), dd / 4], axis=1),
        rtol=1e-12,
        atol=0,
    )


def test_concat_grad_of_one_input_only(rng):
    """Only the second input wants a gradient: concat_grad fills just that slice."""
    a, b = rand(rng, (2, 2), "float64"), rand(rng, (3, 2), "float64")
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        blk = main.global_block()
        av = blk.create_var(name="a", shape=a.shape, dtype="float64", stop_gradient=True)
        bv = blk.create_var(name="b", shape=b.shape, dtype="float64", stop_gradient=False)
        out = blk.create_var(name="out", dtype="float64")
        blk.append_op("concat", inputs={"X": [av, bv]}, outputs={"Out": out}, attrs={"axis": 0})
        d = blk.create_var(name="d", shape=(5, 2), dtype="float64")
        tide.append_backward(
            tide.layers.mean(tide.layers.elementwise_mul(out, d)), no_grad_set={"d"}
        )
    assert not main.global_block().has_var("a@GRAD")
    dd = rand(rng, (5, 2), "float64")
    (gb,) = run_program(main, {"a": a, "b": b, "d": dd}, ["b@GRAD"])
    np.testing.assert_allclose(gb, dd[2:] / 10, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# reshape, reshape2, flatten, flatten2
RESHAPE_CASES = [  # X dims, shape attr, result dims
    ((2, 3, 4), [0, -1], (2, 12)),
    ((2, 3, 4), [-1, 6], (4, 6)),
    ((2, 3, 4), [4, 0, -1], (4, 3, 2)),
    ((2, 3, 4), [0, 0, 2, 2], (2, 3, 2, 2)),
    ((2, 3, 4), [-1], (24,)),
    ((6, 4), [2, 3, 4], (2, 3, 4)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["reshape", "reshape2"])
@pytest.mark.parametrize("xs,shape,want_dims", RESHAPE_CASES)
def test_reshape(op, xs, shape, want_dims, dtype, rng):
    x = rand(rng, xs, dtype)
    outs = {"Out": x.reshape(want_dims)}
    if op == "reshape2":
        outs["XShape"] = None
    t = make(op, {"X": x}, outs, {"shape": shape})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("op", ["reshape", "reshape2"])
@pytest.mark.parametrize("shape_dtype", ["int32", "int64"])
def test_reshape_shape_tensor_overrides_attr(op, shape_dtype, rng):
    x = rand(rng, (2, 3, 4), "float64")
    outs = {"Out": x.reshape(3, 8)}
    if op == "reshape2":
        outs["XShape"] = None
    t = make(op, {"X": x, "Shape": np.array([3, -1], shape_dtype)}, outs, {"shape": [0, -1]})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args("float64"))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_reshape_flatten_integers(dtype):
    x = np.arange(24, dtype=dtype).reshape(2, 3, 4)
    make("reshape", {"X": x}, {"Out": x.reshape(6, 4)}, {"shape": [-1, 4]}).check_output()
    make("flatten", {"X": x}, {"Out": x.reshape(6, 4)}, {"axis": 2}).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["flatten", "flatten2"])
@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_flatten(op, axis, dtype, rng):
    x = rand(rng, (2, 3, 2, 2), dtype)
    rows = int(np.prod(x.shape[:axis]))
    outs = {"Out": x.reshape(rows, -1)}
    if op == "flatten2":
        outs["XShape"] = None
    t = make(op, {"X": x}, outs, {"axis": axis})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# lrn
def lrn_ref(x, n, k, alpha, beta):
    c = x.shape[1]
    half = (n - 1) // 2
    sq = np.pad(x**2, ((0, 0), (half, half), (0, 0), (0, 0)))
    mid = k + alpha * sum(sq[:, i : i + c] for i in range(n))
    return x * mid**-beta, mid


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "n,k,alpha,beta",
    [(5, 2.0, 0.1, 0.75), (3, 1.0, 0.5, 0.5), (1, 1.5, 0.3, 1.0), (7, 1.0, 0.2, 0.75)],
)
def test_lrn(n, k, alpha, beta, dtype, rng):
    x = rand(rng, (2, 5, 2, 2), dtype, -2, 2)
    out, mid = lrn_ref(x.astype(np.float64), n, np.float32(k), np.float32(alpha), np.float32(beta))
    t = make(
        "lrn",
        {"X": x},
        {"Out": out.astype(dtype), "MidOut": mid.astype(dtype)},
        {"n": n, "k": k, "alpha": alpha, "beta": beta},
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# LoD: the ops that keep rows pass X's (or Ids') sequence lengths on
def test_lod_is_passed_on(rng):
    lod = [[2, 3]]
    w = rand(rng, (6, 3), "float64")
    ids = np.array([[1], [2], [0], [5], [3]], "int64")
    make("lookup_table", {"W": w, "Ids": (ids, lod)}, {"Out": (w[ids[:, 0]], lod)}).check_output()
    logits = rand(rng, (5, 4), "float64")
    label = np.array([[0], [1], [2], [3], [0]], "int64")
    ls = log_softmax(logits, 1)
    make(
        "softmax_with_cross_entropy",
        {"Logits": (logits, lod), "Label": label},
        {"Softmax": (np.exp(ls), lod), "Loss": (-np.take_along_axis(ls, label, 1), lod)},
    ).check_output()
    p = np.exp(ls)
    make(
        "cross_entropy",
        {"X": (p, lod), "Label": label},
        {"Y": (-np.log(np.take_along_axis(p, label, 1)), lod)},
    ).check_output()
    x = distinct(rng, (5, 4), "float64")
    idx = np.argsort(-x, axis=1, kind="stable")[:, :2]
    make(
        "top_k",
        {"X": (x, lod)},
        {"Out": (np.take_along_axis(x, idx, 1), lod), "Indices": (idx.astype("int64"), lod)},
        {"k": 2},
    ).check_output()
    make(
        "dropout",
        {"X": (x, lod)},
        {"Out": (x * 0.5, lod), "Mask": None},
        {"dropout_prob": 0.5, "is_test": True},
    ).check_output()
    make(
        "concat",
        {"X": [("a", (x, lod)), ("b", (logits, lod))]},
        {"Out": (np.concatenate([x, logits], axis=1), lod)},
        {"axis": 1},
    ).check_output()
    make(
        "reshape2",
        {"X": (x, lod)},
        {"Out": (x.reshape(5, 2, 2), lod), "XShape": None},
        {"shape": [0, 2, 2]},
    ).check_output()


# ---------------------------------------------------------------------------------------------
# conv2d / pool2d: 4-value paddings (top, bottom, left, right) and padding_algorithm (Fluid 1.7+)
def same_pads(size, k, s):
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "pads,algo,strides,dils",
    [
        ([1, 0, 2, 1], "EXPLICIT", [1, 1], [1, 1]),
        ([0, 2, 1, 0], "EXPLICIT", [2, 1], [1, 2]),
        ([9, 9], "VALID", [2, 2], [1, 1]),  # VALID ignores paddings
        ([0, 0], "SAME", [2, 2], [2, 2]),  # SAME: out = ceil(in / stride), no dilation
        ([0, 0], "SAME", [1, 1], [1, 1]),
    ],
)
def test_conv2d_asymmetric_and_padding_algorithm(pads, algo, strides, dils, dtype, rng):
    x, w = rand(rng, (1, 2, 6, 7), dtype), rand(rng, (3, 2, 3, 2), dtype)
    if algo == "VALID":
        p4 = [0, 0, 0, 0]
    elif algo == "SAME":
        p4 = list(same_pads(6, 3, strides[0]) + same_pads(7, 2, strides[1]))
        dils = [1, 1]
    else:
        p4 = pads
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p4[0], p4[1]), (p4[2], p4[3])))
    want = conv2d_ref(xp, w.astype(np.float64), strides, [0, 0], dils, 1)
    if algo == "SAME":
        assert want.shape[2:] == (-(-6 // strides[0]), -(-7 // strides[1]))
    t = make(
        "conv2d",
        {"Input": x, "Filter": w},
        {"Output": want.astype(dtype)},
        {
            "strides": strides,
            "paddings": pads,
            "dilations": [2, 2] if algo == "SAME" else dils,
            "groups": 1,
            "padding_algorithm": algo,
        },
    )
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["Input", "Filter"], "Output", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ptype,exclusive", [("max", True), ("avg", True), ("avg", False)])
@pytest.mark.parametrize(
    "pads,algo,ceil_mode",
    [
        ([1, 0, 0, 2], "EXPLICIT", False),
        ([2, 1, 1, 0], "EXPLICIT", True),
        ([0, 0], "SAME", False),
        ([3, 3], "VALID", False),
    ],
)
def test_pool2d_asymmetric_and_padding_algorithm(
    ptype, exclusive, pads, algo, ceil_mode, dtype, rng
):
    x = (distinct(rng, (1, 2, 5, 6), "float64") - 10.0).astype(dtype)
    ksize, strides = [3, 2], [2, 2]
    if algo == "SAME":
        p4 = list(same_pads(5, 3, 2) + same_pads(6, 2, 2))
    elif algo == "VALID":
        p4 = [0, 0, 0, 0]
    else:
        p4 = pads
    want = pool2d_ref(
        x.astype(np.float64), ksize, strides, p4, ptype, ceil_mode=ceil_mode, exclusive=exclusive
    )
    t = make(
        "pool2d",
        {"X": x},
        {"Out": want.astype(dtype)},
        dict(
            pooling_type=ptype,
            ksize=ksize,
            strides=strides,
            paddings=pads,
            padding_algorithm=algo,
            ceil_mode=ceil_mode,
            exclusive=exclusive,
        ),
    )
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_paddings_of_three_values_are_an_error():
    x = np.zeros((1, 1, 4, 4), "float32")
    with pytest.raises(tide.TideError, match="paddings.*2 values \\(h, w\\) or 4"):
        make(
            "pool2d",
            {"X": x},
            {"Out": x},
            dict(pooling_type="max", ksize=[2, 2], paddings=[1, 1, 1]),
        ).check_output()


def test_conv2d_pool2d_layers_take_fluids_padding_forms(exe):
    x = tide.layers.data(name="x", shape=[2, 7, 6], dtype="float32")
    same = tide.layers.conv2d(x, num_filters=3, filter_size=3, stride=2, padding="SAME")
    valid = tide.layers.conv2d(x, num_filters=3, filter_size=3, padding="VALID")
    four = tide.layers.conv2d(x, num_filters=3, filter_size=3, padding=[1, 0, 2, 1])
    pool = tide.layers.pool2d(x, pool_size=2, pool_stride=2, pool_padding="SAME")
    assert list(same.shape) == [-1, 3, 4, 3]
    assert list(valid.shape) == [-1, 3, 5, 4]
    assert list(four.shape) == [-1, 3, 6, 7]
    assert list(pool.shape) == [-1, 2, 4, 3]
    exe.run(tide.default_startup_program())
    outs = exe.run(
        feed={"x": np.random.RandomState(0).rand(2, 2, 7, 6).astype("float32")},
        fetch_list=[same, valid, four, pool],
    )
    assert [o.shape for o in outs] == [(2, 3, 4, 3), (2, 3, 5, 4), (2, 3, 6, 7), (2, 2, 4, 3)]
    with pytest.raises(ValueError, match="conv2d: padding"):
        tide.layers.conv2d(x, num_filters=3, filter_size=3, padding="FULL")
    with pytest.raises(TypeError, match="pool2d: padding"):
        tide.layers.pool2d(x, pool_size=2, pool_padding=[1, 1, 1])
