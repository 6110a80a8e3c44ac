"""tide.io.set_training: a model Paddle saved (in inference mode: every is_test set, batch norm on
its running statistics) put in training mode, as the model's train() was, and back. In training
mode batch norm normalizes by the batch's statistics and moves its running ones by its momentum
(Paddle's biased variance), unless frozen; dropout drops a fresh share of its input each run and
scales the rest by 1 / (1 - p); back in inference mode the outputs are Paddle's again. Checked against numpy on the ops' own inputs and
outputs (resnet18's first batch norm, bert's first dropout, legacy fixtures saved by Paddle)."""

import os

import numpy as np
import test_paddle_models as fixtures
from paddle_fixture_checks import assert_close, load_for_training

import tide


def first_op(program, op_type):
    return next(op for op in program.global_block().ops if op.type == op_type)


def test_batch_norm_trains_on_the_batch_statistics():
    d = os.path.join(fixtures.FIXTURES, "resnet18")
    exe, scope, program, feeds, fetches = load_for_training(d)
    bn = first_op(program, "batch_norm")
    x_name, y_name = bn.input("X")[0], bn.output("Y")[0]
    mean_name, var_name = bn.input("Mean")[0], bn.input("Variance")[0]
    assert bn.output("MeanOut") == [mean_name]  # updated in place
    running = [np.array(scope.find_var(n).get_tensor()) for n in (mean_name, var_name)]
    feed = fixtures.load_feed(d)

    assert tide.io.set_training(program) is program
    assert all(
        not op.attr("is_test") for op in program.global_block().ops if op.has_attr("is_test")
    )
    x, y = exe.run(program, feed=feed, fetch_list=[x_name, y_name], scope=scope)
    x64 = x.astype(np.float64)
    mean, var = x64.mean(axis=(0, 2, 3)), x64.var(axis=(0, 2, 3))  # biased, as Paddle's
    scale = np.array(scope.find_var(bn.input("Scale")[0]).get_tensor())
    bias = np.array(scope.find_var(bn.input("Bias")[0]).get_tensor())
    eps, momentum = bn.attr("epsilon"), bn.attr("momentum")
    want = (x64 - mean[:, None, None]) / np.sqrt(var[:, None, None] + eps)
    want = want * scale[:, None, None] + bias[:, None, None]
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    moved = [np.array(scope.find_var(n).get_tensor()) for n in (mean_name, var_name)]
    np.testing.assert_allclose(moved[0], momentum * running[0] + (1 - momentum) * mean, rtol=1e-5)
    np.testing.assert_allclose(moved[1], momentum * running[1] + (1 - momentum) * var, rtol=1e-5)

    # A sample's output depends on the rest of its batch in training mode, not in inference mode.
    one = {k: v[:1] for k, v in feed.items()}
    alone, together = (
        exe.run(program, feed=f, fetch_list=[y_name], scope=scope)[0] for f in (one, feed)
    )
    assert np.abs(alone[0] - together[0]).max() > 1e-3
    tide.io.set_training(program, False)
    alone, together = (
        exe.run(program, feed=f, fetch_list=[y_name], scope=scope)[0] for f in (one, feed)
    )
    np.testing.assert_allclose(alone[0], together[0], rtol=1e-5, atol=1e-6)


def test_dropout_drops_in_training_mode_and_not_after():
    d = os.path.join(fixtures.FIXTURES, "bert")
    exe, scope, program, feeds, fetches = load_for_training(d)
    drop = first_op(program, "dropout")
    p = drop.attr("dropout_prob")
    assert drop.attr("dropout_implementation") == "upscale_in_train"
    x_name, out_name = drop.input("X")[0], drop.output("Out")[0]
    feed = fixtures.load_feed(d)
    tide.io.set_training(program)
    runs = [
        exe.run(program, feed=feed, fetch_list=[x_name, out_name], scope=scope) for _ in range(2)
    ]
    for x, out in runs:
        kept = out != 0
        np.testing.assert_allclose(out[kept], x[kept] / (1 - p), rtol=1e-6)
        share = 1 - kept.mean()  # ~p of x.size draws: within 5 standard deviations
        assert abs(share - p) < 5 * np.sqrt(p * (1 - p) / x.size), share
    assert (runs[0][1] != runs[1][1]).any()  # a fresh mask each run
    tide.io.set_training(program, False)
    (out,) = exe.run(program, feed=feed, fetch_list=fetches, scope=scope)
    assert_close(out, np.load(os.path.join(d, "expected.npy")))


def test_frozen_batch_norm_keeps_its_running_statistics():
    d = os.path.join(fixtures.FIXTURES, "resnet18")
    exe, scope, program, feeds, fetches = load_for_training(d)
    bn = first_op(program, "batch_norm")
    names = [bn.input("Mean")[0], bn.input("Variance")[0]]
    running = [np.array(scope.find_var(n).get_tensor()) for n in names]
    feed = fixtures.load_feed(d)
    (frozen_out,) = exe.run(
        tide.io.set_training(program, freeze_batch_norm=True),
        feed=feed,
        fetch_list=fetches,
        scope=scope,
    )
    assert not bn.attr("is_test") and bn.attr("use_global_stats")
    for n, before in zip(names, running):
        np.testing.assert_array_equal(np.array(scope.find_var(n).get_tensor()), before)
    (out,) = exe.run(
        tide.io.set_training(program, False), feed=feed, fetch_list=fetches, scope=scope
    )
    np.testing.assert_allclose(frozen_out, out, rtol=1e-6, atol=1e-6)  # no dropout in resnet18
    assert_close(out, np.load(os.path.join(d, "expected.npy")))


def test_a_loaded_programs_weights_are_its_parameters():
    """all_parameters() of a loaded program lists its weights, as in the program that saved
    them: a layer's buffers (Qwen2's rotary tables, saved by Paddle as stop_gradient parameters)
    untrainable, batch norm's running statistics (which the program writes) not parameters; an
    optimizer trains exactly the trainable ones."""
    d = os.path.join(fixtures.FIXTURES, "pir", "llm_qwen2")
    exe, scope, program, feeds, fetches = load_for_training(d)
    params = {p.name: p for p in program.all_parameters()}
    assert {n for n, p in params.items() if not p.trainable} == {"eager_tmp_0", "eager_tmp_1"}
    assert all(p.dtype == "float32" and p.persistable for p in params.values())
    with tide.program_guard(program, tide.Program()):
        loss = tide.layers.reduce_mean(tide.layers.square(fetches[0]))
        _, pairs = tide.optimizer.SGD(learning_rate=0.1).minimize(loss)
    assert sorted(p.name for p, _ in pairs) == sorted(n for n, p in params.items() if p.trainable)
    d = os.path.join(fixtures.FIXTURES, "resnet18")
    exe, scope, program, feeds, fetches = load_for_training(d)
    bn = first_op(program, "batch_norm")
    names = {p.name for p in program.all_parameters()}
    assert bn.input("Scale")[0] in names and bn.input("Mean")[0] not in names
