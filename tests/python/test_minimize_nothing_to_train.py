"""optimizer.minimize(loss) with no parameter receiving a gradient used to return ([], []) in
silence, and training did nothing: it warns, naming the loss and why (no trainable parameters at
all; or parameters whose gradient stops at an op declaring none, at stop_gradient, ...)."""

import warnings

import numpy as np
import pytest

import tide
from tide import layers
from tide.contrib import mixed_precision


def _minimize(loss, **kwargs):
    return tide.optimizer.SGD(0.1).minimize(loss, **kwargs)


def test_an_op_declaring_no_gradient_on_the_way_is_named():
    x = layers.data(name="x", shape=[3], dtype="float32")
    h = layers.fc(input=x, size=3, param_attr="w", bias_attr="b")
    # arg_max declares it has no gradient (OpSchema::NoGradient): nothing reaches w or b
    loss = layers.mean(layers.cast(layers.argmax(h, axis=1), "float32"))
    with pytest.warns(
        UserWarning,
        match=r"minimize\(loss '%s'\): no trainable parameter receives a gradient "
        r"\(parameters: b, w; the gradient stops at op\(s\) that declare none: 'arg_max'"
        % loss.name,
    ):
        ops, params_grads = _minimize(loss)
    assert ops == [] and params_grads == []


def test_parameters_all_stop_gradient():
    x = layers.data(name="x", shape=[3], dtype="float32")
    h = layers.fc(input=x, size=1, param_attr="w", bias_attr="b")
    loss = layers.mean(h)
    for name in ("w", "b"):
        tide.default_main_program().global_block().var(name).stop_gradient = True
    with pytest.warns(UserWarning, match=r"no trainable parameter.*b, w: stop_gradient"):
        assert _minimize(loss) == ([], [])


def test_a_stop_gradient_variable_on_the_way_is_named():
    x = layers.data(name="x", shape=[3], dtype="float32")
    h = layers.fc(input=x, size=3, param_attr="w", bias_attr=False)
    h.stop_gradient = True
    loss = layers.mean(layers.relu(h))
    with pytest.warns(
        UserWarning, match=r"\(parameters: w; stop_gradient on the way: %s\)" % h.name
    ):
        _minimize(loss)


def test_no_trainable_parameters_says_which():
    x = layers.data(name="x", shape=[3], dtype="float32")
    x.stop_gradient = False
    loss = layers.mean(layers.square(x))
    with pytest.warns(
        UserWarning,
        match=r"minimize\(loss '%s'\): the program has no trainable parameters \(none at all\)"
        % loss.name,
    ):
        assert _minimize(loss) == ([], [])


def test_untrainable_parameters_are_named():
    x = layers.data(name="x", shape=[3], dtype="float32")
    frozen = tide.ParamAttr(name="w", trainable=False)
    loss = layers.mean(layers.fc(input=x, size=1, param_attr=frozen, bias_attr=False))
    with pytest.warns(UserWarning, match=r"no trainable parameters \(w: trainable=False\)"):
        _minimize(loss)


def test_the_amp_optimizer_warns_too():
    x = layers.data(name="x", shape=[3], dtype="float32")
    x.stop_gradient = False
    loss = layers.mean(layers.square(x))
    opt = mixed_precision.decorate(tide.optimizer.SGD(0.1), use_dynamic_loss_scaling=False)
    with pytest.warns(UserWarning, match="no trainable parameters"):
        opt.minimize(loss)


def test_a_program_that_trains_does_not_warn(exe):
    x = layers.data(name="x", shape=[3], dtype="float32")
    h = layers.fc(input=x, size=3, param_attr="w", bias_attr="b")
    # one way through an op without a gradient, the other trains w and b
    loss = layers.mean(layers.cast(layers.argmax(h, axis=1), "float32")) + layers.mean(h)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ops, params_grads = _minimize(loss)
    assert sorted(p.name for p, _ in params_grads) == ["b", "w"]
    exe.run(tide.default_startup_program())
    w0 = np.array(tide.global_scope().find_var("w").get_tensor()).copy()
    exe.run(feed={"x": np.ones((2, 3), "float32")}, fetch_list=[loss])
    assert not np.array_equal(np.array(tide.global_scope().find_var("w").get_tensor()), w0)
