"""The oneDNN plugin keeps conv filters reordered into its blocked weights format while their
bytes stay the same (devices/mkldnn/converted_cache.h, keyed on the core's content version,
Tensor_ContentVersion). These tests change a filter every way a user or a program can and check
the conv never computes with a stale copy: a new value set from Python, a write through a numpy
view (not cached at all), an op of the program writing it, and training, where SGD rewrites it
every step (each step's loss equals the plain kernels')."""

import numpy as np
import pytest
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn

import tide

pytestmark = pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)


@pytest.fixture(autouse=True)
def mkldnn_on():
    tide.set_flags({"use_mkldnn": True})
    yield
    tide.set_flags({"use_mkldnn": False})


def conv_ref(x, w):
    """float64 NCHW convolution, stride 1, padding 1."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, m, h + 3 - kh, wd + 3 - kw))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i : i + out.shape[2], j : j + out.shape[3]]
            out += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    return out


def conv_program():
    x = tide.layers.data(name="x", shape=[8, 6, 6])
    y = tide.layers.conv2d(
        x, num_filters=16, filter_size=3, padding=1, param_attr="w", bias_attr=False
    )
    return x, y


def ran_mkldnn_conv(exe):
    return [k for op, k in exe.last_run_info()["kernels"] if op == "conv2d"] and all(
        "mkldnn" in k for op, k in exe.last_run_info()["kernels"] if op == "conv2d"
    )


def test_a_filter_set_from_python_is_used_at_once(fresh_programs, exe, rng):
    main, startup = fresh_programs
    _, y = conv_program()
    exe.run(startup)
    x = rng.randn(2, 8, 6, 6).astype("float32")
    w_tensor = tide.global_scope().find_var("w").get_tensor()
    for k in range(3):
        w = rng.randn(16, 8, 3, 3).astype("float32")
        w_tensor.set(w, tide.CPUPlace(), False)  # a copy: kept reordered
        for _ in range(2):  # the second run reads the kept copy
            (out,) = exe.run(main, feed={"x": x}, fetch_list=[y])
            assert ran_mkldnn_conv(exe)
            np.testing.assert_allclose(
                out, conv_ref(x, w), rtol=1e-4, atol=1e-4, err_msg="filter %d" % k
            )


def test_a_filter_written_through_a_numpy_view_is_never_stale(fresh_programs, exe, rng):
    main, startup = fresh_programs
    _, y = conv_program()
    exe.run(startup)
    x = rng.randn(1, 8, 6, 6).astype("float32")
    w_tensor = tide.global_scope().find_var("w").get_tensor()
    w = rng.randn(16, 8, 3, 3).astype("float32")
    w_tensor.set(w, tide.CPUPlace(), False)  # a copy: kept reordered
    exe.run(main, feed={"x": x}, fetch_list=[y])
    view = w_tensor.numpy()  # writes through it go unseen by the core
    view *= -0.5
    (out,) = exe.run(main, feed={"x": x}, fetch_list=[y])
    np.testing.assert_allclose(out, conv_ref(x, w * -0.5), rtol=1e-4, atol=1e-4)
    view += 1.0
    (out,) = exe.run(main, feed={"x": x}, fetch_list=[y])
    np.testing.assert_allclose(out, conv_ref(x, w * -0.5 + 1.0), rtol=1e-4, atol=1e-4)


def test_a_filter_an_op_of_the_program_rewrites(fresh_programs, exe, rng):
    main, startup = fresh_programs
    _, y = conv_program()
    w_var = main.global_block().var("w")
    # After the conv, the program scales its own filter: every run sees the previous run's.
    main.global_block().append_op(
        type="scale", inputs={"X": [w_var]}, outputs={"Out": [w_var]}, attrs={"scale": 2.0}
    )
    exe.run(startup)
    x = rng.randn(1, 8, 6, 6).astype("float32")
    w = rng.randn(16, 8, 3, 3).astype("float32")
    tide.global_scope().find_var("w").get_tensor().set(w, tide.CPUPlace(), False)
    for k in range(3):
        (out,) = exe.run(main, feed={"x": x}, fetch_list=[y])
        np.testing.assert_allclose(
            out, conv_ref(x, w * 2.0**k), rtol=1e-4, atol=1e-3, err_msg="run %d" % k
        )


def train(use_mkldnn, steps, seed=3):
    tide.set_flags({"use_mkldnn": use_mkldnn})
    main, startup = tide.Program(), tide.Program()
    with (
        tide.unique_name.guard(),
        tide.program_guard(main, startup),
        tide.scope_guard(tide.Scope()),
    ):
        x = tide.layers.data(name="x", shape=[4, 8, 8])
        label = tide.layers.data(name="label", shape=[1], dtype="int64")
        h = tide.layers.conv2d(
            x, num_filters=8, filter_size=3, padding=1, act="relu", param_attr="w1", bias_attr=False
        )
        h = tide.layers.conv2d(
            h, num_filters=8, filter_size=3, padding=1, param_attr="w2", bias_attr=False
        )
        logits = tide.layers.fc(h, size=5, param_attr="fc_w", bias_attr=False)
        loss = tide.layers.mean(tide.layers.softmax_with_cross_entropy(logits, label))
        tide.optimizer.SGD(learning_rate=0.05).minimize(loss)
        exe = tide.Executor(tide.CPUPlace())
        exe.run(startup)
        r = np.random.RandomState(seed)
        scope = tide.global_scope()
        for name, shape in (("w1", (8, 4, 3, 3)), ("w2", (8, 8, 3, 3)), ("fc_w", (512, 5))):
            scope.find_var(name).get_tensor().set(
                (r.randn(*shape) * 0.2).astype("float32"), tide.CPUPlace(), False
            )
        xs = r.randn(4, 4, 8, 8).astype("float32")
        ys = r.randint(0, 5, size=(4, 1)).astype("int64")
        losses = [
            float(exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss])[0][0])
            for _ in range(steps)
        ]
        # Read last: a numpy view makes the core stop trusting the bytes' version (no caching).
        return losses, np.array(scope.find_var("w2").get_tensor(), copy=True)


def test_training_matches_the_plain_kernels_every_step():
    steps = 6
    plain_losses, plain_w2 = train(False, steps)
    dnn_losses, dnn_w2 = train(True, steps)
    # A stale filter in any step's forward or backward conv would change every later loss.
    np.testing.assert_allclose(dnn_losses, plain_losses, rtol=1e-4)
    np.testing.assert_allclose(dnn_w2, plain_w2, rtol=1e-4, atol=1e-5)
    assert plain_losses[-1] < plain_losses[0]  # it trained: the filters changed every step


def test_a_prepared_conv_follows_new_inputs(fresh_programs, exe, rng):
    """The oneDNN convolution keeps its primitive and memories as the op's kernel state
    (conv_kernels.cc, ConvFwdState) and only repoints them while its inputs match what it was
    made for: new data, a new batch size and back, and a new filter must each be computed afresh.
    The second conv reads the first's output in the format its primitive wants, so it runs from
    the kept state."""
    main, startup = fresh_programs
    x_var = tide.layers.data(name="x", shape=[16, 6, 6])
    h = tide.layers.conv2d(
        x_var, num_filters=16, filter_size=3, padding=1, param_attr="w1", bias_attr=False
    )
    y = tide.layers.conv2d(
        h, num_filters=16, filter_size=3, padding=1, param_attr="w2", bias_attr=False
    )
    exe.run(startup)
    # Fetched copies: a numpy view of a filter would leave it uncacheable (content version 0).
    w1, w2 = exe.run(startup, fetch_list=["w1", "w2"])
    w2_tensor = tide.global_scope().find_var("w2").get_tensor()
    for batch in (2, 2, 5, 2):
        x = rng.randn(batch, 16, 6, 6).astype("float32")
        (out,) = exe.run(main, feed={"x": x}, fetch_list=[y])
        assert ran_mkldnn_conv(exe)
        np.testing.assert_allclose(out, conv_ref(conv_ref(x, w1), w2), rtol=1e-4, atol=1e-4)
    w2 = rng.randn(16, 16, 3, 3).astype("float32")
    w2_tensor.set(w2, tide.CPUPlace(), False)
    (out,) = exe.run(main, feed={"x": x}, fetch_list=[y])
    np.testing.assert_allclose(out, conv_ref(conv_ref(x, w1), w2), rtol=1e-4, atol=1e-4)


def test_rnn_weights_follow_each_tensor_of_a_layer(fresh_programs, exe, rng):
    """rnn keeps each layer's WeightList tensors gathered into oneDNN's gate order and reordered
    (devices/mkldnn/rnn_kernel.cc): one kept copy made from several tensors (both directions'
    weight_hh, or their four biases), used while none of them changes. A change to any one of
    them is used at once: a backward direction's weight_hh, GRU's candidate hidden bias (lbr_gru's
    fourth), the first weight_ih."""
    from test_paddle_nn_ops import rnn_case, rnn_reference

    main, _ = fresh_programs
    layers, dirs, hidden = 2, 2, 8
    ins, _, attrs = rnn_case("GRU", layers, dirs, None, hidden=hidden, dtype="float32", k=0.35)
    block = main.global_block()
    xs, (name_h, h0) = ins["Input"], ins["PreState"][0]
    x = block.create_var(name="x", shape=xs.shape, dtype="float32")
    pre_h = block.create_var(name=name_h, shape=h0.shape, dtype="float32")
    weights = [
        block.create_var(name=n, shape=a.shape, dtype="float32", persistable=True)
        for n, a in ins["WeightList"]
    ]
    out = block.create_var(name="out", dtype="float32")
    last = block.create_var(name="last_h", dtype="float32")
    block.append_op(
        "rnn",
        inputs={"Input": x, "PreState": [pre_h], "WeightList": weights},
        outputs={"Out": out, "State": [last]},
        attrs=dict(attrs, use_mkldnn=True),
    )
    ws = [a for _, a in ins["WeightList"]]
    scope = tide.global_scope()

    def put(i, value):
        ws[i] = value
        scope.var(weights[i].name).get_tensor().set(value, tide.CPUPlace(), False)  # a copy

    for i, w in enumerate(ws):
        put(i, w)
    # WeightList's order: weight_ih, weight_hh per layer and direction, then the biases.
    for change in (None, 2 * 3 + 1, 2 * 2 * 2 + 2 * 3 + 1, 0):
        if change is not None:
            put(change, (rng.uniform(-0.35, 0.35, ws[change].shape)).astype("float32"))
        want, (want_h,) = rnn_reference(
            "GRU", xs, [h0], [w.astype("float64") for w in ws], layers, dirs, hidden
        )
        for _ in range(2):  # the second run reads the kept copies
            got, got_h = exe.run(main, feed={"x": xs, name_h: h0}, fetch_list=[out, last])
            ks = [k for op, k in exe.last_run_info()["kernels"] if op == "rnn"]
            assert ks and all("mkldnn" in k for k in ks), ks
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=str(change))
            np.testing.assert_allclose(got_h, want_h, rtol=1e-5, atol=1e-6, err_msg=str(change))
