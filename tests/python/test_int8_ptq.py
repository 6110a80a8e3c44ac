"""int8 post-training quantization (issue 32): `tide.contrib.quantization.quantize_post_training`
and `load_inference_model(..., precision="int8", calibration=...)`. The digits MLP and conv net
(scikit-learn's 8x8 digits), trained in float32, keep their test accuracy within 1 point in int8
with each calibration method; a Paddle-saved ResNet-18 fixture quantizes every convolution and
agrees with float32's top-1; a quantized program saves and loads back as it is; bad input
(an unknown algo, no calibration data, a feed of the wrong shape) is an error naming what, and a
program with nothing quantizable a warning saying why. On the plain kernels (no use_mkldnn) the
same program gives oneDNN's results within 1 level. A model Paddle's quantization saved in QDQ
form or with its fake-quant ops runs its convolutions and fc in int8 with its own scales, saved
by Paddle 2.6 in the legacy format and by Paddle 3.3's paddle.quantization as PIR programs
(test_int8_fake_quant.py: the fake-quant forms the fixture lacks)."""

import collections
import os

import numpy as np
import pytest
from digits_nets import digits, lenet, mlp
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn

import tide
from tide.contrib.quantization import PostTrainingQuantization, quantize_post_training

FIXTURES = os.path.join(
    os.environ.get("TIDE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
    "tests",
    "fixtures",
    "paddle",
)


NETS = {"mlp": (mlp, (64,), 20), "conv": (lenet, (1, 8, 8), 12)}
_saved = {}


def trained_model(name, tmp_path_factory):
    """The saved inference model of net `name` trained on the digits (once per session), and the
    data."""
    net, shape, passes = NETS[name]
    (train_x, train_y), (test_x, test_y) = digits(shape)
    test = (test_x, test_y.reshape(-1))
    if name not in _saved:
        main, startup = tide.Program(), tide.Program()
        main.random_seed = startup.random_seed = 1
        with tide.program_guard(main, startup), tide.unique_name.guard():
            img = tide.layers.data(name="img", shape=list(shape), dtype="float32")
            label = tide.layers.data(name="label", shape=[1], dtype="int64")
            pred = net(img)
            loss = tide.layers.mean(tide.layers.cross_entropy(input=pred, label=label))
            tide.optimizer.Adam(learning_rate=0.002).minimize(loss)
        exe = tide.Executor(tide.CPUPlace())
        rng = np.random.RandomState(1)
        d = str(tmp_path_factory.mktemp(name))
        with tide.scope_guard(tide.Scope()):
            exe.run(startup)
            for _ in range(passes):
                order = rng.permutation(len(train_x))
                for i in range(0, len(order), 64):
                    b = order[i : i + 64]
                    feed = {"img": train_x[b], "label": train_y[b]}
                    exe.run(main, feed=feed, fetch_list=[loss])
            tide.io.save_inference_model(d, ["img"], [pred], exe, main_program=main)
        _saved[name] = d
    calib = [{"img": train_x[i : i + 64]} for i in range(0, 320, 64)]
    return _saved[name], calib, test


def predict(d, precision="float32", calibration=None, use_mkldnn=None):
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    program, feeds, fetches = tide.io.load_inference_model(
        d, exe, scope=scope, precision=precision, calibration=calibration
    )
    return program, lambda x: exe.run(program, feed={feeds[0]: x}, fetch_list=fetches, scope=scope)[
        0
    ]


def int8_ops(program):
    return collections.Counter(
        op.type
        for op in program.global_block().ops
        if op.has_attr("mkldnn_data_type") and op.attr("mkldnn_data_type") == "int8"
    )


@pytest.mark.parametrize("name", ["mlp", "conv"])
@pytest.mark.parametrize("algo", ["abs_max", "hist", "KL"])
def test_ptq_keeps_digits_accuracy(name, algo, tmp_path_factory):
    d, calib, (test_x, test_y) = trained_model(name, tmp_path_factory)
    _, f32 = predict(d)
    acc32 = float((f32(test_x).argmax(1) == test_y).mean())
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    program, feeds, fetches = tide.io.load_inference_model(d, exe, scope=scope)
    quantize_post_training(program, exe, scope, calib, algo=algo)
    (out,) = exe.run(program, feed={"img": test_x}, fetch_list=fetches, scope=scope)
    acc8 = float((out.argmax(1) == test_y).mean())
    print("digits %s %s: float32 %.4f, int8 %.4f" % (name, algo, acc32, acc8))
    assert acc32 >= 0.95, acc32
    assert acc8 >= acc32 - 0.01, (acc8, acc32)
    want = {"fc": 3} if name == "mlp" else {"fused_conv2d": 2, "fc": 2}
    assert int8_ops(program) == want, int8_ops(program)
    kernels = [k for t, k in exe.last_run_info()["kernels"] if t in want]
    assert all("int8" in k for k in kernels), kernels  # int8 or uint8
    if has_mkldnn():
        assert all("mkldnn" in k for k in kernels), kernels


@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
def test_plain_kernels_run_the_quantized_program_as_onednn(tmp_path_factory):
    d, calib, (test_x, _) = trained_model("conv", tmp_path_factory)
    program, run = predict(d, "int8", calib)
    onednn = run(test_x[:64])
    for op in program.global_block().ops:
        if op.has_attr("use_mkldnn"):
            op._set_attr("use_mkldnn", False)
    plain = run(test_x[:64])
    # Each int8 op's output within 1 level: the softmax'd outputs stay close.
    np.testing.assert_allclose(plain, onednn, atol=0.05)
    assert (plain.argmax(1) == onednn.argmax(1)).mean() >= 0.95


def test_load_int8_and_save_it_back(tmp_path, tmp_path_factory):
    d, calib, (test_x, _) = trained_model("conv", tmp_path_factory)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    program, feeds, fetches = tide.io.load_inference_model(
        d, exe, scope=scope, precision="int8", calibration=calib
    )
    (before,) = exe.run(program, feed={feeds[0]: test_x}, fetch_list=fetches, scope=scope)
    out_dir = str(tmp_path / "int8")
    tide.io.save_inference_model(out_dir, feeds, fetches, exe, main_program=program, scope=scope)
    again, feeds2, fetches2 = tide.io.load_inference_model(out_dir, exe, scope=tide.Scope())
    assert int8_ops(again) == int8_ops(program) == {"fused_conv2d": 2, "fc": 2}
    # One quantize, at the input: the max pools between the int8 ops stay int8.
    assert [op.type for op in again.global_block().ops].count("quantize") == 1
    s2 = tide.Scope()
    again, feeds2, fetches2 = tide.io.load_inference_model(out_dir, exe, scope=s2)
    (after,) = exe.run(again, feed={feeds2[0]: test_x}, fetch_list=fetches2, scope=s2)
    np.testing.assert_array_equal(after, before)


def test_paddle_class_names(tmp_path, tmp_path_factory):
    d, calib, (test_x, test_y) = trained_model("mlp", tmp_path_factory)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    ptq = PostTrainingQuantization(
        exe,
        d,
        scope=scope,
        batch_generator=lambda: ([b["img"]] for b in calib),
        batch_nums=3,
        algo="hist",
        quantizable_op_type=["mul"],
    )
    program = ptq.quantize()
    assert int8_ops(program) == {"fc": 3}
    ptq.save_quantized_model(str(tmp_path / "q"))
    _, run = predict(str(tmp_path / "q"))
    assert (run(test_x).argmax(1) == test_y).mean() >= 0.95


def _resnet18_input(batch, seed):
    base = np.load(os.path.join(FIXTURES, "resnet18", "input.npy"))
    rng = np.random.default_rng(seed)
    return rng.normal(0, 1, (batch,) + base.shape[1:]).astype("float32")


def test_paddle_resnet18_in_int8_agrees_with_float32():
    d = os.path.join(FIXTURES, "resnet18")
    calib = [{"x": _resnet18_input(4, s)} for s in range(4)]
    exe = tide.Executor(tide.CPUPlace())
    s32, s8 = tide.Scope(), tide.Scope()
    ref_prog, feeds, fetches = tide.io.load_inference_model(d, exe, scope=s32)
    calib = [{feeds[0]: b["x"]} for b in calib]
    program, feeds, fetches = tide.io.load_inference_model(
        d, exe, scope=s8, precision="int8", calibration=calib
    )
    # Every convolution (20 fused_conv2d after the transpiler) and the classifier (matmul_v2 +
    # bias: an fc) in int8.
    assert int8_ops(program) == {"fused_conv2d": 20, "fc": 1}, int8_ops(program)
    # Each value its own type and scale: the transpiler's in-place residuals write one variable
    # block after block (a downsampling conv's s8 output, then each block's u8 one); each write
    # is calibrated apart, and an op's residual scale is the Scale_out of the op that wrote it.
    block = program.global_block()
    last_writer = {}
    for op in block.ops:
        if op.type == "fused_conv2d" and not op.attr("force_fp32_output"):
            out = op.output("Output")[0]
            want = "uint8" if op.attr("fuse_activation") == "relu" else "int8"
            assert block.var(out).dtype == want, (out, block.var(out).dtype, want)
            writer = last_writer.get(
                op.input("ResidualData")[0] if op.input("ResidualData") else ""
            )
            if writer is not None and writer.type == "fused_conv2d":  # an int8 residual
                assert op.attr("Scale_in_eltwise") == writer.attr("Scale_out"), op.summary()
        for n in op.output_arg_names:
            last_writer[n] = op
    x = np.concatenate([np.load(os.path.join(d, "input.npy")), _resnet18_input(31, 99)])
    (ref,) = exe.run(ref_prog, feed={feeds[0]: x}, fetch_list=fetches, scope=s32)
    (out,) = exe.run(program, feed={feeds[0]: x}, fetch_list=fetches, scope=s8)
    agree = float((out.argmax(-1) == ref.argmax(-1)).mean())
    err = float(np.abs(out - ref).max() / np.abs(ref).max())
    print(
        "resnet18 int8: top-1 agreement %.3f, max error %.4f of the largest output" % (agree, err)
    )
    assert agree >= 0.9, agree
    assert err < 0.1, err


def test_bad_input_is_named(tmp_path_factory):
    d, calib, _ = trained_model("mlp", tmp_path_factory)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    program, _, _ = tide.io.load_inference_model(d, exe, scope=scope)
    with pytest.raises(ValueError, match="algo must be one of .*'mse'"):
        quantize_post_training(program, exe, scope, calib, algo="mse")
    with pytest.raises(ValueError, match="no calibration data"):
        quantize_post_training(program, exe, scope, [])
    with pytest.raises(ValueError, match="no calibration data"):
        quantize_post_training(program, exe, scope, None)
    with pytest.raises(ValueError, match=r"feeds 'img' of shape \[4, 63\]; .*\[-1, 64\]"):
        quantize_post_training(program, exe, scope, [{"img": np.zeros((4, 63), "float32")}])
    with pytest.raises(ValueError, match="feeds 'image', which the program does not have"):
        quantize_post_training(program, exe, scope, [{"image": np.zeros((4, 64), "float32")}])
    with pytest.raises(ValueError, match=r"quantizable_op_type \['pool2d'\]"):
        quantize_post_training(program, exe, scope, calib, quantizable_op_type=["pool2d"])
    with pytest.raises(ValueError, match="calibration .*goes with precision='int8'"):
        tide.io.load_inference_model(d, exe, scope=tide.Scope(), calibration=calib)
    assert int8_ops(program) == {}  # nothing changed


def test_nothing_quantizable_is_a_warning():
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        x = tide.layers.data(name="x", shape=[8], dtype="float32")
        y = tide.layers.softmax(tide.layers.relu(x))
    with pytest.warns(RuntimeWarning, match="nothing in this program is quantizable: it has no op"):
        quantize_post_training(
            main, calib_feeds=[{"x": np.ones((2, 8), "float32")}], fetch_list=[y]
        )
    assert [op.type for op in main.global_block().ops] == ["relu", "softmax"]


def load_and_run_int8(d, label):
    """The quantized fixture in `d` loaded with precision="int8" and run on its input: checks that
    no quant op is left, that its two convolutions and its fc run int8 kernels (oneDNN's where the
    plugin is there) and that the output is within 5% of Paddle's, same top class. Returns the
    int8 program and the executor."""
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    program, feeds, fetches = tide.io.load_inference_model(
        os.path.join(d, "inference"), exe, scope=scope, precision="int8"
    )
    types = [op.type for op in program.global_block().ops]
    assert not [t for t in types if "quantize_" in t or "_quantize" in t], types
    assert int8_ops(program) == {"fused_conv2d": 2, "fc": 1}, int8_ops(program)
    (out,) = exe.run(
        program,
        feed={feeds[0]: np.load(os.path.join(d, "input.npy"))},
        fetch_list=fetches,
        scope=scope,
    )
    kernels = [k for t, k in exe.last_run_info()["kernels"] if t in ("fused_conv2d", "fc")]
    assert len(kernels) == 3 and all("int8" in k for k in kernels), kernels  # int8 or uint8
    if has_mkldnn():
        assert all("mkldnn" in k for k in kernels), kernels
    want = np.load(os.path.join(d, "expected.npy"))  # Paddle's run of the quantized program
    # Paddle's QDQ program also fake-quantizes each layer's output; the int8 program does not.
    err = float(np.abs(out - want).max() / np.abs(want).max())
    print("%s int8: max error %.4f of the largest output" % (label, err))
    assert err < 0.05, err
    assert (out.argmax(1) == want.argmax(1)).all()
    return program, exe


@pytest.mark.parametrize("name", ["quant_qdq", "quant_fake"])
def test_paddle_quantized_model_runs_in_int8_with_its_own_scales(name):
    # quant_qdq: Paddle 2.6's QAT in QDQ form (a conv, a depthwise conv, a linear; int8 weights);
    # quant_fake: the same net saved with its fake-quant ops (fake_quantize_dequantize_moving_
    # average_abs_max on activations, fake_channel_wise_quantize_dequantize_abs_max on weights).
    # No calibration: the quant ops' scales are the Inputs' (x: 127 / s), the weights are
    # dequantized once into float32 parameters and requantized per channel by the kernels.
    d = os.path.join(FIXTURES, name)
    program, exe = load_and_run_int8(d, name)
    scales = [op.attr("Scale_in") for op in program.global_block().ops if op.type == "fused_conv2d"]
    as_saved = tide.Scope()  # the float32 load keeps the quant ops, and their scales
    tide.io.load_inference_model(os.path.join(d, "inference"), exe, scope=as_saved)
    s = np.array(as_saved.find_var("conv2d_0.scale_0").get_tensor(), copy=True).reshape(-1)[0]
    assert scales[0] == pytest.approx(127 / s)  # x may be negative: s8, the model's scale


@pytest.mark.parametrize("name", ["quant_qdq", "quant_fake", "quant_ptq"])
def test_paddle3_pir_quantized_model_runs_in_int8_with_its_own_scales(name):
    # The same net through Paddle 3.3's paddle.quantization.QAT, saved as PIR programs
    # (tests/fixtures/paddle/pir): quant_qdq converted (quantize_linear / dequantize_linear, the
    # weights' int8 levels stored as float32), quant_fake as trained (the quanters' fake ops);
    # quant_ptq: through Paddle 3.3's PTQ (one scale per weight tensor), converted.
    load_and_run_int8(os.path.join(FIXTURES, "pir", name), "pir/" + name)


def test_int8_without_calibration_needs_a_quantized_model(tmp_path_factory):
    d, _, _ = trained_model("mlp", tmp_path_factory)
    with pytest.raises(ValueError, match="no quantize_linear ops nor fake-quant ops .*no calibr"):
        tide.io.load_inference_model(d, scope=tide.Scope(), precision="int8")


@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_a_pool_between_int8_convolutions_stays_int8(pool_type):
    # conv (relu) -> pool -> conv: the pool reads the first conv's u8 output and writes u8 in its
    # scale, which the second conv reads: no dequantize before the pool, no quantize after it.
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 3
    with tide.program_guard(main, startup), tide.unique_name.guard():
        img = tide.layers.data(name="img", shape=[4, 12, 12], dtype="float32")
        c1 = tide.layers.conv2d(img, num_filters=8, filter_size=3, padding=1, act="relu")
        p = tide.layers.pool2d(c1, pool_size=3, pool_stride=2, pool_padding=1, pool_type=pool_type)
        out = tide.layers.conv2d(p, num_filters=6, filter_size=3, padding=1)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    rng = np.random.RandomState(5)
    batches = [{"img": rng.standard_normal((4, 4, 12, 12)).astype("float32")} for _ in range(3)]
    with tide.scope_guard(scope):
        exe.run(startup)
    (want,) = exe.run(main, feed=batches[0], fetch_list=[out], scope=scope)
    tide.transpiler.InferenceTranspiler().transpile(main, tide.CPUPlace(), scope)  # as a load does
    quantize_post_training(main, exe, scope, batches, fetch_list=[out])
    block = main.global_block()
    types = [op.type for op in block.ops]
    assert types.count("quantize") == 1 and "dequantize" not in types, types
    pool = next(op for op in block.ops if op.type == "pool2d")
    for name in (pool.input("X")[0], pool.output("Out")[0]):
        assert block.var(name).dtype == "uint8", (name, block.var(name).dtype)
    convs = [op for op in block.ops if op.type == "fused_conv2d"]
    assert convs[0].attr("Scale_out") == convs[1].attr("Scale_in")  # the pool keeps the scale
    (got,) = exe.run(main, feed=batches[0], fetch_list=[out], scope=scope)
    kernels = [k for t, k in exe.last_run_info()["kernels"] if t == "pool2d"]
    assert kernels and all("uint8" in k for k in kernels), kernels
    err = float(np.abs(got - want).max() / np.abs(want).max())
    print("conv-%s pool-conv int8: max error %.4f of the largest output" % (pool_type, err))
    assert err < 0.05, err
