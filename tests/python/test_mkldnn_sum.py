"""device_mkldnn's sum (devices/mkldnn/sum_kernel.cc): the gradient sums of a residual block's
input, whose branches oneDNN's grad kernels leave blocked (often in two formats), summed on
oneDNN's sum primitive in the first blocked input's format, float32 and bfloat16, against numpy
sums of the same (fetched) inputs; in place (Out is X[0]); plain inputs decline to the plain
kernel."""

import numpy as np
import pytest
from cpu_isa import onednn_uses_amx
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn

import tide
from tide.contrib.mixed_precision.rewrite import kernel_types

pytestmark = pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)


def residual_net(dtype, branches):
    """x -> conv -> relu -> h; h read by `branches` conv -> relu branches and added back: h@GRAD
    is the sum of `branches` + 1 grads. Returns (main, the sum op writing h@GRAD, feed)."""
    rng = np.random.RandomState(5)
    main, startup = tide.Program(), tide.Program()
    feed = {}
    with tide.program_guard(main, startup):
        block = main.global_block()

        def data(name, shape, grad=False):
            v = tide.layers.data(
                name=name,
                shape=list(shape),
                dtype=dtype,
                append_batch_size=False,
                stop_gradient=not grad,
            )
            feed[name] = (rng.standard_normal(shape) * 0.3).astype(np_dtype(dtype))
            return v

        def conv_relu(x, f, out):
            y = block.create_var(name=out + "_conv", dtype=dtype)
            block.append_op(
                type="conv2d",
                inputs={"Input": [x], "Filter": [f]},
                outputs={"Output": [y]},
                attrs={"paddings": [1, 1], "use_cudnn": False},
            )
            r = block.create_var(name=out, dtype=dtype)
            block.append_op(type="relu", inputs={"X": [y]}, outputs={"Out": [r]})
            return r

        x = data("x", (2, 16, 8, 8), grad=True)
        h = conv_relu(x, data("f0", (16, 16, 3, 3), grad=True), "h")
        acc = h
        for b in range(branches):
            r = conv_relu(h, data("f%d" % (b + 1), (16, 16, 3, 3), grad=True), "r%d" % b)
            s = block.create_var(name="s%d" % b, dtype=dtype)
            block.append_op(
                type="elementwise_add", inputs={"X": [acc], "Y": [r]}, outputs={"Out": [s]}
            )
            acc = conv_relu(s, data("g%d" % b, (16, 16, 3, 3), grad=True), "a%d" % b)
        w = data("w", (2, 16, 8, 8))
        tide.append_backward(tide.layers.reduce_sum(tide.layers.elementwise_mul(acc, w)))
    sums = [op for op in block.ops if op.type == "sum" and op.output("Out") == ["h@GRAD"]]
    assert len(sums) == 1, [op.type for op in block.ops]
    return main, sums[0], feed


def np_dtype(dtype):
    if dtype == "bfloat16":
        return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)
    return np.dtype(dtype)


def run_sum(main, sum_op, feed, use_mkldnn):
    tide.set_flags({"use_mkldnn": use_mkldnn})
    try:
        exe = tide.Executor(tide.CPUPlace())
        names = sum_op.input("X") + sum_op.output("Out")
        got = exe.run(main, feed=feed, fetch_list=names)
        kernels = [k for t, k in exe.last_run_info()["kernels"] if t == "sum"]
    finally:
        tide.set_flags({"use_mkldnn": False})
    return [g.astype(np.float64) for g in got[:-1]], got[-1], kernels


@pytest.mark.parametrize("branches", [1, 2], ids=["two_grads", "three_grads"])
def test_float32_residual_grad_sum(branches):
    main, sum_op, feed = residual_net("float32", branches)
    assert len(sum_op.input("X")) == branches + 1
    ins, out, kernels = run_sum(main, sum_op, feed, use_mkldnn=True)
    assert kernels and all("mkldnn" in k for k in kernels), kernels
    # Added in input order in float32, as the plain kernel does.
    want = ins[0].astype(np.float32)
    for x in ins[1:]:
        want = want + x.astype(np.float32)
    np.testing.assert_array_equal(out, want)
    # And the same as the plain kernels' whole backward (other kernels, other roundings).
    _, plain, kernels = run_sum(main, sum_op, feed, use_mkldnn=False)
    assert all("plain" in k for k in kernels), kernels
    np.testing.assert_allclose(out, plain, rtol=1e-4, atol=1e-4 * np.abs(plain).max())


@pytest.mark.skipif(
    "bfloat16" not in kernel_types("sum", "cpu"), reason="no bfloat16 sum kernels loaded"
)
def test_bfloat16_residual_grad_sum():
    main, sum_op, feed = residual_net("bfloat16", 2)
    ins, out, kernels = run_sum(main, sum_op, feed, use_mkldnn=True)
    # With AMX the convolutions' bfloat16 grads are blocked and oneDNN sums them; elsewhere
    # they may be plain (widened float32 convolutions), and the plain bfloat16 sum runs.
    assert kernels, kernels
    if onednn_uses_amx():
        assert all("mkldnn" in k for k in kernels), kernels
    # bfloat16 results: the float64 sum rounded once, within one bfloat16 rounding of it (the
    # float32 accumulation may round first).
    want = sum(ins)
    got = out.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=2.0**-8, atol=2.0**-8 * np.abs(want).max())


def test_in_place_sum_of_blocked_values():
    # sum(X = [a, b]) -> a, where a and b are blocked convolution outputs: oneDNN's sum writes
    # X[0]'s buffer while reading it, which its sum allows.
    rng = np.random.RandomState(3)
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data(name="x", shape=[2, 16, 6, 6], append_batch_size=False)
        a = tide.layers.conv2d(x, 16, 3, padding=1, bias_attr=False)
        b = tide.layers.conv2d(x, 16, 3, padding=1, bias_attr=False)
        a_copy = tide.layers.scale(a, 1.0)
        b_copy = tide.layers.scale(b, 1.0)
        main.global_block().append_op(type="sum", inputs={"X": [a, b]}, outputs={"Out": [a]})
        out = tide.layers.scale(a, 1.0)
    exe = tide.Executor(tide.CPUPlace())
    tide.set_flags({"use_mkldnn": True})
    try:
        exe.run(startup)
        got, ga, gb = exe.run(
            main,
            feed={"x": rng.standard_normal((2, 16, 6, 6)).astype("float32")},
            fetch_list=[out, a_copy, b_copy],
        )
        kernels = [k for t, k in exe.last_run_info()["kernels"] if t == "sum"]
    finally:
        tide.set_flags({"use_mkldnn": False})
    assert kernels and all("mkldnn" in k for k in kernels), kernels
    np.testing.assert_array_equal(got, ga + gb)
