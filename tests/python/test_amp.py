"""Mixed precision (issue 32): the dynamic loss-scaling ops against Paddle's rules computed in
numpy, and tide.contrib.mixed_precision.decorate: a step whose gradients overflow changes no
parameter and no optimizer state and shrinks the scale; steps without overflow train exactly as
the undecorated optimizer; the rewrite puts an op in the low type only where the device has a
kernel for it."""

import numpy as np
import pytest

import tide
from tide import layers
from tide.contrib import mixed_precision as amp


def _run_op(op_type, inputs, outputs, attrs=None):
    """Runs one op on the CPU: inputs {param: [(name, array)]}, outputs {param: [names]};
    returns {name: array} of the outputs."""
    block = tide.default_main_program().global_block()
    feed = {}
    for items in inputs.values():
        for name, value in items:
            if not block.has_var(name):
                block.create_var(name=name, shape=value.shape, dtype=str(value.dtype))
            feed[name] = value
    for names in outputs.values():
        for name in names:
            if not block.has_var(name):
                block.create_var(name=name)
    block.append_op(
        op_type,
        inputs={p: [n for n, _ in items] for p, items in inputs.items()},
        outputs=outputs,
        attrs=attrs or {},
    )
    fetch = [n for names in outputs.values() for n in names]
    got = tide.Executor(tide.CPUPlace()).run(feed=feed, fetch_list=fetch)
    return dict(zip(fetch, got))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_check_finite_and_unscale_divides_and_finds_overflow(rng, dtype):
    a = rng.standard_normal((3, 4)).astype(dtype)
    b = rng.standard_normal(5).astype(dtype)
    scale = np.array([1024.0], np.float32)
    got = _run_op(
        "check_finite_and_unscale",
        {"X": [("a", a), ("b", b)], "Scale": [("s", scale)]},
        {"Out": ["a_out", "b_out"], "FoundInfinite": ["found"]},
    )
    np.testing.assert_allclose(got["a_out"], a / 1024.0, rtol=1e-6)
    np.testing.assert_allclose(got["b_out"], b / 1024.0, rtol=1e-6)
    assert got["found"].dtype == np.bool_ and got["found"].tolist() == [False]


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_check_finite_and_unscale_finds_any_inf_or_nan(rng, bad):
    a = rng.standard_normal(6).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    b[2] = bad
    got = _run_op(
        "check_finite_and_unscale",
        {"X": [("a", a), ("b", b)], "Scale": [("s", np.array([2.0], np.float32))]},
        {"Out": ["a_out", "b_out"], "FoundInfinite": ["found"]},
    )
    assert got["found"].tolist() == [True]
    np.testing.assert_allclose(got["a_out"], a / 2.0)


def _update(found, scale, good, bad, **attrs):
    x = np.array([1.0, -2.0, 3.0], np.float32)
    got = _run_op(
        "update_loss_scaling",
        {
            "X": [("g", x)],
            "FoundInfinite": [("found", np.array([found]))],
            "PrevLossScaling": [("scale", np.array([scale], np.float32))],
            "InGoodSteps": [("good", np.array([good], np.int32))],
            "InBadSteps": [("bad", np.array([bad], np.int32))],
        },
        {
            "Out": ["g_out"],
            "LossScaling": ["scale_out"],
            "OutGoodSteps": ["good_out"],
            "OutBadSteps": ["bad_out"],
        },
        dict(
            {
                "incr_every_n_steps": 3,
                "decr_every_n_nan_or_inf": 2,
                "incr_ratio": 2.0,
                "decr_ratio": 0.5,
            },
            **attrs,
        ),
    )
    return (
        got["g_out"].tolist(),
        float(got["scale_out"][0]),
        int(got["good_out"][0]),
        int(got["bad_out"][0]),
    )


def _paddle_rule(found, scale, good, bad, n_incr=3, n_decr=2, incr=2.0, decr=0.5):
    """Paddle's update_loss_scaling (amp_kernel_impl.h), written out independently."""
    if found:
        good, bad = 0, bad + 1
        if bad == n_decr:
            scale, bad = max(scale * decr, 1.0), 0
    else:
        good, bad = good + 1, 0
        if good == n_incr:
            grown = scale * incr
            scale, good = (grown if grown < np.finfo(np.float32).max else scale), 0
    return scale, good, bad


@pytest.mark.parametrize(
    "found,scale,good,bad",
    [
        (False, 8.0, 0, 0),  # a good step counts
        (False, 8.0, 2, 0),  # the third good step in a row grows the scale
        (False, 3.0e38, 2, 0),  # growing past float32's range keeps the scale
        (False, 8.0, 1, 1),  # a good step clears the bad count
        (True, 8.0, 2, 0),  # an overflow clears the good count
        (True, 8.0, 0, 1),  # the second overflow shrinks the scale
        (True, 1.5, 0, 1),  # never below 1
    ],
)
def test_update_loss_scaling_follows_paddles_rule(found, scale, good, bad):
    grads, got_scale, got_good, got_bad = _update(found, scale, good, bad)
    want_scale, want_good, want_bad = _paddle_rule(found, scale, good, bad)
    assert (got_good, got_bad) == (want_good, want_bad)
    assert got_scale == pytest.approx(want_scale, rel=1e-7)
    assert grads == ([0.0, 0.0, 0.0] if found else [1.0, -2.0, 3.0])


def test_update_loss_scaling_stop_update_keeps_scale_and_counts():
    assert _update(True, 8.0, 0, 1, stop_update=True)[1:] == (8.0, 0, 1)


def test_update_loss_scaling_rejects_bad_attributes():
    with pytest.raises(tide.core.InvalidArgumentError, match="decr_every_n_nan_or_inf.*> 0"):
        _update(True, 8.0, 0, 1, decr_every_n_nan_or_inf=0)


# --- decorate ---

NO_LOW_OPS = amp.AutoMixedPrecisionLists(
    custom_black_list=amp.amp_lists.WHITE_LIST | amp.amp_lists.GRAY_LIST
)


def _mlp(optimizer):
    x = layers.data(name="x", shape=[8])
    y = layers.data(name="y", shape=[1], dtype="int64")
    h = layers.fc(x, size=16, act="relu")
    logits = layers.fc(h, size=4)
    loss = layers.mean(layers.softmax_with_cross_entropy(logits, y))
    optimizer.minimize(loss)
    return loss


def _batches(rng, n):
    return [
        {
            "x": rng.standard_normal((6, 8)).astype("float32"),
            "y": rng.randint(0, 4, (6, 1)).astype("int64"),
        }
        for _ in range(n)
    ]


def _persistables():
    program = tide.default_main_program()
    scope = tide.global_scope()
    out = {}
    for var in program.list_vars():
        if var.persistable and var.type == "LOD_TENSOR" and scope.find_var(var.name) is not None:
            out[var.name] = np.array(scope.find_var(var.name).get_tensor()).copy()
    return out


def _train(make_optimizer, batches):
    """Fresh programs and scope; returns the persistable values after each batch."""
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 1  # the same initial parameters each time
    with (
        tide.unique_name.guard(),
        tide.scope_guard(tide.Scope()),
        tide.program_guard(main, startup),
    ):
        opt = make_optimizer()
        _mlp(opt)
        exe = tide.Executor(tide.CPUPlace())
        exe.run(startup)
        states = []
        for feed in batches:
            exe.run(main, feed=feed)
            states.append(_persistables())
        return opt, states


def test_without_overflow_it_trains_as_the_plain_optimizer(rng, core_flags):
    batches = _batches(rng, 4)
    # Bit for bit: the plain optimizer's weight gradients stored too, as unscaling needs them.
    core_flags(fuse_weight_updates=False)

    def momentum():
        return tide.optimizer.Momentum(0.1, momentum=0.9)

    _, plain = _train(momentum, batches)
    # A power-of-two scale multiplies and divides exactly: the same parameters, bit for bit.
    opt, scaled = _train(
        lambda: amp.decorate(momentum(), NO_LOW_OPS, init_loss_scaling=2.0**10), batches
    )
    assert opt.low_precision_ops == []
    for step, (want, got) in enumerate(zip(plain, scaled)):
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value, err_msg="%s step %d" % (name, step))


def test_an_overflowed_step_changes_nothing_and_shrinks_the_scale(rng):
    batches = _batches(rng, 3)
    batches[1]["x"][2, 3] = np.inf  # the second step's gradients are not finite

    def decorated():
        return amp.decorate(
            tide.optimizer.Adam(0.01),
            NO_LOW_OPS,
            init_loss_scaling=1024.0,
            decr_every_n_nan_or_inf=1,
            decr_ratio=0.5,
        )

    opt, states = _train(decorated, batches)
    scale_name = opt.get_loss_scaling().name
    assert states[0][scale_name].tolist() == [1024.0]
    assert states[1][scale_name].tolist() == [512.0]  # halved by the overflow
    skipped = {n: v for n, v in states[1].items() if n != scale_name and "steps" not in n}
    for name, value in skipped.items():  # parameters, moments, beta powers: all as before
        np.testing.assert_array_equal(value, states[0][name], err_msg=name)
        assert np.isfinite(value).all(), name
    moved = [n for n in skipped if not np.array_equal(states[2][n], states[1][n])]
    assert any(n.startswith("fc") for n in moved), "the step after the overflow trains again"


def test_the_rewrite_uses_only_what_the_device_computes_in(caplog):
    """The CPU has float16 kernels for casts only today: every allow-listed op stays float32,
    each with a log line, and the program gets no cast."""
    x = layers.data(name="x", shape=[8])
    loss = layers.mean(layers.fc(x, size=4))
    kinds = {t: amp.rewrite.kernel_types(t, "cpu") for t in ("mul", "elementwise_add")}
    with caplog.at_level("INFO", logger="tide.amp"):
        low = amp.rewrite_program(
            tide.default_main_program(), amp.AutoMixedPrecisionLists(), "float16"
        )
    expected = [t for t in ("mul", "elementwise_add") if "float16" in kinds[t]]
    assert low == [t for t in low if t in expected]
    if "float16" not in kinds["mul"]:
        assert "'mul' stays float32: no float16 kernel for it on the cpu device" in caplog.text
        assert "cast" not in [op.type for op in tide.default_main_program().global_block().ops]
    assert loss.dtype == "float32"


def test_gray_ops_follow_the_ops_that_wrote_their_inputs(monkeypatch):
    """Fluid's rule: low after a low op (a float32 parameter beside it is cast down), float32
    after a black op, float32 when only feeds and parameters feed it. Every op is taken to have
    low kernels here: the lists' rule is what is tested."""
    monkeypatch.setattr(amp.rewrite, "_runs_low", lambda *args: True)
    x = layers.data(name="x", shape=[8])
    biased = layers.fc(x, size=4)  # mul (white), elementwise_add of the bias (gray)
    act = layers.relu(biased)  # gray after a low op
    black = layers.exp(layers.fc(x, size=4, bias_attr=False))  # mul, exp (black)
    mixed = layers.elementwise_add(act, black)  # gray after a low and a black op
    fed = layers.scale(x, scale=2.0)  # gray after a feed only
    low = amp.rewrite_program(tide.default_main_program(), amp.AutoMixedPrecisionLists(), "float16")
    assert low == ["mul", "elementwise_add", "relu", "mul"]
    assert (biased.dtype, act.dtype) == ("float16", "float16")
    assert (black.dtype, mixed.dtype, fed.dtype) == ("float32", "float32", "float32")
    casts = [op for op in tide.default_main_program().global_block().ops if op.type == "cast"]
    cast_inputs = sorted(op.input("X")[0] for op in casts)
    assert any(name.endswith(".b_0") for name in cast_inputs), cast_inputs  # the bias, cast down


def test_bad_arguments_are_refused():
    sgd = tide.optimizer.SGD(0.1)
    with pytest.raises(ValueError, match="init_loss_scaling must be > 0"):
        amp.decorate(sgd, init_loss_scaling=0)
    with pytest.raises(ValueError, match="decr_ratio in \\(0, 1\\)"):
        amp.decorate(sgd, decr_ratio=1.5)
    with pytest.raises(ValueError, match="on both the custom white and black lists"):
        amp.AutoMixedPrecisionLists(custom_white_list={"mul"}, custom_black_list={"mul"})
    with pytest.raises(ValueError, match="dtype must be one of"):
        amp.rewrite_program(tide.default_main_program(), amp.AutoMixedPrecisionLists(), "int8")


def test_bad_lists_and_loss_scales_are_refused():
    # an op name no op type has (a typo) would leave the op silently where it was
    with pytest.raises(ValueError, match=r"\['relux'\] on the custom lists is no registered op"):
        amp.AutoMixedPrecisionListsBF16(custom_black_list={"relux"})
    with pytest.raises(ValueError, match=r"\['matmul_v3', 'not_an_op'\]"):
        amp.AutoMixedPrecisionLists(custom_white_list=["not_an_op", "matmul_v3", "mul"])
    # a string is one name, not a set of letters
    with pytest.raises(TypeError, match="custom_white_list must be a set or list of names"):
        amp.AutoMixedPrecisionLists(custom_white_list="relu")
    with pytest.raises(TypeError, match="custom_black_varnames must be a set or list"):
        amp.AutoMixedPrecisionLists(custom_black_varnames="fc_0.tmp_0")
    # Fluid's own list entries and registered ops pass
    lists = amp.AutoMixedPrecisionLists(
        custom_white_list=["tanh"], custom_black_list={"sigmoid_cross_entropy_with_logits"}
    )
    assert "tanh" in lists.white_list and "tanh" not in lists.gray_list
    sgd = tide.optimizer.SGD(0.1)
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(ValueError, match="init_loss_scaling must be > 0 and finite"):
            amp.decorate(sgd, init_loss_scaling=bad)


def test_inference_model_of_amp_training(tmp_path):
    # docs/mixed_precision.md: the test clone taken before minimize saves a float32 model;
    # the rewritten training program saves its casts
    main, start = tide.Program(), tide.Program()
    with tide.program_guard(main, start):
        x = tide.layers.data("x", [8], dtype="float32")
        y = tide.layers.data("y", [1], dtype="int64")
        logits = tide.layers.fc(tide.layers.fc(x, 16, act="relu"), 4)
        loss = tide.layers.mean(tide.layers.softmax_with_cross_entropy(logits, y))
        test = main.clone(for_test=True)
        amp.decorate_bf16(tide.optimizer.SGD(0.1), place=tide.CPUPlace()).minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    rng = np.random.RandomState(0)
    xv, yv = rng.randn(4, 8).astype("float32"), rng.randint(0, 4, (4, 1)).astype("int64")
    with tide.scope_guard(tide.Scope()):
        exe.run(start)
        exe.run(main, feed={"x": xv, "y": yv}, fetch_list=[loss])
        (ref,) = exe.run(test, feed={"x": xv, "y": yv}, fetch_list=[logits.name])
        tide.io.save_inference_model(str(tmp_path / "f32"), ["x"], [logits], exe, test)
        tide.io.save_inference_model(str(tmp_path / "amp"), ["x"], [logits], exe, main)
    for name, has_casts in (("f32", False), ("amp", True)):
        with tide.scope_guard(tide.Scope()):
            prog, feeds, fetches = tide.io.load_inference_model(str(tmp_path / name), exe)
            types = [op.type for op in prog.global_block().ops]
            assert ("cast" in types) == has_casts, (name, types)
            if name == "f32":
                (out,) = exe.run(prog, feed={feeds[0]: xv}, fetch_list=fetches)
                np.testing.assert_array_equal(out, ref)
