"""Program building: names, guards, to_string, clone(for_test), initializers, generated layers,
and clear errors when a layer is misused."""

import numpy as np
import pytest

import tide
from tide import layers


def test_unique_names_and_to_string():
    x = layers.data(name="x", shape=[3])
    a = layers.fc(input=x, size=2)
    b = layers.fc(input=x, size=2)
    main = tide.default_main_program()
    params = sorted(p.name for p in main.all_parameters())
    assert params == ["fc_0.b_0", "fc_0.w_0", "fc_1.b_0", "fc_1.w_0"]
    text = main.summary(with_details=True)
    assert "op mul(X=[x], Y=[fc_0.w_0])" in text and "trainable=True" in text
    assert a.shape == (-1, 2) and b.dtype == "float32"


def test_batch_norm_statistics_carry_fluids_names():
    """Fluid names batch_norm's running mean and variance batch_norm_0.w_1 / .w_2 (after the
    scale's w_0): the same names here, so a checkpoint Fluid saved loads into the model."""
    x = layers.data(name="x", shape=[3, 4, 4], dtype="float32")
    layers.batch_norm(layers.batch_norm(x))
    params = sorted(p.name for p in tide.default_main_program().all_parameters())
    names = ["batch_norm_%d.%s" % (i, s) for i in (0, 1) for s in ("b_0", "w_0", "w_1", "w_2")]
    assert params == names
    # Named by the user: those names, and the generated ones unchanged.
    layers.batch_norm(x, moving_mean_name="m", moving_variance_name="v")
    params = {p.name for p in tide.default_main_program().all_parameters()}
    assert {"m", "v", "batch_norm_2.w_0", "batch_norm_2.b_0"} <= params


def test_program_guard_and_startup_ops():
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[4])
        layers.fc(
            input=x,
            size=3,
            param_attr=tide.ParamAttr(initializer=tide.initializer.Uniform(-0.1, 0.1)),
        )
    assert [op.type for op in startup.global_block().ops] == ["uniform_random", "fill_constant"]
    assert len(tide.default_main_program().global_block().ops) == 0


def test_clone_for_test_drops_training_ops():
    x = layers.data(name="x", shape=[4])
    h = (
        layers.dropout(layers.fc(input=x, size=3), dropout_prob=0.5)
        if tide._C.has_op("dropout")
        else layers.fc(input=x, size=3)
    )
    loss = layers.mean(h)
    tide.optimizer.SGD(0.1).minimize(loss)
    test = tide.default_main_program().clone(for_test=True)
    types = [op.type for op in test.global_block().ops]
    assert "sgd" not in types and not any(t.endswith("_grad") for t in types)
    for op in test.global_block().ops:
        if op.has_attr("is_test"):
            assert op.attr("is_test") is True
    assert {p.name for p in test.all_parameters()} == {
        p.name for p in tide.default_main_program().all_parameters()
    }


@pytest.mark.parametrize(
    "init,check",
    [
        (tide.initializer.Constant(0.5), lambda w: np.all(w == 0.5)),
        (
            tide.initializer.Uniform(-0.2, 0.2),
            lambda w: w.min() >= -0.2 and w.max() < 0.2 and w.std() > 0.05,
        ),
        (
            tide.initializer.Normal(0.0, 0.1),
            lambda w: abs(w.mean()) < 0.03 and 0.07 < w.std() < 0.13,
        ),
        (tide.initializer.Xavier(), lambda w: np.abs(w).max() <= np.sqrt(6.0 / 150) + 1e-6),
        (
            tide.initializer.MSRA(uniform=False),
            lambda w: 0.7 * np.sqrt(2 / 50) < w.std() < 1.3 * np.sqrt(2 / 50),
        ),
    ],
)
def test_initializers(exe, init, check):
    x = layers.data(name="x", shape=[50])
    layers.fc(input=x, size=100, param_attr=tide.ParamAttr(name="w", initializer=init))
    exe.run(tide.default_startup_program())
    w = np.array(tide.global_scope().find_var("w").get_tensor())
    assert w.shape == (50, 100) and check(w)


def test_seeded_initialisation_is_reproducible(exe):
    x = layers.data(name="x", shape=[8])
    layers.fc(input=x, size=8, param_attr="w")
    exe.run(tide.default_startup_program())
    a = np.array(tide.global_scope().find_var("w").get_tensor()).copy()
    exe.run(tide.default_startup_program())
    b = np.array(tide.global_scope().find_var("w").get_tensor())
    np.testing.assert_array_equal(a, b)


def test_generated_layer_from_op_proto(exe):
    x = layers.data(name="x", shape=[3])
    out = layers.clip(x, min=-0.5, max=0.5)  # not hand-written: generated from clip's proto
    assert "min" in layers.clip.__doc__
    xs = np.array([[-2.0, 0.1, 3.0]], "float32")
    (got,) = exe.run(feed={"x": xs}, fetch_list=[out])
    np.testing.assert_array_equal(got, np.clip(xs, -0.5, 0.5))
    with pytest.raises(TypeError, match="unknown argument"):
        layers.clip(x, nonsense=1)


def test_variable_arithmetic_operators(exe):
    """a + b, a - b, a * b, a / b build elementwise ops (tide.layers sets them on Variable); a
    number on either side is a [1] tensor of the Variable's dtype, and keeps its side."""
    x = layers.data(name="x", shape=[3])
    y = layers.data(name="y", shape=[3])
    w = layers.create_parameter(shape=[3], dtype="float32", name="w")
    exprs = [x + y, x - y, x * y, x / y, x + 1.0, 1.0 - x, 2 * x, 1.0 / x, w * x]
    types = [v.op.type for v in exprs]
    assert types == [
        "elementwise_add",
        "elementwise_sub",
        "elementwise_mul",
        "elementwise_div",
        "elementwise_add",
        "elementwise_sub",
        "elementwise_mul",
        "elementwise_div",
        "elementwise_mul",
    ]
    assert exprs[5].op.input("Y") == ["x"] and exprs[4].op.input("X") == ["x"]
    xs = np.array([[1.0, 2.0, 4.0]], "float32")
    ys = np.array([[2.0, 0.5, 8.0]], "float32")
    exe.run(tide.default_startup_program())  # w, a Parameter: it has the operators too
    got = exe.run(feed={"x": xs, "y": ys}, fetch_list=exprs[:8])
    want = [xs + ys, xs - ys, xs * ys, xs / ys, xs + 1, 1 - xs, 2 * xs, 1 / xs]
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-6)


def test_layer_errors_are_clear():
    x = layers.data(name="x", shape=[3])
    with pytest.raises(TypeError, match="must be a Variable"):
        layers.mean("x")
    with pytest.raises(
        tide.InvalidArgumentError, match=r"op 'scale' attribute 'scale' must be float"
    ):
        tide.default_main_program().global_block().append_op(
            "scale", inputs={"X": x}, outputs={"Out": x}, attrs={"scale": "big"}
        )
    assert tide.default_main_program().global_block().desc.op_size() == 0  # nothing half-added
    w = layers.create_parameter(shape=[4, 2], dtype="float32", name="w")
    with pytest.raises(tide.InvalidArgumentError, match=r"op 'mul'.*width 3.*height 4"):
        layers.mul(x, w)


def test_parse_rejects_garbage():
    with pytest.raises(tide.InvalidArgumentError, match="ProgramDesc"):
        tide.Program.parse_from_string(b"\x00\x01\x02 definitely not a program")
    p = tide.Program.parse_from_string(tide.default_main_program().serialize_to_string())
    assert p.num_blocks == 1


def test_nets_conv_groups(exe, rng):
    img = layers.data(name="img", shape=[3, 8, 8])
    a = tide.nets.simple_img_conv_pool(
        img, num_filters=4, filter_size=3, pool_size=2, pool_stride=2, conv_padding=1, act="relu"
    )
    b = tide.nets.img_conv_group(
        img,
        conv_num_filter=[4, 6],
        pool_size=2,
        pool_stride=2,
        conv_act="relu",
        conv_with_batchnorm=[False, True],
    )
    assert a.shape == (-1, 4, 4, 4) and b.shape == (-1, 6, 4, 4)
    types = [op.type for op in tide.default_main_program().global_block().ops]
    assert (
        types.count("conv2d") == 3 and types.count("pool2d") == 2 and types.count("batch_norm") == 1
    )
    exe.run(tide.default_startup_program())
    out_a, out_b = exe.run(feed={"img": rng.rand(2, 3, 8, 8).astype("float32")}, fetch_list=[a, b])
    assert out_a.shape == (2, 4, 4, 4) and (out_a >= 0).all()
    assert out_b.shape == (2, 6, 4, 4) and np.isfinite(out_b).all()
    with pytest.raises(ValueError, match="must have 2 entries"):
        tide.nets.img_conv_group(img, conv_num_filter=[4, 6], pool_size=2, conv_padding=[1, 1, 1])
