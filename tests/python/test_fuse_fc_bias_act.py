"""fuse_fc_bias_act: a fully connected layer's mul, bias add and activation run as one fc while
training (the Executor's rewrite on CPU places). The rewritten program trains to the losses and
parameters of the program as written (the unfused ops are the reference, themselves checked
against numpy in the op tests), with and without the weight-update fusion after it, and the
rewrite leaves alone every layer whose intermediate values something else reads or whose W fc
cannot take."""

import numpy as np
import pytest
import training_fusion
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn
from training_fusion import assert_same_training, op_types

import tide
from tide import layers
from tide.transpiler.fuse_conv_bias_act import fuse_fc_bias_act

STEPS = 4


def mlp(act2="sigmoid", optimizer="sgd"):
    """x [5, 12] -> fc 16 relu -> fc 8 act2 -> fc 3 (no act) -> mean of squares; a 3-D input
    (num_flatten_dims 2) for the first layer."""
    x = layers.data(name="x", shape=[5, 12])
    h1 = layers.fc(x, 16, num_flatten_dims=2, act="relu")
    h2 = layers.fc(h1, 8, num_flatten_dims=2, act=act2)
    h3 = layers.fc(h2, 3, num_flatten_dims=2)
    loss = layers.mean(layers.square(h3))
    opt = tide.optimizer.SGD(0.1) if optimizer == "sgd" else tide.optimizer.Momentum(0.1, 0.9)
    opt.minimize(loss)
    block = tide.default_main_program().global_block()
    h1_sum = block.var(h1.op.input("X")[0])  # mul + bias, before the relu
    h2_mul = block.var(block.var(h2.op.input("X")[0]).op.input("X")[0])  # before the bias
    return loss, {"h1": h1, "h2": h2, "h3": h3, "h1_sum": h1_sum, "h2_mul": h2_mul}


def train(core_flags, fused, build=mlp, fetch=(), weights=False, use_mkldnn=False, **kw):
    """Losses (and fetched values) of STEPS steps, the final parameters, the last run's ops."""
    core_flags(fuse_fc_bias_act=fused, fuse_weight_updates=weights, use_mkldnn=use_mkldnn)
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 7
    with tide.program_guard(main, startup), tide.unique_name.guard():
        loss, outs = build(**kw)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    x = np.random.RandomState(1).standard_normal((4, 5, 12)).astype("float32")
    results = [
        exe.run(main, feed={"x": x}, fetch_list=[loss] + [outs[n] for n in fetch], scope=scope)
        for _ in range(STEPS)
    ]
    params = {
        p.name: np.array(scope.find_var(p.name).get_tensor())
        for p in main.global_block().all_parameters()
    }
    return results, params, [op for op, _ in exe.last_run_info()["kernels"]]


@pytest.mark.parametrize("act2", ["sigmoid", "tanh", "relu", "gelu"])
def test_trains_as_the_program_as_written(core_flags, act2):
    fused = train(core_flags, True, act2=act2)
    plain = train(core_flags, False, act2=act2)
    assert_same_training(fused, plain)
    # every layer fused (gelu's gradient reads its X: that layer keeps its act op)
    assert fused[2].count("fc") == 3 and "mul" not in fused[2]
    assert fused[2].count(act2) == (1 if act2 == "gelu" else 0)
    assert "fc" not in plain[2]


@pytest.mark.parametrize("optimizer", ["sgd", "momentum"])
def test_with_the_weight_update_fusion_after_it(core_flags, optimizer):
    fused = train(core_flags, True, weights=True, optimizer=optimizer)
    plain = train(core_flags, False, weights=False, optimizer=optimizer)
    assert_same_training(fused, plain)
    assert fused[2].count("fc") == 3
    # every weight's gradient goes into its update; mul_grad is left the inputs' gradients of the
    # second and third layers (the first reads data)
    assert fused[2].count("fused_mul_weight_update") == 3 and fused[2].count("mul_grad") == 2


@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
def test_onednn_kernels_train_alike(core_flags):
    assert_same_training(
        train(core_flags, True, use_mkldnn=True), train(core_flags, False, use_mkldnn=True), 1e-4
    )


def test_a_fetched_intermediate_keeps_its_layer_unfused(core_flags):
    fetch = ("h1", "h1_sum", "h2_mul")
    fused = train(core_flags, True, fetch=fetch)
    assert_same_training(fused, train(core_flags, False, fetch=fetch))
    # the first layer keeps its relu (its input is fetched), the second stays as it is
    assert fused[2].count("fc") == 2
    assert fused[2].count("relu") == 1 and fused[2].count("sigmoid") == 1


def rewrite(build=mlp, skip=(), **kw):
    return training_fusion.rewrite(fuse_fc_bias_act, build, skip, **kw)


def test_the_rewritten_program():
    main, outs, fused = rewrite()
    assert len(fused) == 3
    types = op_types(main)
    assert types.count("fc") == 3 and "mul" not in types
    assert "relu" not in types and "sigmoid" not in types and "elementwise_add" not in types
    block = main.global_block()
    fcs = [op for op in block.ops if op.type == "fc"]
    assert [op.attr("fuse_activation") for op in fcs] == ["relu", "sigmoid", ""]
    assert [op.attr("in_num_col_dims") for op in fcs] == [2, 2, 2]
    assert fcs[0].output("Out") == [outs["h1"].name]
    # mul_grad reads the add's Out@GRAD; the add's gradient writes the bias's gradient only
    for add_grad in [op for op in block.ops if op.type == "elementwise_add_grad"]:
        assert add_grad.output("X@GRAD") == []
        assert add_grad.input("X") == add_grad.input("Out@GRAD")
        assert any(
            op.type == "mul_grad" and op.input("Out@GRAD") == add_grad.input("Out@GRAD")
            for op in block.ops
        )
    names = set(block.vars)
    for op in block.ops:
        for n in op.input_arg_names + op.output_arg_names:
            assert n in names or n == "@EMPTY@", n


def test_layers_fc_cannot_take_or_that_others_read_stay():
    def odd_layers():
        x = layers.data(name="x", shape=[6])
        w = layers.create_parameter([2, 3, 4], "float32", name="w3d")  # a 3-D W: not fc's
        h = layers.mul(layers.reshape(x, [-1, 2, 3]), w, x_num_col_dims=1, y_num_col_dims=2)
        h = layers.fc(layers.reshape(h, [-1, 4]), 4, act="tanh")
        pre = h.op.input("X")[0]  # the bias add's output, read again below
        extra = layers.scale(tide.default_main_program().global_block().var(pre), 2.0)
        loss = layers.elementwise_add(layers.mean(h), layers.mean(extra))
        tide.optimizer.SGD(0.1).minimize(loss)
        return loss, {"h": h}

    main, _, fused = rewrite(odd_layers)
    # the 3-D W's mul stays; the fc's mul and bias fuse, its tanh stays (its input is read)
    assert len(fused) == 1
    assert op_types(main).count("mul") == 1 and op_types(main).count("tanh") == 1
    main, _, fused = rewrite(skip=("h1_sum",))
    assert len(fused) == 3 and op_types(main).count("relu") == 1
    main, _, fused = rewrite(skip=("h2_mul",))
    assert len(fused) == 2 and op_types(main).count("sigmoid") == 1


def test_public_in_tide_transpiler():
    # docs/memory.md names it tide.transpiler.fuse_fc_bias_act, beside fuse_conv_bias_act
    assert tide.transpiler.fuse_fc_bias_act is fuse_fc_bias_act
    assert "fuse_fc_bias_act" in tide.transpiler.__all__
    main, _, fused = training_fusion.rewrite(tide.transpiler.fuse_fc_bias_act, mlp, ())
    assert len(fused) == 3 and "mul" not in op_types(main)


def test_refuses_what_is_not_a_program():
    with pytest.raises(TypeError, match="fuse_fc_bias_act needs a Program"):
        fuse_fc_bias_act("main")


def test_sequences_keep_their_lod(core_flags):
    # fc shares Input's LoD with Out as mul does: a sequence op after the fused layer still sees
    # the sequences (it used to lose them: "Input ... has no LoD").
    def run(fused):
        core_flags(fuse_fc_bias_act=fused)
        main, startup = tide.Program(), tide.Program()
        main.random_seed = startup.random_seed = 2
        with tide.program_guard(main, startup), tide.unique_name.guard():
            x = layers.data(name="x", shape=[6], lod_level=1)
            h = layers.fc(x, 4, act="tanh")
            loss = layers.mean(layers.sequence_pool(h, "sum"))
            tide.optimizer.SGD(0.1).minimize(loss)
        exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
        exe.run(startup, scope=scope)
        t = tide.LoDTensor(np.random.RandomState(3).standard_normal((5, 6)).astype("float32"))
        t.set_recursive_sequence_lengths([[2, 3]])
        losses = [exe.run(main, feed={"x": t}, fetch_list=[loss], scope=scope)[0] for _ in range(3)]
        return losses, [op for op, _ in exe.last_run_info()["kernels"]]

    fused, plain = run(True), run(False)
    assert "fc" in fused[1] and "fc" not in plain[1]
    np.testing.assert_allclose(fused[0], plain[0], rtol=1e-5, atol=1e-6)
