"""while_grad over loops whose body reads and writes tensor arrays, after each backward step came to
see the gradient arrays through views (plugins/ops_control/array_views.h) instead of a copy of
every element: DynamicRNN gradients against central differences on a batch with an empty
sequence, a 3000-step sequence against a numpy BPTT of the same recurrence, and an array the body
reads twice (its gradient parts summed by tensor_array_sum, which ends the view)."""

import numpy as np
import pytest
from float64_grad import central_diff

import tide
from tide import layers

H, D = 3, 2


def _lod(arr, lens):
    t = tide.LoDTensor(np.ascontiguousarray(arr))
    t.set_recursive_sequence_lengths([list(lens)])
    return t


def _rnn(x, dtype="float64"):
    """h_t = tanh(x_t Wx + h_{t-1} Wh + b) from h_0 = 0.5; two outputs (h and 2h) so that two
    arrays' gradients are shown to every step."""
    drnn = layers.DynamicRNN()
    with drnn.block():
        x_t = drnn.step_input(x)
        prev = drnn.memory(shape=[H], value=0.5, dtype=dtype)
        h = layers.fc(
            input=[x_t, prev],
            size=H,
            act="tanh",
            param_attr=[tide.ParamAttr(name="wx"), tide.ParamAttr(name="wh")],
            bias_attr=tide.ParamAttr(name="b"),
        )
        drnn.update_memory(prev, h)
        drnn.output(h, layers.scale(h, 2.0))
    return drnn()


def _param(name):
    return np.array(tide.global_scope().find_var(name).get_tensor())


def _set_param(name, value):
    tide.global_scope().find_var(name).get_tensor().set(np.asarray(value), tide.CPUPlace(), False)


LENS = [3, 0, 4, 1, 4]  # an empty sequence, a tie, lengths 1..4


@pytest.mark.parametrize("wrt", ["x", "wx", "wh", "b"])
def test_dynamic_rnn_with_an_empty_sequence_matches_finite_differences(
    exe, rng, fresh_programs, wrt
):
    main, startup = fresh_programs
    x = layers.data(name="x", shape=[D], dtype="float64", lod_level=1, stop_gradient=False)
    w = layers.data(name="w", shape=[H], dtype="float64")
    h, h2 = _rnn(x)
    last = layers.sequence_pool(h2, "last")  # the empty sequence's row is zeros
    loss = layers.elementwise_add(
        layers.mean(layers.elementwise_mul(h, w)), layers.mean(layers.elementwise_mul(last, last))
    )
    forward_only = main.clone()
    tide.append_backward(loss)
    exe.run(startup)
    xs = rng.uniform(-1, 1, (sum(LENS), D))
    ws = rng.uniform(0.5, 1.5, (sum(LENS), H))

    def loss_at(value):
        feed = {"x": _lod(value if wrt == "x" else xs, LENS), "w": ws}
        if wrt != "x":
            _set_param(wrt, value)
        return float(np.asarray(exe.run(forward_only, feed=feed, fetch_list=[loss])[0]).ravel()[0])

    base = xs if wrt == "x" else _param(wrt).astype(np.float64)
    (got,) = exe.run(main, feed={"x": _lod(xs, LENS), "w": ws}, fetch_list=[wrt + "@GRAD"])
    want = central_diff(loss_at, base)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-6, atol=1e-9)


def _numpy_bptt(xs, wx, wh, b, w, h0):
    """loss = mean(H * w) over one sequence, H the stacked states; its gradients by BPTT."""
    steps = xs.shape[0]
    hs = np.zeros((steps + 1, H))
    hs[0] = h0
    for t in range(steps):
        hs[t + 1] = np.tanh(xs[t] @ wx + hs[t] @ wh + b)
    dh_out = w / w.size  # d loss / d h_t from the mean, every step
    gx, gwx, gwh, gb = np.zeros_like(xs), np.zeros_like(wx), np.zeros_like(wh), np.zeros_like(b)
    carry = np.zeros(H)
    for t in reversed(range(steps)):
        dpre = (dh_out[t] + carry) * (1 - hs[t + 1] ** 2)
        gx[t] = dpre @ wx.T
        gwx += np.outer(xs[t], dpre)
        gwh += np.outer(hs[t], dpre)
        gb += dpre
        carry = dpre @ wh.T
    return np.mean(hs[1:] * w), gx, gwx, gwh, gb


def test_a_3000_step_dynamic_rnn_matches_numpy_bptt(exe, rng, fresh_programs):
    steps = 3000
    main, startup = fresh_programs
    x = layers.data(name="x", shape=[D], dtype="float64", lod_level=1, stop_gradient=False)
    w = layers.data(name="w", shape=[H], dtype="float64")
    h, _ = _rnn(x)
    loss = layers.mean(layers.elementwise_mul(h, w))
    tide.append_backward(loss)
    exe.run(startup)
    # Small recurrent weights: the states stay away from tanh's flat ends over 3000 steps.
    _set_param("wh", rng.uniform(-0.3, 0.3, (H, H)))
    xs = rng.uniform(-1, 1, (steps, D))
    ws = rng.uniform(0.5, 1.5, (steps, H))
    got = exe.run(
        main,
        feed={"x": _lod(xs, [steps]), "w": ws},
        fetch_list=[loss, "x@GRAD", "wx@GRAD", "wh@GRAD", "b@GRAD"],
    )
    params = [_param(n).astype(np.float64) for n in ("wx", "wh", "b")]
    want = _numpy_bptt(xs, params[0], params[1], params[2].reshape(-1), ws, np.full(H, 0.5))
    np.testing.assert_allclose(float(np.asarray(got[0]).ravel()[0]), want[0], rtol=1e-12)
    for name, g, wg in zip(("x", "wx", "wh", "b"), got[1:], want[1:]):
        np.testing.assert_allclose(
            np.array(g).reshape(wg.shape), wg, rtol=1e-9, atol=1e-12, err_msg=name
        )


def test_an_array_the_body_reads_twice(exe, rng):
    # y_i = tanh(d[i] * d[i] * x) summed over 4 iterations: d's gradient comes in two parts per
    # iteration, which tensor_array_sum adds into the step's gradient array (ending its view).
    x = layers.data(name="x", shape=[2, 3], dtype="float64", append_batch_size=False)
    ds = [
        layers.data(
            name="d%d" % k,
            shape=[2, 3],
            dtype="float64",
            append_batch_size=False,
            stop_gradient=False,
        )
        for k in range(4)
    ]
    data = layers.create_array("float64")
    for k, d in enumerate(ds):
        layers.array_write(d, layers.fill_constant([1], "int64", k), array=data)
    i = layers.fill_constant([1], "int64", 0)
    n = layers.fill_constant([1], "int64", 4)
    acc = layers.fill_constant([2, 3], "float64", 0.0)
    cond = layers.less_than(i, n)
    loop = layers.While(cond)
    with loop.block():
        a, b = layers.array_read(data, i), layers.array_read(data, i)
        y = layers.tanh(layers.elementwise_mul(layers.elementwise_mul(a, b), x))
        layers.assign(layers.elementwise_add(acc, y), acc)
        layers.increment(i, in_place=True)
        layers.less_than(i, n, cond=cond)
    loss = layers.mean(acc)
    tide.append_backward(loss, parameter_list=[d.name for d in ds])
    feed = {"x": rng.uniform(-1, 1, (2, 3))}
    feed.update({"d%d" % k: rng.uniform(-1, 1, (2, 3)) for k in range(4)})
    got = exe.run(feed=feed, fetch_list=["d%d@GRAD" % k for k in range(4)])
    for k in range(4):
        d, xv = feed["d%d" % k], feed["x"]
        want = (1 - np.tanh(d * d * xv) ** 2) * 2 * d * xv / 6
        np.testing.assert_allclose(got[k], want, rtol=1e-12, err_msg="d%d" % k)
