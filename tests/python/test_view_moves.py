"""A view op (reshape, squeeze, unsqueeze, flatten and their grads) whose input dies at it takes
the input's memory instead of copying it (core/executor/release_plan.h's view moves; the C++
test tests/cpp/ops/view_moves_test.cc checks the pointers). Here the hazards, each against numpy:
a fed numpy array is never written through the view's output, a while body's views (a sub-block
runs them many times), gradients through views, a oneDNN blocked input, and a conv filter made
by a view whose moved memory the next run rewrites (no stale reordered copy)."""

import numpy as np
import pytest
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn

import tide
from tide import layers


def _in_place_scale(var, scale):
    """scale(X = var, Out = var): a write into the view's output after the move."""
    tide.default_main_program().global_block().append_op(
        type="scale", inputs={"X": [var]}, outputs={"Out": [var]}, attrs={"scale": scale}
    )


@pytest.mark.parametrize("through_temporary", [False, True])
def test_fed_array_is_never_written(fresh_programs, exe, rng, through_temporary):
    x = layers.data(name="x", shape=[4, 6], append_batch_size=False)
    a = layers.scale(x, 1.0) if through_temporary else x
    b = layers.reshape(a, [2, 12])
    _in_place_scale(b, 3.0)
    xs = rng.randn(4, 6).astype("float32")
    keep = xs.copy()
    for run in range(3):
        (got,) = exe.run(feed={"x": xs}, fetch_list=[b])
        np.testing.assert_array_equal(got, 3.0 * keep.reshape(2, 12), err_msg="run %d" % run)
        np.testing.assert_array_equal(xs, keep, err_msg="the fed array changed, run %d" % run)


def test_views_in_a_while_body(fresh_programs, exe, rng):
    x = layers.data(name="x", shape=[2, 3], append_batch_size=False)
    s = layers.scale(x, 1.0)
    i = layers.fill_constant([1], "int64", 0)
    limit = layers.fill_constant([1], "int64", 5)
    cond = layers.less_than(i, limit)
    loop = layers.While(cond)
    with loop.block():
        t = layers.scale(s, 2.0)  # dies at the reshape, in the body
        r = layers.reshape(t, [3, 2])
        u = layers.unsqueeze(r, [0])
        f = layers.flatten(u, axis=2)  # [3, 2]
        layers.assign(layers.reshape(layers.elementwise_add(f, f), [2, 3]), s)  # s = 4 s
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    out = layers.reshape(s, [6])  # after the loop: s dies here (the loop names it: kept)
    xs = rng.randn(2, 3).astype("float32")
    for _ in range(2):
        got_s, got_out = exe.run(feed={"x": xs}, fetch_list=[s, out])
        np.testing.assert_allclose(got_s, xs * 4.0**5, rtol=1e-6)
        np.testing.assert_allclose(got_out, (xs * 4.0**5).reshape(6), rtol=1e-6)


def test_gradients_through_views(fresh_programs, exe, rng):
    main = tide.default_main_program()
    w = layers.create_parameter([4, 6], "float32", name="w")
    r_in = layers.data(name="r", shape=[24], append_batch_size=False)
    a = layers.scale(w, 2.0)
    b = layers.reshape(a, [3, 8])  # reshape2
    c = layers.unsqueeze(b, [1])  # [3, 1, 8]
    d = layers.squeeze(c, [1])
    e = layers.flatten(layers.unsqueeze(d, [0]), axis=0)  # [1, 24]
    f = layers.reshape(e, [24])
    loss = layers.reduce_sum(layers.elementwise_mul(layers.elementwise_mul(f, f), r_in))
    tide.append_backward(loss)
    exe.run(tide.default_startup_program())
    ws = rng.randn(4, 6).astype("float32")
    tide.global_scope().find_var("w").get_tensor().set(ws, tide.CPUPlace(), False)
    rs = rng.randn(24).astype("float32")
    for _ in range(2):
        got_loss, got_grad = exe.run(main, feed={"r": rs}, fetch_list=[loss, "w@GRAD"])
        w64, r64 = ws.astype(np.float64).reshape(24), rs.astype(np.float64)
        # loss = sum((2 w)^2 r): dloss/dw = 8 w r
        np.testing.assert_allclose(got_loss, [np.sum(4 * w64**2 * r64)], rtol=1e-5)
        np.testing.assert_allclose(got_grad, (8 * w64 * r64).reshape(4, 6), rtol=1e-5, atol=1e-6)


mkldnn = pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)


@pytest.fixture
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


@mkldnn
def test_blocked_conv_output_into_a_view(fresh_programs, exe, rng, mkldnn_on):
    """oneDNN's conv may leave its output in a blocked layout: the plain reshape then reads a
    plain conversion (no move), and the values are the conv's."""
    x = layers.data(name="x", shape=[8, 6, 6])
    y = layers.conv2d(x, num_filters=16, filter_size=3, padding=1, param_attr="w", bias_attr=False)
    z = layers.relu(layers.reshape(y, [0, 16, 36]))  # reshape2
    exe.run(tide.default_startup_program())
    ws = rng.randn(16, 8, 3, 3).astype("float32")
    tide.global_scope().find_var("w").get_tensor().set(ws, tide.CPUPlace(), False)
    for k in range(2):
        xs = rng.randn(2, 8, 6, 6).astype("float32")
        (got,) = exe.run(feed={"x": xs}, fetch_list=[z])
        want = np.maximum(conv_ref(xs, ws).reshape(2, 16, 36), 0)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg="run %d" % k)


@mkldnn
def test_a_filter_made_by_a_view_is_never_stale(fresh_programs, exe, rng, mkldnn_on):
    """The filter is reshape(scale(w)): the reshape takes scale's memory each run, the conv keeps
    a reordered copy keyed on the bytes' content version; a new w must be computed with."""
    block = tide.default_main_program().global_block()
    x = layers.data(name="x", shape=[8, 6, 6])
    w = layers.create_parameter([16, 72], "float32", name="w")
    f = layers.reshape(layers.scale(w, 1.0), [16, 8, 3, 3])
    y = block.create_var(name="y", dtype="float32")
    block.append_op(
        type="conv2d",
        inputs={"Input": [x], "Filter": [f]},
        outputs={"Output": [y]},
        attrs={"strides": [1, 1], "paddings": [1, 1], "dilations": [1, 1], "groups": 1},
    )
    exe.run(tide.default_startup_program())
    w_tensor = tide.global_scope().find_var("w").get_tensor()
    xs = rng.randn(2, 8, 6, 6).astype("float32")
    for k in range(3):
        ws = rng.randn(16, 72).astype("float32")
        w_tensor.set(ws, tide.CPUPlace(), False)
        for _ in range(2):  # the second run with the same w may reuse the reordered filter
            (got,) = exe.run(feed={"x": xs}, fetch_list=[y])
            want = conv_ref(xs, ws.reshape(16, 8, 3, 3))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg="filter %d" % k)
