"""Paddle's quantization ops (plugins/ops_nn/quant_ops.cc), which models saved by Paddle's
quantization-aware training and post-training quantization carry, against a numpy reference of
Paddle's rule: levels bin = 2^(bits-1) - 1 (or qmax); round_type 0 rounds bin/s * x half to even
and clamps to [-bin-1, bin], round_type 1 clamps x to [-s, s] and rounds half away from zero;
quant-dequant ops scale the level back by s / bin; scales per tensor or per index of quant_axis.
The whole models (tests/fixtures/paddle/quant_*) are checked against Paddle's own outputs in
test_paddle_models.py."""

import numpy as np
import pytest

import tide


def run_op(op, inputs, outputs, attrs=None):
    """`op` on the numpy `inputs` ({param: array}); fetches `outputs` ({param: dims})."""
    prog = tide.Program()
    block = prog.global_block()
    feed, ins = {}, {}
    for param, arr in inputs.items():
        arrs = arr if isinstance(arr, list) else [arr]
        ins[param] = []
        for i, a in enumerate(arrs):
            name = "%s_%d" % (param.lower(), i)
            ins[param].append(block.create_var(name=name, shape=a.shape, dtype=a.dtype.name))
            feed[name] = a
    outs = {
        p: [block.create_var(name="out_" + p.lower(), shape=d, dtype="float32")]
        for p, d in outputs.items()
    }
    block.append_op(type=op, inputs=ins, outputs=outs, attrs=attrs or {})
    return tide.Executor(tide.CPUPlace()).run(
        prog, feed=feed, fetch_list=[v[0] for v in outs.values()]
    )


def levels(x, s, bin_cnt, round_type):
    """Paddle's integer level of each x under scale s (s broadcast against x), the product
    (bin_cnt * (1 / s)) * x in float32 as Paddle's kernels compute it (the rounding of values
    near a half depends on it), rounded in float64."""
    f = np.float32
    s = np.asarray(s, f)
    factor = f(bin_cnt) * (f(1) / s)
    if round_type == 0:
        v = (factor * x.astype(f)).astype(np.float64)
        return np.clip(np.round(v), -bin_cnt - 1, bin_cnt)  # np.round: half to even
    v = (factor * np.clip(x.astype(f), -s, s)).astype(np.float64)
    return np.sign(v) * np.floor(np.abs(v) + 0.5)  # half away from zero


def channel_shape(x, axis):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return shape


RNG = np.random.default_rng(7)
X = RNG.uniform(-3, 3, (4, 5, 6)).astype(np.float32)
# Exact halves under qmax 64 and scale 1 (64 x = k + 0.5), where the two roundings differ.
TIES = (np.arange(-6, 6, dtype=np.float32) + 0.5) / 64


@pytest.mark.parametrize("round_type", [0, 1])
def test_quantize_and_dequantize_linear_per_tensor(round_type):
    x = np.concatenate([X.ravel(), TIES, [5.0, -5.0]]).astype(np.float32)  # beyond s: clamped
    s = np.array([1.27], np.float32)
    attrs = {"quant_axis": -1, "bit_length": 8, "round_type": round_type}
    (y,) = run_op("quantize_linear", {"X": x, "Scale": s}, {"Y": x.shape}, attrs)
    want = levels(x, s[0], 127, round_type)
    np.testing.assert_array_equal(y, want)
    assert y.max() <= 127 and y.min() >= -128
    (back,) = run_op("dequantize_linear", {"X": y, "Scale": s}, {"Y": x.shape}, attrs)
    np.testing.assert_allclose(back, want * 1.27 / 127, rtol=1e-6)


def test_the_two_roundings_differ_on_ties():
    s = np.array([1.0], np.float32)
    got = [
        run_op(
            "quantize_linear",
            {"X": TIES, "Scale": s},
            {"Y": TIES.shape},
            {"quant_axis": -1, "round_type": r, "qmax": 64},
        )[0]
        for r in (0, 1)
    ]
    np.testing.assert_array_equal(got[0] % 2, 0 * got[0])  # every tie went to the even level
    np.testing.assert_array_equal(got[1], np.sign(TIES) * np.ceil(np.abs(TIES) * 64))  # away


@pytest.mark.parametrize("axis", [0, 1])
def test_channel_wise_scales_along_quant_axis(axis):
    s = RNG.uniform(0.5, 2.0, X.shape[axis]).astype(np.float32)
    (y,) = run_op(
        "quantize_linear",
        {"X": X, "Scale": s},
        {"Y": X.shape},
        {"quant_axis": axis, "bit_length": 4},
    )
    np.testing.assert_array_equal(y, levels(X, s.reshape(channel_shape(X, axis)), 7, 0))
    (back,) = run_op(
        "dequantize_linear",
        {"X": y, "Scale": s},
        {"Y": X.shape},
        {"quant_axis": axis, "bit_length": 4},
    )
    np.testing.assert_allclose(back, y * s.reshape(channel_shape(X, axis)) / 7, rtol=1e-6)


def test_qmax_of_paddle_3_sets_the_levels():
    s = np.array([2.0], np.float32)
    (y,) = run_op(
        "quantize_linear",
        {"X": X, "Scale": s},
        {"Y": X.shape},
        {"quant_axis": -1, "bit_length": 8, "qmax": 15, "qmin": -16},
    )
    np.testing.assert_array_equal(y, levels(X, 2.0, 15, 0))


def test_int8_levels_dequantize_to_the_scales_type():
    # A weight the program declares int8 (Paddle's int8-saved quantized weights).
    q = RNG.integers(-128, 128, (4, 6)).astype(np.int8)
    s = RNG.uniform(0.5, 2.0, 6).astype(np.float32)
    (y,) = run_op("dequantize_linear", {"X": q, "Scale": s}, {"Y": q.shape}, {"quant_axis": 1})
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, q.astype(np.float64) * s / 127, rtol=1e-6)


def test_only_observer_passes_x_through():
    (y,) = run_op(
        "quantize_linear",
        {"X": X, "Scale": np.array([1.0], np.float32)},
        {"Y": X.shape},
        {"quant_axis": -1, "only_observer": True},
    )
    np.testing.assert_array_equal(y, X)


@pytest.mark.parametrize("round_type", [0, 1])
def test_fake_quant_dequant_ops(round_type):
    attrs = {"bit_length": 8, "round_type": round_type}
    s = np.array([2.5], np.float32)
    out, scale = run_op(
        "fake_quantize_dequantize_moving_average_abs_max",
        {"X": X, "InScale": s},
        {"Out": X.shape, "OutScale": [1]},
        dict(attrs, is_test=True),
    )
    np.testing.assert_allclose(out, levels(X, 2.5, 127, round_type) * 2.5 / 127, rtol=1e-6)
    np.testing.assert_array_equal(scale, s)
    # Weights: each channel's own largest |x| is its scale.
    for axis in (0, 1):
        out, scale = run_op(
            "fake_channel_wise_quantize_dequantize_abs_max",
            {"X": X},
            {"Out": X.shape, "OutScale": [X.shape[axis]]},
            dict(attrs, quant_axis=axis),
        )
        other = tuple(d for d in range(X.ndim) if d != axis)
        s_c = np.abs(X).max(axis=other)
        np.testing.assert_array_equal(scale, s_c)
        s_b = s_c.reshape(channel_shape(X, axis))
        np.testing.assert_allclose(out, levels(X, s_b, 127, round_type) * s_b / 127, rtol=1e-6)
    out, scale = run_op(
        "fake_quantize_dequantize_abs_max", {"X": X}, {"Out": X.shape, "OutScale": [1]}, attrs
    )
    m = np.abs(X).max()
    np.testing.assert_allclose(out, levels(X, m, 127, round_type) * m / 127, rtol=1e-6)


def test_fake_dequantize_ops():
    q = np.round(RNG.uniform(-127, 127, (3, 4))).astype(np.float32)
    (out,) = run_op(
        "fake_dequantize_max_abs",
        {"X": q, "Scale": np.array([0.5], np.float32)},
        {"Out": q.shape},
        {"max_range": 127.0},
    )
    np.testing.assert_allclose(out, q * 0.5 / 127, rtol=1e-6)
    s = np.array([0.5, 1.0, 2.0, 4.0], np.float32)
    (out,) = run_op(
        "fake_channel_wise_dequantize_max_abs",
        {"X": q, "Scales": [s]},
        {"Out": q.shape},
        {"quant_bits": [8], "quant_axis": 1},
    )
    np.testing.assert_allclose(out, q * s / 127, rtol=1e-6)
    # With the activations' scale too (weights' levels times the input's).
    (out,) = run_op(
        "fake_channel_wise_dequantize_max_abs",
        {"X": q, "Scales": [s, np.array([3.0], np.float32)]},
        {"Out": q.shape},
        {"quant_bits": [8, 8], "quant_axis": 1},
    )
    np.testing.assert_allclose(out, q * s / 127 * (3.0 / 127), rtol=1e-6)


def test_training_mode_and_bad_scales_are_refused_naming_the_op():
    s = np.array([1.0], np.float32)
    with pytest.raises(Exception, match="quantize_linear' in training mode"):
        run_op(
            "quantize_linear",
            {"X": X, "Scale": s},
            {"Y": X.shape},
            {"quant_axis": -1, "is_test": False},
        )
    with pytest.raises(Exception, match="Scale holds 1 value.*5 channel"):
        run_op("quantize_linear", {"X": X, "Scale": s}, {"Y": X.shape}, {"quant_axis": 1})
    with pytest.raises(Exception, match="quant_axis 2"):
        run_op("dequantize_linear", {"X": X, "Scale": s}, {"Y": X.shape}, {"quant_axis": 2})
