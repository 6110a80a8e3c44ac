"""int8 inference kernels (issue 32; the rule: sdk/include/tide/ops/int8.hpp): quantize /
dequantize, and fused_conv2d and fc with u8 / s8 Input, each on the plain kernel
(plugins/ops_nn/int8_ops.cc) and on oneDNN's (devices/mkldnn/int8_kernels.cc, fc_kernel.cc),
against an independent numpy reference: weights quantized per output channel, the int32
accumulation in int64, the epilogue (bias, residual, activation) in float64, the output rounded
half to even and saturated. Integer outputs agree within 1 level (the kernels compute the epilogue
in float32, in another order), float32 outputs within float32's rounding of it. Nothing depends
on the CPU's ISA: oneDNN runs int8 without VNNI too."""

import math

import numpy as np
import pytest
from kernel_libraries import LIBS

import tide

RNG = np.random.default_rng(32)
I8 = {"uint8": (0, 255), "int8": (-128, 127)}


def saturate(v, dtype):
    lo, hi = I8[dtype]
    return np.clip(np.rint(v), lo, hi).astype(dtype)  # np.rint: half to even


def run_op(op, inputs, out_param, out_dtype, attrs, lib):
    """`op` on the numpy `inputs` ({param: array}, None: absent); returns (its output, the kernels
    that ran)."""
    prog = tide.Program()
    block = prog.global_block()
    feed, ins = {}, {}
    for param, arr in inputs.items():
        if arr is None:
            continue
        name = param.lower()
        ins[param] = [block.create_var(name=name, shape=arr.shape, dtype=arr.dtype.name)]
        feed[name] = arr
    out = block.create_var(name="out", dtype=out_dtype)
    attrs = dict(attrs, use_mkldnn=lib == "mkldnn")
    block.append_op(type=op, inputs=ins, outputs={out_param: [out]}, attrs=attrs)
    exe = tide.Executor(tide.CPUPlace())
    (got,) = exe.run(prog, feed=feed, fetch_list=[out], scope=tide.Scope())
    kernels = [k for t, k in exe.last_run_info()["kernels"] if t == op]
    return np.asarray(got), kernels


def check_library(kernels, lib):
    assert kernels, "no kernel ran"
    assert all(("mkldnn" in k) == (lib == "mkldnn") for k in kernels), kernels


def quantized_weights(w, scales, axis):
    shape = [1] * w.ndim
    shape[axis] = -1
    prod = w.astype(np.float32) * scales.astype(np.float32).reshape(shape)  # float32, as kernels
    return saturate(prod, "int8").astype(np.int64)


ACTS = {
    "": lambda v: v,
    "relu": lambda v: np.maximum(v, 0),
    "tanh": np.tanh,
    "gelu": lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2))),
}


def epilogue(acc, s_in, s_w, bias, residual, act, s_out, out_dtype, channel_axis):
    shape = [1] * acc.ndim
    shape[channel_axis] = -1
    v = acc.astype(np.float64) / (s_in * s_w.astype(np.float64).reshape(shape))
    if bias is not None:
        v = v + bias.astype(np.float64).reshape(shape)
    if residual is not None:
        v = v + residual
    v = ACTS[act](v)
    if out_dtype == "float32":
        return v
    return saturate(v * s_out, out_dtype)


def out_type(act, fp32):
    return "float32" if fp32 else ("uint8" if act == "relu" else "int8")


def assert_int8_close(got, want, out_dtype):
    assert got.dtype == np.dtype(out_dtype), got.dtype
    if out_dtype == "float32":
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
        return
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1, "max difference %d levels" % diff.max()
    assert (diff == 0).mean() > 0.9, "only %.3f exact" % (diff == 0).mean()


def conv_reference(xq, wq, stride, pad, groups):
    """int64 accumulation of the NCHW convolution of levels xq by wq."""
    n, c, h, w = xq.shape
    m, cg, kh, kw = wq.shape
    xp = np.pad(xq.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (w + 2 * pad - kw) // stride + 1
    out = np.zeros((n, m, oh, ow), np.int64)
    mg = m // groups
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        for ky in range(kh):
            for kx in range(kw):
                win = xs[:, :, ky : ky + stride * oh : stride, kx : kx + stride * ow : stride]
                out[:, g * mg : (g + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", win, wq[g * mg : (g + 1) * mg, :, ky, kx]
                )
    return out


def levels(shape, dtype):
    lo, hi = I8[dtype]
    return RNG.integers(lo, hi + 1, shape).astype(dtype)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize(
    "src,act,fp32,bias,residual,groups,stride",
    [
        ("uint8", "relu", False, True, None, 1, 1),
        ("int8", "", False, True, None, 1, 2),
        ("uint8", "", True, True, None, 1, 1),
        ("uint8", "tanh", False, False, None, 1, 1),
        ("int8", "gelu", True, True, None, 2, 1),
        ("uint8", "relu", False, True, "uint8", 1, 1),
        ("uint8", "relu", False, True, "int8", 1, 1),
        ("uint8", "relu", False, True, "float32", 1, 1),
        ("uint8", "", True, True, "uint8", 1, 1),
        ("int8", "relu", False, True, "int8", 2, 1),
    ],
)
def test_fused_conv2d_int8(lib, src, act, fp32, bias, residual, groups, stride):
    n, c, h, w, m, k, pad = 2, 32, 9, 9, 32, 3, 1
    xq = levels((n, c, h, w), src)
    wf = RNG.normal(0, 0.2, (m, c // groups, k, k)).astype(np.float32)
    s_w = (127 / np.abs(wf).reshape(m, -1).max(axis=1)).astype(np.float32)
    b = RNG.normal(0, 1, m).astype(np.float32) if bias else None
    s_in, s_out, s_res = 40.0, 20.0, 30.0
    acc = conv_reference(xq, quantized_weights(wf, s_w, 0), stride, pad, groups)
    oh = acc.shape[2]
    r, r_real = None, None
    if residual == "float32":
        r = RNG.normal(0, 2, acc.shape).astype(np.float32)
        r_real = r.astype(np.float64)
    elif residual:
        r = levels(acc.shape, residual)
        r_real = r.astype(np.float64) / np.float32(s_res)
    want_type = out_type(act, fp32)
    want = epilogue(acc, s_in, s_w, b, r_real, act, s_out, want_type, 1)
    attrs = {
        "strides": [stride, stride],
        "paddings": [pad, pad],
        "groups": groups,
        "fuse_activation": act,
        "fuse_residual_connection": residual is not None,
        "Scale_in": s_in,
        "Scale_out": s_out,
        "Scale_in_eltwise": s_res,
        "Scale_weights": s_w.tolist(),
        "force_fp32_output": fp32,
    }
    inputs = {"Input": xq, "Filter": wf, "Bias": b, "ResidualData": r}
    got, kernels = run_op("fused_conv2d", inputs, "Output", want_type, attrs, lib)
    check_library(kernels, lib)
    assert got.shape == (n, m, oh, oh)
    assert_int8_close(got, want, want_type)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize(
    "src,act,fp32,bias",
    [
        ("uint8", "relu", False, True),
        ("int8", "", False, True),
        ("uint8", "", True, False),
        ("int8", "gelu", False, True),
        ("int8", "tanh", True, True),
    ],
)
def test_fc_int8(lib, src, act, fp32, bias):
    m, k, n = 6, 64, 48
    xq = levels((2, 3, k), src)
    wf = RNG.normal(0, 0.1, (k, n)).astype(np.float32)
    s_w = (127 / np.abs(wf).max(axis=0)).astype(np.float32)
    b = RNG.normal(0, 1, n).astype(np.float32) if bias else None
    s_in, s_out = 50.0, 25.0
    acc = xq.reshape(m, k).astype(np.int64) @ quantized_weights(wf, s_w, 1)
    want_type = out_type(act, fp32)
    want = epilogue(acc, s_in, s_w, b, None, act, s_out, want_type, 1).reshape(2, 3, n)
    attrs = {
        "in_num_col_dims": 2,
        "fuse_activation": act,
        "Scale_in": s_in,
        "Scale_out": s_out,
        "Scale_weights": s_w.tolist(),
        "force_fp32_output": fp32,
    }
    got, kernels = run_op("fc", {"Input": xq, "W": wf, "Bias": b}, "Out", want_type, attrs, lib)
    check_library(kernels, lib)
    assert_int8_close(got, want, want_type)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("negative", [False, True])
def test_quantize_and_dequantize(lib, negative):
    x = RNG.normal(0, 2, (3, 16, 5, 5)).astype(np.float32)
    x.flat[:4] = [0.25, -0.25, 0.75, 1e6]  # halves (scale 2: 0.5, 1.5) and saturation
    dtype = "int8" if negative else "uint8"
    q, kernels = run_op(
        "quantize",
        {"Input": x},
        "Output",
        dtype,
        {"Scale": 2.0, "is_negative_input": negative},
        lib,
    )
    check_library(kernels, lib)
    np.testing.assert_array_equal(q, saturate(x * np.float32(2.0), dtype))
    back, kernels = run_op("dequantize", {"Input": q}, "Output", "float32", {"Scale": 2.0}, lib)
    check_library(kernels, lib)
    np.testing.assert_array_equal(back, q.astype(np.float32) * np.float32(0.5))


@pytest.mark.parametrize("lib", LIBS)
def test_bad_scales_are_named(lib):
    xq = levels((1, 4, 4, 4), "uint8")
    wf = np.ones((8, 4, 1, 1), np.float32)
    attrs = {"Scale_in": 2.0, "Scale_weights": [1.0, 2.0], "fuse_activation": "relu"}
    with pytest.raises(Exception, match="Scale_weights holds 2 values"):
        run_op("fused_conv2d", {"Input": xq, "Filter": wf}, "Output", "uint8", attrs, lib)
    with pytest.raises(Exception, match="Scale_in -1 is not a positive"):
        run_op(
            "fused_conv2d",
            {"Input": xq, "Filter": wf},
            "Output",
            "uint8",
            dict(attrs, Scale_in=-1.0, Scale_weights=[1.0]),
            lib,
        )
    with pytest.raises(Exception, match="Shift 3 .*not supported"):
        run_op("quantize", {"Input": wf}, "Output", "uint8", {"Scale": 1.0, "Shift": 3.0}, lib)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("in_place", [True, False])
def test_fused_conv2d_int8_residual_from_an_int8_conv(lib, in_place):
    # conv1 (u8 -> u8) writes R; conv2 adds R, writing R's own variable (the transpiler's
    # in-place residual: summed where it lies, in oneDNN's format) or another one.
    xq = levels((1, 16, 6, 6), "uint8")
    w1, w2 = (RNG.normal(0, 0.2, (16, 16, 1, 1)).astype(np.float32) for _ in range(2))
    s1, s2 = ((127 / np.abs(w).reshape(16, -1).max(axis=1)).astype(np.float32) for w in (w1, w2))
    common = {"fuse_activation": "relu", "Scale_in": 40.0, "Scale_out": 30.0}
    conv1 = dict(common, Scale_weights=s1.tolist(), use_mkldnn=lib == "mkldnn")
    conv2 = dict(
        conv1, Scale_weights=s2.tolist(), fuse_residual_connection=True, Scale_in_eltwise=30.0
    )

    def run(both):
        prog = tide.Program()
        block = prog.global_block()
        x = block.create_var(name="x", shape=xq.shape, dtype="uint8")
        f1 = block.create_var(name="f1", shape=w1.shape, dtype="float32")
        f2 = block.create_var(name="f2", shape=w2.shape, dtype="float32")
        r = block.create_var(name="r", dtype="uint8")
        out = r if in_place else block.create_var(name="out", dtype="uint8")
        block.append_op(
            type="fused_conv2d",
            inputs={"Input": [x], "Filter": [f1]},
            outputs={"Output": [r]},
            attrs=conv1,
        )
        if both:
            block.append_op(
                type="fused_conv2d",
                inputs={"Input": [x], "Filter": [f2], "ResidualData": [r]},
                outputs={"Output": [out]},
                attrs=conv2,
            )
        exe = tide.Executor(tide.CPUPlace())
        feed = {"x": xq, "f1": w1, "f2": w2} if both else {"x": xq, "f1": w1}
        (got,) = exe.run(prog, feed=feed, fetch_list=[out if both else r], scope=tide.Scope())
        check_library([k for t, k in exe.last_run_info()["kernels"] if t == "fused_conv2d"], lib)
        return np.asarray(got)

    r = run(False)
    acc = conv_reference(xq, quantized_weights(w2, s2, 0), 1, 0, 1)
    want = epilogue(acc, 40.0, s2, None, r / np.float32(30.0), "relu", 30.0, "uint8", 1)
    assert_int8_close(run(True), want, "uint8")


@pytest.mark.parametrize("lib", LIBS)
def test_int8_results_within_the_quantization_error_of_float32(lib):
    # Real x and w, x quantized by quantize (s8, Scale_in = 127 / max|x|), the int8 convolution
    # and fc with float32 output against float64 of the unquantized x and w: each output is
    # within the rounding of its operands, sum over taps of |x| dw / 2 + |w| dx / 2 + dx dw / 4
    # (dx = 1 / Scale_in, dw = 1 / Scale_weights[c]: half a level of each), plus float32's.
    x = RNG.normal(0, 1, (2, 16, 7, 7)).astype(np.float32)
    w = RNG.normal(0, 0.3, (24, 16, 3, 3)).astype(np.float32)
    s_in = np.float32(127 / np.abs(x).max())
    s_w = (127 / np.abs(w).reshape(24, -1).max(axis=1)).astype(np.float32)
    xq, kernels = run_op(
        "quantize",
        {"Input": x},
        "Output",
        "int8",
        {"Scale": float(s_in), "is_negative_input": True},
        lib,
    )
    attrs = {
        "paddings": [1, 1],
        "Scale_in": float(s_in),
        "Scale_weights": s_w.tolist(),
        "force_fp32_output": True,
    }
    got, _ = run_op("fused_conv2d", {"Input": xq, "Filter": w}, "Output", "float32", attrs, lib)

    def conv(a, b):  # float64 NCHW convolution, padding 1
        n, c, h, wd = a.shape
        ap = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((n, b.shape[0], h, wd))
        for ky in range(3):
            for kx in range(3):
                out += np.einsum(
                    "nchw,mc->nmhw", ap[:, :, ky : ky + h, kx : kx + wd], b[:, :, ky, kx]
                )
        return out

    dw = (1 / s_w.astype(np.float64)).reshape(-1, 1, 1, 1) * np.ones_like(w, np.float64)
    bound = (
        conv(np.abs(x).astype(np.float64), dw / 2)
        + conv(np.full(x.shape, 0.5 / s_in), np.abs(w).astype(np.float64))
        + conv(np.full(x.shape, 0.25 / s_in), dw)
    )
    exact = conv(x.astype(np.float64), w.astype(np.float64))
    err = np.abs(got - exact)
    assert (err <= bound + 1e-5 * np.abs(exact).max()).all(), (err - bound).max()
    # What it comes to: a fifth of the bound at most, ~1% of the largest output (144 taps).
    print(
        "int8 conv (%s): max error %.4f of the largest output, %.2f of the bound's largest"
        % (lib, err.max() / np.abs(exact).max(), (err / bound).max())
    )
    assert err.max() < 0.02 * np.abs(exact).max(), err.max() / np.abs(exact).max()

    xf = x.reshape(2, -1)[:, :64]
    wf = RNG.normal(0, 0.1, (64, 32)).astype(np.float32)
    s_in = np.float32(127 / np.abs(xf).max())
    s_w = (127 / np.abs(wf).max(axis=0)).astype(np.float32)
    xq, _ = run_op(
        "quantize",
        {"Input": xf},
        "Output",
        "int8",
        {"Scale": float(s_in), "is_negative_input": True},
        lib,
    )
    attrs = {"Scale_in": float(s_in), "Scale_weights": s_w.tolist(), "force_fp32_output": True}
    got, _ = run_op("fc", {"Input": xq, "W": wf}, "Out", "float32", attrs, lib)
    exact = xf.astype(np.float64) @ wf.astype(np.float64)
    dwf = 1 / s_w.astype(np.float64)
    bound = (
        np.abs(xf) @ np.broadcast_to(dwf / 2, wf.shape)
        + (0.5 / s_in) * np.abs(wf).sum(axis=0)
        + 64 * 0.25 / s_in * dwf
    )
    assert (np.abs(got - exact) <= bound + 1e-5 * np.abs(exact).max()).all()


@pytest.mark.parametrize("lib", LIBS)
def test_int8_conv_reruns_give_each_inputs_result(lib):
    # The oneDNN kernel keeps its last run's primitive and memories (its kernel state) and
    # reuses them while Input, Filter and Bias are the same: new values in them, or a new
    # Filter, must give the new result, as a fresh program does.
    w1, w2 = (RNG.normal(0, 0.2, (16, 16, 3, 3)).astype(np.float32) for _ in range(2))
    b = RNG.normal(0, 1, 16).astype(np.float32)
    s_w = [float(127 / np.abs(w1).max())]
    attrs = {
        "paddings": [1, 1],
        "fuse_activation": "relu",
        "Scale_in": 40.0,
        "Scale_out": 30.0,
        "Scale_weights": s_w,
        "use_mkldnn": lib == "mkldnn",
    }

    def program():
        prog = tide.Program()
        block = prog.global_block()
        x = block.create_var(name="x", shape=(1, 16, 8, 8), dtype="uint8")
        f = block.create_var(name="f", shape=w1.shape, dtype="float32")
        bias = block.create_var(name="b", shape=b.shape, dtype="float32")
        h = block.create_var(name="h", dtype="uint8")
        out = block.create_var(name="out", dtype="float32")
        block.append_op(
            type="fused_conv2d",
            inputs={"Input": [x], "Filter": [f], "Bias": [bias]},
            outputs={"Output": [h]},
            attrs=attrs,
        )
        block.append_op(
            type="fused_conv2d",
            inputs={"Input": [h], "Filter": [f], "ResidualData": [h]},
            outputs={"Output": [h]},
            attrs=dict(attrs, fuse_residual_connection=True, Scale_in=30.0, Scale_in_eltwise=30.0),
        )
        block.append_op(
            type="dequantize",
            inputs={"Input": [h]},
            outputs={"Output": [out]},
            attrs={"Scale": 30.0, "use_mkldnn": lib == "mkldnn"},
        )
        return prog, out

    def fresh(xq, w):
        prog, out = program()
        return tide.Executor(tide.CPUPlace()).run(
            prog, feed={"x": xq, "f": w, "b": b}, fetch_list=[out], scope=tide.Scope()
        )[0]

    prog, out = program()
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    inputs = [
        (levels((1, 16, 8, 8), "uint8"), w1),
        (levels((1, 16, 8, 8), "uint8"), w1),
        (levels((1, 16, 8, 8), "uint8"), w2),
    ]

    def reference(xq, w):  # the second conv reads h as Input and ResidualData, writing h
        s = np.array(s_w, np.float32)
        wq = quantized_weights(w, s, 0)
        h = epilogue(conv_reference(xq, wq, 1, 1, 1), 40.0, s, b, None, "relu", 30.0, "uint8", 1)
        h_real = h / np.float32(30.0)
        acc = conv_reference(h, wq, 1, 1, 1)
        return epilogue(acc, 30.0, s, None, h_real, "relu", 30.0, "uint8", 1) / np.float32(30.0)

    for xq, w in inputs + inputs[:1]:
        (got,) = exe.run(prog, feed={"x": xq, "f": w, "b": b}, fetch_list=[out], scope=scope)
        np.testing.assert_array_equal(got, fresh(xq, w))
        # Not only the same as a fresh run: right (a kernel reading Input where it writes
        # Output, its own variable, gave the same wrong values run after run).
        want = reference(xq, w)
        assert np.abs(got - want).max() <= 1 / 30 + 1e-6, np.abs(got - want).max()
        assert (np.abs(got - want) < 1e-6).mean() > 0.9


def pool_reference(xq, pooling, k, stride, pad, exclusive):
    """pool2d of levels xq (NCHW) in float64: each window clipped to the image (padding never
    wins a max; an exclusive avg divides by the cells inside, else by k * k), the avg rounded
    half to even; Out keeps X's type."""
    n, c, h, w = xq.shape
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    v = xq.astype(np.float64)
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for x in range(ow):
            y0, x0 = y * stride - pad, x * stride - pad
            win = v[:, :, max(y0, 0) : min(y0 + k, h), max(x0, 0) : min(x0 + k, w)]
            if pooling == "max":
                out[:, :, y, x] = win.max(axis=(2, 3))
            else:
                cells = win.shape[2] * win.shape[3] if exclusive else k * k
                out[:, :, y, x] = win.sum(axis=(2, 3)) / cells
    return saturate(out, xq.dtype.name)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize(
    "pooling,k,stride,pad,exclusive",
    [
        ("max", 2, 2, 0, True),
        ("max", 3, 2, 1, True),
        ("avg", 2, 2, 0, True),
        ("avg", 3, 2, 1, True),
        ("avg", 3, 1, 1, False),
    ],
)
def test_pool2d_int8(lib, dtype, pooling, k, stride, pad, exclusive):
    # Int8 data between int8 convolutions: Out in X's type and scale (a pool commutes with it).
    xq = levels((2, 16, 7, 7), dtype)
    xq.flat[:4] = I8[dtype][1]  # saturated levels stay in range
    attrs = {
        "pooling_type": pooling,
        "ksize": [k, k],
        "strides": [stride, stride],
        "paddings": [pad, pad],
        "exclusive": exclusive,
    }
    got, kernels = run_op("pool2d", {"X": xq}, "Out", dtype, attrs, lib)
    check_library(kernels, lib)
    assert all(dtype in k for k in kernels), kernels
    want = pool_reference(xq, pooling, k, stride, pad, exclusive)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape, (got.dtype, got.shape)
    if pooling == "max":
        np.testing.assert_array_equal(got, want)
    else:  # oneDNN divides in float32: a mean at x.5 may round either way
        assert_int8_close(got, want, dtype)


@pytest.mark.parametrize("lib", LIBS)
def test_pool2d_int8_global_and_refusals(lib):
    xq = levels((2, 16, 5, 5), "uint8")
    got, _ = run_op(
        "pool2d",
        {"X": xq},
        "Out",
        "uint8",
        {"pooling_type": "avg", "ksize": [1, 1], "global_pooling": True},
        lib,
    )
    np.testing.assert_array_equal(
        got, saturate(xq.astype(np.float64).mean(axis=(2, 3), keepdims=True), "uint8")
    )
    nhwc = {"pooling_type": "max", "ksize": [2, 2], "strides": [2, 2], "data_format": "NHWC"}
    with pytest.raises(
        Exception, match="op 'pool2d' \\(int8\\): data_format NHWC is not supported"
    ):
        run_op("pool2d", {"X": xq}, "Out", "uint8", nhwc, lib)
