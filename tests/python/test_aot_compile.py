"""tide.aot.compile (issue 34, part 2; docs/aot.md): a frozen plan written as C++ source, built
with the system compiler through its CMakeLists.txt against the build tree's libtide_core and SDK
headers, and run as the example executable (model_main), gives outputs bit-identical
(np.array_equal) to the executor's on the same kernels: fit_a_line, the digits conv net, a
ResNet-ish net, the LSTM sentiment model (a LoD feed), a ResNet from a Paddle model fixture and
a transformer-ish net (matmul_v2, layer_norm, concat, softmax). The SDK's header-only kernels
(tide/kernels/) are called directly, so a model of only those ops (the conv nets, the Paddle ResNet
and the transformer-ish net included) loads no op pack, and an op outside the table still runs
through its plugin. The model loads only the plugins its plan names; a bad feed through the C API is a returned error naming the feed, the
dimension and the range, and another compile's params.bin is refused. One compile and build per
model."""

import ctypes
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from ctest_env import plugin_file
from test_fluid_model_ops import _resnet_cifar10, recognize_digits_conv_prediction
from test_paddle_models import model_path

import tide
from tide import layers

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import understand_sentiment  # noqa: E402

PLACE = tide.CPUPlace()

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None, reason="building a compiled model needs cmake"
)


def compile_and_build(tmp_path, program, feeds, fetches, shapes):
    """Freezes, compiles and builds; the source directory and the built model_main."""
    plan = str(tmp_path / "model.tideaot")
    tide.aot.freeze(program, feeds, fetches, PLACE, shapes, plan)
    src = tide.aot.compile(plan, str(tmp_path / "src"))
    assert sorted(os.listdir(src)) == sorted(
        ["CMakeLists.txt", "main.cc", "model.cc", "model.h", "params.bin"]
    )
    build = str(tmp_path / "build")
    cmake_build(src, build)
    return src, os.path.join(build, "model_main")


def cmake_build(src, build, extra=()):
    """Configures and builds the CMake project `src` into `build` against this tide (`extra`:
    more CMake arguments)."""
    args = (["-G", "Ninja"] if shutil.which("ninja") else []) + list(extra)
    if shutil.which("ccache"):
        args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    if os.environ.get("CXX"):
        args.append("-DCMAKE_CXX_COMPILER=" + os.environ["CXX"])
    for cmd in (
        ["cmake", "-S", src, "-B", build] + args + tide.aot.cmake_args(),
        ["cmake", "--build", build],
    ):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]


def run_main(main, tmp_path, inputs, *options):
    """model_main on `inputs` (arrays, saved as .npy); its outputs, read back."""
    out = tmp_path / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    files = []
    for i, x in enumerate(inputs):
        files.append(str(tmp_path / ("input_%d.npy" % i)))
        np.save(files[-1], x)
    p = subprocess.run(
        [main, "--out", str(out), "--quiet"] + list(options) + files,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    n = len([f for f in os.listdir(out) if f.startswith("output_")])
    return [np.load(out / ("output_%d.npy" % i)) for i in range(n)]


def assert_bit_identical(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        assert np.array_equal(g, w), np.abs(g - w).max()


def plugins_in(src):
    """The (name, file) rows of model.cc's plugin table."""
    text = open(os.path.join(src, "model.cc")).read()
    table = text.split("const TideAotPlugin kPlugins[] = {", 1)[1].split("};", 1)[0]
    return [
        tuple(s.strip() for s in row.strip(" \n{},").replace('"', "").split(","))
        for row in table.strip().split("\n")
        if row.strip()
    ]


def ops_in(src):
    """The (type, direct call or None) of each row of model.cc's op table: a direct call is the
    SDK's header-only kernel model.cc calls instead of resolving the op's kernel key."""
    text = open(os.path.join(src, "model.cc")).read()
    table = text.split("const TideAotOp kOps[] = {", 1)[1].split("\n};", 1)[0]
    rows = []
    for row in table.strip().split("\n"):
        m = re.match(r'\s*\{\d+u, "([^"]+)", .*, (nullptr|&tide::kernels::Direct<.*>)\},$', row)
        assert m, row
        rows.append((m.group(1), None if m.group(2) == "nullptr" else m.group(2)))
    return rows


# The SDK header of each op's kernel called directly (tide/kernels/registry.hpp).
HEADERS = {
    "mul": "mul.hpp",
    "fc": "fc.hpp",
    "elementwise_add": "elementwise.hpp",
    "relu": "activation.hpp",
    "softmax": "softmax.hpp",
    "matmul_v2": "matmul_v2.hpp",
    "layer_norm": "norm.hpp",
    "concat": "concat.hpp",
    "transpose": "transpose.hpp",
    "transpose2": "transpose.hpp",
    "scale": "scale.hpp",
    "conv2d": "conv.hpp",
    "depthwise_conv2d": "conv.hpp",
    "fused_conv2d": "conv.hpp",
    "pool2d": "pool.hpp",
    "batch_norm": "batch_norm.hpp",
    "reshape2": "reshape.hpp",
    "flatten": "reshape.hpp",
    "flatten2": "reshape.hpp",
    "flatten_contiguous_range": "reshape.hpp",
    "squeeze2": "reshape.hpp",
    "unsqueeze2": "reshape.hpp",
}


def infer_at_run_in(src):
    """Per row of model.cc's op table: whether the op infers its shapes at run time."""
    text = open(os.path.join(src, "model.cc")).read()
    table = text.split("const TideAotOp kOps[] = {", 1)[1].split("\n};", 1)[0]
    rows = []
    for row in table.strip().split("\n"):
        m = re.match(r'.*, "[^"]*", "[^"]*", (\d+), \d+, [^,]+, [^,]+\},$', row)
        assert m, row
        rows.append(m.group(1) == "1")
    return rows


def assert_called_directly(src, types):
    """Every op of `types` in model.cc is a direct call of its SDK header's kernel (included),
    none resolved by its key."""
    text = open(os.path.join(src, "model.cc")).read()
    ops = ops_in(src)
    for t, call in ops:
        if t in types:
            assert call is not None, (t, ops)
    for t in types:
        assert "#include <tide/kernels/%s>" % HEADERS[t] in text, t
    return ops


def test_fit_a_line_compiled_is_bit_identical_and_refuses_bad_feeds(tmp_path):
    x = layers.data(name="x", shape=[13], dtype="float32")
    y = layers.fc(input=x, size=1, act=None)
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    main = tide.default_main_program()
    src, model_main = compile_and_build(tmp_path, main, ["x"], [y], {"x": [(2, 16), 13]})
    rng = np.random.RandomState(0)
    for batch in (3, 16):
        xs = rng.standard_normal((batch, 13)).astype("float32")
        want = exe.run(main, feed={"x": xs}, fetch_list=[y])
        assert_bit_identical(run_main(model_main, tmp_path, [xs]), want)

    # mul and elementwise_add are called directly (the SDK's header-only kernels), so the plan
    # names the CPU device plugin alone, no op pack; a plugin directory holding just it is
    # enough.
    ops = assert_called_directly(src, {"mul", "elementwise_add"})
    assert sorted(t for t, _ in ops) == ["elementwise_add", "mul"], ops
    named = plugins_in(src)
    assert [n for n, _ in named] == ["device_cpu"], named
    only = tmp_path / "only"
    only.mkdir()
    for _, f in named:
        os.symlink(os.path.join(os.path.dirname(plugin_file("device_cpu")), f), only / f)
    xs = rng.standard_normal((4, 13)).astype("float32")
    got = run_main(model_main, tmp_path, [xs], "--plugins", str(only))
    assert_bit_identical(got, exe.run(main, feed={"x": xs}, fetch_list=[y]))

    # Bad feeds: the executable exits with the C API's message.
    def refused(x, *options):
        np.save(str(tmp_path / "bad.npy"), x)
        p = subprocess.run(
            [model_main, *options, str(tmp_path / "bad.npy")], capture_output=True, text=True
        )
        assert p.returncode == 1, p.stdout
        return p.stderr

    for batch in (1, 17):
        err = refused(np.zeros((batch, 13), "float32"))
        assert "feed 'x' dimension 0 is %d, outside the range [2, 16]" % batch in err, err
    assert "feed 'x' is float64; the plan was frozen for float32" in refused(
        np.zeros((3, 13), "float64")
    )
    assert "feed 'x' dimension 1 is 12; the plan was frozen for 13" in refused(
        np.zeros((3, 12), "float32")
    )
    assert "feed 'x' has dims [3, 13, 1]; the plan was frozen for rank 2" in refused(
        np.zeros((3, 13, 1), "float32")
    )
    err = refused(np.zeros((3, 13), "float32"), "--plugins", str(tmp_path))
    assert "needs plugin 'device_cpu' (libtide_device_cpu.so)" in err, err

    # The C API itself: a returned code (TIDE_OUT_OF_RANGE) and the message, no abort; and a
    # params.bin of another compile is refused at create.
    lib = ctypes.CDLL(os.path.join(os.path.dirname(model_main), "libmodel.so"))
    lib.tide_model_create.restype = ctypes.c_void_p
    lib.tide_model_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    lib.tide_model_last_error.restype = ctypes.c_char_p
    lib.tide_model_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    lib.tide_model_run.argtypes += [ctypes.c_void_p, ctypes.c_size_t]
    lib.tide_model_destroy.argtypes = [ctypes.c_void_p]
    model = lib.tide_model_create(src.encode(), None)
    assert model, lib.tide_model_last_error()

    class Tensor(ctypes.Structure):
        _fields_ = [
            ("data", ctypes.c_void_p),
            ("dtype", ctypes.c_int32),
            ("rank", ctypes.c_int32),
            ("dims", ctypes.POINTER(ctypes.c_int64)),
            ("lod", ctypes.POINTER(ctypes.c_uint64)),
            ("lod_size", ctypes.c_size_t),
        ]

    def run(xs):
        dims = (ctypes.c_int64 * xs.ndim)(*xs.shape)
        feed = Tensor(xs.ctypes.data, 5, xs.ndim, dims, None, 0)  # 5: TIDE_FP32
        out = Tensor()
        code = lib.tide_model_run(model, ctypes.byref(feed), 1, ctypes.byref(out), 1)
        return code, out

    code, out = run(np.zeros((20, 13), "float32"))
    assert code == 3, code  # TIDE_OUT_OF_RANGE
    assert b"feed 'x' dimension 0 is 20, outside the range [2, 16]" in lib.tide_model_last_error()
    xs = rng.standard_normal((5, 13)).astype("float32")
    code, out = run(xs)
    assert code == 0, lib.tide_model_last_error()
    got = np.ctypeslib.as_array(ctypes.cast(out.data, ctypes.POINTER(ctypes.c_float)), (5,))
    want = exe.run(main, feed={"x": xs}, fetch_list=[y])[0]
    assert [out.dims[i] for i in range(out.rank)] == [5, 1]
    assert np.array_equal(got.reshape(5, 1), want)
    lib.tide_model_destroy(model)

    other = tmp_path / "other"
    other.mkdir()
    params = bytearray(open(os.path.join(src, "params.bin"), "rb").read())
    params[8] ^= 1  # another id
    (other / "params.bin").write_bytes(bytes(params))
    assert not lib.tide_model_create(str(other).encode(), None)
    assert b"was written by another compile" in lib.tide_model_last_error()


def test_mlp_with_relu_softmax_and_scale_calls_every_kernel_directly(tmp_path):
    # fc (mul + elementwise_add) + relu twice, scale, fc + softmax: every op in the SDK's table
    # of header-only kernels, so the model loads no op pack at all.
    img = layers.data(name="img", shape=[64], dtype="float32")
    h = layers.fc(input=img, size=32, act="relu")
    h = layers.fc(input=h, size=16, act="relu")
    h = layers.scale(h, scale=0.5, bias=0.25)
    prediction = layers.fc(input=h, size=10, act="softmax")
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    test = tide.default_main_program().clone(for_test=True)
    src, model_main = compile_and_build(
        tmp_path, test, ["img"], [prediction], {"img": [(1, 32), 64]}
    )
    ops = assert_called_directly(src, {"mul", "elementwise_add", "relu", "scale", "softmax"})
    assert all(call is not None for _, call in ops), ops
    assert (
        "tide::kernels::UseHost(tide_aot_host_api());" in open(os.path.join(src, "model.cc")).read()
    )
    assert [n for n, _ in plugins_in(src)] == ["device_cpu"], plugins_in(src)
    rng = np.random.RandomState(2)
    for batch in (32, 1, 7):
        imgs = rng.standard_normal((batch, 64)).astype("float32")
        want = exe.run(test, feed={"img": imgs}, fetch_list=[prediction])
        assert_bit_identical(run_main(model_main, tmp_path, [imgs]), want)
    # The model runs with a plugin directory holding the CPU device plugin alone.
    only = tmp_path / "only"
    only.mkdir()
    os.symlink(plugin_file("device_cpu"), only / os.path.basename(plugin_file("device_cpu")))
    imgs = rng.standard_normal((5, 64)).astype("float32")
    want = exe.run(test, feed={"img": imgs}, fetch_list=[prediction])
    assert_bit_identical(run_main(model_main, tmp_path, [imgs], "--plugins", str(only)), want)


def test_paddles_fc_op_is_called_directly_from_ops_nns_header(tmp_path):
    # Paddle's fused fc (ops_nn's kernel: GEMM, bias and relu in one op) over rank-3 rows, then
    # softmax: both called directly, so neither ops_nn nor ops_math is loaded.
    x = layers.data(name="x", shape=[3, 16], dtype="float32")
    w = layers.create_parameter([16, 8], "float32", default_initializer=tide.initializer.Normal())
    b = layers.create_parameter(
        [8], "float32", is_bias=True, default_initializer=tide.initializer.Uniform(-1, 1)
    )
    block = tide.default_main_program().global_block()
    fc_out = block.create_var(name="fc_out", dtype="float32")
    block.append_op(
        "fc",
        inputs={"Input": [x.name], "W": [w.name], "Bias": [b.name]},
        outputs={"Out": [fc_out.name]},
        attrs={"in_num_col_dims": 2, "activation_type": "relu"},
    )
    prediction = layers.softmax(fc_out)
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    test = tide.default_main_program().clone(for_test=True)
    src, model_main = compile_and_build(tmp_path, test, ["x"], [prediction], {"x": [(1, 8), 3, 16]})
    text = open(os.path.join(src, "model.cc")).read()
    assert "#include <tide/kernels/fc.hpp>" in text
    ops = ops_in(src)
    assert [t for t, _ in ops] == ["fc", "softmax"], ops
    assert all(call is not None for _, call in ops), ops
    assert [n for n, _ in plugins_in(src)] == ["device_cpu"], plugins_in(src)
    rng = np.random.RandomState(3)
    for batch in (8, 2):
        xs = rng.standard_normal((batch, 3, 16)).astype("float32")
        want = exe.run(test, feed={"x": xs}, fetch_list=[prediction])
        assert_bit_identical(run_main(model_main, tmp_path, [xs]), want)


def only_device_cpu(tmp_path):
    """A plugin directory holding the CPU device plugin alone."""
    only = tmp_path / "only"
    only.mkdir(exist_ok=True)
    if not (only / os.path.basename(plugin_file("device_cpu"))).exists():
        os.symlink(plugin_file("device_cpu"), only / os.path.basename(plugin_file("device_cpu")))
    return str(only)


def assert_no_op_pack(src, types):
    """model.cc calls every kernel directly (the ops of `types` among them, each from its SDK
    header), so its plugin list names the CPU device plugin alone."""
    ops = assert_called_directly(src, types)
    assert {t for t, _ in ops} >= types, ops
    assert all(call is not None for _, call in ops), ops
    assert [n for n, _ in plugins_in(src)] == ["device_cpu"], plugins_in(src)
    return ops


def test_digits_conv_compiled_is_bit_identical(tmp_path):
    # conv2d (1 -> 20 channels 5x5: im2col + GEMM; 20 -> 50: the direct kernel where the CPU has
    # AVX2 or AVX-512), its bias add and relu, max pool2d 2x2 (its own loops), batch_norm in
    # inference, the fc's mul and add, softmax: every kernel called directly, no op pack loaded.
    prediction = recognize_digits_conv_prediction()
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    test = tide.default_main_program().clone(for_test=True)
    src, model_main = compile_and_build(
        tmp_path, test, ["img"], [prediction], {"img": [(1, 8), 1, 28, 28]}
    )
    types = {"conv2d", "elementwise_add", "relu", "pool2d", "batch_norm", "mul", "softmax"}
    ops = assert_no_op_pack(src, types)
    assert sum(t == "conv2d" for t, _ in ops) == 2, ops
    rng = np.random.RandomState(1)
    for batch in (8, 3, 1):
        imgs = rng.uniform(-1, 1, (batch, 1, 28, 28)).astype("float32")
        want = exe.run(test, feed={"img": imgs}, fetch_list=[prediction])
        assert_bit_identical(run_main(model_main, tmp_path, [imgs]), want)
    imgs = rng.uniform(-1, 1, (5, 1, 28, 28)).astype("float32")
    want = exe.run(test, feed={"img": imgs}, fetch_list=[prediction])
    got = run_main(model_main, tmp_path, [imgs], "--plugins", only_device_cpu(tmp_path))
    assert_bit_identical(got, want)


def test_resnet_ish_net_compiled_calls_every_kernel_directly(tmp_path):
    # A ResNet-ish net (Fluid's CIFAR ResNet: conv + batch_norm + relu, residual adds, 1x1
    # shortcut convs at stride 2, a global avg pool2d) after a depthwise conv and a max pool with
    # padding (the reference window loops), flattened, unsqueezed, squeezed and reshaped back,
    # then fc + softmax: every kernel called directly from the SDK's headers, no op pack loaded,
    # bit-identical to the executor at batch 1 (the direct conv splits each image's tiles between
    # threads) and 4 (images per thread).
    img = layers.data(name="img", shape=[3, 32, 32], dtype="float32")
    dw = layers.conv2d(img, 3, 3, padding=1, groups=3, bias_attr=False, use_cudnn=False)
    feat = _resnet_cifar10(layers.relu(dw), depth=8)  # [N, 64, 1, 1]
    pooled = layers.pool2d(feat, pool_size=3, pool_type="max", pool_stride=1, pool_padding=1)
    flat = layers.flatten(pooled, axis=1)  # [N, 64]
    flat = layers.unsqueeze(layers.squeeze(layers.unsqueeze(flat, [2]), [2]), [1])  # [N, 1, 64]
    prediction = layers.fc(input=layers.reshape(flat, [-1, 64]), size=10, act="softmax")
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    test = tide.default_main_program().clone(for_test=True)
    src, model_main = compile_and_build(
        tmp_path, test, ["img"], [prediction], {"img": [(1, 4), 3, 32, 32]}
    )
    types = {"depthwise_conv2d", "conv2d", "batch_norm", "relu", "elementwise_add", "pool2d"}
    types |= {"flatten", "squeeze2", "unsqueeze2", "reshape2", "mul", "softmax"}
    assert_no_op_pack(src, types)
    rng = np.random.RandomState(4)
    for batch in (1, 4):
        imgs = rng.standard_normal((batch, 3, 32, 32)).astype("float32")
        want = exe.run(test, feed={"img": imgs}, fetch_list=[prediction])
        assert_bit_identical(run_main(model_main, tmp_path, [imgs]), want)
    imgs = rng.standard_normal((2, 3, 32, 32)).astype("float32")
    want = exe.run(test, feed={"img": imgs}, fetch_list=[prediction])
    got = run_main(model_main, tmp_path, [imgs], "--plugins", only_device_cpu(tmp_path))
    assert_bit_identical(got, want)


def test_lstm_sentiment_compiled_with_a_lod_feed_is_bit_identical(tmp_path):
    words = layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
    prediction = understand_sentiment.lstm_net(words)
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    test = tide.default_main_program().clone(for_test=True)
    _, model_main = compile_and_build(
        tmp_path, test, ["words"], [prediction], {"words": [(1, 64), 1]}
    )
    for seed, n in ((0, 3), (1, 5)):
        seqs, _ = understand_sentiment.make_data(n, seed, min_len=4, max_len=12)
        feed = understand_sentiment.to_lod_tensor(seqs)
        want = exe.run(test, feed={"words": feed}, fetch_list=[prediction])
        offsets = np.cumsum([0] + [len(s) for s in seqs])
        flat = np.concatenate([np.asarray(s, "int64") for s in seqs]).reshape(-1, 1)
        lod = ",".join(str(o) for o in offsets)
        assert_bit_identical(run_main(model_main, tmp_path, [flat], "--lod", lod), want)


def test_resnet_from_a_paddle_model_compiled_names_no_op_pack(tmp_path):
    # Paddle's ResNet-18 as loaded (fused_conv2d: conv + bias + residual + relu; pool2d,
    # flatten_contiguous_range, the classifier's matmul_v2 and add): every kernel called directly,
    # no op pack loaded. Its in-place residual fused_conv2d and the pool2d that first wrote their
    # variable give it the same dims at every probe, so the freeze marks neither to infer shapes
    # at run time (the op pack's inference) and both are direct calls like any other step.
    exe = tide.Executor(PLACE)
    program, feeds, fetches = tide.io.load_inference_model(model_path("resnet18"), exe)
    src, model_main = compile_and_build(
        tmp_path, program, feeds, fetches, {"x": [(1, 4), 3, 32, 32]}
    )
    types = {"fused_conv2d", "pool2d", "flatten_contiguous_range", "matmul_v2", "elementwise_add"}
    ops = assert_no_op_pack(src, types)
    assert {t for t, _ in ops} == types, ops
    assert not any(infer_at_run_in(src)), infer_at_run_in(src)
    assert "ResidualData" in open(os.path.join(src, "model.cc")).read()
    rng = np.random.RandomState(2)
    for batch in (2, 4):
        xs = rng.standard_normal((batch, 3, 32, 32)).astype("float32")
        want = exe.run(program, feed={"x": xs}, fetch_list=fetches)
        assert_bit_identical(run_main(model_main, tmp_path, [xs]), want)
    xs = rng.standard_normal((3, 3, 32, 32)).astype("float32")
    want = exe.run(program, feed={"x": xs}, fetch_list=fetches)
    got = run_main(model_main, tmp_path, [xs], "--plugins", only_device_cpu(tmp_path))
    assert_bit_identical(got, want)


def matmul_v2(x, y, trans_y=False):
    """Paddle 2.x's matmul_v2 (no layer of its own in Fluid's API)."""
    block = tide.default_main_program().global_block()
    out = block.create_var(name=tide.unique_name.generate("matmul_v2"), dtype="float32")
    block.append_op(
        "matmul_v2",
        inputs={"X": [x.name], "Y": [y.name]},
        outputs={"Out": [out.name]},
        attrs={"trans_x": False, "trans_y": trans_y},
    )
    return out


def test_a_transformer_ish_net_compiled_names_no_op_pack(tmp_path):
    # One attention head over [N, 6, 16] rows (matmul_v2 for the projections and the batched
    # Q K^T and weights V, scale, softmax), its output concatenated with the input, layer_norm
    # over the features, a transpose and a matmul_v2 against a weight broadcast over the batch:
    # every kernel called directly, no op pack loaded, bit-identical at two batch sizes.
    x = layers.data(name="x", shape=[6, 16], dtype="float32")
    normal = tide.initializer.Normal(scale=0.5)
    w = {n: layers.create_parameter([16, 16], "float32", default_initializer=normal) for n in "qkv"}
    q, k, v = (matmul_v2(x, w[n]) for n in "qkv")
    weights = layers.softmax(layers.scale(matmul_v2(q, k, trans_y=True), scale=0.25))
    attended = matmul_v2(weights, v)  # [N, 6, 16]
    joined = layers.concat([attended, x], axis=2)  # [N, 6, 32]
    normed = layers.layer_norm(
        joined,
        begin_norm_axis=2,
        param_attr=tide.ParamAttr(initializer=normal),
        bias_attr=tide.ParamAttr(initializer=normal),
    )
    turned = layers.transpose(normed, [0, 2, 1])  # [N, 32, 6]
    out = matmul_v2(turned, layers.create_parameter([6, 3], "float32", default_initializer=normal))
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    test = tide.default_main_program().clone(for_test=True)
    src, model_main = compile_and_build(tmp_path, test, ["x"], [out], {"x": [(1, 8), 6, 16]})
    types = {"matmul_v2", "scale", "softmax", "concat", "layer_norm", "transpose"}
    ops = assert_no_op_pack(src, types)
    assert sum(t == "matmul_v2" for t, _ in ops) == 6, ops
    rng = np.random.RandomState(6)
    for batch in (8, 3):
        xs = rng.standard_normal((batch, 6, 16)).astype("float32")
        want = exe.run(test, feed={"x": xs}, fetch_list=[out])
        assert_bit_identical(run_main(model_main, tmp_path, [xs]), want)
    xs = rng.standard_normal((2, 6, 16)).astype("float32")
    want = exe.run(test, feed={"x": xs}, fetch_list=[out])
    got = run_main(model_main, tmp_path, [xs], "--plugins", only_device_cpu(tmp_path))
    assert_bit_identical(got, want)


# Two compiled models in one program: each calls its own model, and prints its outputs' bits.
TWO_MODELS_MAIN = r"""
#include <cstdio>
#include <cstring>
#include "scale.h"
#include "square.h"

static int Run(TideModel* m, int32_t (*run)(TideModel*, const TideModelTensor*, size_t,
               TideModelTensor*, size_t), const char* (*error)(void), const float* x) {
  int64_t dims[2] = {2, 4};
  TideModelTensor in = {(void*)x, TIDE_FP32, 2, dims, NULL, 0}, out;
  if (!m || run(m, &in, 1, &out, 1) != TIDE_OK) {
    std::fprintf(stderr, "%s\n", error());
    return 1;
  }
  const float* y = static_cast<const float*>(out.data);
  for (int i = 0; i < 8; ++i) std::printf("%a ", y[i]);
  std::printf("\n");
  return 0;
}

int main() {
  const float x[8] = {-2, -1, 0, 1, 2, 3, 4, 5};
  TideModel* a = tide_scale_create(NULL, NULL);  // embedded parameters
  if (!a) return std::fprintf(stderr, "%s\n", tide_scale_last_error()), 1;
  TideModel* b = tide_square_create(SQUARE_PARAMS, NULL);
  if (!b) return std::fprintf(stderr, "%s\n", tide_square_last_error()), 1;
  int rc = Run(a, tide_scale_run, tide_scale_last_error, x) ||
           Run(b, tide_square_run, tide_square_last_error, x);
  tide_scale_destroy(a);
  tide_square_destroy(b);
  return rc;
}
"""


def test_two_named_models_link_into_one_program_one_with_its_parameters_embedded(tmp_path):
    # Two programs with a parameter each: scale = x W + b, square = (x V)^2.
    exe = tide.Executor(PLACE)
    programs = {}
    for name in ("scale", "square"):
        main, startup = tide.Program(), tide.Program()
        with tide.program_guard(main, startup):
            x = layers.data(name="x", shape=[4], dtype="float32")
            y = layers.fc(input=x, size=4, act=None, bias_attr=name == "scale")
            if name == "square":
                y = layers.square(y)
        exe.run(startup)
        programs[name] = (main, y)
    srcs = {}
    for name, (main, y) in programs.items():
        plan = str(tmp_path / (name + ".tideaot"))
        tide.aot.freeze(main, ["x"], [y], PLACE, {"x": [(1, 8), 4]}, plan)
        srcs[name] = tide.aot.compile(
            plan, str(tmp_path / name), name=name, embed_params=name == "scale"
        )
    assert sorted(os.listdir(srcs["scale"])) == sorted(
        ["CMakeLists.txt", "main.cc", "scale.cc", "scale.h", "scale_params.S", "params.bin"]
    )
    assert "tide_square_create" in open(os.path.join(srcs["square"], "square.h")).read()

    top = tmp_path / "both"
    top.mkdir()
    (top / "two.cc").write_text(TWO_MODELS_MAIN)
    (top / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(both CXX)\n"
        "add_subdirectory(%s scale)\nadd_subdirectory(%s square)\n"
        "add_executable(two two.cc)\ntarget_link_libraries(two PRIVATE scale square)\n"
        'target_compile_definitions(two PRIVATE SQUARE_PARAMS="%s")\n'
        % (srcs["scale"], srcs["square"], os.path.join(srcs["square"], "params.bin"))
    )
    build = str(tmp_path / "build")
    cmake_build(str(top), build)

    # The scale model's library is the whole model: its params.bin can go.
    os.remove(os.path.join(srcs["scale"], "params.bin"))
    p = subprocess.run([os.path.join(build, "two")], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    xs = np.arange(-2, 6, dtype="float32").reshape(2, 4)
    for line, name in zip(p.stdout.strip().splitlines(), ("scale", "square")):
        got = np.array([float.fromhex(v) for v in line.split()], dtype="float32")
        main, y = programs[name]
        (want,) = exe.run(main, feed={"x": xs}, fetch_list=[y])
        assert np.array_equal(got, want.reshape(-1)), (name, got, want)
    # So is its example executable's, without --params.
    got = run_main(os.path.join(build, "scale", "scale_main"), tmp_path, [xs])
    assert_bit_identical(
        got, exe.run(programs["scale"][0], feed={"x": xs}, fetch_list=[programs["scale"][1]])
    )


def test_a_model_name_that_is_not_a_c_identifier_is_refused(tmp_path):
    x = layers.data(name="x", shape=[4], dtype="float32")
    y = layers.fc(input=x, size=2)
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    plan = str(tmp_path / "m.tideaot")
    tide.aot.freeze(tide.default_main_program(), ["x"], [y], PLACE, {"x": [(1, 2), 4]}, plan)
    for bad in ("2fast", "my-model", "", "naïve"):
        with pytest.raises(Exception, match="is not a C identifier"):
            tide.aot.compile(plan, str(tmp_path / "out"), name=bad)


def test_every_kernel_of_the_sdk_table_compiles_and_is_registered_by_its_pack(tmp_path):
    # tide/kernels/registry.hpp's rows, printed by a program that includes it; each row's
    # function, for each of its data types, must compile as a compiled model calls it, and its
    # op pack must register the CPU place's plain kernel of that op and type.
    table_cc = tmp_path / "table.cc"
    table_cc.write_text(
        "#include <cstdio>\n#include <tide/kernels/registry.hpp>\n"
        "int main() {\n"
        "  for (const auto& k : tide::kernels::kDirectKernels)\n"
        "    for (int t = 0; t < 32; ++t)\n"
        "      if ((k.dtypes >> t) & 1u)\n"
        '        std::printf("%s\\t%s\\t%s\\t%s\\t%d\\t%s\\n", k.op_type, k.plugin, k.header,\n'
        "                    k.function, t, tide::kernels::CTypeOf(t));\n"
        "}\n"
    )
    table = str(tmp_path / "table")
    cxx = os.environ.get("CXX", "c++")
    p = subprocess.run(
        [cxx, "-std=c++17", "-I", tide.sdk.include_dir(), str(table_cc), "-o", table],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    rows = [line.split("\t") for line in subprocess.check_output([table], text=True).splitlines()]
    assert {"mul", "elementwise_add", "relu", "softmax", "scale", "fc"} <= {r[0] for r in rows}
    assert {"conv2d", "depthwise_conv2d", "pool2d", "batch_norm", "reshape2"} <= {
        r[0] for r in rows
    }
    assert {"matmul_v2", "layer_norm", "concat", "transpose2"} <= {r[0] for r in rows}

    names = {2: "int32", 3: "int64", 5: "float32", 6: "float64"}
    kernels = {r["name"]: set(r["kernels"]) for r in tide.plugins() if r["status"] == "loaded"}
    headers, calls = [], []
    for op, plugin, header, function, dtype, ctype in rows:
        key = "%s {cpu, %s, ANY, plain}" % (op, names[int(dtype)])
        assert key in kernels.get(plugin, set()), (plugin, key)
        if header not in headers:
            headers.append(header)
        calls.append("&tide::kernels::Direct<&%s>" % function.replace("{T}", ctype))
    src = tmp_path / "src"
    src.mkdir()
    (src / "check.cc").write_text(
        "#include <tide/kernels/direct.hpp>\n"
        + "".join("#include <%s>\n" % h for h in headers)
        + "[[maybe_unused]] const TideKernelFn kKernels[] = {\n    "
        + ",\n    ".join(calls)
        + "};\n"
    )
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(check CXX)\n"
        "set(CMAKE_CXX_STANDARD 17)\nfind_package(Eigen3 3.3 REQUIRED NO_MODULE)\n"
        "add_library(check OBJECT check.cc)\n"
        "target_include_directories(check PRIVATE ${TIDE_INCLUDE_DIR})\n"
        "target_link_libraries(check PRIVATE Eigen3::Eigen)\n"
    )
    cmake_build(str(src), str(tmp_path / "build"))
