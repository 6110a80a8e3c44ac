"""Control flow in programs (the ops_control plugin and tide.layers' While, Switch, IfElse,
ConditionalBlock, tensor arrays, piecewise_decay), forward, against numpy; bad input."""

import numpy as np
import pytest
from ctest_env import require
from float64_grad import central_diff

import tide
from tide import layers


def _counter_loop(n, is_test=False):
    """i = 0; cond = i < n; returns (i, limit, cond, While)."""
    i = layers.fill_constant([1], "int64", 0)
    limit = layers.fill_constant([1], "int64", n)
    cond = layers.less_than(i, limit)
    return i, limit, cond, layers.While(cond, is_test=is_test)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("is_test", [False, True])
def test_while_runs_its_body_until_the_condition_fails(exe, rng, dtype, is_test):
    x = layers.data(name="x", shape=[3], dtype=dtype)
    s = layers.fill_constant([2, 3], dtype, 1.0)
    i, limit, cond, loop = _counter_loop(7, is_test)
    with loop.block():
        layers.assign(layers.elementwise_add(layers.scale(s, 2.0), x), s)  # s = 2 s + x
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    xs = rng.uniform(-1, 1, (2, 3)).astype(dtype)
    want = np.ones((2, 3), dtype)
    for _ in range(7):
        want = 2 * want + xs
    for _ in range(2):  # a second run starts from the program's values again
        got_s, got_i = exe.run(feed={"x": xs}, fetch_list=[s, i])
        np.testing.assert_allclose(got_s, want, rtol=1e-6)
        assert got_i.tolist() == [7]


def test_while_that_never_runs(exe):
    s = layers.fill_constant([1], "float32", 5.0)
    i, limit, cond, loop = _counter_loop(0)
    with loop.block():
        layers.assign(layers.scale(s, 3.0), s)
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    (got,) = exe.run(fetch_list=[s])
    assert got.tolist() == [5.0]


def test_arrays_written_in_a_loop_read_back(exe, rng):
    x = layers.data(name="x", shape=[4], dtype="float32")
    arr = layers.create_array("float32")
    i, limit, cond, loop = _counter_loop(5)
    with loop.block():
        scaled = layers.elementwise_mul(x, layers.cast(i, "float32"))
        layers.array_write(scaled, i, array=arr)
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    n = layers.array_length(arr)
    three = layers.fill_constant([1], "int64", 3)
    third = layers.array_read(arr, three)
    xs = rng.rand(2, 4).astype("float32")
    got_n, got_third = exe.run(feed={"x": xs}, fetch_list=[n, third])
    assert got_n.tolist() == [5]
    np.testing.assert_allclose(got_third, 3 * xs, rtol=1e-6)


def test_array_keeps_lod(exe):
    x = layers.data(name="x", shape=[2], dtype="float32", lod_level=1)
    zero = layers.fill_constant([1], "int64", 0)
    arr = layers.array_write(x, zero)
    back = layers.array_read(arr, zero)
    t = tide.LoDTensor(np.arange(10, dtype="float32").reshape(5, 2))
    t.set_lod([[0, 2, 5]])
    (got,) = exe.run(feed={"x": t}, fetch_list=[back], return_numpy=False)
    assert got.lod() == [[0, 2, 5]]
    np.testing.assert_array_equal(np.array(got), np.arange(10, dtype="float32").reshape(5, 2))


@pytest.mark.parametrize(
    "step,want", [(0, 1.0), (2, 1.0), (3, 0.5), (9, 0.5), (10, 0.1), (50, 0.1)]
)
def test_switch_takes_the_first_case_that_holds(exe, step, want):
    s = layers.data(name="s", shape=[1], dtype="float32", append_batch_size=False)
    out = layers.fill_constant([1], "float32", -1.0)
    with layers.Switch() as switch:
        with switch.case(layers.less_than(s, layers.fill_constant([1], "float32", 3.0))):
            layers.assign(layers.fill_constant([1], "float32", 1.0), out)
        with switch.case(layers.less_than(s, layers.fill_constant([1], "float32", 10.0))):
            layers.assign(layers.fill_constant([1], "float32", 0.5), out)
        with switch.default():
            layers.assign(layers.fill_constant([1], "float32", 0.1), out)
    (got,) = exe.run(feed={"s": np.array([step], "float32")}, fetch_list=[out])
    np.testing.assert_allclose(got, [want])


@pytest.mark.parametrize("a_value,want", [(5.0, 1.0), (-4.0, 1.0), (20.0, 2.0)])
def test_switch_in_the_seeds_form(exe, a_value, want):
    # Fluid's developer guide's `switch = fluid.switch(); with switch.block(): with switch.case(...)`, with
    # its conditions (a <= 10, then a > 0, else a default no value reaches): the same Switch as
    # `with Switch()`.
    import tide as fluid

    a = layers.data(name="a", shape=[1], dtype="float32", append_batch_size=False)
    ten, zero = (
        layers.fill_constant([1], "float32", 10.0),
        layers.fill_constant([1], "float32", 0.0),
    )
    out = layers.fill_constant([1], "float32", -1.0)
    switch = fluid.switch()
    assert isinstance(switch, layers.Switch)
    with switch.block():
        with switch.case(layers.less_equal(a, ten)):
            layers.assign(layers.fill_constant([1], "float32", 1.0), out)
        with switch.case(layers.greater_than(a, zero)):
            layers.assign(layers.fill_constant([1], "float32", 2.0), out)
        with switch.default():
            layers.assign(layers.fill_constant([1], "float32", 3.0), out)
    with pytest.raises(ValueError, match="inside"):  # the block is closed again
        switch.case(layers.less_equal(a, ten))
    (got,) = exe.run(feed={"a": np.array([a_value], "float32")}, fetch_list=[out])
    np.testing.assert_allclose(got, [want])


def test_piecewise_decay_follows_the_step_count(exe):
    lr = layers.piecewise_decay(boundaries=[2, 5], values=[1.0, 0.5, 0.1])
    exe.run(tide.default_startup_program())
    got = [float(exe.run(fetch_list=[lr])[0][0]) for _ in range(8)]
    np.testing.assert_allclose(got, [1.0, 1.0, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1], rtol=1e-6)


def test_piecewise_decay_drives_sgd(exe):
    x = layers.data(name="x", shape=[1], dtype="float32")
    w = layers.create_parameter(
        [1, 1], "float32", name="w", default_initializer=tide.initializer.Constant(0.0)
    )
    loss = layers.mean(layers.mul(x, w))  # d loss / d w = mean(x) = 1 with x = 1
    lr = layers.piecewise_decay(boundaries=[2], values=[1.0, 0.25])
    tide.optimizer.SGD(learning_rate=lr).minimize(loss)
    exe.run(tide.default_startup_program())
    ws = []
    for _ in range(4):
        exe.run(feed={"x": np.ones((3, 1), "float32")}, fetch_list=[loss])
        ws.append(float(np.array(tide.global_scope().find_var("w").get_tensor())[0, 0]))
    np.testing.assert_allclose(ws, [-1.0, -2.0, -2.25, -2.5], rtol=1e-6)


def _ifelse_2x_plus_1_or_square(x):
    """IfElse over the rows of x by a fed bool [N, 1] 'mask': 2 x + 1 where it holds, x * x
    elsewhere."""
    mask = layers.data(name="mask", shape=[1], dtype="bool")
    ie = layers.IfElse(mask)
    with ie.true_block():
        ie.output(layers.scale(ie.input(x), 2.0, bias=1.0))
    with ie.false_block():
        xf = ie.input(x)
        ie.output(layers.elementwise_mul(xf, xf))
    (out,) = ie()
    return out


@pytest.mark.parametrize("mask_kind", ["mixed", "all_true", "all_false"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ifelse_matches_numpy_where(exe, rng, mask_kind, dtype):
    out = _ifelse_2x_plus_1_or_square(layers.data(name="x", shape=[3], dtype=dtype))
    xs = rng.uniform(-2, 2, (6, 3)).astype(dtype)
    ms = {
        "mixed": np.array([[1], [0], [0], [1], [1], [0]], bool),
        "all_true": np.ones((6, 1), bool),
        "all_false": np.zeros((6, 1), bool),
    }[mask_kind]
    (got,) = exe.run(feed={"x": xs, "mask": ms}, fetch_list=[out])
    np.testing.assert_allclose(got, np.where(ms, 2 * xs + 1, xs * xs), rtol=1e-6)


def test_split_and_merge_sequences_by_lod(exe):
    x = layers.data(name="x", shape=[1], dtype="float32", lod_level=1)
    mask = layers.data(name="mask", shape=[1], dtype="bool")
    block = tide.default_main_program().global_block()
    t_half = block.create_var(name="t_half", dtype="float32")
    f_half = block.create_var(name="f_half", dtype="float32")
    merged = block.create_var(name="merged", dtype="float32")
    block.append_op(
        "split_lod_tensor",
        inputs={"X": x, "Mask": mask},
        outputs={"OutTrue": t_half, "OutFalse": f_half},
        attrs={"level": 0},
    )
    block.append_op(
        "merge_lod_tensor",
        inputs={"X": x, "Mask": mask, "InTrue": t_half, "InFalse": f_half},
        outputs={"Out": merged},
        attrs={"level": 0},
    )
    t = tide.LoDTensor(np.arange(6, dtype="float32").reshape(6, 1))
    t.set_lod([[0, 2, 3, 6]])  # sequences [0, 1], [2], [3, 4, 5]
    got_t, got_f, got_m = exe.run(
        feed={"x": t, "mask": np.array([[1], [0], [1]], bool)},
        fetch_list=[t_half, f_half, merged],
        return_numpy=False,
    )
    assert np.array(got_t).ravel().tolist() == [0, 1, 3, 4, 5] and got_t.lod() == [[0, 2, 5]]
    assert np.array(got_f).ravel().tolist() == [2] and got_f.lod() == [[0, 1]]
    assert np.array(got_m).ravel().tolist() == list(range(6)) and got_m.lod() == [[0, 2, 3, 6]]


@pytest.mark.parametrize("flag,want", [(True, 7.0), (False, 1.0)])
def test_conditional_block_with_a_scalar_condition(exe, flag, want):
    c = layers.data(name="c", shape=[1], dtype="bool", append_batch_size=False)
    out = layers.fill_constant([1], "float32", 1.0)
    block = layers.ConditionalBlock([c], is_scalar_condition=True)
    with block.block():
        layers.assign(layers.fill_constant([1], "float32", 7.0), out)
    (got,) = exe.run(feed={"c": np.array([flag])}, fetch_list=[out])
    assert got.tolist() == [want]


# --- bad input -------------------------------------------------------------------------------


def test_condition_must_be_a_one_element_bool():
    with pytest.raises(TypeError, match="must be a bool"):
        layers.While(layers.fill_constant([1], "float32", 1.0))
    with pytest.raises(TypeError, match="one element"):
        layers.While(layers.fill_constant([2], "bool", 1.0))


def test_condition_with_several_elements_at_run_time(exe):
    c = layers.data(name="c", shape=[-1], dtype="bool", append_batch_size=False)
    block = tide.default_main_program().global_block()
    sub = tide.default_main_program()._create_block()
    tide.default_main_program()._rollback()
    scopes = block.create_var(name="scopes", type="STEP_SCOPES")
    block.append_op(
        "while", inputs={"Condition": c}, outputs={"StepScopes": scopes}, attrs={"sub_block": sub}
    )
    with pytest.raises(
        tide.InvalidArgumentError, match=r"op 'while'.*condition 'c' must be a one-element bool"
    ):
        exe.run(feed={"c": np.array([True, False])})


def test_array_read_past_its_end(exe):
    x = layers.fill_constant([2], "float32", 1.0)
    arr = layers.array_write(x, layers.fill_constant([1], "int64", 0))
    bad = layers.array_read(arr, layers.fill_constant([1], "int64", 4))
    with pytest.raises(
        tide.InvalidArgumentError,
        match=r"read_from_array.*index 4 is past the end of array .* \(1 element",
    ):
        exe.run(fetch_list=[bad])


def test_array_write_with_a_negative_index(exe):
    x = layers.fill_constant([2], "float32", 1.0)
    layers.array_write(x, layers.fill_constant([1], "int64", -1))
    with pytest.raises(tide.InvalidArgumentError, match=r"write_to_array.*negative \(-1\)"):
        exe.run()


def test_sub_block_reading_an_undeclared_variable():
    out = layers.fill_constant([1], "float32", 1.0)
    c = layers.fill_constant([1], "bool", 1.0)
    program = tide.default_main_program()
    cond_block = layers.ConditionalBlock([c], is_scalar_condition=True)
    with pytest.raises(
        tide.NotFoundError,
        match=r"op 'assign'.*'no_such_var' is not declared in block 1 or its parents",
    ):
        with cond_block.block():
            program.current_block().append_op(
                "assign", inputs={"X": ["no_such_var"]}, outputs={"Out": [out]}
            )
    assert program.current_block().idx == 0  # the failed block is left


def test_an_error_inside_a_loop_names_the_op_and_block(exe):
    i, limit, cond, loop = _counter_loop(3)
    arr = layers.create_array("float32")
    with loop.block():
        layers.array_read(arr, i)  # nothing was written
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    with pytest.raises(
        tide.InvalidArgumentError, match=r"(?s)while.*read_from_array.*index 0 is past the end"
    ):
        exe.run()


# --- gradients --------------------------------------------------------------------------------


def _grad_of(exe, loss, wrt, feed):
    """(loss, d loss / d wrt) through append_backward, as the executor computes them."""
    tide.append_backward(loss, parameter_list=[wrt])
    got_loss, got_grad = exe.run(feed=feed, fetch_list=[loss, wrt + "@GRAD"])
    return float(np.asarray(got_loss).ravel()[0]), got_grad


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_while_grad_matches_finite_differences(exe, rng, dtype):
    iters = 4
    x = layers.data(name="x", shape=[3], dtype=dtype, stop_gradient=False)
    s = layers.fill_constant([2, 3], dtype, 0.5)
    i, limit, cond, loop = _counter_loop(iters)
    with loop.block():
        s_new = layers.elementwise_add(
            layers.tanh(layers.elementwise_mul(s, x)), x
        )  # tanh(s x) + x
        layers.assign(s_new, s)
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    loss = layers.mean(layers.elementwise_mul(s, s))

    def forward(xv):
        sv = np.full((2, 3), 0.5)
        for _ in range(iters):
            sv = np.tanh(sv * xv) + xv
        return np.mean(sv * sv)

    xs = rng.uniform(-1, 1, (2, 3))
    got_loss, got_grad = _grad_of(exe, loss, "x", {"x": xs.astype(dtype)})
    np.testing.assert_allclose(got_loss, forward(xs), rtol=1e-5)
    want = central_diff(forward, xs)
    np.testing.assert_allclose(got_grad, want, rtol=1e-4 if dtype == "float32" else 1e-7, atol=1e-6)
    # The step scopes were freed by the backward pass; a second run gives the same.
    again = exe.run(feed={"x": xs.astype(dtype)}, fetch_list=["x@GRAD"])[0]
    np.testing.assert_allclose(again, got_grad, rtol=1e-6)


def test_while_grad_with_a_read_only_input_sums_over_iterations(exe, rng):
    iters = 3
    x = layers.data(name="x", shape=[4], dtype="float64", stop_gradient=False)
    acc = layers.fill_constant([1, 4], "float64", 0.0)
    i, limit, cond, loop = _counter_loop(iters)
    with loop.block():
        layers.assign(layers.elementwise_add(acc, layers.elementwise_mul(x, x)), acc)  # acc += x^2
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    loss = layers.mean(acc)
    xs = rng.uniform(-1, 1, (1, 4))
    got_loss, got_grad = _grad_of(exe, loss, "x", {"x": xs})
    np.testing.assert_allclose(got_loss, np.mean(iters * xs * xs), rtol=1e-12)
    np.testing.assert_allclose(got_grad, iters * 2 * xs / 4, rtol=1e-12)


def test_backward_through_an_is_test_loop_keeps_its_iterations(exe):
    """An inference program's loop (is_test: one scope for every iteration, none kept) that a user
    differentiates, as when fine-tuning a loaded model: append_backward turns is_test off on the
    loop so that it keeps its iterations for while_grad."""
    x = layers.data(name="x", shape=[2], dtype="float32", stop_gradient=False)
    s = layers.fill_constant([1, 2], "float32", 0.0)
    i, limit, cond, loop = _counter_loop(3, is_test=True)
    with loop.block():
        layers.assign(layers.elementwise_add(s, layers.elementwise_mul(x, x)), s)
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    tide.append_backward(layers.mean(s), parameter_list=["x"])
    (while_op,) = [
        op for op in tide.default_main_program().global_block().ops if op.type == "while"
    ]
    assert while_op.attr("is_test") is False
    xs = np.array([[0.5, -2.0]], "float32")
    (g,) = exe.run(feed={"x": xs}, fetch_list=["x@GRAD"])
    np.testing.assert_allclose(g, 3 * 2 * xs / 2, rtol=1e-6)  # s = 3 x^2, mean over 2


@pytest.mark.parametrize("flag", [True, False])
def test_conditional_block_grad_through_both_branches(exe, rng, flag):
    x = layers.data(name="x", shape=[3], dtype="float64", stop_gradient=False)
    c = layers.data(name="c", shape=[1], dtype="bool", append_batch_size=False)
    out = layers.elementwise_mul(x, x)  # the value when the block does not run: x^2
    with layers.ConditionalBlock([c], is_scalar_condition=True).block():
        layers.assign(layers.scale(x, 3.0), out)  # the value when it does: 3 x
    loss = layers.mean(out)
    xs = rng.uniform(-1, 1, (2, 3))
    got_loss, got_grad = _grad_of(exe, loss, "x", {"x": xs, "c": np.array([flag])})
    want = np.full_like(xs, 3.0 / 6) if flag else 2 * xs / 6
    np.testing.assert_allclose(got_grad, want, rtol=1e-12)


def test_ifelse_grad_matches_numpy(exe, rng):
    out = _ifelse_2x_plus_1_or_square(
        layers.data(name="x", shape=[3], dtype="float64", stop_gradient=False)
    )
    loss = layers.mean(layers.elementwise_mul(out, out))
    xs = rng.uniform(-2, 2, (5, 3))
    ms = np.array([[1], [0], [1], [0], [0]], bool)

    def forward(xv):
        o = np.where(ms, 2 * xv + 1, xv * xv)
        return np.mean(o * o)

    got_loss, got_grad = _grad_of(exe, loss, "x", {"x": xs, "mask": ms})
    np.testing.assert_allclose(got_loss, forward(xs), rtol=1e-12)
    np.testing.assert_allclose(got_grad, central_diff(forward, xs), rtol=1e-6, atol=1e-9)


def test_while_grad_reaches_the_ops_before_the_loop(exe, rng):
    # h = tanh(x * p) before the loop; the loop overwrites h: tanh's gradient must still see the
    # value tanh computed (the layer keeps it under another name), not the loop's result.
    iters = 2
    x = layers.data(name="x", shape=[3], dtype="float64")
    p = layers.data(name="p", shape=[3], dtype="float64", stop_gradient=False)
    h = layers.tanh(layers.elementwise_mul(x, p))
    i, limit, cond, loop = _counter_loop(iters)
    with loop.block():
        layers.assign(layers.elementwise_add(layers.tanh(layers.scale(h, 1.5)), h), h)
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    loss = layers.mean(layers.elementwise_mul(h, h))
    xs, ps = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))

    def forward(pv):
        hv = np.tanh(xs * pv)
        for _ in range(iters):
            hv = np.tanh(1.5 * hv) + hv
        return np.mean(hv * hv)

    got_loss, got_grad = _grad_of(exe, loss, "p", {"x": xs, "p": ps})
    np.testing.assert_allclose(got_loss, forward(ps), rtol=1e-12)
    np.testing.assert_allclose(got_grad, central_diff(forward, ps), rtol=1e-6, atol=1e-9)
    (got_h,) = exe.run(feed={"x": xs, "p": ps}, fetch_list=[h])  # h is still the loop's result
    hv = np.tanh(xs * ps)
    for _ in range(iters):
        hv = np.tanh(1.5 * hv) + hv
    np.testing.assert_allclose(got_h, hv, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_array_write_and_read_grads(exe, rng, dtype):
    # arr = [2x, 3x]; loss = mean(arr[0]^2 + arr[1]): the array's gradient has parts from two
    # reads, summed element by element (tensor_array_sum).
    x = layers.data(name="x", shape=[3], dtype=dtype, stop_gradient=False)
    zero, one = layers.fill_constant([1], "int64", 0), layers.fill_constant([1], "int64", 1)
    arr = layers.array_write(layers.scale(x, 2.0), zero)
    layers.array_write(layers.scale(x, 3.0), one, array=arr)
    a, b = layers.array_read(arr, zero), layers.array_read(arr, one)
    loss = layers.mean(layers.elementwise_add(layers.elementwise_mul(a, a), b))
    xs = rng.uniform(-1, 1, (2, 3)).astype(dtype)
    _, got = _grad_of(exe, loss, "x", {"x": xs})
    np.testing.assert_allclose(got, (8 * xs.astype("float64") + 3) / 6, rtol=1e-5)


def _sim_place():
    """The test-only 'sim' device (not host-accessible: every transfer is a counted copy)."""
    path = require(
        "TIDE_BUILD_DIR",
        "tests",
        "plugins",
        "sim_device",
        "libtide_device_sim.so",
        what="the sim device plugin",
    )
    if not any(p["name"] == "device_sim" and p["status"] == "loaded" for p in tide.plugins()):
        tide.load_plugin(path)
    return tide.Place("sim", 0)


@pytest.mark.parametrize("flag,want", [(True, 6.0), (False, 1.5)])
def test_control_flow_on_a_device_reads_its_condition_back(flag, want):
    # Fed to the sim device, the condition lives there; the ops read it back as one element.
    exe = tide.Executor(_sim_place())
    c = layers.data(name="c", shape=[1], dtype="bool", append_batch_size=False)
    x = layers.data(name="x", shape=[2], dtype="float32", append_batch_size=False)
    out = layers.scale(x, 1.0)
    with layers.ConditionalBlock([c], is_scalar_condition=True).block():
        layers.assign(layers.scale(x, 4.0), out)
    (got,) = exe.run(
        feed={"c": np.array([flag]), "x": np.full(2, 1.5, "float32")}, fetch_list=[out]
    )
    np.testing.assert_allclose(got, [want, want])


@pytest.fixture
def max_while_iterations():
    before = tide.get_flag("max_while_iterations")
    tide.set_flags({"max_while_iterations": 50})
    yield
    tide.set_flags({"max_while_iterations": before})


@pytest.mark.parametrize("is_test", [False, True])
def test_a_while_whose_body_never_updates_its_condition_stops_at_the_limit(
    exe, is_test, max_while_iterations
):
    # It grew memory until out of memory (is_test=False) or hung (is_test=True), saying nothing.
    i, _, cond, loop = _counter_loop(10, is_test)
    with loop.block():
        layers.increment(i, in_place=True)  # never updates cond
    with pytest.raises(
        tide.TideError,
        match=r"op 'while' \(sub_block 1\) ran 50 iterations and its "
        r"condition '%s' still holds: past the limit "
        r"max_while_iterations=50" % cond.name,
    ):
        exe.run(fetch_list=[i])


def test_a_while_of_exactly_max_while_iterations_runs(exe, max_while_iterations):
    i, limit, cond, loop = _counter_loop(50)
    with loop.block():
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    assert exe.run(fetch_list=[i])[0].tolist() == [50]


def test_max_while_iterations_is_not_negative():
    with pytest.raises(
        tide.InvalidArgumentError, match="flag 'max_while_iterations'.*-1 is negative"
    ):
        tide.set_flags({"max_while_iterations": -1})


# -- layers.cond (Fluid 1.8) ----------------------------------------------------------------------


def _cond_net(dtype="float64"):
    x = layers.data(name="x", shape=[3], dtype=dtype, stop_gradient=False)
    flag = layers.data(name="flag", shape=[1], dtype="bool", append_batch_size=False)

    def true_fn():
        return layers.fc(x, 2, param_attr="w_true", bias_attr=False), layers.scale(x, 2.0)

    def false_fn():
        return layers.fc(x, 2, act="tanh", param_attr="w_false", bias_attr=False), x

    a, b = layers.cond(flag, true_fn, false_fn)
    loss = layers.reduce_sum(layers.square(a)) + layers.reduce_sum(b)
    return x, a, b, loss


@pytest.mark.parametrize("flag", [True, False])
def test_cond_takes_the_branch_the_predicate_picks_and_trains_it(exe, rng, flag):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x, a, b, loss = _cond_net()
        tide.backward.append_backward(loss)
    exe.run(startup)
    scope = tide.global_scope()
    xv = rng.uniform(-1, 1, (4, 3))
    feed = {"x": xv, "flag": np.array([flag])}
    got_a, got_b, gx, gt, gf = exe.run(
        main, feed=feed, fetch_list=[a, b, "x@GRAD", "w_true@GRAD", "w_false@GRAD"]
    )
    wt = np.array(scope.find_var("w_true").get_tensor())
    wf = np.array(scope.find_var("w_false").get_tensor())
    if flag:
        want_a, want_b = xv @ wt, 2 * xv
        np.testing.assert_allclose(gt, 2 * xv.T @ want_a, rtol=1e-12)
        np.testing.assert_allclose(gx, 2 * want_a @ wt.T + 2.0, rtol=1e-12)
        assert not np.any(gf)
    else:
        want_a, want_b = np.tanh(xv @ wf), xv
        assert not np.any(gt)
        np.testing.assert_allclose(gx, (2 * want_a * (1 - want_a**2)) @ wf.T + 1.0, rtol=1e-12)
    np.testing.assert_allclose(got_a, want_a, rtol=1e-12)
    np.testing.assert_allclose(got_b, want_b, rtol=1e-12)


def test_cond_argument_errors():
    flag = layers.fill_constant([1], "bool", True)
    x = layers.fill_constant([2], "float32", 1.0)
    with pytest.raises(TypeError, match="cond"):
        layers.cond(layers.fill_constant([1], "float32", 1.0), lambda: x, lambda: x)
    with pytest.raises(TypeError, match="true_fn"):
        layers.cond(flag, x, lambda: x)
    with pytest.raises(ValueError, match="same number"):
        layers.cond(flag, lambda: (x, x), lambda: x)
    with pytest.raises(ValueError, match="None"):
        layers.cond(flag, lambda: x, None)
    assert layers.cond(flag, None, None) is None
