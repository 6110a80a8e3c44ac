"""fuse_conv_bias_act: a convolution, its bias add and its activation run as one fused_conv2d
while training (the Executor's rewrite on CPU places). The rewritten program trains to the losses
and parameters of the program as written (the unfused ops are the reference, themselves checked
against numpy in test_ops_nn.py), the bias gradient against a float64 numpy sum, and the rewrite
leaves alone every conv whose intermediate values something else reads."""

import numpy as np
import pytest
import training_fusion
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn
from training_fusion import assert_same_training, op_types

import tide
from tide import layers
from tide.transpiler.fuse_conv_bias_act import fuse_conv_bias_act

STEPS = 4


def net(act2="sigmoid", data_format="NCHW", depthwise=False):
    """A small conv net: conv + bias + relu, pool, conv + bias + act2, conv + bias (no act),
    mean; SGD. Returns (loss, {name: var} of the conv layers' outputs)."""
    shape = [3, 12, 12] if data_format == "NCHW" else [12, 12, 3]
    img = layers.data(name="img", shape=shape)
    h1 = layers.conv2d(img, 6, 3, padding=1, act="relu", data_format=data_format)
    h = layers.pool2d(h1, 2, "max", 2, data_format=data_format)
    if depthwise:
        h2 = layers.conv2d(h, 6, 3, padding=1, groups=6, act=act2, data_format=data_format)
    else:
        h2 = layers.conv2d(h, 8, 3, padding=1, act=act2, data_format=data_format)
    h3 = layers.conv2d(h2, 4, 1, data_format=data_format)
    loss = layers.mean(layers.square(h3))
    tide.optimizer.SGD(0.1).minimize(loss)
    block = tide.default_main_program().global_block()
    h1_sum = block.var(h1.op.input("X")[0])  # conv + bias, before the relu
    h2_conv = block.var(block.var(h2.op.input("X")[0]).op.input("X")[0])  # before the bias
    return loss, {"h1": h1, "h2": h2, "h3": h3, "h1_sum": h1_sum, "h2_conv": h2_conv}


def train(core_flags, fused, build=net, fetch=(), use_mkldnn=False, memopt=False, **kw):
    """Losses (and the fetched values) of STEPS steps, and the final parameters."""
    core_flags(fuse_conv_bias_act=fused, use_mkldnn=use_mkldnn)
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 3
    with tide.program_guard(main, startup), tide.unique_name.guard():
        loss, outs = build(**kw)
    if memopt:  # delete_var ops after each temporary's last use: the rewrite prunes its names
        tide.memory_optimize(main, skip_opt_set=[outs[n] for n in fetch])
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    shape = [4, 3, 12, 12] if kw.get("data_format", "NCHW") == "NCHW" else [4, 12, 12, 3]
    x = np.random.RandomState(0).standard_normal(shape).astype("float32")
    results = []
    for _ in range(STEPS):
        results.append(
            exe.run(
                main, feed={"img": x}, fetch_list=[loss] + [outs[n] for n in fetch], scope=scope
            )
        )
    params = {
        p.name: np.array(scope.find_var(p.name).get_tensor())
        for p in main.global_block().all_parameters()
    }
    kernels = [op for op, _ in exe.last_run_info()["kernels"]]
    return results, params, kernels


@pytest.mark.parametrize("act2", ["sigmoid", "tanh", "relu6", "gelu"])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_trains_as_the_program_as_written(core_flags, act2, data_format):
    fused = train(core_flags, True, act2=act2, data_format=data_format)
    plain = train(core_flags, False, act2=act2, data_format=data_format)
    assert_same_training(fused, plain)
    # every conv with a bias fused (gelu's gradient reads its X: that conv keeps its act op)
    assert fused[2].count("fused_conv2d") == 3
    assert fused[2].count(act2) == (1 if act2 == "gelu" else 0)
    assert "fused_conv2d" not in plain[2]


def test_after_memory_optimize(core_flags):
    fused = train(core_flags, True, memopt=True)
    assert_same_training(fused, train(core_flags, False, memopt=True))
    assert fused[2].count("fused_conv2d") == 3


def bias_free_net():
    """conv (no bias) + tanh, then conv (no bias, no act): the first fuses with its tanh alone."""
    img = layers.data(name="img", shape=[3, 12, 12])
    h = layers.conv2d(img, 6, 3, padding=1, bias_attr=False, act="tanh")
    h = layers.conv2d(h, 4, 3, bias_attr=False)
    loss = layers.mean(layers.square(h))
    tide.optimizer.SGD(0.1).minimize(loss)
    return loss, {"h": h}


def test_a_conv_without_bias_fuses_its_activation(core_flags):
    fused = train(core_flags, True, build=bias_free_net)
    assert_same_training(fused, train(core_flags, False, build=bias_free_net))
    assert fused[2].count("fused_conv2d") == 1 and fused[2].count("conv2d") == 1
    assert "tanh" not in fused[2]


def test_depthwise_conv(core_flags):
    assert_same_training(
        train(core_flags, True, depthwise=True), train(core_flags, False, depthwise=True)
    )


@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
def test_onednn_kernels_train_alike(core_flags):
    fused = train(core_flags, True, use_mkldnn=True)
    plain = train(core_flags, False, use_mkldnn=True)
    assert_same_training(fused, plain, rtol=1e-4)


def amp_net(act2="sigmoid"):
    """net()'s layers under bfloat16 AMP (decorate_bf16): each conv adds a bfloat16 cast of its
    float32 bias, a cast the program writes after the conv; the rewrite moves it before the
    fused op."""
    from tide.contrib import mixed_precision as amp

    img = layers.data(name="img", shape=[3, 12, 12])
    h1 = layers.conv2d(img, 6, 3, padding=1, act="relu")
    h = layers.pool2d(h1, 2, "max", 2)
    h2 = layers.conv2d(h, 8, 3, padding=1, act=act2)
    h3 = layers.conv2d(h2, 4, 1)
    loss = layers.mean(layers.square(h3))
    amp.decorate_bf16(tide.optimizer.SGD(0.1)).minimize(loss)
    return loss, {"h3": h3}


@pytest.mark.parametrize("use_mkldnn", [False, True])
def test_bfloat16_amp_convs_fuse_with_their_bias_casts(core_flags, use_mkldnn):
    if use_mkldnn and not has_mkldnn():
        pytest.skip(MKLDNN_SKIP_REASON)
    fused = train(core_flags, True, build=amp_net, use_mkldnn=use_mkldnn)
    plain = train(core_flags, False, build=amp_net, use_mkldnn=use_mkldnn)
    assert fused[2].count("fused_conv2d") == 3 and "conv2d" not in fused[2], fused[2]
    assert "fused_conv2d" not in plain[2]
    # The fused op adds the bias before rounding the sum to bfloat16 once, the ops as written
    # round the conv's output first: the same training to bfloat16 rounding (of each step's
    # values, so a parameter is compared on its own scale).
    for step_f, step_p in zip(fused[0], plain[0]):
        np.testing.assert_allclose(step_f[0], step_p[0], rtol=2.0**-6)
    assert fused[1].keys() == plain[1].keys()
    for name, want in plain[1].items():
        tol = 2.0**-6 * np.abs(want).max()
        np.testing.assert_allclose(fused[1][name], want, rtol=0, atol=tol, err_msg=name)


def test_amp_rewrite_moves_the_bias_cast_before_the_fused_conv():
    main, _, fused = rewrite(build=amp_net)
    assert len(fused) == 3
    ops = main.global_block().ops
    for i, op in enumerate(ops):
        if op.type != "fused_conv2d":
            continue
        bias = op.input("Bias")[0]
        writers = [j for j, o in enumerate(ops) if bias in o.output_arg_names]
        assert len(writers) == 1 and ops[writers[0]].type == "cast" and writers[0] < i, bias


def test_a_fetched_intermediate_keeps_its_conv_unfused(core_flags):
    fetch = ("h1", "h1_sum", "h2_conv")
    fused = train(core_flags, True, fetch=fetch)
    plain = train(core_flags, False, fetch=fetch)
    assert_same_training(fused, plain)
    # the first conv keeps its relu (its input is fetched), the second stays as it is
    assert fused[2].count("fused_conv2d") == 2
    assert fused[2].count("relu") == 1 and fused[2].count("sigmoid") == 1


def rewrite(build=net, skip=(), **kw):
    return training_fusion.rewrite(fuse_conv_bias_act, build, skip, **kw)


def test_the_rewritten_program():
    main, outs, fused = rewrite()
    # conv + bias + relu and conv + bias + sigmoid fuse whole; the last conv has its bias only
    assert len(fused) == 3
    types = op_types(main)
    assert types.count("fused_conv2d") == 3
    assert "relu" not in types and "sigmoid" not in types and "elementwise_add" not in types
    block = main.global_block()
    convs = [op for op in block.ops if op.type == "fused_conv2d"]
    assert [op.attr("fuse_activation") for op in convs] == ["relu", "sigmoid", ""]
    assert convs[0].output("Output") == [outs["h1"].name]
    # The bias gradient no longer writes X@GRAD: the conv's gradient reads its Out@GRAD
    for add_grad in [op for op in block.ops if op.type == "elementwise_add_grad"]:
        assert add_grad.output("X@GRAD") == []
        conv_grad = next(
            op
            for op in block.ops
            if op.type == "conv2d_grad" and op.input("Output@GRAD") == add_grad.input("Out@GRAD")
        )
        assert conv_grad is not None
        assert add_grad.input("X") == add_grad.input("Out@GRAD")
    # the values no longer computed are gone from the program
    names = set(block.vars)
    for op in block.ops:
        for n in op.input_arg_names + op.output_arg_names:
            assert n in names or n == "@EMPTY@", n


def test_skip_opt_set_and_readers_keep_a_conv():
    def reads_conv_output():
        img = layers.data(name="img", shape=[3, 12, 12])
        h = layers.conv2d(img, 4, 3, act="relu")
        pre = h.op.input("X")[0]  # the bias add's output, read again below
        extra = layers.scale(tide.default_main_program().global_block().var(pre), 2.0)
        loss = layers.elementwise_add(layers.mean(h), layers.mean(extra))
        tide.optimizer.SGD(0.1).minimize(loss)
        return loss, {"h": h}

    main, _, fused = rewrite(reads_conv_output)
    # the add's output has another reader: conv and bias fuse, the relu stays
    assert len(fused) == 1
    assert op_types(main).count("relu") == 1
    main, _, fused = rewrite(skip=("h1_sum",))
    assert len(fused) == 3 and op_types(main).count("relu") == 1
    main, _, fused = rewrite(skip=("h2_conv",))
    assert len(fused) == 2 and op_types(main).count("sigmoid") == 1


def test_bias_gradient_against_numpy(core_flags):
    """One conv + bias (no act), loss = sum(out * w): Bias@GRAD = w summed over N, H, W."""
    core_flags(fuse_conv_bias_act=True)
    rng = np.random.RandomState(5)
    x = rng.standard_normal((2, 3, 6, 6)).astype("float32")
    w = rng.standard_normal((2, 5, 4, 4)).astype("float32")
    img = layers.data(name="img", shape=[2, 3, 6, 6], append_batch_size=False)
    wv = layers.data(name="w", shape=[2, 5, 4, 4], append_batch_size=False)
    out = layers.conv2d(img, 5, 3)
    bias = out.op.input("Y")[0]
    loss = layers.reduce_sum(layers.elementwise_mul(out, wv))
    tide.append_backward(loss)
    exe = tide.Executor(tide.CPUPlace())
    exe.run(tide.default_startup_program())
    (db,) = exe.run(feed={"img": x, "w": w}, fetch_list=[bias + "@GRAD"])
    assert "fused_conv2d" in [op for op, _ in exe.last_run_info()["kernels"]]
    np.testing.assert_allclose(db, w.astype("float64").sum(axis=(0, 2, 3)), rtol=1e-5)


def test_refuses_what_is_not_a_program():
    with pytest.raises(TypeError, match="needs a Program"):
        fuse_conv_bias_act("main")
