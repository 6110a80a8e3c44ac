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


@pytest.mark.parametrize(
    "n,c,h,m,k,pad", [(4, 1, 25, 20, 5, 0), (2, 3, 12, 7, 3, 1)], ids=["lenet_odd", "tail_channels"]
)
def test_bfloat16_max_pool_of_a_conv_output(n, c, h, m, k, pad):
    # The same in bfloat16 (AMP's LeNet): with AMX oneDNN's bfloat16 convolution writes acdb,
    # which the same loops pool through float32 rows; elsewhere other kernels run. Either way
    # the values are picked and routed, never rounded: exactly the reference's.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    rng = np.random.RandomState(9)
    x = rng.standard_normal((n, c, h, h)).astype(bf16)
    f = (rng.standard_normal((m, c, k, k)) * 0.3).astype(bf16)
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        block = main.global_block()

        def data(name, shape, grad=False):
            return tide.layers.data(
                name=name,
                shape=list(shape),
                dtype="bfloat16",
                append_batch_size=False,
                stop_gradient=not grad,
            )

        xv, fv = data("x", x.shape, grad=True), data("f", f.shape)
        y = block.create_var(name="y", dtype="bfloat16")
        block.append_op(
            type="conv2d",
            inputs={"Input": [xv], "Filter": [fv]},
            outputs={"Output": [y]},
            attrs={"paddings": [pad, pad], "use_cudnn": False},
        )
        p = block.create_var(name="p", dtype="bfloat16")
        block.append_op(
            type="pool2d",
            inputs={"X": [y]},
            outputs={"Out": [p]},
            attrs={"pooling_type": "max", "ksize": [2, 2], "strides": [2, 2]},
        )
        oh = (h + 2 * pad - k + 1) // 2
        w = rng.uniform(0.5, 1.5, (n, m, oh, oh)).astype(bf16)
        wv = data("w", w.shape)
        tide.append_backward(tide.layers.reduce_sum(tide.layers.elementwise_mul(p, wv)))
    exe = tide.Executor(tide.CPUPlace())
    got_y, got_p, got_dy = exe.run(
        main, feed={"x": x, "f": f, "w": w}, fetch_list=["y", "p", "y@GRAD"]
    )
    kernels = dict(exe.last_run_info()["kernels"])
    assert "pool2d" in kernels and "pool2d_grad" in kernels, kernels
    assert got_p.dtype == bf16 and got_dy.dtype == bf16
    want_p, first = max_pool_2x2(got_y.astype("float64"))
    np.testing.assert_array_equal(got_p.astype("float64"), want_p)
    np.testing.assert_array_equal(
        got_dy.astype("float64"), route(first, w.astype("float64"), got_y.shape)
    )
