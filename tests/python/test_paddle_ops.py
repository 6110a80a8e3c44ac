"""Paddle 2.x/3.x op semantics (issue 15): the attributes, tensor-valued inputs and extra hints that
programs saved by paddle.static.save_inference_model carry, checked against float64 numpy
references (Paddle's rules), with the plain CPU kernels and, where device_mkldnn has a kernel, with
oneDNN (use_mkldnn) too; gradients by central finite differences."""

import numpy as np
import pytest
from conv_reference import conv_ref
from float64_grad import numeric_grad
from kernel_libraries import LIBS, MKLDNN_SKIP_REASON, has_mkldnn
from op_test import make

import tide

RNG = np.random.RandomState(15)


def kernels_of(t):
    """The kernel descriptions the op under test ran with."""
    main, _, feeds, outs = t._build()
    expected = t._expected_outputs()
    exe = tide.Executor(tide.CPUPlace())
    exe.run(main, feed=feeds, fetch_list=[n for n in outs if expected[n][1] is not None])
    return [k for op, k in exe.last_run_info()["kernels"] if op == t.op_type]


# oneDNN pools plain NCHW data with its reference loop where it has no jit kernel for it (AVX2
# and SSE4.1, or fewer than 8 channels): the oneDNN kernel declines those runs and the plain one
# runs (tests/cpp/mkldnn/pool_test.cc checks which, per ISA). Pool tests accept either kernel.
MAY_DECLINE = {"pool2d"}
# oneDNN's elementwise_add leaves plain operands to the plain kernel, faster there (issue 17's
# speed rule, devices/mkldnn/elementwise_kernel.cc); these tests feed plain data.
PLAIN_ON_PLAIN_DATA = {"elementwise_add"}


def check(op_type, inputs, outputs, attrs, lib="plain", atol=1e-5, rtol=1e-5):
    """Runs one op (oneDNN's kernel when lib == "mkldnn", asserting it ran unless the op is in
    MAY_DECLINE) against `outputs`."""
    attrs = dict(attrs)
    if lib == "mkldnn":
        attrs["use_mkldnn"] = True
    t = make(op_type, inputs, outputs, attrs)
    t.check_output(atol=atol, rtol=rtol)
    if lib == "mkldnn" and op_type not in MAY_DECLINE:
        onednn = op_type not in PLAIN_ON_PLAIN_DATA
        assert all(("mkldnn" in k) == onednn for k in kernels_of(t)), kernels_of(t)
    return t


def rand(*shape):
    return RNG.uniform(-1, 1, shape)


def nhwc(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def mkldnn_grads_vs_float64(op_type, ins, outs, attrs, ref, out_name):
    """oneDNN's float32 gradients of loss = sum(w * out) (w fixed, random) for each input of `ins`
    against central differences of sum(w * ref(**inputs)) in float64 (ref: the numpy reference
    of the op's output). Asserts the oneDNN grad kernel ran (unless the op is in MAY_DECLINE)."""
    t = make(op_type, ins, outs, dict(attrs, use_mkldnn=True))
    main, startup, feeds, out_vars = t._build(stop_gradient_inputs=False)
    shape = outs[out_name].shape
    w = np.random.RandomState(3).uniform(0.5, 1.5, shape)
    with tide.program_guard(main, startup):
        wv = main.global_block().create_var(
            name="w", shape=shape, dtype="float32", stop_gradient=True
        )
        out = out_vars[out_name.lower() + "_out"]
        loss = tide.layers.mean(tide.layers.elementwise_mul(out, wv))
    feeds["w"] = tide.LoDTensor(w.astype("float32"))
    tide.append_backward(loss)
    exe = tide.Executor(tide.CPUPlace())
    got = exe.run(main, feed=feeds, fetch_list=[p.lower() + "_in@GRAD" for p in ins])
    ks = [k for o, k in exe.last_run_info()["kernels"] if o == op_type + "_grad"]
    assert ks and (op_type in MAY_DECLINE or all("mkldnn" in k for k in ks)), ks
    for param, analytic in zip(ins, got):
        numeric = numeric_grad(ref, ins, param, w.astype("float32"))
        np.testing.assert_allclose(
            np.asarray(analytic).reshape(-1) * w.size, numeric, rtol=1e-4, atol=1e-4, err_msg=param
        )


# ---- conv2d / depthwise_conv2d ----------------------------------------------------------------
def paddle_pads(algo, in_hw, k, strides, paddings, dilations):
    """Paddle's UpdatePaddingAndDilation: (top, bottom, left, right) and the dilations used."""
    if algo == "VALID":
        return [0, 0, 0, 0], list(dilations)
    if algo == "SAME":
        pads = []
        for i in range(2):
            out = (in_hw[i] + strides[i] - 1) // strides[i]
            total = max((out - 1) * strides[i] + k[i] - in_hw[i], 0)
            pads += [total // 2, total - total // 2]
        return pads, [1, 1]
    p = list(paddings)
    return (p if len(p) == 4 else [p[0], p[0], p[1], p[1]]), list(dilations)


CONV_CASES = [
    # op, NCHW input dims, filter dims, strides, paddings, algorithm, dilations, groups, format
    ("conv2d", (2, 3, 7, 9), (4, 3, 3, 3), [2, 2], [1, 0, 2, 1], "EXPLICIT", [1, 1], 1, "NCHW"),
    ("conv2d", (1, 3, 7, 7), (4, 3, 3, 3), [2, 2], [0, 0], "SAME", [2, 2], 1, "NHWC"),
    ("conv2d", (1, 4, 8, 7), (6, 2, 3, 2), [2, 1], [1, 1], "VALID", [1, 1], 2, "NHWC"),
    ("conv2d", (1, 2, 9, 8), (3, 2, 3, 3), [1, 2], [2, 1], "EXPLICIT", [2, 1], 1, "NHWC"),
    ("depthwise_conv2d", (2, 4, 7, 7), (4, 1, 3, 3), [2, 2], [0, 0], "SAME", [1, 1], 4, "NHWC"),
    (
        "depthwise_conv2d",
        (1, 3, 6, 5),
        (3, 1, 3, 3),
        [1, 1],
        [1, 1],
        "EXPLICIT",
        [1, 1],
        3,
        "AnyLayout",
    ),
]


def conv_test(case, dtype="float32"):
    op, xs, fs, strides, paddings, algo, dils, groups, fmt = case
    x, w = rand(*xs), rand(*fs)
    pads, used_dils = paddle_pads(algo, xs[2:], fs[2:], strides, paddings, dils)
    want = conv_ref(x, w, strides, pads, used_dils, groups)
    if fmt == "NHWC":  # contiguous: OpTest perturbs inputs through a flat view
        x, want = nhwc(x), nhwc(want)
    attrs = {
        "strides": strides,
        "paddings": paddings,
        "padding_algorithm": algo,
        "dilations": dils,
        "groups": groups,
        "data_format": fmt,
    }
    return (
        {"Input": x.astype(dtype), "Filter": w.astype(dtype)},
        {"Output": want.astype(dtype)},
        attrs,
    )


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d(case, lib):
    ins, outs, attrs = conv_test(case)
    check(case[0], ins, outs, attrs, lib, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("case", [CONV_CASES[1], CONV_CASES[2], CONV_CASES[4]])
def test_conv2d_grad(case):
    small = (case[0], (1,) + case[1][1:3] + (5,)) + case[2:]
    ins, outs, attrs = conv_test(small, "float64")
    make(case[0], ins, outs, attrs).check_grad(["Input", "Filter"], "Output")


@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
def test_conv2d_grad_mkldnn_nhwc():
    """oneDNN's grads of an NHWC conv against the plain kernel's (16 channels in and out: fewer
    may be padded to oneDNN's channel blocks, where its conv2d_grad declines)."""
    ins, outs, attrs = conv_test(
        ("conv2d", (1, 16, 7, 7), (16, 16, 3, 3), [2, 2], [0, 0], "SAME", [2, 2], 1, "NHWC")
    )
    grads = []
    for use in (False, True):
        t = make("conv2d", ins, outs, dict(attrs, use_mkldnn=use))
        main, startup, feeds, out_vars = t._build(stop_gradient_inputs=False)
        with tide.program_guard(main, startup):
            loss = tide.layers.mean(out_vars["output_out"])
        tide.append_backward(loss)
        exe = tide.Executor(tide.CPUPlace())
        grads.append(exe.run(main, feed=feeds, fetch_list=["input_in@GRAD", "filter_in@GRAD"]))
        assert (
            any("mkldnn" in k for o, k in exe.last_run_info()["kernels"] if o == "conv2d_grad")
            == use
        )
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# oneDNN's conv grads with 4-value paddings, VALID and SAME in NCHW, and a depthwise conv with
# 4-value paddings (op, NCHW dims, filter, strides, paddings, algorithm, dilations, groups, format).
# 16 channels in and out: oneDNN's conv2d_grad declines channel counts its blocks (8 on AVX2, 16
# on AVX-512) would pad, and an NCHW Input@GRAD of fewer than 8 (the plain kernel is faster there,
# devices/mkldnn/README.md).
MKLDNN_CONV_GRAD_CASES = [
    ("conv2d", (2, 16, 7, 9), (16, 16, 3, 3), [2, 2], [1, 0, 2, 1], "EXPLICIT", [1, 1], 1, "NCHW"),
    ("conv2d", (1, 16, 8, 7), (16, 16, 3, 2), [2, 1], [0, 0], "VALID", [1, 1], 1, "NCHW"),
    ("conv2d", (1, 16, 7, 7), (16, 16, 3, 3), [2, 2], [0, 0], "SAME", [2, 2], 1, "NCHW"),
    (
        "depthwise_conv2d",
        (1, 16, 7, 6),
        (16, 1, 3, 3),
        [1, 2],
        [1, 0, 2, 1],
        "EXPLICIT",
        [1, 1],
        16,
        "NCHW",
    ),
]


@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
@pytest.mark.parametrize("case", MKLDNN_CONV_GRAD_CASES)
def test_conv2d_grad_mkldnn_paddings(case):
    op, xs, fs, strides, paddings, algo, dils, groups, _ = case
    ins, outs, attrs = conv_test(case)
    pads, used_dils = paddle_pads(algo, xs[2:], fs[2:], strides, paddings, dils)

    def ref(Input, Filter):
        return conv_ref(Input, Filter, strides, pads, used_dils, groups)

    mkldnn_grads_vs_float64(op, ins, outs, attrs, ref, "Output")


PADDLE_CONV_HINTS = {  # what Paddle 2.x programs carry on conv2d besides its attributes
    "is_test": True,
    "use_cudnn": True,
    "use_mkldnn": False,
    "use_quantizer": False,
    "mkldnn_data_type": "float32",
    "fuse_relu": False,
    "fuse_activation": "",
    "fuse_alpha": 0.0,
    "fuse_beta": 0.0,
    "use_addto": False,
    "fuse_residual_connection": False,
    "Scale_in": 1.0,
    "Scale_out": 1.0,
    "Scale_in_eltwise": 1.0,
    "Scale_weights": [1.0],
    "force_fp32_output": False,
    "workspace_size_MB": 512,
    "exhaustive_search": False,
    "fuse_relu_before_depthwise_conv": False,
    "fuse_brelu": False,
    "fuse_brelu_threshold": 6.0,
    "op_role": 0,
    "op_namescope": "/",
}


def test_conv2d_paddle_hints_accepted():
    ins, outs, attrs = conv_test(CONV_CASES[0])
    check("conv2d", ins, outs, dict(attrs, **PADDLE_CONV_HINTS), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(
    "attr,value",
    [
        ("fuse_relu", True),
        ("fuse_brelu", True),
        ("fuse_activation", "relu"),
        ("fuse_residual_connection", True),
        ("use_addto", True),
    ],
)
def test_conv2d_fusion_refused(attr, value):
    ins, outs, attrs = conv_test(CONV_CASES[0])
    with pytest.raises(Exception, match=attr + ".*Paddle oneDNN fusion"):
        make("conv2d", ins, outs, dict(attrs, **{attr: value})).check_output()


def test_conv2d_bad_data_format():
    ins, outs, attrs = conv_test(CONV_CASES[0])
    with pytest.raises(Exception, match="data_format"):
        make("conv2d", ins, outs, dict(attrs, data_format="NCDHW")).check_output()


# ---- pool2d ------------------------------------------------------------------------------------
def pool_ref(x, ksize, strides, pads, ptype, exclusive, ceil_mode, adaptive, global_pooling):
    """NCHW, Tide's (Fluid's, Paddle GPU's and oneDNN's) windows: clipped to the image, padding
    never wins a max, a non-exclusive average divides by kh * kw."""
    n, c, h, w = x.shape
    if global_pooling:
        ksize, pads, strides, adaptive = [h, w], [0, 0, 0, 0], [1, 1], False
    if adaptive:
        oh, ow = ksize
    else:

        def span(i, k, pb, pe, s):
            return (i - k + pb + pe + (s - 1 if ceil_mode else 0)) // s + 1

        oh = span(h, ksize[0], pads[0], pads[1], strides[0])
        ow = span(w, ksize[1], pads[2], pads[3], strides[1])
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            if adaptive:
                y0, y1 = i * h // oh, -(-(i + 1) * h // oh)
                x0, x1 = j * w // ow, -(-(j + 1) * w // ow)
            else:
                y0, x0 = i * strides[0] - pads[0], j * strides[1] - pads[2]
                y1, x1 = min(y0 + ksize[0], h), min(x0 + ksize[1], w)
                y0, x0 = max(y0, 0), max(x0, 0)
            if y1 <= y0 or x1 <= x0:
                continue
            win = x[:, :, y0:y1, x0:x1]
            if ptype == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                div = (
                    win.shape[2] * win.shape[3] if (exclusive or adaptive) else ksize[0] * ksize[1]
                )
                out[:, :, i, j] = win.sum(axis=(2, 3)) / div
    return out


POOL_CASES = [
    # NCHW dims, type, ksize, strides, paddings, algorithm, exclusive, ceil, adaptive, global, fmt
    ((2, 3, 7, 9), "max", [3, 3], [2, 2], [0, 0], "SAME", True, False, False, False, "NHWC"),
    ((1, 2, 8, 8), "avg", [3, 3], [2, 2], [1, 1], "EXPLICIT", False, True, False, False, "NCHW"),
    (
        (1, 2, 7, 8),
        "avg",
        [3, 2],
        [2, 2],
        [1, 0, 1, 1],
        "EXPLICIT",
        False,
        False,
        False,
        False,
        "NHWC",
    ),
    ((1, 3, 9, 7), "avg", [2, 2], [2, 2], [0, 0], "VALID", True, True, False, False, "NHWC"),
    ((2, 3, 7, 5), "avg", [3, 2], [1, 1], [0, 0], "EXPLICIT", True, False, True, False, "NCHW"),
    ((2, 3, 7, 5), "avg", [3, 2], [1, 1], [0, 0], "EXPLICIT", True, False, True, False, "NHWC"),
    ((1, 2, 10, 6), "max", [4, 4], [1, 1], [0, 0], "EXPLICIT", True, False, True, False, "NHWC"),
    ((1, 4, 6, 6), "avg", [2, 2], [1, 1], [0, 0], "EXPLICIT", True, False, True, False, "NCHW"),
    ((2, 3, 5, 7), "avg", [1, 1], [1, 1], [0, 0], "EXPLICIT", True, False, False, True, "NHWC"),
]


def pool_test(case, dtype="float32"):
    xs, ptype, ksize, strides, paddings, algo, exclusive, ceil, adaptive, glob, fmt = case
    # distinct values 0.02 apart: no ties for max, even under finite differences' steps
    n = int(np.prod(xs))
    x = (RNG.permutation(n).reshape(xs) - n / 2) * 0.02
    if adaptive or glob:
        pads = [0, 0, 0, 0]
    else:
        pads, _ = paddle_pads(algo, xs[2:], ksize, strides, paddings, [1, 1])
    want = pool_ref(x, ksize, strides, pads, ptype, exclusive, ceil, adaptive, glob)
    if fmt == "NHWC":
        x, want = nhwc(x), nhwc(want)
    attrs = {
        "pooling_type": ptype,
        "ksize": ksize,
        "strides": strides,
        "paddings": paddings,
        "padding_algorithm": algo,
        "exclusive": exclusive,
        "ceil_mode": ceil,
        "adaptive": adaptive,
        "global_pooling": glob,
        "data_format": fmt,
    }
    return {"X": x.astype(dtype)}, {"Out": want.astype(dtype)}, attrs


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", POOL_CASES)
def test_pool2d(case, lib):
    ins, outs, attrs = pool_test(case)
    check(
        "pool2d",
        ins,
        outs,
        dict(attrs, is_test=True, use_quantizer=False, mkldnn_data_type="float32"),
        lib,
    )


@pytest.mark.parametrize("case", [POOL_CASES[0], POOL_CASES[2], POOL_CASES[5]])
def test_pool2d_grad(case):
    ins, outs, attrs = pool_test(case, "float64")
    make("pool2d", ins, outs, attrs).check_grad(["X"], "Out")


@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
@pytest.mark.parametrize("case", [POOL_CASES[0], POOL_CASES[5]])
def test_pool2d_grad_mkldnn_nhwc(case):
    ins, outs, attrs = pool_test(case)
    grads = []
    for use in (False, True):
        t = make("pool2d", ins, outs, dict(attrs, use_mkldnn=use))
        main, startup, feeds, out_vars = t._build(stop_gradient_inputs=False)
        with tide.program_guard(main, startup):
            w = main.global_block().create_var(
                name="w", shape=outs["Out"].shape, dtype="float32", stop_gradient=True
            )
            loss = tide.layers.mean(tide.layers.elementwise_mul(out_vars["out_out"], w))
        feeds["w"] = tide.LoDTensor(
            np.linspace(0.5, 1.5, outs["Out"].size).reshape(outs["Out"].shape).astype("float32")
        )
        tide.append_backward(loss)
        exe = tide.Executor(tide.CPUPlace())
        grads.append(exe.run(main, feed=feeds, fetch_list=["x_in@GRAD"])[0])
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)


# oneDNN's pool grads with 4-value paddings, VALID and SAME in NCHW (the same fields as POOL_CASES).
# 8 channels: oneDNN's jit pooling takes plain data with AVX-512 (elsewhere the plain kernel runs).
MKLDNN_POOL_GRAD_CASES = [
    (
        (1, 8, 7, 8),
        "max",
        [3, 2],
        [2, 2],
        [1, 0, 1, 1],
        "EXPLICIT",
        True,
        False,
        False,
        False,
        "NCHW",
    ),
    (
        (1, 8, 7, 8),
        "avg",
        [3, 2],
        [2, 2],
        [1, 0, 1, 1],
        "EXPLICIT",
        False,
        False,
        False,
        False,
        "NCHW",
    ),
    ((1, 8, 9, 7), "avg", [2, 2], [2, 2], [0, 0], "VALID", True, True, False, False, "NCHW"),
    ((2, 8, 7, 9), "max", [3, 3], [2, 2], [0, 0], "SAME", True, False, False, False, "NCHW"),
]


@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
@pytest.mark.parametrize("case", MKLDNN_POOL_GRAD_CASES)
def test_pool2d_grad_mkldnn_paddings(case):
    xs, ptype, ksize, strides, paddings, algo, exclusive, ceil, adaptive, glob, _ = case
    ins, outs, attrs = pool_test(case)
    pads, _ = paddle_pads(algo, xs[2:], ksize, strides, paddings, [1, 1])

    def ref(X):  # X's values are 0.02 apart: finite differences never change a max
        return pool_ref(X, ksize, strides, pads, ptype, exclusive, ceil, adaptive, glob)

    mkldnn_grads_vs_float64("pool2d", ins, outs, attrs, ref, "Out")


# ---- batch_norm (inference, NHWC, Paddle's extra inputs and outputs) ----------------------------
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_batch_norm_inference(layout, lib):
    x = rand(2, 3, 4, 5)
    c = 3 if layout == "NCHW" else 5
    scale, bias, mean, var = rand(c), rand(c), rand(c), RNG.uniform(0.5, 2, c)
    shape = (1, c, 1, 1) if layout == "NCHW" else (1, 1, 1, c)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-5) * scale.reshape(
        shape
    ) + bias.reshape(shape)
    f = lambda a: a.astype("float32")  # noqa: E731
    check(
        "batch_norm",
        {"X": f(x), "Scale": f(scale), "Bias": f(bias), "Mean": f(mean), "Variance": f(var)},
        {
            "Y": f(y),
            "MeanOut": f(mean),
            "VarianceOut": f(var),
            "SavedMean": None,
            "SavedVariance": None,
            "ReserveSpace": None,
        },
        {
            "is_test": True,
            "data_layout": layout,
            "use_global_stats": False,
            "trainable_statistics": False,
            "fuse_with_relu": False,
        },
        lib,
        atol=1e-4,
        rtol=1e-4,
    )


def test_batch_norm_without_saved_statistics():
    """An inference program may leave out SavedMean / SavedVariance (and ReserveSpace)."""
    x = rand(2, 3, 2, 2)
    f = lambda a: a.astype("float32")  # noqa: E731
    check(
        "batch_norm",
        {
            "X": f(x),
            "Scale": f(np.ones(3)),
            "Bias": f(np.zeros(3)),
            "Mean": f(np.zeros(3)),
            "Variance": f(np.ones(3)),
        },
        {"Y": f(x / np.sqrt(1 + 1e-5)), "MeanOut": None, "VarianceOut": None},
        {"is_test": True},
        atol=1e-5,
        rtol=1e-5,
    )


def test_batch_norm_trainable_statistics():
    """Paddle: trainable_statistics normalises with the batch's statistics even under is_test."""
    x = rand(4, 3, 2, 2)
    mu, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    y = (x - mu.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5)
    f = lambda a: a.astype("float32")  # noqa: E731
    check(
        "batch_norm",
        {
            "X": f(x),
            "Scale": f(np.ones(3)),
            "Bias": f(np.zeros(3)),
            "Mean": f(np.zeros(3)),
            "Variance": f(np.ones(3)),
        },
        {"Y": f(y), "MeanOut": None, "VarianceOut": None, "SavedMean": None, "SavedVariance": None},
        {"is_test": True, "trainable_statistics": True},
        atol=1e-4,
        rtol=1e-4,
    )


# ---- matmul_v2 ---------------------------------------------------------------------------------
MATMUL_CASES = [
    ((2, 3, 4), (4, 5), False, False),
    ((4, 3), (2, 5, 4), True, True),
    ((2, 1, 3, 4), (5, 4, 6), False, False),
    ((3, 1, 4, 2), (1, 2, 4, 5), True, False),
    ((4,), (3, 4, 5), False, False),
    ((2, 3, 4), (4,), False, False),
    ((4,), (4,), True, True),
    ((3, 4), (5, 4), False, True),
]


def matmul_ref(x, y, tx, ty):
    if tx and x.ndim > 1:
        x = np.swapaxes(x, -1, -2)
    if ty and y.ndim > 1:
        y = np.swapaxes(y, -1, -2)
    out = np.matmul(x, y)
    return out.reshape(1) if out.ndim == 0 else out


@pytest.mark.parametrize("case", MATMUL_CASES)
def test_matmul_v2(case):
    xs, ys, tx, ty = case
    x, y = rand(*xs), rand(*ys)
    f = lambda a: a.astype("float32")  # noqa: E731
    check(
        "matmul_v2",
        {"X": f(x), "Y": f(y)},
        {"Out": f(matmul_ref(x, y, tx, ty))},
        {
            "trans_x": tx,
            "trans_y": ty,
            "use_mkldnn": False,
            "mkldnn_data_type": "float32",
            "fused_reshape_Out": [],
            "fused_transpose_Out": [],
        },
        atol=1e-5,
        rtol=1e-5,
    )


@pytest.mark.parametrize(
    "case", [MATMUL_CASES[1], MATMUL_CASES[2], MATMUL_CASES[3], MATMUL_CASES[4], MATMUL_CASES[6]]
)
def test_matmul_v2_grad(case):
    xs, ys, tx, ty = case
    x, y = rand(*xs), rand(*ys)
    make(
        "matmul_v2",
        {"X": x, "Y": y},
        {"Out": matmul_ref(x, y, tx, ty)},
        {"trans_x": tx, "trans_y": ty},
    ).check_grad(["X", "Y"], "Out")


def test_matmul_v2_errors():
    with pytest.raises(Exception, match="inner dims"):
        make(
            "matmul_v2",
            {"X": rand(2, 3).astype("float32"), "Y": rand(4, 5).astype("float32")},
            {"Out": np.zeros((2, 5), "float32")},
            {},
        ).check_output()
    with pytest.raises(Exception, match="do not broadcast"):
        make(
            "matmul_v2",
            {"X": rand(2, 2, 3).astype("float32"), "Y": rand(3, 3, 4).astype("float32")},
            {"Out": np.zeros((2, 2, 4), "float32")},
            {},
        ).check_output()
    with pytest.raises(Exception, match="fused_reshape_X"):
        make(
            "matmul_v2",
            {"X": rand(2, 3).astype("float32"), "Y": rand(3, 5).astype("float32")},
            {"Out": np.zeros((2, 5), "float32")},
            {"fused_reshape_X": [2, 3]},
        ).check_output()


# ---- shape ops ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "start,stop,dims", [(1, 2, (2, 12, 5)), (-3, -1, (2, 60)), (0, 3, (120,)), (2, 2, (2, 3, 4, 5))]
)
def test_flatten_contiguous_range(start, stop, dims):
    x = rand(2, 3, 4, 5)
    t = make(
        "flatten_contiguous_range",
        {"X": x},
        {"Out": x.reshape(dims), "XShape": None},
        {"start_axis": start, "stop_axis": stop},
    )
    t.check_output()
    t.check_grad(["X"], "Out")


def test_flatten_contiguous_range_bad_axes():
    with pytest.raises(Exception, match="start_axis 2 is after stop_axis 1"):
        make(
            "flatten_contiguous_range",
            {"X": rand(2, 3, 4)},
            {"Out": rand(6, 4)},
            {"start_axis": 2, "stop_axis": 1},
        ).check_output()


def ints(*v, dtype="int32"):
    return np.array(v, dtype=dtype)


def test_reshape2_shape_tensor():
    """ShapeTensor (one value per variable) overrides Shape and `shape`; 0 copies X's dim."""
    x = rand(2, 3, 4)
    t = make(
        "reshape2",
        {
            "X": x,
            "Shape": ints(24),
            "ShapeTensor": [("s0", ints(3)), ("s1", ints(-1, dtype="int64")), ("s2", ints(0))],
        },
        {"Out": x.reshape(3, 2, 4), "XShape": None},
        {"shape": [-1, -1, -1], "mkldnn_data_type": "float32", "use_quantizer": False},
    )
    t.check_output()
    t.check_grad(["X"], "Out")


def test_unsqueeze2_axes_tensors():
    x = rand(3, 4)
    make(
        "unsqueeze2",
        {"X": x, "AxesTensor": ints(0, 2)},
        {"Out": x.reshape(1, 3, 1, 4), "XShape": None},
        {"axes": []},
    ).check_output()
    make(
        "unsqueeze2",
        {"X": x, "AxesTensorList": [("a0", ints(-1)), ("a1", ints(1))]},
        {"Out": x.reshape(3, 1, 4, 1), "XShape": None},
        {},
    ).check_output()


def test_squeeze2_and_transpose2_hints():
    x = rand(3, 1, 4)
    make(
        "squeeze2",
        {"X": x},
        {"Out": x.reshape(3, 4), "XShape": None},
        {"axes": [1], "mkldnn_data_type": "float32", "use_mkldnn": False},
    ).check_output()
    make(
        "transpose2",
        {"X": x},
        {"Out": x.transpose(2, 0, 1), "XShape": None},
        {"axis": [2, 0, 1], "data_format": "AnyLayout", "mkldnn_data_type": "float32"},
    ).check_output()


@pytest.mark.parametrize("lib", LIBS)
def test_concat_axis_tensor(lib):
    a, b = rand(2, 3, 4).astype("float32"), rand(2, 2, 4).astype("float32")
    check(
        "concat",
        {"X": [("a", a), ("b", b)], "AxisTensor": ints(-2)},
        {"Out": np.concatenate([a, b], axis=1)},
        {"axis": 0},
        lib,
    )


def test_concat_axis_tensor_grad():
    a, b = rand(2, 3), rand(2, 2)
    make(
        "concat",
        {"X": [("a", a), ("b", b)], "AxisTensor": ints(1, dtype="int64")},
        {"Out": np.concatenate([a, b], axis=1)},
        {},
    ).check_grad(["a", "b"], "Out")


def test_split_tensors():
    x = rand(3, 7)
    parts = np.split(x, [2, 3], axis=1)
    make(
        "split",
        {
            "X": x,
            "AxisTensor": ints(1),
            "SectionsTensorList": [("s0", ints(2)), ("s1", ints(1)), ("s2", ints(-1))],
        },
        {"Out": [("o0", parts[0]), ("o1", parts[1]), ("o2", parts[2])]},
        {"sections": [-1, -1, -1]},
    ).check_output()


def test_slice_tensors_and_decrease_axis():
    x = rand(4, 5, 6)
    make(
        "slice",
        {"Input": x, "StartsTensor": ints(1, -4), "EndsTensor": ints(2, 100)},
        {"Out": x[1:2, :, 2:].reshape(5, 4)},
        {
            "axes": [0, 2],
            "starts": [-1, -1],
            "ends": [-1, -1],
            "decrease_axis": [0],
            "infer_flags": [-1, -1],
        },
    ).check_output()
    t = make(
        "slice",
        {
            "Input": x,
            "StartsTensorList": [("b0", ints(-3))],
            "EndsTensorList": [("e0", ints(2**40, dtype="int64"))],
        },
        {"Out": x[:, -3:, :]},
        {"axes": [1]},
    )
    t.check_output()
    t.check_grad(["Input"], "Out")


def test_fill_constant_paddle():
    make(
        "fill_constant",
        {"ShapeTensor": ints(2, 3, dtype="int64")},
        {"Out": np.full((2, 3), 2**53 + 1, dtype="int64")},
        {"dtype": 3, "value": 1.0, "str_value": str(2**53 + 1), "shape": [], "place_type": -1},
    ).check_output()
    make(
        "fill_constant",
        {"ShapeTensorList": [("d0", ints(2)), ("d1", ints(1, dtype="int64"))]},
        {"Out": np.full((2, 1), -np.inf, dtype="float32")},
        {"dtype": 5, "str_value": "-inf"},
    ).check_output()
    make(
        "fill_constant",
        {"ValueTensor": np.array([2.5], "float64")},
        {"Out": np.full((3,), 2.5, dtype="float32")},
        {"dtype": 5, "shape": [3]},
    ).check_output()
    with pytest.raises(Exception, match="str_value '1.5x' is not a number"):
        make(
            "fill_constant",
            {},
            {"Out": np.zeros((2,), "float32")},
            {"dtype": 5, "shape": [2], "str_value": "1.5x"},
        ).check_output()


def test_shape_paddle_hint():
    make(
        "shape",
        {"Input": rand(2, 3, 4)},
        {"Out": ints(2, 3, 4)},
        {"mkldnn_data_type": "float32", "use_mkldnn": False},
    ).check_output()


def test_gather_axis():
    x = rand(3, 4, 5)
    idx = ints(3, 0, 3, dtype="int64")
    t = make("gather", {"X": x, "Index": idx}, {"Out": np.take(x, idx, axis=1)}, {"axis": 1})
    t.check_output()
    t.check_grad(["X"], "Out")
    make(
        "gather",
        {"X": x, "Index": ints(4, 1), "Axis": ints(-1)},
        {"Out": np.take(x, [4, 1], axis=2)},
        {},
    ).check_output()


@pytest.mark.parametrize(
    "attrs,ref",
    [
        (
            {"axis": 1, "keepdims": False, "dtype": -1, "flatten": False},
            lambda x: np.argmax(x, axis=1),
        ),
        (
            {"axis": 0, "keepdims": True, "dtype": 2, "flatten": True},
            lambda x: np.argmax(x).reshape(1, 1, 1).astype("int32"),
        ),
        (
            {"axis": -1, "keepdims": False, "dtype": 3, "flatten": True},
            lambda x: np.argmax(x).reshape(1),
        ),
    ],
)
def test_arg_max_paddle(attrs, ref):
    x = RNG.permutation(60).reshape(3, 4, 5).astype("float32")
    want = ref(x)
    if want.dtype != np.int32:
        want = want.astype("int64")
    make("arg_max", {"X": x}, {"Out": want}, attrs).check_output()


def test_clip_tensors():
    x = rand(3, 4)
    t = make(
        "clip",
        {"X": x, "Min": np.array([-0.3]), "Max": np.array([0.4])},
        {"Out": np.clip(x, -0.3, 0.4)},
        {"min": -5.0, "max": 5.0, "mkldnn_data_type": "float32"},
    )
    t.check_output()
    t.check_grad(["X"], "Out")


def test_scale_tensor():
    x = rand(3, 4)
    t = make(
        "scale",
        {"X": x, "ScaleTensor": np.array([-2.5], "float32")},
        {"Out": -2.5 * (x + 0.5)},
        {"scale": 9.0, "bias": 0.5, "bias_after_scale": False},
    )
    t.check_output()
    t.check_grad(["X"], "Out")


@pytest.mark.parametrize(
    "op,attrs,ref",
    [
        (
            "hard_swish",
            {"threshold": 6.0, "scale": 6.0, "offset": 3.0},
            lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6,
        ),
        (
            "hard_sigmoid",
            {"slope": 0.1666667, "offset": 0.5},
            lambda x: np.clip(0.1666667 * x + 0.5, 0, 1),
        ),
        ("relu6", {"threshold": 6.0}, lambda x: np.clip(x, 0, 6)),
        ("swish", {"beta": 1.0}, lambda x: x / (1 + np.exp(-x))),
        ("sigmoid", {}, lambda x: 1 / (1 + np.exp(-x))),
    ],
)
def test_paddle_activations(op, attrs, ref):
    x = RNG.uniform(-8, 8, (4, 5))
    make(
        op,
        {"X": x.astype("float32")},
        {"Out": ref(x).astype("float32")},
        dict(attrs, use_mkldnn=False, use_cudnn=False, mkldnn_data_type="float32"),
    ).check_output()


def test_softmax_and_dropout_paddle_hints():
    x = rand(2, 3, 4)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    make(
        "softmax",
        {"X": x.astype("float32")},
        {"Out": (e / e.sum(axis=1, keepdims=True)).astype("float32")},
        {
            "axis": 1,
            "data_format": "AnyLayout",
            "is_test": True,
            "use_cudnn": True,
            "mkldnn_data_type": "float32",
        },
    ).check_output()
    for impl, factor in (("upscale_in_train", 1.0), ("downgrade_in_infer", 0.7)):
        make(
            "dropout",
            {"X": x},
            {"Out": x * factor, "Mask": None},
            {
                "dropout_prob": 0.3,
                "is_test": True,
                "dropout_implementation": impl,
                "fix_seed": False,
                "seed": 0,
            },
        ).check_output()
        # Paddle's inference programs leave the Mask output out
        make(
            "dropout",
            {"X": x},
            {"Out": x * factor},
            {"dropout_prob": 0.3, "is_test": True, "dropout_implementation": impl},
        ).check_output()


@pytest.mark.parametrize("lib", LIBS)
def test_elementwise_paddle_hints(lib):
    x, y = rand(2, 3, 4, 5).astype("float32"), rand(2, 3, 1, 1).astype("float32")
    hints = {
        "axis": -1,
        "mkldnn_data_type": "float32",
        "use_quantizer": False,
        "Scale_x": 1.0,
        "Scale_y": 1.0,
        "Scale_out": 1.0,
        "x_data_format": "",
        "y_data_format": "",
    }
    make("elementwise_mul", {"X": x, "Y": y}, {"Out": x * y}, hints).check_output()
    b = rand(5).astype("float32")
    check("elementwise_add", {"X": x, "Y": b}, {"Out": x + b}, hints, lib)


def test_layers_nhwc_conv_and_adaptive_pool():
    """tide.layers.conv2d / pool2d take data_format; adaptive_pool2d is Fluid's layer."""
    x = rand(2, 6, 5, 3).astype("float32")  # NHWC
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        v = tide.layers.data("x", shape=[6, 5, 3], dtype="float32")
        y = tide.layers.conv2d(
            v,
            num_filters=4,
            filter_size=3,
            stride=2,
            padding="SAME",
            data_format="NHWC",
            act="relu",
        )
        p = tide.layers.adaptive_pool2d(y, [2, 2], pool_type="avg", data_format="NHWC")
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        exe.run(startup)
        got_y, got_p = exe.run(main, feed={"x": x}, fetch_list=[y, p])
        params = {
            q.name: np.array(scope.find_var(q.name).get_tensor())
            for q in main.global_block().all_parameters()
        }
    w = next(a for a in params.values() if a.ndim == 4)
    b = next(a for a in params.values() if a.ndim == 1)
    pads, _ = paddle_pads("SAME", (6, 5), (3, 3), [2, 2], [0, 0], [1, 1])
    ref = np.maximum(
        conv_ref(x.transpose(0, 3, 1, 2).astype("float64"), w, [2, 2], pads, [1, 1], 1)
        + b.reshape(1, 4, 1, 1),
        0,
    )
    np.testing.assert_allclose(got_y, nhwc(ref), rtol=1e-4, atol=1e-5)
    pref = pool_ref(ref, [2, 2], [1, 1], [0, 0, 0, 0], "avg", True, False, True, False)
    np.testing.assert_allclose(got_p, nhwc(pref), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "op,fn",
    [
        ("elementwise_add", np.add),
        ("elementwise_mul", np.multiply),
        ("elementwise_div", np.divide),
        ("elementwise_max", np.maximum),
    ],
)
@pytest.mark.parametrize("xs,ys", [((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((2, 1, 4), (3, 1))])
def test_elementwise_numpy_broadcast(op, fn, xs, ys):
    """Paddle 2.x's axis=-1 broadcasts both ways, where Fluid's Y-over-X rule does not apply."""
    x, y = RNG.uniform(0.5, 1.5, xs), RNG.uniform(0.5, 1.5, ys)
    while np.abs(x - y).min() < 0.02:  # no near ties: max's finite differences would straddle
        x, y = RNG.uniform(0.5, 1.5, xs), RNG.uniform(0.5, 1.5, ys)
    t = make(op, {"X": x, "Y": y}, {"Out": fn(x, y)}, {"axis": -1})
    t.check_output()
    t.check_grad(["X", "Y"], "Out")


def test_elementwise_numpy_broadcast_errors():
    with pytest.raises(Exception, match="cannot broadcast Y"):  # neither rule fits
        make(
            "elementwise_add",
            {"X": rand(4, 3, 2), "Y": rand(4, 1, 3)},
            {"Out": rand(4, 3, 3)},
            {"axis": -1},
        ).check_output()
    with pytest.raises(Exception, match="cannot broadcast"):  # an explicit axis keeps Fluid's rule
        make(
            "elementwise_add", {"X": rand(3, 1), "Y": rand(3, 4)}, {"Out": rand(3, 4)}, {"axis": 0}
        ).check_output()


def test_elementwise_numpy_broadcast_unknown_batch():
    """Build-time shapes with an unknown batch: Out takes the broadcast dims."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data("x", shape=[1], dtype="float32")  # [-1, 1]
        y = tide.layers.data("y", shape=[4], dtype="float32", append_batch_size=False)
        out = tide.layers.elementwise_add(x, y)
        assert list(out.shape) == [-1, 4]
        z = tide.layers.matmul(out, tide.layers.fill_constant([4, 2], "float32", 1.0))
    xv, yv = rand(3, 1).astype("float32"), rand(4).astype("float32")
    (got,) = tide.Executor(tide.CPUPlace()).run(main, feed={"x": xv, "y": yv}, fetch_list=[z])
    np.testing.assert_allclose(got, (xv + yv) @ np.ones((4, 2)), rtol=1e-5)
