"""silu (Paddle 2.x's F.silu, the gate of a LLaMA's SwiGLU) on device_mkldnn's oneDNN eltwise
(swish at alpha 1): with use_mkldnn set on the op and its grad op, both run oneDNN's kernels (the
executor's kernel choices say so) and match float64 numpy's X sigmoid(X) and its derivative, as
the plain kernels do; on a conv's blocked output too. The other activations' checks are
test_mkldnn_activations'."""

import numpy as np
import pytest
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn

import tide

pytestmark = pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def silu(block, x):
    y = block.create_var(name=x.name + ".silu", dtype="float32", shape=x.shape)
    block.append_op(type="silu", inputs={"X": [x]}, outputs={"Out": [y]})
    return y


def kernels(exe, op_type):
    return [k for op, k in exe.last_run_info()["kernels"] if op == op_type]


@pytest.mark.parametrize("mkldnn", [True, False])
def test_silu_forward_and_grad(mkldnn, fresh_programs, exe, rng):
    main, _ = fresh_programs
    shape = (3, 5, 64)
    x = tide.layers.data(name="x", shape=list(shape), dtype="float32", append_batch_size=False)
    w = tide.layers.data(name="w", shape=list(shape), dtype="float32", append_batch_size=False)
    x.stop_gradient = False
    y = silu(main.global_block(), x)
    tide.append_backward(tide.layers.mean(tide.layers.elementwise_mul(y, w)))
    for o in main.global_block().ops:
        if o.type in ("silu", "silu_grad"):
            o._set_attr("use_mkldnn", mkldnn)
    xv = rng.uniform(-8, 8, shape).astype("float32")
    wv = rng.uniform(-1, 1, shape).astype("float32")
    out, dx = exe.run(main, feed={"x": xv, "w": wv}, fetch_list=[y, "x@GRAD"])
    for t in ("silu", "silu_grad"):
        ks = kernels(exe, t)
        assert ks and all(("mkldnn" in k) == mkldnn for k in ks), (t, ks)
    x64 = xv.astype(np.float64)
    s = sigmoid(x64)
    np.testing.assert_allclose(out, x64 * s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx * xv.size, wv * s * (1 + x64 * (1 - s)), rtol=1e-5, atol=1e-6)


def test_silu_of_a_blocked_conv_output(fresh_programs, exe, rng):
    """conv2d's oneDNN output (blocked) into silu: the same values as numpy's of the plain conv."""
    main, _ = fresh_programs
    tide.set_flags({"use_mkldnn": True})
    try:
        x = tide.layers.data(name="x", shape=[2, 8, 6, 6], dtype="float32", append_batch_size=False)
        c = tide.layers.conv2d(x, 16, 3, padding=1, bias_attr=False)
        y = silu(main.global_block(), c)
        exe.run(tide.default_startup_program())
        xv = rng.uniform(-1, 1, (2, 8, 6, 6)).astype("float32")
        conv, out = exe.run(main, feed={"x": xv}, fetch_list=[c, y])
        assert any("mkldnn" in k for k in kernels(exe, "silu")), kernels(exe, "silu")
    finally:
        tide.set_flags({"use_mkldnn": False})
    c64 = conv.astype(np.float64)
    np.testing.assert_allclose(out, c64 * sigmoid(c64), rtol=1e-5, atol=1e-6)
