"""device_mkldnn's 2x2 / stride-2 max pooling of a convolution's output, forward and gradient,
against a float64 numpy reference: the oneDNN convolutions write few channels channels-last
(acdb), which devices/mkldnn/pool_channels_last.h pools; odd sizes leave a last row and column in
no window (their gradient 0), channel counts off the vector width take the scalar tail."""

import numpy as np
import pytest
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn

import tide

pytestmark = pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)


def max_pool_2x2(y):
    """(pooled, the first maximum's position mask) of y [n, c, h, w] over 2x2 windows."""
    n, c, h, w = y.shape
    oh, ow = h // 2, w // 2
    win = y[:, :, : 2 * oh, : 2 * ow].reshape(n, c, oh, 2, ow, 2).transpose(0, 1, 2, 4, 3, 5)
    flat = win.reshape(n, c, oh, ow, 4)
    first = flat.argmax(axis=-1)  # numpy's argmax keeps the first of equal maxima
    return flat.max(axis=-1), first


def route(first, dout, shape):
    n, c, oh, ow = dout.shape
    dx = np.zeros(shape)
    for k in range(4):
        dy, dxo = divmod(k, 2)
        dx[:, :, dy : 2 * oh : 2, dxo : 2 * ow : 2] = np.where(first == k, dout, 0.0)
    return dx


@pytest.mark.parametrize(
    "n,c,h,m,k,pad",
    [(4, 1, 25, 20, 5, 0), (2, 3, 12, 7, 3, 1), (2, 16, 8, 16, 3, 1)],
    ids=["lenet_odd", "tail_channels", "16_channels"],
)
def test_max_pool_of_a_conv_output(core_flags, n, c, h, m, k, pad):
    core_flags(use_mkldnn=True)
    rng = np.random.RandomState(7)
    x = rng.standard_normal((n, c, h, h)).astype("float32")
    xv = tide.layers.data(name="x", shape=[n, c, h, h], append_batch_size=False)
    y = tide.layers.conv2d(xv, m, k, padding=pad, bias_attr=False)
    p = tide.layers.pool2d(y, 2, "max", 2)
    wv = tide.layers.data(name="w", shape=p.shape, append_batch_size=False)
    loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(p, wv))
    tide.append_backward(loss)
    w = rng.standard_normal(p.shape).astype("float32")
    exe = tide.Executor(tide.CPUPlace())
    exe.run(tide.default_startup_program())
    got_y, got_p, got_dy = exe.run(feed={"x": x, "w": w}, fetch_list=[y, p, y.name + "@GRAD"])
    kernels = dict(exe.last_run_info()["kernels"])
    assert "mkldnn" in kernels["pool2d"] and "mkldnn" in kernels["pool2d_grad"], kernels
    want_p, first = max_pool_2x2(got_y.astype("float64"))
    np.testing.assert_array_equal(got_p, want_p.astype("float32"))
    np.testing.assert_array_equal(got_dy, route(first, w.astype("float64"), got_y.shape))
