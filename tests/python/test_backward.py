"""append_backward: gradients match numpy on graphs with shared variables (summed), with
stop_gradient and no_grad_set (no gradient, no grad ops), and with pruned branches."""

import numpy as np
import pytest

import tide
from tide import layers


def _param(name, value):
    p = layers.create_parameter(
        shape=value.shape,
        dtype="float32",
        name=name,
        default_initializer=tide.initializer.Constant(0.0),
    )
    return p


def _set(name, value):
    tide.global_scope().var(name).get_tensor().set(
        np.asarray(value, dtype="float32"), tide.CPUPlace(), False
    )


def _get(name):
    return np.array(tide.global_scope().find_var(name).get_tensor())


def test_shared_variable_gradients_are_summed(exe, rng):
    x0 = rng.uniform(-1, 1, (3, 4)).astype("float32")
    x = _param("x", x0)
    y = layers.elementwise_add(layers.elementwise_mul(x, x), layers.scale(x, scale=3.0))  # x^2 + 3x
    loss = layers.mean(y)
    pairs = tide.append_backward(loss)
    assert [(p.name, g.name) for p, g in pairs] == [("x", "x@GRAD")]
    types = [op.type for op in tide.default_main_program().global_block().ops]
    assert "sum" in types, types  # x@GRAD accumulated from two grad ops
    exe.run(tide.default_startup_program())
    _set("x", x0)
    (g,) = exe.run(fetch_list=["x@GRAD"])
    np.testing.assert_allclose(g, (2 * x0 + 3) / x0.size, rtol=1e-5)


def test_stop_gradient_cuts_the_graph(exe, rng):
    x = layers.data(name="x", shape=[4])
    h = layers.fc(input=x, size=5, param_attr="w1", bias_attr=False)
    h.stop_gradient = True
    out = layers.fc(input=h, size=1, param_attr="w2", bias_attr=False)
    loss = layers.mean(out)
    pairs = tide.append_backward(loss)
    assert [p.name for p, _ in pairs] == ["w2"]
    block = tide.default_main_program().global_block()
    assert "w1@GRAD" not in block.vars
    grad_inputs = [n for op in block.ops if op.type == "mul_grad" for n in op.output_arg_names]
    assert "h@GRAD" not in grad_inputs


def test_no_grad_set_and_pruned_branches(exe, rng):
    x = layers.data(name="x", shape=[4])
    a = layers.fc(input=x, size=3, param_attr="wa", bias_attr=False)
    b = layers.fc(input=a, size=1, param_attr="wb", bias_attr=False)
    layers.fc(input=x, size=2, param_attr="w_unused", bias_attr=False)  # does not reach the loss
    loss = layers.mean(b)
    pairs = tide.append_backward(loss, no_grad_set={"wa"})
    assert [p.name for p, _ in pairs] == ["wb"]
    block = tide.default_main_program().global_block()
    assert "wa@GRAD" not in block.vars and "w_unused@GRAD" not in block.vars
    exe.run(tide.default_startup_program())
    xs = rng.rand(6, 4).astype("float32")
    wa, wb = _get("wa"), _get("wb")
    (gb,) = exe.run(feed={"x": xs}, fetch_list=["wb@GRAD"])
    np.testing.assert_allclose(gb, (xs @ wa).mean(0, keepdims=True).T, rtol=1e-5)
    del wb


def test_fc_gradients_match_numpy(exe, rng):
    x = layers.data(name="x", shape=[3])
    y = layers.data(name="y", shape=[1])
    pred = layers.fc(input=x, size=1, param_attr="w", bias_attr="b")
    loss = layers.mean(layers.square_error_cost(pred, y))
    tide.append_backward(loss)
    exe.run(tide.default_startup_program())
    xs, ys = rng.rand(8, 3).astype("float32"), rng.rand(8, 1).astype("float32")
    w, b = _get("w"), _get("b")
    gw, gb = exe.run(feed={"x": xs, "y": ys}, fetch_list=["w@GRAD", "b@GRAD"])
    r = xs @ w + b - ys
    np.testing.assert_allclose(gw, 2 * xs.T @ r / 8, rtol=1e-4)
    np.testing.assert_allclose(gb, [2 * r.mean()], rtol=1e-4)


def test_backward_errors():
    x = layers.data(name="x", shape=[4])
    with pytest.raises(TypeError, match="must be a Variable"):
        tide.append_backward("x")
    h = layers.fc(input=x, size=3)
    with pytest.raises(tide.InvalidArgumentError, match="must hold one element"):
        tide.append_backward(h)


def _complex_abs_of(h, width, name="c"):
    """|h + i h| through a complex64 variable `name` (ops_math's complex and abs)."""
    block = tide.default_main_program().global_block()
    c = block.create_var(name=name, dtype="complex64", shape=[-1, width])
    block.append_op(type="complex", inputs={"X": [h], "Y": [h]}, outputs={"Out": [c]})
    a = block.create_var(name=name + "_abs", dtype="float32", shape=[-1, width])
    block.append_op(type="abs", inputs={"X": [c]}, outputs={"Out": [a]})
    return a


def test_a_gradient_through_complex_values_reaches_the_parameter(exe):
    """h = fc(x) feeds the loss directly and through complex values (|h + ih|): the parameter's
    gradient sums both paths, d/dh mean(sqrt(2)|h| + h) = (sqrt(2) sign(h) + 1) / n."""
    x = layers.data(name="x", shape=[4])
    h = layers.fc(input=x, size=3, param_attr="w", bias_attr=False)
    loss = layers.mean(layers.elementwise_add(_complex_abs_of(h, 3), h))
    pairs = tide.append_backward(loss)
    assert [p.name for p, _ in pairs] == ["w"]
    ops = [op.type for op in tide.default_main_program().global_block().ops]
    assert "complex_grad" in ops and "abs_grad" in ops
    exe.run(tide.default_startup_program())
    xv = np.random.RandomState(3).uniform(-1, 1, (5, 4)).astype("float32")
    w = np.array(tide.global_scope().find_var("w").get_tensor())
    (g,) = exe.run(feed={"x": xv}, fetch_list=[pairs[0][1]])
    dh = (np.sqrt(2) * np.sign(xv @ w) + 1) / (5 * 3)
    np.testing.assert_allclose(g, xv.T @ dh, rtol=1e-5, atol=1e-6)


def test_complex_values_without_a_gradient_leave_the_rest_trained():
    """Complex values computed from data only, or named in no_grad_set, are no error."""
    x = layers.data(name="x", shape=[4])
    h = layers.fc(input=x, size=4, param_attr="w", bias_attr=False)
    from_data = _complex_abs_of(x, 4, "c_data")
    from_w = _complex_abs_of(h, 4, "c_w")
    loss = layers.mean(layers.elementwise_mul(layers.elementwise_add(from_data, from_w), h))
    pairs = tide.append_backward(loss, no_grad_set={"c_w"})
    assert [p.name for p, _ in pairs] == ["w"]


@pytest.mark.parametrize("dense_use", [False, True])
def test_shared_sparse_embedding_gradients_are_summed(exe, dense_use):
    """Two sparse lookups of one table: backward sums two SelectedRows (a SelectedRows), or with
    a dense use of the table too, a dense gradient; SGD applies either, as numpy says."""
    vocab, dim = 6, 3
    w0 = np.arange(vocab * dim, dtype="float32").reshape(vocab, dim) / 10
    ids_a = layers.data(name="a", shape=[1], dtype="int64")
    ids_b = layers.data(name="b", shape=[1], dtype="int64")
    attr = tide.ParamAttr(name="emb", initializer=tide.initializer.Constant(0.0))
    ea = layers.embedding(ids_a, size=[vocab, dim], is_sparse=True, param_attr=attr)
    eb = layers.embedding(ids_b, size=[vocab, dim], is_sparse=True, param_attr="emb")
    loss = layers.mean(layers.elementwise_add(ea, eb))
    if dense_use:
        w = tide.default_main_program().global_block().var("emb")
        loss = layers.sums([loss, layers.mean(w)])
    tide.optimizer.SGD(learning_rate=1.0).minimize(loss)
    block = tide.default_main_program().global_block()
    assert block.var("emb@GRAD").type == ("LOD_TENSOR" if dense_use else "SELECTED_ROWS")
    exe.run(tide.default_startup_program())
    _set("emb", w0)
    a = np.array([[1], [4], [1]], "int64")
    b = np.array([[4], [0], [5]], "int64")
    exe.run(feed={"a": a, "b": b})
    grad = np.zeros_like(w0)
    for i in list(a[:, 0]) + list(b[:, 0]):
        grad[i] += 1.0 / (3 * dim)
    if dense_use:
        grad += 1.0 / w0.size
    np.testing.assert_allclose(_get("emb"), w0 - grad, rtol=1e-5, atol=1e-6)


def test_an_op_using_one_variable_twice_sums_both_gradients(exe, rng):
    # x * x: the grad op writes x@GRAD twice (as X's and as Y's); both parts are summed.
    x = tide.layers.data(name="x", shape=[3], dtype="float64", stop_gradient=False)
    loss = tide.layers.mean(tide.layers.elementwise_mul(x, x))
    tide.append_backward(loss, parameter_list=["x"])
    xs = rng.uniform(-1, 1, (2, 3))
    (g,) = exe.run(feed={"x": xs}, fetch_list=["x@GRAD"])
    np.testing.assert_allclose(g, 2 * xs / 6, rtol=1e-12)
