"""StaticRNN (Fluid's `recurrent` op in ops_control and recurrent_grad): forward against a numpy
recurrence, gradients by finite differences (inputs, initial state, parameters), a memory made
from shape and batch_ref, several outputs, training, bad input."""

import numpy as np
import pytest
from float64_grad import central_diff

import tide
from tide import layers

T, B, D, H = 4, 3, 2, 3


def _net(dtype, boot_from_shape=False):
    """h_t = tanh(x_t Wx + h_{t-1} Wh + b); outputs h and h * x_t[:, :1]."""
    x = layers.data(
        name="x", shape=[T, B, D], dtype=dtype, append_batch_size=False, stop_gradient=False
    )
    h0 = layers.data(
        name="h0", shape=[B, H], dtype=dtype, append_batch_size=False, stop_gradient=False
    )
    rnn = layers.StaticRNN()
    with rnn.step():
        word = rnn.step_input(x)
        prev = (
            rnn.memory(shape=[-1, H], batch_ref=word, init_value=0.25)
            if boot_from_shape
            else rnn.memory(init=h0)
        )
        h = layers.fc(
            input=[word, prev],
            size=H,
            act="tanh",
            param_attr=[tide.ParamAttr(name="wx"), tide.ParamAttr(name="wh")],
            bias_attr=tide.ParamAttr(name="b"),
        )
        rnn.update_memory(prev, h)
        rnn.step_output(h)
        rnn.step_output(layers.elementwise_mul(h, layers.scale(h, 2.0)))
    hs, sq = rnn()
    return hs, sq


def _params():
    scope = tide.global_scope()
    return [np.array(scope.find_var(n).get_tensor()).astype(np.float64) for n in ("wx", "wh", "b")]


def _numpy(xs, h0, wx, wh, b):
    h, out = h0, []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ wx + h @ wh + b.reshape(-1))
        out.append(h)
    out = np.array(out)
    return out, 2 * out * out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("boot_from_shape", [False, True])
def test_static_rnn_matches_numpy(exe, rng, fresh_programs, dtype, boot_from_shape):
    hs, sq = _net(dtype, boot_from_shape)
    exe.run(fresh_programs[1])
    xs = rng.uniform(-1, 1, (T, B, D)).astype(dtype)
    h0 = rng.uniform(-1, 1, (B, H)).astype(dtype)
    got_h, got_sq = exe.run(feed={"x": xs, "h0": h0}, fetch_list=[hs, sq])
    start = np.full((B, H), 0.25) if boot_from_shape else h0.astype(np.float64)
    want_h, want_sq = _numpy(xs.astype(np.float64), start, *_params())
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert got_h.shape == (T, B, H)
    np.testing.assert_allclose(got_h, want_h, rtol=tol, atol=tol)
    np.testing.assert_allclose(got_sq, want_sq, rtol=tol, atol=tol)


@pytest.mark.parametrize("wrt", ["x", "h0", "wh", "b"])
def test_static_rnn_gradients_match_finite_differences(exe, rng, fresh_programs, wrt):
    main, startup = fresh_programs
    hs, sq = _net("float64")
    w = layers.data(name="w", shape=[T, B, H], dtype="float64", append_batch_size=False)
    loss = layers.elementwise_add(layers.mean(layers.elementwise_mul(hs, w)), layers.mean(sq))
    forward_only = main.clone()
    tide.append_backward(loss)
    exe.run(startup)
    feeds = {
        "x": rng.uniform(-1, 1, (T, B, D)),
        "h0": rng.uniform(-1, 1, (B, H)),
        "w": rng.uniform(0.5, 1.5, (T, B, H)),
    }
    scope = tide.global_scope()
    is_param = wrt in ("wh", "b")

    def loss_at(value):
        f = dict(feeds)
        if is_param:
            scope.find_var(wrt).get_tensor().set(np.asarray(value), tide.CPUPlace(), False)
        else:
            f[wrt] = value
        return float(np.asarray(exe.run(forward_only, feed=f, fetch_list=[loss])[0]).ravel()[0])

    base = np.array(scope.find_var(wrt).get_tensor()) if is_param else feeds[wrt]
    got = np.array(exe.run(main, feed=feeds, fetch_list=[wrt + "@GRAD"])[0])
    want = central_diff(loss_at, base.copy())
    if is_param:
        scope.find_var(wrt).get_tensor().set(base, tide.CPUPlace(), False)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_static_rnn_trains(exe, rng, fresh_programs):
    # Predict the running mean of a sequence at every step: the held-out loss drops.
    main, startup = fresh_programs
    x = layers.data(name="x", shape=[6, 8, 1], dtype="float32", append_batch_size=False)
    y = layers.data(name="y", shape=[6, 8, 1], dtype="float32", append_batch_size=False)
    rnn = layers.StaticRNN()
    with rnn.step():
        word = rnn.step_input(x)
        prev = rnn.memory(shape=[-1, 8], batch_ref=word)
        h = layers.fc(input=[word, prev], size=8, act="tanh")
        rnn.update_memory(prev, h)
        rnn.step_output(layers.fc(input=h, size=1))
    loss = layers.mean(layers.square_error_cost(rnn(), y))
    evaluate = main.clone()
    tide.optimizer.Adam(learning_rate=0.02).minimize(loss)
    exe.run(startup)

    def batch():
        xs = rng.uniform(-1, 1, (6, 8, 1)).astype("float32")
        return {
            "x": xs,
            "y": (np.cumsum(xs, axis=0) / np.arange(1, 7).reshape(6, 1, 1)).astype("float32"),
        }

    held_out = batch()
    before = float(np.asarray(exe.run(evaluate, feed=held_out, fetch_list=[loss])[0]).ravel()[0])
    for _ in range(150):
        exe.run(main, feed=batch(), fetch_list=[loss])
    after = float(np.asarray(exe.run(evaluate, feed=held_out, fetch_list=[loss])[0]).ravel()[0])
    assert after < 0.2 * before, (before, after)


def test_static_rnn_inputs_of_different_lengths_at_run_time(exe, fresh_programs):
    a = layers.data(name="a", shape=[-1, 2, 1], dtype="float32", append_batch_size=False)
    c = layers.data(name="c", shape=[-1, 2, 1], dtype="float32", append_batch_size=False)
    rnn = layers.StaticRNN()
    with rnn.step():
        rnn.step_output(layers.elementwise_add(rnn.step_input(a), rnn.step_input(c)))
    out = rnn()
    with pytest.raises(
        tide.InvalidArgumentError, match=r"recurrent.*'c' has 2 steps, the first input has 3"
    ):
        exe.run(
            feed={"a": np.zeros((3, 2, 1), "float32"), "c": np.zeros((2, 2, 1), "float32")},
            fetch_list=[out],
        )


def test_static_rnn_api_misuse():
    x = layers.data(name="x", shape=[3, 2, 1], dtype="float32", append_batch_size=False)
    rnn = layers.StaticRNN()
    with pytest.raises(ValueError, match="inside"):
        rnn.step_input(x)
    with pytest.raises(ValueError, match="never updated"):
        with rnn.step():
            rnn.memory(init=layers.fill_constant([2, 1], "float32", 0.0))
            rnn.step_output(rnn.step_input(x))
    y = layers.data(name="y", shape=[4, 2, 1], dtype="float32", append_batch_size=False)
    other = layers.StaticRNN()
    with pytest.raises(ValueError, match="one length"):
        with other.step():
            other.step_input(x)
            other.step_input(y)
