"""device_mkldnn's bfloat16 kernels (issue 32): mul, matmul, matmul_v2, fc, conv2d, pool2d,
relu / gelu / tanh / sigmoid, elementwise_add / mul, softmax, layer_norm and batch_norm (bfloat16
data, float32 scale, shift and statistics) and their grads. Each runs on bfloat16 data without
use_mkldnn (the place's bfloat16 kernel is oneDNN's), its kernel choices say so, its outputs match
a float64 reference of the same (bfloat16) inputs within bfloat16's rounding, and its gradients
match float64 central differences of that reference. Where oneDNN has no bfloat16 jit kernels
(ONEDNN_MAX_CPU_ISA=AVX2) the kernels decline and the float32 kernels run the widened data; under
AVX512_CORE oneDNN emulates bfloat16 and the kernels run."""

import json
import os
import subprocess
import sys
import textwrap
from math import erf

import numpy as np
import pytest
from cpu_isa import cpu_flags
from float64_grad import numeric_grad

import tide
from tide.contrib.mixed_precision.rewrite import kernel_types

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

pytestmark = pytest.mark.skipif(
    "bfloat16" not in kernel_types("mul", "cpu"), reason="no oneDNN bfloat16 kernels loaded"
)

# One rounding of a result to bfloat16 is 2^-9 relative; the float32 accumulation and a second
# rounding (an output read back by the grad) add a little.
RTOL = 2.0**-6


# oneDNN's bfloat16 jit kernels need AVX-512 (avx512_core: emulated; avx512_bf16 / AMX: native).
BF16_ISA = "avx512bw" in cpu_flags() and os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper() in (
    "ALL",
    "AVX512_CORE",
    "AVX512_CORE_VNNI",
    "AVX512_CORE_BF16",
    "AVX512_CORE_AMX",
)


def bf16(a):
    return np.asarray(a, np.float64).astype(np.float32).astype(BF16)


def f64(a):
    return np.asarray(a).astype(np.float64)


OUTS = {
    "conv2d": ["Output"],
    "fused_conv2d": ["Output"],
    "layer_norm": ["Y", "Mean", "Variance"],
    "batch_norm": ["Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance"],
}
FLOAT32_PARAMS = ("Scale", "Bias", "Mean", "Variance")  # batch_norm / layer_norm's, as Paddle


def run(op, inputs, attrs, wrt=(), seed=5, float32=FLOAT32_PARAMS):
    """Runs `op` on `inputs` ({param: float64 array}; bfloat16, FLOAT32_PARAMS float32) and, with
    `wrt`, the grads of loss = sum(w * first output) for random bfloat16 w (so Out@GRAD = w
    exactly). Returns ({output: float64 array}, {param: grad}, w, {op type: [kernel]},
    {output: numpy dtype}, the fed values in float64)."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        block = main.global_block()
        feed, ins, fed = {}, {}, {}
        for param, value in inputs.items():
            dtype = "float32" if param in float32 else "bfloat16"
            arr = value.astype(np.float32) if dtype == "float32" else bf16(value)
            v = tide.layers.data(
                name=param.lower(),
                shape=list(arr.shape),
                dtype=dtype,
                append_batch_size=False,
                stop_gradient=param not in wrt,
            )
            ins[param] = [v]
            feed[v.name] = arr
            fed[param] = f64(arr)
        names = OUTS.get(op, ["Out"])
        outs = {}
        for p in names:
            dtype = "float32" if op == "batch_norm" and p != "Y" else "bfloat16"
            outs[p] = [block.create_var(name=p.lower(), dtype=dtype)]
        block.append_op(type=op, inputs=ins, outputs=outs, attrs=attrs)
        out = outs[names[0]][0]
        fetch = [outs[p][0] for p in names]
        w = None
        if wrt:
            shape = list(
                tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=[out])[0].shape
            )
            w = bf16(np.random.RandomState(seed).uniform(0.5, 1.5, shape))
            wv = tide.layers.data(name="w", shape=shape, dtype="bfloat16", append_batch_size=False)
            feed["w"] = w
            tide.append_backward(tide.layers.reduce_sum(tide.layers.elementwise_mul(out, wv)))
            fetch += [p.lower() + "@GRAD" for p in wrt]
    exe = tide.Executor(tide.CPUPlace())
    got = exe.run(main, feed=feed, fetch_list=fetch)
    kernels = {}
    for t, k in exe.last_run_info()["kernels"]:
        kernels.setdefault(t, []).append(k)
    n = len(names)
    dtypes = {p: g.dtype for p, g in zip(names, got[:n])}
    outs = {p: f64(g) for p, g in zip(names, got[:n])}
    grads = {p: f64(g) for p, g in zip(wrt, got[n:])}
    return outs, grads, w, kernels, dtypes, fed


def ran_bf16(kernels, op):
    """Whether every run of `op` was oneDNN's bfloat16 kernel (on a CPU with bfloat16 jit kernels),
    or else the float32 kernel on widened data."""
    ks = kernels.get(op)
    assert ks, "%s did not run: %s" % (op, kernels)
    if BF16_ISA:
        return all("bfloat16" in k and "mkldnn" in k for k in ks)
    return all("float32" in k for k in ks)


def close(got, want, rtol=RTOL, what=""):
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)


def check(op, inputs, attrs, ref, wrt=(), samples=48, grad_rtol=RTOL, float32=FLOAT32_PARAMS):
    """The op's outputs against `ref` (float64, of the fed values; a dict of outputs or the first
    output) and its grads against central differences of sum(w * ref's first output). The inputs
    in `float32` are fed float32, the others bfloat16."""
    outs, grads, w, kernels, dtypes, fed = run(op, inputs, attrs, wrt, float32=float32)
    assert ran_bf16(kernels, op), kernels
    if wrt:
        assert ran_bf16(kernels, op + "_grad"), kernels
    want = ref(**fed)
    want = want if isinstance(want, dict) else {OUTS.get(op, ["Out"])[0]: want}
    for p, v in want.items():
        if op != "batch_norm" or p == "Y":
            assert dtypes[p] == BF16, (p, dtypes[p])
        close(outs[p], v, what="%s %s" % (op, p))

    def first(**kw):
        r = ref(**kw)
        return r[OUTS.get(op, ["Out"])[0]] if isinstance(r, dict) else r

    rng = np.random.RandomState(11)
    for param, g in grads.items():
        n = fed[param].size
        idx = np.arange(n) if n <= samples else rng.choice(n, samples, False)
        num = numeric_grad(first, dict(fed), param, f64(w), idx, delta=1e-4)
        close(g.reshape(-1)[idx], num, rtol=grad_rtol, what="%s %s@GRAD" % (op, param))
    return outs, kernels


R = np.random.RandomState(3)


def rand(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, shape)


def away_from_zero(*shape):  # kinks (relu, max pooling ties) kept out of the differences' reach
    x = rand(*shape)
    return np.where(np.abs(x) < 0.05, 0.3, x)


# ---- matrix products ----------------------------------------------------------------------------


def test_mul():
    check("mul", {"X": rand(6, 40), "Y": rand(40, 5)}, {}, lambda X, Y: X @ Y, wrt=("X", "Y"))


def test_mul_flattens_at_num_col_dims():
    check(
        "mul",
        {"X": rand(2, 3, 4, 5), "Y": rand(4, 5, 7)},
        {"x_num_col_dims": 2, "y_num_col_dims": 2},
        lambda X, Y: (X.reshape(6, 20) @ Y.reshape(20, 7)).reshape(2, 3, 7),
        wrt=("X", "Y"),
    )


@pytest.mark.parametrize(
    "xs,ys,tx,ty",
    [
        ((2, 5, 8), (2, 8, 3), False, False),
        ((5, 8), (3, 8), False, True),
        ((2, 8, 5), (2, 3, 8), True, True),
        ((3, 4, 8), (8, 6), False, False),  # Y broadcast over X's batch
        ((3, 4, 8), (6, 8), False, True),
    ],
)
def test_matmul_v2(xs, ys, tx, ty):
    def ref(X, Y):
        a = np.swapaxes(X, -1, -2) if tx else X
        b = np.swapaxes(Y, -1, -2) if ty else Y
        return a @ b

    check(
        "matmul_v2",
        {"X": rand(*xs), "Y": rand(*ys)},
        {"trans_x": tx, "trans_y": ty},
        ref,
        wrt=("X", "Y"),
    )


def test_matmul_with_alpha():
    check(
        "matmul",
        {"X": rand(2, 8, 5), "Y": rand(2, 8, 4)},
        {"transpose_X": True, "alpha": 0.5},
        lambda X, Y: 0.5 * np.swapaxes(X, -1, -2) @ Y,
        wrt=("X", "Y"),
    )


def test_fc_with_bias_and_relu():
    check(
        "fc",
        {"Input": rand(4, 2, 16), "W": rand(32, 8), "Bias": rand(8)},
        {"in_num_col_dims": 1, "activation_type": "relu"},
        lambda Input, W, Bias: np.maximum(Input.reshape(4, 32) @ W + Bias, 0),
    )


# ---- activations, elementwise, softmax ----------------------------------------------------------

_erf = np.vectorize(erf)
ACTS = {
    "relu": lambda X: np.maximum(X, 0),
    "tanh": lambda X: np.tanh(X),
    "sigmoid": lambda X: 1 / (1 + np.exp(-X)),
    "gelu": lambda X: 0.5 * X * (1 + _erf(X / np.sqrt(2))),
}


@pytest.mark.parametrize("op", sorted(ACTS))
def test_activation(op):
    check(op, {"X": away_from_zero(4, 48)}, {}, ACTS[op], wrt=("X",))


@pytest.mark.parametrize("op", ["elementwise_add", "elementwise_mul"])
@pytest.mark.parametrize("ys,axis", [((8, 16), -1), ((16,), -1), ((4,), 1)])
def test_elementwise(op, ys, axis):
    xs = (6, 4, 8, 16) if axis == 1 else (8, 16)

    def ref(X, Y):
        y = Y.reshape((1, 4, 1, 1)) if axis == 1 else Y
        return X + y if op == "elementwise_add" else X * y

    check(op, {"X": rand(*xs), "Y": rand(*ys)}, {"axis": axis}, ref, wrt=("X", "Y"))


def test_softmax():
    def ref(X):
        e = np.exp(X - X.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    check("softmax", {"X": rand(6, 24)}, {"axis": -1}, ref, wrt=("X",))


# ---- normalisation --------------------------------------------------------------------------------


def test_layer_norm_keeps_scale_and_bias_float32():
    def ref(X, Scale, Bias):
        m, v = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
        return {
            "Y": (X - m) / np.sqrt(v + 1e-5) * Scale + Bias,
            "Mean": m.reshape(-1),
            "Variance": v.reshape(-1),
        }

    check(
        "layer_norm",
        {"X": rand(8, 64), "Scale": rand(64, lo=0.5, hi=1.5), "Bias": rand(64)},
        {"begin_norm_axis": 1, "epsilon": 1e-5},
        ref,
        wrt=("X", "Scale", "Bias"),
    )


def test_batch_norm_trains_with_float32_statistics():
    c = 16
    inputs = {
        "X": rand(4, c, 3, 3),
        "Scale": rand(c, lo=0.5, hi=1.5),
        "Bias": rand(c),
        "Mean": rand(c),
        "Variance": rand(c, lo=0.5, hi=1.5),
    }

    def ref(X, Scale, Bias, Mean, Variance):
        m, v = X.mean(axis=(0, 2, 3)), X.var(axis=(0, 2, 3))
        y = (X - m[None, :, None, None]) / np.sqrt(v[None, :, None, None] + 1e-5)
        return {
            "Y": y * Scale[None, :, None, None] + Bias[None, :, None, None],
            "MeanOut": 0.9 * Mean + 0.1 * m,
            "SavedMean": m,
        }

    outs, _ = check(
        "batch_norm",
        inputs,
        {"is_test": False, "momentum": 0.9, "epsilon": 1e-5},
        ref,
        wrt=("X", "Scale", "Bias"),
    )
    # The statistics are float32 results, not bfloat16 ones: far closer than bfloat16's rounding.
    X = f64(bf16(inputs["X"]))
    np.testing.assert_allclose(outs["SavedMean"], X.mean(axis=(0, 2, 3)), rtol=1e-5, atol=1e-6)


# ---- convolution, pooling -------------------------------------------------------------------------


def _conv(Input, Filter, pad=1, stride=1):
    x = np.pad(Input, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, w = x.shape
    o, _, kh, kw = Filter.shape
    out = np.zeros((n, o, (h - kh) // stride + 1, (w - kw) // stride + 1))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum(
                "nchw,oc->nohw",
                x[
                    :,
                    :,
                    i : i + stride * out.shape[2] : stride,
                    j : j + stride * out.shape[3] : stride,
                ],
                Filter[:, :, i, j],
            )
    return out


# Stride 2 from 16 to 32 channels: the shape whose bfloat16 backward-weights pass oneDNN ran 70x
# slower than float32's (without AMX the kernel runs that pass in float32).
@pytest.mark.parametrize("stride,channels", [(1, (16, 16)), (2, (16, 32))])
def test_conv2d(stride, channels):
    c_in, c_out = channels
    check(
        "conv2d",
        {"Input": rand(2, c_in, 6, 6), "Filter": rand(c_out, c_in, 3, 3, lo=-0.5, hi=0.5)},
        {"strides": [stride, stride], "paddings": [1, 1], "use_cudnn": False},
        lambda Input, Filter: _conv(Input, Filter, stride=stride),
        wrt=("Input", "Filter"),
    )


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool2d(kind):
    def ref(X):
        n, c, h, w = X.shape
        win = X.reshape(n, c, h // 2, 2, w // 2, 2)
        return win.max(axis=(3, 5)) if kind == "max" else win.mean(axis=(3, 5))

    # Each window holds a, a + 1/4, a + 1/2, a + 3/4 (exact in bfloat16), shuffled: max
    # pooling's argmax stays put under the differences.
    a = np.round(rand(2, 16, 4, 4) * 8) / 8
    steps = np.array([R.permutation(4) for _ in range(a.size)]).reshape(2, 16, 4, 4, 2, 2) / 4
    x = (a[..., None, None] + steps).transpose(0, 1, 2, 4, 3, 5).reshape(2, 16, 8, 8)
    check(
        "pool2d",
        {"X": x},
        {"pooling_type": kind, "ksize": [2, 2], "strides": [2, 2], "use_cudnn": False},
        ref,
        wrt=("X",),
    )


# ---- the inference transpiler's fused ops (bf16 inference) --------------------------------------
# Their weights and biases are float32 inputs (AsFloat32Param): the kernels round the weights to
# bfloat16 once (the references round them too) and add the bias in float32.


def test_fused_conv2d_with_float32_filter_and_bias_residual_and_relu():
    def ref(Input, Filter, Bias, ResidualData):
        conv = _conv(Input, f64(bf16(Filter)))
        return np.maximum(conv + Bias.reshape(1, -1, 1, 1) + ResidualData, 0)

    check(
        "fused_conv2d",
        {
            "Input": rand(2, 16, 6, 6),
            "Filter": rand(32, 16, 3, 3, lo=-0.5, hi=0.5),
            "Bias": rand(32),
            "ResidualData": rand(2, 32, 6, 6),
        },
        {
            "strides": [1, 1],
            "paddings": [1, 1],
            "fuse_activation": "relu",
            "fuse_residual_connection": True,
        },
        ref,
        float32=("Filter", "Bias"),
    )


def test_fused_conv2d_reads_blocked_bfloat16_input_and_residual():
    # The first convolution's output (32 channels) is blocked bfloat16 (nChw16c on AVX-512: the
    # fused convolutions keep 16-channel blocks); the second reads it as Input and ResidualData.
    rng = np.random.RandomState(7)
    x = bf16(rng.uniform(-1, 1, (2, 16, 6, 6)))
    f1, f2 = rng.uniform(-0.3, 0.3, (32, 16, 3, 3)), rng.uniform(-0.2, 0.2, (32, 32, 3, 3))
    b1, b2 = rng.uniform(-1, 1, 32), rng.uniform(-1, 1, 32)
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        block = main.global_block()
        xv = tide.layers.data("x", shape=[2, 16, 6, 6], dtype="bfloat16", append_batch_size=False)
        feed = {"x": x}

        def const(name, value):
            feed[name] = value.astype(np.float32)
            return tide.layers.data(
                name, shape=list(value.shape), dtype="float32", append_batch_size=False
            )

        def conv(name, inp, f, b, residual=None):
            out = block.create_var(name=name, dtype="bfloat16")
            ins = {
                "Input": [inp],
                "Filter": [const(name + "_f", f)],
                "Bias": [const(name + "_b", b)],
            }
            if residual is not None:
                ins["ResidualData"] = [residual]
            block.append_op(
                type="fused_conv2d",
                inputs=ins,
                outputs={"Output": [out]},
                attrs={
                    "strides": [1, 1],
                    "paddings": [1, 1],
                    "fuse_activation": "relu",
                    "fuse_residual_connection": residual is not None,
                },
            )
            return out

        y = conv("y", xv, f1, b1)
        z = conv("z", y, f2, b2, residual=y)
    exe = tide.Executor(tide.CPUPlace())
    got_y, got_z = exe.run(main, feed=feed, fetch_list=[y, z])
    kernels = {}
    for t, k in exe.last_run_info()["kernels"]:
        kernels.setdefault(t, []).append(k)
    assert ran_bf16(kernels, "fused_conv2d"), kernels
    assert got_y.dtype == BF16 and got_z.dtype == BF16
    yf = f64(got_y)
    want_y = np.maximum(_conv(f64(x), f64(bf16(f1))) + b1.reshape(1, -1, 1, 1), 0)
    close(yf, want_y, what="fused_conv2d y")
    want_z = np.maximum(_conv(yf, f64(bf16(f2))) + b2.reshape(1, -1, 1, 1) + yf, 0)
    close(f64(got_z), want_z, what="fused_conv2d z (blocked Input and ResidualData)")


def test_fc_with_float32_weights():
    check(
        "fc",
        {"Input": rand(6, 40), "W": rand(40, 24), "Bias": rand(24)},
        {"in_num_col_dims": 1, "activation_type": ""},
        lambda Input, W, Bias: Input @ f64(bf16(W)) + Bias,
        float32=("W", "Bias"),
    )


def test_fused_multihead_attention_with_float32_mask():
    batch, seq, heads, size = 2, 5, 2, 8
    hidden = heads * size
    mask = np.zeros((batch, 1, 1, seq))
    mask[1, ..., 3:] = -1e4  # the second sequence's last two tokens are padding

    def ref(QKV, Mask):
        q, k, v = (
            QKV[..., i * hidden : (i + 1) * hidden].reshape(batch, seq, heads, size)
            for i in range(3)
        )
        scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(size) + Mask
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        return np.einsum("bhqk,bkhd->bqhd", p, v).reshape(batch, seq, hidden)

    check(
        "fused_multihead_attention",
        {"QKV": rand(batch, seq, 3 * hidden), "Mask": mask},
        {"head_number": heads, "alpha": float(1 / np.sqrt(size))},
        ref,
        float32=("Mask",),
    )


# ---- where oneDNN has no bfloat16 jit kernels ---------------------------------------------------

ISA_SCRIPT = textwrap.dedent("""
    import json, numpy as np, ml_dtypes, tide
    x = tide.layers.data("x", shape=[16, 32], dtype="bfloat16", append_batch_size=False)
    y = tide.layers.data("y", shape=[32, 8], dtype="bfloat16", append_batch_size=False)
    out = tide.layers.mul(x, y)
    exe = tide.Executor(tide.CPUPlace())
    rng = np.random.RandomState(0)
    a = rng.uniform(-1, 1, (16, 32)).astype(ml_dtypes.bfloat16)
    b = rng.uniform(-1, 1, (32, 8)).astype(ml_dtypes.bfloat16)
    (got,) = exe.run(feed={"x": a, "y": b}, fetch_list=[out])
    want = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.abs(got.astype(np.float64) - want).max() / np.abs(want).max())
    kernels = [k for op, k in exe.last_run_info()["kernels"] if op == "mul"]
    print(json.dumps({"dtype": str(got.dtype), "err": err, "kernels": kernels}))
""")


def _run_isa(isa):
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA=isa)
    p = subprocess.run(
        [sys.executable, "-c", ISA_SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def test_without_bf16_jit_kernels_the_kernel_declines_to_the_widened_float32_one():
    r, log = _run_isa("AVX2")
    assert r["dtype"] == "bfloat16" and r["err"] < 2.0**-7, r
    assert all("float32" in k for k in r["kernels"]), r
    assert "oneDNN has no bfloat16 jit kernels" in log, log  # the refusal, logged once


@pytest.mark.skipif(not BF16_ISA, reason="the CPU has no AVX-512")
def test_on_avx512_core_onednn_emulates_bfloat16():
    r, _ = _run_isa("AVX512_CORE")
    assert r["dtype"] == "bfloat16" and r["err"] < 2.0**-7, r
    assert r["kernels"] and all("bfloat16" in k and "mkldnn" in k for k in r["kernels"]), r


# ---- widened float32 kernels on oneDNN's blocked data -------------------------------------------

# Under use_mkldnn: conv2d -> relu -> adaptive avg pool (uneven windows: the bfloat16 pool
# declines to the float32 oneDNN kernel's loop) with the grads of x and the filter, in bfloat16 and, on the same rounded values, float32.
# 5 output channels: oneDNN's blocked formats pad them to 8 or 16, so an element-wise cast of the
# blocked buffer (instead of the plain data) reads padding and loses the format.
WIDENED_BLOCKED_SCRIPT = textwrap.dedent("""
    import json, numpy as np, ml_dtypes, tide

    tide.set_flags({"use_mkldnn": True})  # the widened float32 kernels are oneDNN's too

    def net(dtype, feed):
        main, startup = tide.Program(), tide.Program()
        with tide.program_guard(main, startup):
            def data(name):
                return tide.layers.data(name, shape=list(feed[name].shape), dtype=dtype,
                                        append_batch_size=False, stop_gradient=name == "g")
            x, w, g = data("x"), data("w"), data("g")
            block = main.global_block()
            y = block.create_var(name="y", dtype=dtype)
            block.append_op(type="conv2d", inputs={"Input": [x], "Filter": [w]},
                            outputs={"Output": [y]},
                            attrs={"strides": [1, 1], "paddings": [1, 1]})
            p = tide.layers.adaptive_pool2d(tide.layers.relu(y), [4, 4], pool_type="avg")
            tide.append_backward(tide.layers.reduce_sum(tide.layers.elementwise_mul(p, g)))
        exe = tide.Executor(tide.CPUPlace())
        got = exe.run(main, feed={k: v.astype(dtype) for k, v in feed.items()},
                      fetch_list=[p, "x@GRAD", "w@GRAD"])
        return [a.astype(np.float64) for a in got], exe.last_run_info()["kernels"]

    rng = np.random.RandomState(3)
    feed = {"x": rng.uniform(-1, 1, (2, 3, 9, 9)), "w": rng.uniform(-1, 1, (5, 3, 3, 3)),
            "g": rng.uniform(0.5, 1.5, (2, 5, 4, 4))}
    feed = {k: v.astype(ml_dtypes.bfloat16).astype(np.float32) for k, v in feed.items()}
    low, kernels = net("bfloat16", feed)
    ref, _ = net("float32", feed)
    errs = [float(np.abs(a - b).max() / np.abs(b).max()) for a, b in zip(low, ref)]
    print(json.dumps({"errs": errs, "kernels": kernels}))
""")


@pytest.mark.parametrize("isa", [None, "AVX2"])
def test_widened_float32_kernels_read_and_write_blocked_data_plain(isa):
    # None: this CPU's kernels (bfloat16 conv and relu write blocked bfloat16; the pool declines).
    # AVX2: every bfloat16 kernel declines; the float32 ones write blocked float32, rounded back.
    # Either way the widened kernels are oneDNN's float32 ones, reading and writing blocked data.
    env = dict(os.environ)
    if isa:
        env["ONEDNN_MAX_CPU_ISA"] = isa
    p = subprocess.run(
        [sys.executable, "-c", WIDENED_BLOCKED_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert all(e < 3e-2 for e in r["errs"]), r  # out, x@GRAD, w@GRAD against float32
    pools = [k for op, k in r["kernels"] if op == "pool2d"]
    assert pools and all("float32" in k and "mkldnn" in k for k in pools), r  # widened
