"""tide.transpiler.InferenceTranspiler (python/tide/transpiler/inference_transpiler.py) and the
fused_conv2d op it makes (plugins/ops_nn/conv_op.cc, devices/mkldnn/conv_kernels.cc):
fused_conv2d's plain and oneDNN kernels against a float64 numpy reference of Paddle's rule
Output = act(conv + Bias + ResidualData), act any of Paddle's fused activations with its
fuse_alpha / fuse_beta; the transpiler folds batch_norm and fuses bias, residual and every
activation fused_conv2d computes, with outputs equal to the unfused program's within 1e-5
relative, on the plain kernels and with oneDNN, and leaves alone what it must not fuse."""

import os

import conv_reference
import numpy as np
import pytest
from kernel_libraries import LIBS, has_mkldnn

import tide


def kernels(exe, op_type):
    return [k for op, k in exe.last_run_info()["kernels"] if op == op_type]


def run_with(lib, exe, program, feed, fetch_list):
    tide.set_flags({"use_mkldnn": lib == "mkldnn"})
    try:
        return exe.run(program, feed=feed, fetch_list=fetch_list)
    finally:
        tide.set_flags({"use_mkldnn": False})


def conv_ref(x, w, stride, pad, groups):
    """float64 NCHW convolution (cross-correlation), symmetric zero padding."""
    return conv_reference.conv_ref(x, w, [stride] * 2, [pad] * 4, [1, 1], groups)


# (id, N, C, H, W, M, k, stride, pad, groups, bias, residual, relu)
FUSED_CASES = [
    ("bias", 2, 8, 7, 7, 16, 3, 1, 1, 1, True, False, False),
    ("bias_relu", 2, 8, 7, 7, 16, 3, 1, 1, 1, True, False, True),
    ("bias_residual", 2, 16, 6, 6, 16, 1, 1, 0, 1, True, True, False),
    ("bias_residual_relu", 2, 16, 6, 6, 32, 1, 1, 0, 1, True, True, True),
    ("residual_relu_no_bias", 1, 8, 9, 9, 8, 3, 2, 1, 1, False, True, True),
    ("relu_only_stem", 1, 3, 16, 16, 16, 7, 2, 3, 1, False, False, True),
    ("grouped_bias_relu", 2, 8, 5, 5, 8, 3, 1, 1, 2, True, False, True),
    ("none", 1, 4, 5, 5, 6, 3, 1, 1, 1, False, False, False),
]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", FUSED_CASES, ids=[c[0] for c in FUSED_CASES])
def test_fused_conv2d_matches_numpy(case, lib, fresh_programs, exe, rng):
    _, n, c, h, w, m, k, stride, pad, groups, bias, residual, relu = case
    main, _ = fresh_programs
    block = main.global_block()
    x = tide.layers.data(name="x", shape=[n, c, h, w], dtype="float32", append_batch_size=False)
    f = tide.layers.data(
        name="f", shape=[m, c // groups, k, k], dtype="float32", append_batch_size=False
    )
    oh = (h + 2 * pad - k) // stride + 1
    ow = (w + 2 * pad - k) // stride + 1
    feed = {
        "x": rng.uniform(-1, 1, (n, c, h, w)).astype("float32"),
        "f": rng.uniform(-1, 1, (m, c // groups, k, k)).astype("float32"),
    }
    inputs = {"Input": [x.name], "Filter": [f.name]}
    if bias:
        tide.layers.data(name="b", shape=[m], dtype="float32", append_batch_size=False)
        inputs["Bias"] = ["b"]
        feed["b"] = rng.uniform(-1, 1, (m,)).astype("float32")
    if residual:
        tide.layers.data(name="r", shape=[n, m, oh, ow], dtype="float32", append_batch_size=False)
        inputs["ResidualData"] = ["r"]
        feed["r"] = rng.uniform(-1, 1, (n, m, oh, ow)).astype("float32")
    out = block.create_var(name="out", dtype="float32")
    block.append_op(
        "fused_conv2d",
        inputs=inputs,
        outputs={"Output": [out.name]},
        attrs={
            "strides": [stride, stride],
            "paddings": [pad, pad],
            "groups": groups,
            "fuse_activation": "relu" if relu else "",
            "fuse_residual_connection": residual,
        },
    )
    (got,) = run_with(lib, exe, main, feed, [out])
    ks = kernels(exe, "fused_conv2d")
    assert ks and all(("mkldnn" in s) == (lib == "mkldnn") for s in ks), ks
    want = conv_ref(feed["x"], feed["f"], stride, pad, groups)
    if bias:
        want += feed["b"].astype(np.float64).reshape(1, m, 1, 1)
    if residual:
        want += feed["r"]
    if relu:
        want = np.maximum(want, 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lib", LIBS)
def test_fused_conv2d_nhwc_and_blocked_residual(lib, fresh_programs, exe, rng):
    """NHWC data_format (bias per channel, residual [N, H, W, M]); and, NCHW, a residual that is
    another conv's (blocked, under oneDNN) output."""
    main, _ = fresh_programs
    block = main.global_block()
    x = tide.layers.data(name="x", shape=[2, 5, 5, 8], dtype="float32", append_batch_size=False)
    tide.layers.data(name="f", shape=[16, 8, 3, 3], dtype="float32", append_batch_size=False)
    tide.layers.data(name="b", shape=[16], dtype="float32", append_batch_size=False)
    tide.layers.data(name="r", shape=[2, 5, 5, 16], dtype="float32", append_batch_size=False)
    xc = tide.layers.data(name="xc", shape=[2, 16, 5, 5], dtype="float32", append_batch_size=False)
    tide.layers.data(name="f2", shape=[16, 16, 3, 3], dtype="float32", append_batch_size=False)
    block.create_var(name="out", dtype="float32")
    block.append_op(
        "fused_conv2d",
        inputs={"Input": [x.name], "Filter": ["f"], "Bias": ["b"], "ResidualData": ["r"]},
        outputs={"Output": ["out"]},
        attrs={
            "paddings": [1, 1],
            "data_format": "NHWC",
            "fuse_activation": "relu",
            "fuse_residual_connection": True,
        },
    )
    res = tide.layers.conv2d(xc, num_filters=16, filter_size=1, bias_attr=False)
    block.create_var(name="out2", dtype="float32")
    block.append_op(
        "fused_conv2d",
        inputs={"Input": [xc.name], "Filter": ["f2"], "ResidualData": [res.name]},
        outputs={"Output": ["out2"]},
        attrs={"paddings": [1, 1], "fuse_residual_connection": True},
    )
    feed = {
        "x": rng.uniform(-1, 1, (2, 5, 5, 8)).astype("float32"),
        "f": rng.uniform(-1, 1, (16, 8, 3, 3)).astype("float32"),
        "b": rng.uniform(-1, 1, (16,)).astype("float32"),
        "r": rng.uniform(-1, 1, (2, 5, 5, 16)).astype("float32"),
        "xc": rng.uniform(-1, 1, (2, 16, 5, 5)).astype("float32"),
        "f2": rng.uniform(-1, 1, (16, 16, 3, 3)).astype("float32"),
    }
    exe.run(tide.default_startup_program())
    w_res = np.array(
        tide.global_scope()
        .find_var([o for o in main.global_block().ops if o.type == "conv2d"][0].input("Filter")[0])
        .get_tensor()
    )
    got, got2 = run_with(lib, exe, main, feed, ["out", "out2"])
    x_nchw = feed["x"].transpose(0, 3, 1, 2)
    want = conv_ref(x_nchw, feed["f"], 1, 1, 1) + feed["b"].reshape(1, 16, 1, 1)
    want = np.maximum(want + feed["r"].transpose(0, 3, 1, 2), 0).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    want2 = conv_ref(feed["xc"], feed["f2"], 1, 1, 1) + conv_ref(feed["xc"], w_res, 1, 0, 1)
    np.testing.assert_allclose(got2, want2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("residual_from", ["plain_op", "conv"])
def test_fused_conv2d_in_place_residual(lib, residual_from, fresh_programs, exe, rng):
    """Output is ResidualData's own variable (what the transpiler makes): the residual is read
    before it is overwritten, whether it arrives plain (a scale op's output) or in the format
    the convolution writes (a conv's output, blocked under oneDNN)."""
    main, _ = fresh_programs
    block = main.global_block()
    x = tide.layers.data(name="x", shape=[2, 8, 6, 6], dtype="float32", append_batch_size=False)
    tide.layers.data(name="f", shape=[8, 8, 3, 3], dtype="float32", append_batch_size=False)
    tide.layers.data(name="b", shape=[8], dtype="float32", append_batch_size=False)
    src = tide.layers.data(name="src", shape=[2, 8, 6, 6], dtype="float32", append_batch_size=False)
    tide.layers.data(name="g", shape=[8, 8, 1, 1], dtype="float32", append_batch_size=False)
    if residual_from == "plain_op":
        r = tide.layers.scale(src, scale=2.0)
    else:
        r = block.create_var(name="r", dtype="float32")
        block.append_op(
            "conv2d", inputs={"Input": [src.name], "Filter": ["g"]}, outputs={"Output": [r.name]}
        )
    block.append_op(
        "fused_conv2d",
        inputs={"Input": [x.name], "Filter": ["f"], "Bias": ["b"], "ResidualData": [r.name]},
        outputs={"Output": [r.name]},
        attrs={"paddings": [1, 1], "fuse_activation": "relu", "fuse_residual_connection": True},
    )
    feed = {
        n: rng.uniform(-1, 1, shape).astype("float32")
        for n, shape in (
            ("x", (2, 8, 6, 6)),
            ("f", (8, 8, 3, 3)),
            ("b", (8,)),
            ("src", (2, 8, 6, 6)),
            ("g", (8, 8, 1, 1)),
        )
    }
    for _ in range(2):  # the second run reads the residual the first one did not change
        (got,) = run_with(lib, exe, main, feed, [r])
    res = (
        2.0 * feed["src"]
        if residual_from == "plain_op"
        else conv_ref(feed["src"], feed["g"], 1, 0, 1)
    )
    want = conv_ref(feed["x"], feed["f"], 1, 1, 1) + feed["b"].reshape(1, 8, 1, 1) + res
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-5, atol=1e-5)


def sigm(v):
    return 1 / (1 + np.exp(-v))


def gelu_erf(v):
    from math import erf

    return 0.5 * v * (1 + np.vectorize(erf)(v / np.sqrt(2)))


def gelu_tanh(v):
    return 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v**3)))


def softplus(v):
    return np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))


# (id, fuse_activation, fuse_alpha, fuse_beta, float64 reference): Paddle's meaning of alpha and
# beta for each (its oneDNN kernel's eltwise post-op), written here from Fluid's formulas.
FUSED_ACTS = [
    ("relu", "relu", 0.0, 0.0, lambda v: np.maximum(v, 0)),
    ("leaky_relu", "leaky_relu", 0.1, 0.0, lambda v: np.where(v > 0, v, 0.1 * v)),
    ("relu6", "relu6", 0.0, 6.0, lambda v: np.clip(v, 0, 6)),
    ("relu6_threshold", "relu6", 0.0, 0.5, lambda v: np.clip(v, 0, 0.5)),
    ("relu6_older_paddle", "relu6", 0.5, 0.0, lambda v: np.clip(v, 0, 0.5)),
    ("clip", "clip", -0.3, 0.4, lambda v: np.clip(v, -0.3, 0.4)),
    ("swish", "swish", 1.0, 0.0, lambda v: v * sigm(v)),
    ("swish_beta", "swish", 2.5, 0.0, lambda v: v * sigm(2.5 * v)),
    ("hard_sigmoid", "hard_sigmoid", 0.3, 0.4, lambda v: np.clip(0.3 * v + 0.4, 0, 1)),
    ("hard_swish", "hard_swish", 1 / 6, 0.5, lambda v: v * np.clip(v + 3, 0, 6) / 6),
    ("hard_swish_older_paddle", "hard_swish", 0.0, 0.0, lambda v: v * np.clip(v + 3, 0, 6) / 6),
    ("sigmoid", "sigmoid", 0.0, 0.0, sigm),
    ("tanh", "tanh", 0.0, 0.0, np.tanh),
    ("abs", "abs", 0.0, 0.0, np.abs),
    ("mish", "mish", 0.0, 0.0, lambda v: v * np.tanh(softplus(v))),
    ("gelu", "gelu", 0.0, 0.0, gelu_erf),
    ("gelu_erf", "gelu_erf", 0.0, 0.0, gelu_erf),
    ("gelu_tanh", "gelu_tanh", 0.0, 0.0, gelu_tanh),
    ("sqrt", "sqrt", 0.0, 0.0, np.sqrt),
]


def fused_conv_program(block, act, alpha, beta, residual):
    """fused_conv2d(x, f, Bias b[, ResidualData r]) with the activation: out."""
    for name, shape in (
        ("x", [2, 8, 6, 6]),
        ("f", [16, 8, 3, 3]),
        ("b", [16]),
        ("r", [2, 16, 6, 6]),
    ):
        tide.layers.data(name=name, shape=shape, dtype="float32", append_batch_size=False)
    block.create_var(name="out", dtype="float32")
    inputs = {"Input": ["x"], "Filter": ["f"], "Bias": ["b"]}
    if residual:
        inputs["ResidualData"] = ["r"]
    block.append_op(
        "fused_conv2d",
        inputs=inputs,
        outputs={"Output": ["out"]},
        attrs={
            "paddings": [1, 1],
            "fuse_activation": act,
            "fuse_alpha": alpha,
            "fuse_beta": beta,
            "fuse_residual_connection": residual,
        },
    )


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("residual", [False, True], ids=["bias", "bias_residual"])
@pytest.mark.parametrize("act", FUSED_ACTS, ids=[a[0] for a in FUSED_ACTS])
def test_fused_conv2d_activations(act, residual, lib, fresh_programs, exe, rng):
    _, name, alpha, beta, ref = act
    main, _ = fresh_programs
    fused_conv_program(main.global_block(), name, alpha, beta, residual)
    lo = 0 if name == "sqrt" else -1  # sqrt of a sum of non-negative terms
    feed = {
        "x": rng.uniform(lo, 1, (2, 8, 6, 6)),
        "f": rng.uniform(lo, 1, (16, 8, 3, 3)) / 4,
        "b": rng.uniform(lo, 1, (16,)),
        "r": rng.uniform(lo, 1, (2, 16, 6, 6)),
    }
    feed = {k: v.astype("float32") for k, v in feed.items()}
    (got,) = run_with(lib, exe, main, feed, ["out"])
    ks = kernels(exe, "fused_conv2d")
    assert ks and all(("mkldnn" in s) == (lib == "mkldnn") for s in ks), ks
    pre = conv_ref(feed["x"], feed["f"], 1, 1, 1) + feed["b"].astype(np.float64).reshape(
        1, 16, 1, 1
    )
    if residual:
        pre += feed["r"]
    assert pre.min() < -0.5 or name == "sqrt", "the activations' negative side is exercised"
    want = ref(pre)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(want).max()))


def test_fused_conv2d_activation_onednn_cannot_compute(fresh_programs, exe, rng):
    """hard_swish with other than Fluid's defaults: oneDNN 2.6's hardswish has no parameters, so
    its kernel declines the run (UNIMPLEMENTED, naming the op and the values) and the plain
    kernel, X min(max(alpha X + beta, 0), 1), runs it instead: never a different result."""
    if not has_mkldnn():
        pytest.skip("device_mkldnn is not loaded")
    main, _ = fresh_programs
    fused_conv_program(main.global_block(), "hard_swish", 0.25, 0.4, False)
    feed = {
        "x": rng.uniform(-1, 1, (2, 8, 6, 6)),
        "f": rng.uniform(-1, 1, (16, 8, 3, 3)) / 4,
        "b": rng.uniform(-1, 1, (16,)),
    }
    feed = {k: v.astype("float32") for k, v in feed.items()}
    pre = conv_ref(feed["x"], feed["f"], 1, 1, 1) + feed["b"].astype(np.float64).reshape(
        1, 16, 1, 1
    )
    for lib in ("mkldnn", "plain"):
        (got,) = run_with(lib, exe, main, feed, ["out"])
        assert all("plain" in k for k in kernels(exe, "fused_conv2d")), kernels(exe, "fused_conv2d")
        np.testing.assert_allclose(got, pre * np.clip(0.25 * pre + 0.4, 0, 1), rtol=1e-5, atol=1e-5)


def test_fused_conv2d_refuses_what_it_does_not_implement(fresh_programs):
    main, _ = fresh_programs
    block = main.global_block()
    tide.layers.data(name="x", shape=[1, 4, 5, 5], dtype="float32", append_batch_size=False)
    tide.layers.data(name="f", shape=[4, 4, 3, 3], dtype="float32", append_batch_size=False)
    tide.layers.data(name="r", shape=[1, 4, 3, 3], dtype="float32", append_batch_size=False)
    block.create_var(name="out", dtype="float32")
    with pytest.raises(tide.TideError, match="fused_conv2d.*fuse_activation.*'softmax'"):
        block.append_op(
            "fused_conv2d",
            inputs={"Input": ["x"], "Filter": ["f"]},
            outputs={"Output": ["out"]},
            attrs={"fuse_activation": "softmax"},
        )
    with pytest.raises(tide.TideError, match="fuse_residual_connection is false"):
        block.append_op(
            "fused_conv2d",
            inputs={"Input": ["x"], "Filter": ["f"], "ResidualData": ["r"]},
            outputs={"Output": ["out"]},
        )
    with pytest.raises(tide.TideError, match="ResidualData is absent"):
        block.append_op(
            "fused_conv2d",
            inputs={"Input": ["x"], "Filter": ["f"]},
            outputs={"Output": ["out"]},
            attrs={"fuse_residual_connection": True},
        )
    with pytest.raises(tide.TideError, match="fuse_brelu"):
        block.append_op(
            "fused_conv2d",
            inputs={"Input": ["x"], "Filter": ["f"]},
            outputs={"Output": ["out"]},
            attrs={"fuse_brelu": True},
        )
    # conv2d itself still refuses Paddle's fusions (not every device's kernel implements them).
    with pytest.raises(tide.TideError, match="fuse_relu"):
        block.append_op(
            "conv2d",
            inputs={"Input": ["x"], "Filter": ["f"]},
            outputs={"Output": ["out"]},
            attrs={"fuse_relu": True},
        )


# --- the transpiler ----------------------------------------------------------------------------


def resnet_like(x):
    """stem conv+bn+relu, a bottleneck with a projection shortcut (conv+bn) and one with an
    identity shortcut, a conv with a bias + relu, pooling and an fc: every pattern once."""

    def conv_bn(inp, filters, size, stride=1, act=None):
        c = tide.layers.conv2d(
            inp,
            num_filters=filters,
            filter_size=size,
            stride=stride,
            padding=(size - 1) // 2,
            bias_attr=False,
        )
        return tide.layers.batch_norm(c, act=act, is_test=True)

    h = conv_bn(x, 16, 3, act="relu")
    for proj in (True, False):
        a = conv_bn(h, 8, 1, act="relu")
        a = conv_bn(a, 8, 3, act="relu")
        a = conv_bn(a, 32, 1)
        short = conv_bn(h, 32, 1) if proj else h
        h = tide.layers.relu(tide.layers.elementwise_add(a, short))
    h = tide.layers.conv2d(h, num_filters=16, filter_size=3, padding=1, act="relu")
    h = tide.layers.pool2d(h, pool_size=2, pool_type="avg", global_pooling=True)
    return tide.layers.fc(h, size=10)


def randomize_batch_norms(program, scope, rng):
    """Non-trivial running statistics and affine parameters."""
    for op in program.global_block().ops:
        if op.type != "batch_norm":
            continue
        for p, lo, hi in (
            ("Scale", 0.5, 1.5),
            ("Bias", -0.5, 0.5),
            ("Mean", -0.3, 0.3),
            ("Variance", 0.5, 2.0),
        ):
            t = scope.find_var(op.input(p)[0]).get_tensor()
            t.set(rng.uniform(lo, hi, t.shape()).astype("float32"), tide.CPUPlace(), False)


def op_types(program):
    return [op.type for op in program.global_block().ops]


@pytest.mark.parametrize("lib", LIBS)
def test_transpiler_fuses_and_matches(lib, fresh_programs, exe, rng, capfd, core_flags):
    main, startup = fresh_programs
    x = tide.layers.data(name="x", shape=[3, 12, 12], dtype="float32")
    y = resnet_like(x)
    exe.run(startup)
    scope = tide.global_scope()
    randomize_batch_norms(main, scope, rng)
    feed = {"x": rng.uniform(-1, 1, (2, 3, 12, 12)).astype("float32")}
    test_program = main.clone(for_test=True)
    other = main.clone(for_test=True)  # shares the parameters: must not see the folding
    (want,) = run_with(lib, exe, test_program, feed, [y])
    before = op_types(test_program)
    removed = tide.transpiler.InferenceTranspiler().transpile(test_program, tide.CPUPlace(), scope)
    (again,) = run_with(lib, exe, other, feed, [y])
    np.testing.assert_array_equal(again, want)
    after = op_types(test_program)
    assert removed == len(before) - len(after) > 0
    assert "batch_norm" not in after and "relu" not in after and "conv2d" not in after, after
    # 9 convs: 8 batch_norms + 8 relus + 2 residual adds + 1 conv bias add are gone (the fc's
    # bias add after its mul stays).
    assert after.count("fused_conv2d") == 9 and before.count("conv2d") == 9
    assert removed == 8 + 8 + 2 + 1, (before, after)
    # The identity shortcut's residual is overwritten in place (nothing reads it afterwards).
    in_place = [
        op
        for op in test_program.global_block().ops
        if op.type == "fused_conv2d"
        and op.input("ResidualData")
        and op.input("ResidualData") == op.output("Output")
    ]
    assert len(in_place) == 2, [op.to_string() for op in test_program.global_block().ops]
    # fused_conv2d declares ResidualData / Output in place: the core copies no residual for
    # its kernel (which sums where the residual lies)
    core_flags(log_kernels=True)
    capfd.readouterr()
    (got,) = run_with(lib, exe, test_program, feed, [y])
    assert "its kernel reads a copy" not in capfd.readouterr().err
    assert all(("mkldnn" in k) == (lib == "mkldnn") for k in kernels(exe, "fused_conv2d"))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("fuse_ops", [True, False])
def test_transpiler_nhwc_and_without_fused_ops(fuse_ops, fresh_programs, exe, rng):
    """NHWC conv + batch_norm folds too (the bias on the last axis); fuse_ops=False (what a GPU
    place gets: fused_conv2d has CPU kernels only) folds batch_norm into the Filter and a bias
    add, Fluid's way, and fuses nothing else."""
    main, startup = fresh_programs
    x = tide.layers.data(name="x", shape=[7, 7, 4], dtype="float32")
    c = tide.layers.conv2d(
        x, num_filters=8, filter_size=3, padding=1, bias_attr=False, data_format="NHWC"
    )
    b = tide.layers.batch_norm(c, is_test=True, data_layout="NHWC", act="relu")
    c2 = tide.layers.conv2d(b, num_filters=8, filter_size=1, bias_attr=False)
    y = tide.layers.batch_norm(c2, is_test=True)
    exe.run(startup)
    scope = tide.global_scope()
    randomize_batch_norms(main, scope, rng)
    feed = {"x": rng.uniform(-1, 1, (2, 7, 7, 4)).astype("float32")}
    (want,) = exe.run(main, feed=feed, fetch_list=[y])
    tide.transpiler.InferenceTranspiler().transpile(
        main, tide.CPUPlace(), scope, keep=[y], fuse_ops=fuse_ops
    )
    types = op_types(main)
    assert "batch_norm" not in types
    if fuse_ops:
        assert types.count("fused_conv2d") == 2 and "relu" not in types, types
    else:
        assert types.count("conv2d") == 2 and types.count("elementwise_add") == 2, types
        assert "relu" in types and "fused_conv2d" not in types
    (got,) = exe.run(main, feed=feed, fetch_list=[y])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_transpiler_keeps_what_is_read_elsewhere(fresh_programs, exe, rng):
    """A fetched conv output is not folded into its batch_norm; a relu whose input is fetched
    stays; a batch_norm in training mode is not folded."""
    main, startup = fresh_programs
    x = tide.layers.data(name="x", shape=[4, 6, 6], dtype="float32")
    c1 = tide.layers.conv2d(x, num_filters=8, filter_size=3, padding=1, bias_attr=False)
    b1 = tide.layers.batch_norm(c1, is_test=True)
    c2 = tide.layers.conv2d(b1, num_filters=8, filter_size=3, padding=1, bias_attr=False)
    b2 = tide.layers.batch_norm(c2, is_test=False)
    c3 = tide.layers.conv2d(b2, num_filters=8, filter_size=1, bias_attr=False)
    r3 = tide.layers.relu(c3)
    exe.run(startup)
    scope = tide.global_scope()
    randomize_batch_norms(main, scope, rng)
    feed = {"x": rng.uniform(-1, 1, (2, 4, 6, 6)).astype("float32")}
    want = exe.run(main, feed=feed, fetch_list=[c1, c3, r3])
    # The training-mode batch_norm updated its running statistics: start again from them.
    randomize_batch_norms(main, scope, np.random.RandomState(7))
    want = exe.run(main, feed=feed, fetch_list=[c1, c3, r3])
    randomize_batch_norms(main, scope, np.random.RandomState(7))
    tide.transpiler.InferenceTranspiler().transpile(main, tide.CPUPlace(), scope, keep=[c1, c3])
    assert op_types(main).count("batch_norm") == 2, op_types(main)
    assert "relu" in op_types(main)
    got = exe.run(main, feed=feed, fetch_list=[c1, c3, r3])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("reshape_op", ["reshape2", "unsqueeze2"])
def test_transpiler_folds_a_reshaped_bias(reshape_op, lib, fresh_programs, exe, rng):
    """Paddle 2.x's dygraph-to-static conv: conv2d, then elementwise_add of its bias reshaped to
    [1, M, 1, 1] (axis -1), then relu: one fused_conv2d with the bias as its [M] Bias, the
    reshape folded, no variable of the folding left over; a reshaped bias that is fetched stays."""
    main, startup = fresh_programs
    block = main.global_block()
    x = tide.layers.data(name="x", shape=[4, 6, 6], dtype="float32")
    c = tide.layers.conv2d(x, num_filters=8, filter_size=3, padding=1, bias_attr=False)
    b = tide.layers.create_parameter([8], "float32", name="conv_b")
    shaped = block.create_var(name="conv_b_shaped", dtype="float32")
    if reshape_op == "reshape2":
        xshape = block.create_var(name="conv_b_xshape", dtype="float32")
        block.append_op(
            type="reshape2",
            inputs={"X": [b]},
            outputs={"Out": [shaped], "XShape": [xshape]},
            attrs={"shape": [1, 8, 1, 1]},
        )
    else:
        block.append_op(
            type="unsqueeze2",
            inputs={"X": [b]},
            outputs={"Out": [shaped], "XShape": [block.create_var(name="xs", dtype="float32")]},
            attrs={"axes": [0, 2, 3]},
        )
    y = tide.layers.relu(tide.layers.elementwise_add(c, shaped, axis=-1))
    exe.run(startup)
    scope = tide.global_scope()
    scope.find_var("conv_b").get_tensor().set(
        rng.uniform(-1, 1, 8).astype("float32"), tide.CPUPlace(), False
    )
    feed = {"x": rng.uniform(-1, 1, (2, 4, 6, 6)).astype("float32")}
    (want,) = run_with(lib, exe, main, feed, [y])
    kept = main.clone()
    persistables = {v.name for v in main.global_block().vars.values() if v.persistable}
    tide.transpiler.InferenceTranspiler().transpile(main, tide.CPUPlace(), scope, keep=[y])
    assert [t for t in op_types(main) if t not in ("feed", "fetch")] == ["fused_conv2d"]
    (conv,) = [op for op in main.global_block().ops if op.type == "fused_conv2d"]
    assert conv.attr("fuse_activation") == "relu"
    (bias,) = conv.input("Bias")
    assert list(main.global_block().var(bias).shape) == [8]
    made = {v.name for v in main.global_block().vars.values() if v.persistable} - persistables
    assert made == {bias}, made  # the reshaped [1, 8, 1, 1] copy is gone, from the scope too
    assert all(scope.find_var(n) is None for n in made if "shaped" in n and n != bias)
    (got,) = run_with(lib, exe, main, feed, [y])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Fetched, the reshaped bias keeps its op.
    tide.transpiler.InferenceTranspiler().transpile(kept, tide.CPUPlace(), scope, keep=[shaped, y])
    assert reshape_op in op_types(kept)


@pytest.mark.parametrize("lib", LIBS)
def test_transpiler_residual_that_is_the_conv_input(lib, fresh_programs, exe, rng):
    """z = 2 relu(conv(h) + h): the residual is the conv's own Input, so it is not overwritten
    in place (the convolution still reads it)."""
    main, startup = fresh_programs
    x = tide.layers.data(name="x", shape=[8, 6, 6], dtype="float32")
    h = tide.layers.scale(x, scale=0.5)
    c = tide.layers.conv2d(h, num_filters=8, filter_size=3, padding=1, bias_attr=False)
    y = tide.layers.relu(tide.layers.elementwise_add(c, h))
    z = tide.layers.scale(y, scale=2.0)
    exe.run(startup)
    feed = {"x": rng.uniform(-1, 1, (2, 8, 6, 6)).astype("float32")}
    (want,) = run_with(lib, exe, main, feed, [z])
    tide.transpiler.InferenceTranspiler().transpile(
        main, tide.CPUPlace(), tide.global_scope(), keep=[z]
    )
    fused = [op for op in main.global_block().ops if op.type == "fused_conv2d"]
    assert len(fused) == 1 and fused[0].input("ResidualData") == [h.name]
    assert fused[0].output("Output") == [y.name]
    (got,) = run_with(lib, exe, main, feed, [z])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lib", LIBS)
def test_transpiler_leaves_a_relu_that_overwrites_the_conv_input(lib, fresh_programs, exe, rng):
    """A program that reuses names (as memory_optimize makes): relu(conv(h)) written back into
    h. Fused, the convolution would overwrite its own Input as it reads it: left alone."""
    main, startup = fresh_programs
    block = main.global_block()
    x = tide.layers.data(name="x", shape=[8, 6, 6], dtype="float32")
    h = tide.layers.scale(x, scale=0.5)
    c = tide.layers.conv2d(h, num_filters=8, filter_size=3, padding=1, bias_attr=False)
    block.append_op("relu", inputs={"X": [c.name]}, outputs={"Out": [h.name]})
    z = tide.layers.scale(h, scale=2.0)
    exe.run(startup)
    feed = {"x": rng.uniform(-1, 1, (2, 8, 6, 6)).astype("float32")}
    (want,) = run_with(lib, exe, main, feed, [z])
    tide.transpiler.InferenceTranspiler().transpile(
        main, tide.CPUPlace(), tide.global_scope(), keep=[z]
    )
    assert "relu" in op_types(main), op_types(main)
    (got,) = run_with(lib, exe, main, feed, [z])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# (id, activation op, its attributes, the (fuse_activation, fuse_alpha, fuse_beta) Paddle's
# conv_activation_mkldnn_fuse_pass writes, or None where the transpiler must leave it alone).
TRANSPILED_ACTS = [
    ("relu", "relu", {}, ("relu", 0.0, 0.0)),
    ("leaky_relu", "leaky_relu", {"alpha": 0.1}, ("leaky_relu", 0.1, 0.0)),
    ("relu6", "relu6", {}, ("relu6", 0.0, 6.0)),
    ("relu6_threshold", "relu6", {"threshold": 0.5}, ("relu6", 0.0, 0.5)),
    ("swish", "swish", {}, ("swish", 1.0, 0.0)),
    ("swish_beta", "swish", {"beta": 2.5}, ("swish", 2.5, 0.0)),
    ("hard_swish", "hard_swish", {}, ("hard_swish", 1 / 6, 0.5)),
    ("hard_swish_not_default", "hard_swish", {"threshold": 4.0, "scale": 5.0, "offset": 2.0}, None),
    ("hard_sigmoid", "hard_sigmoid", {"slope": 0.3, "offset": 0.4}, ("hard_sigmoid", 0.3, 0.4)),
    ("sigmoid", "sigmoid", {}, ("sigmoid", 0.0, 0.0)),
    ("tanh", "tanh", {}, ("tanh", 0.0, 0.0)),
    ("abs", "abs", {}, ("abs", 0.0, 0.0)),
    ("sqrt", "sqrt", {}, ("sqrt", 0.0, 0.0)),
    ("gelu", "gelu", {"approximate": False}, ("gelu_erf", 0.0, 0.0)),
    ("gelu_approximate", "gelu", {"approximate": True}, ("gelu_tanh", 0.0, 0.0)),
    ("clip", "clip", {"min": -0.3, "max": 0.4}, ("clip", -0.3, 0.4)),
    ("clip_min_above_max", "clip", {"min": 0.4, "max": -0.3}, None),  # clip's error stays
]


def run_or_error(lib, exe, program, feed, fetch_list, error):
    """run_with's results, or None after the TideError matching `error` (when one is given)."""
    if error is None:
        return run_with(lib, exe, program, feed, fetch_list)
    with pytest.raises(tide.TideError, match=error):
        run_with(lib, exe, program, feed, fetch_list)
    return [None]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("residual", [False, True], ids=["conv_bias", "conv_bias_residual"])
@pytest.mark.parametrize("case", TRANSPILED_ACTS, ids=[c[0] for c in TRANSPILED_ACTS])
def test_transpiler_fuses_each_activation(case, residual, lib, fresh_programs, exe, rng):
    """act(conv + bias [+ residual]) becomes one fused_conv2d with Paddle's fuse_activation /
    fuse_alpha / fuse_beta, and computes what the unfused program does; an activation the fused
    op cannot compute as the op does stays."""
    _, act, attrs, fused = case
    main, startup = fresh_programs
    block = main.global_block()
    x = tide.layers.data(name="x", shape=[8, 6, 6], dtype="float32")
    h = tide.layers.conv2d(x, num_filters=16, filter_size=3, padding=1)  # + a bias add
    if residual:
        r = tide.layers.data(name="r", shape=[16, 6, 6], dtype="float32")
        h = tide.layers.elementwise_add(h, r)
    y = block.create_var(name="y", dtype="float32")
    block.append_op(act, inputs={"X": [h.name]}, outputs={"Out": [y.name]}, attrs=attrs)
    exe.run(startup)
    lo = 0 if act == "sqrt" else -1  # sqrt of a sum of non-negative terms
    for op in block.ops:  # random weights and bias, non-negative for sqrt
        for p in (
            op.input("Filter")
            if op.type == "conv2d"
            else op.input("Y")
            if op.type == "elementwise_add" and op.input("Y")[0] != "r"
            else []
        ):
            t = tide.global_scope().find_var(p).get_tensor()
            t.set(rng.uniform(lo, 1, t.shape()).astype("float32") / 4, tide.CPUPlace(), False)
    feed = {
        "x": rng.uniform(lo, 1, (2, 8, 6, 6)).astype("float32"),
        "r": rng.uniform(lo, 1, (2, 16, 6, 6)).astype("float32"),
    }
    if not residual:
        del feed["r"]
    error = (
        "op 'clip': min .* must not exceed max"
        if attrs.get("min", 0) > attrs.get("max", 0)
        else None
    )
    (want,) = run_or_error(lib, exe, main, feed, [y], error)
    tide.transpiler.InferenceTranspiler().transpile(
        main, tide.CPUPlace(), tide.global_scope(), keep=[y]
    )
    types = op_types(main)
    convs = [op for op in block.ops if op.type == "fused_conv2d"]
    assert len(convs) == 1 and "conv2d" not in types and "elementwise_add" not in types, types
    conv = convs[0]
    assert bool(conv.input("ResidualData")) == residual and conv.input("Bias")
    if fused is None:
        assert act in types and conv.attr("fuse_activation") == "", types
    else:
        assert types == ["fused_conv2d"], types
        assert conv.output("Output") == [y.name]
        name, alpha, beta = fused
        assert conv.attr("fuse_activation") == name
        assert conv.attr("fuse_alpha") == pytest.approx(alpha, rel=1e-7)
        assert conv.attr("fuse_beta") == pytest.approx(beta, rel=1e-7)
    (got,) = run_or_error(lib, exe, main, feed, [y], error)
    if error is None:
        assert all(("mkldnn" in k) == (lib == "mkldnn") for k in kernels(exe, "fused_conv2d"))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(want).max()))


SOURCE = os.environ.get("TIDE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "paddle")


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_paddle_models_with_and_without_the_pass(name, lib):
    """load_inference_model optimises by default: the fused program has no batch_norm and far
    fewer ops, and its output is the unoptimised one's within 1e-5 relative."""
    d = os.path.join(FIXTURES, name)
    feed = np.load(os.path.join(d, "input.npy"))
    outs, ops = {}, {}
    for optimize in (False, True):
        with tide.scope_guard(tide.Scope()):
            exe = tide.Executor(tide.CPUPlace())
            program, feeds, fetches = tide.io.load_inference_model(
                os.path.join(d, "inference"), exe, optimize=optimize
            )
            (outs[optimize],) = run_with(lib, exe, program, {feeds[0]: feed}, fetches)
            ops[optimize] = op_types(program)
    assert "batch_norm" in ops[False] and "batch_norm" not in ops[True]
    assert len(ops[True]) < len(ops[False]) * 0.6, (len(ops[True]), len(ops[False]))
    # Every conv's activation is fused (MobileNetV2's 35 relu6: 157 ops -> 59, not 94).
    assert not {"relu", "relu6", "conv2d", "depthwise_conv2d"} & set(ops[True]), ops[True]
    if name == "mobilenet_v2":
        assert ops[False].count("relu6") == 35 and len(ops[True]) == len(ops[False]) - 98
    ref = outs[False]
    np.testing.assert_allclose(outs[True], ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_load_twice_into_one_scope_and_params_dropped():
    """load_inference_model optimises into new parameter variables and drops the originals it
    loaded and no longer needs; a second load of the same model into the same scope leaves the
    first program's results unchanged."""
    d = os.path.join(FIXTURES, "resnet18")
    feed = np.load(os.path.join(d, "input.npy"))
    with tide.scope_guard(tide.Scope()):
        scope = tide.global_scope()
        exe = tide.Executor(tide.CPUPlace())
        p1, feeds, fetches = tide.io.load_inference_model(os.path.join(d, "inference"), exe)
        (first,) = exe.run(p1, feed={feeds[0]: feed}, fetch_list=fetches)
        filters = {
            op.input("Filter")[0] for op in p1.global_block().ops if op.type == "fused_conv2d"
        }
        names = set(scope.local_var_names())
        assert filters <= names and all(
            f.endswith(tuple("0123456789")) and "_bn_folded" in f for f in filters
        )
        assert not any(n.startswith("batch_norm") and n.endswith(".w_1") for n in names), (
            "the folded batch_norms' running means are dropped"
        )
        p2, feeds2, fetches2 = tide.io.load_inference_model(os.path.join(d, "inference"), exe)
        (second,) = exe.run(p2, feed={feeds2[0]: feed}, fetch_list=fetches2)
        (again,) = exe.run(p1, feed={feeds[0]: feed}, fetch_list=fetches)
    np.testing.assert_array_equal(again, first)
    np.testing.assert_array_equal(second, first)
