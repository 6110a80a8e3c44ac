"""The Fluid 1.8 layers the book models need beyond the op layers (issue 14): the learning-rate
schedules exponential_decay and noam_decay against Fluid's formulas over several runs,
zeros / ones, elementwise_max / elementwise_min against numpy (gradients by finite differences,
float32 and float64), nets.sequence_conv_pool against the layers it stands for, and bias_attr=True
(Fluid: a default bias)."""

import numpy as np
import pytest
from test_layers_fluid_args import DTYPES, check_grad, data, run

import tide
from tide import layers, nets


def _lr_over_runs(exe, lr, runs):
    exe.run(tide.default_startup_program())
    return [exe.run(fetch_list=[lr])[0].item() for _ in range(runs)]


@pytest.mark.parametrize("staircase", [False, True])
def test_exponential_decay(exe, staircase):
    lr = layers.exponential_decay(
        learning_rate=0.5, decay_steps=2, decay_rate=0.1, staircase=staircase
    )
    steps = np.arange(5)  # Fluid's step counts the runs from 0
    exponent = np.floor(steps / 2) if staircase else steps / 2
    np.testing.assert_allclose(_lr_over_runs(exe, lr, 5), 0.5 * 0.1**exponent, rtol=1e-5)


def test_noam_decay(exe):
    lr = layers.learning_rate_scheduler.noam_decay(d_model=64, warmup_steps=3, learning_rate=2.0)
    steps = np.arange(1, 7, dtype=np.float64)  # counted from 1
    want = 2.0 * 64**-0.5 * np.minimum(steps**-0.5, 3**-1.5 * steps)
    np.testing.assert_allclose(_lr_over_runs(exe, lr, 6), want, rtol=1e-5)


def test_schedule_errors():
    with pytest.raises(ValueError, match="exponential_decay: decay_steps must be > 0"):
        layers.exponential_decay(0.1, 0, 0.5)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_zeros_and_ones(exe, dtype):
    z, o = layers.zeros([2, 3], dtype), layers.ones([3], dtype, force_cpu=True)
    got_z, got_o = run(exe, [z, o])
    np.testing.assert_array_equal(got_z, np.zeros((2, 3), dtype))
    np.testing.assert_array_equal(got_o, np.ones(3, dtype))
    assert got_z.dtype == np.dtype(dtype) and z.stop_gradient


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "layer,ref", [("elementwise_max", np.maximum), ("elementwise_min", np.minimum)]
)
def test_elementwise_max_min(exe, rng, dtype, layer, ref):
    # values at least 0.05 apart: no ties for finite differences to straddle
    x_np = (rng.permutation(12) * 0.1 - 0.6).reshape(3, 4).astype(dtype)
    y_np = (rng.permutation(4) * 0.1 - 0.17).astype(dtype)
    x, y = data("x", x_np.shape, dtype), data("y", y_np.shape, dtype)
    (got,) = run(exe, [getattr(layers, layer)(x, y, act="relu")], {"x": x_np, "y": y_np})
    np.testing.assert_allclose(got, np.maximum(ref(x_np, y_np), 0), rtol=1e-6)
    check_grad(exe, lambda v: getattr(layers, layer)(v, y), x_np, {"x": x_np, "y": y_np})


def test_sequence_conv_pool_is_sequence_conv_then_sequence_pool(exe, rng):
    x_np = rng.uniform(-1, 1, (7, 4)).astype("float32")
    x = layers.data(name="x", shape=[4], dtype="float32", lod_level=1)
    w = tide.ParamAttr(name="w", initializer=tide.initializer.Constant(0.1))
    b = tide.ParamAttr(name="b", initializer=tide.initializer.Constant(0.2))
    pooled = nets.sequence_conv_pool(
        x, num_filters=3, filter_size=3, param_attr=w, bias_attr=b, act="tanh", pool_type="sqrt"
    )
    conv = layers.sequence_conv(
        x, num_filters=3, filter_size=3, param_attr="w", bias_attr="b", act="tanh"
    )
    t = tide.LoDTensor(x_np)
    t.set_recursive_sequence_lengths([[3, 4]])
    got, want_conv = run(exe, [pooled, conv], {"x": t})
    lens = [3, 4]
    starts = np.cumsum([0] + lens)
    want = [want_conv[s : s + n].sum(axis=0) / np.sqrt(n) for s, n in zip(starts, lens)]
    np.testing.assert_allclose(got, np.array(want), rtol=1e-5)
    # the window of each row: its sequence's rows -1..+1, zero outside; all weights 0.1
    first = np.tanh(0.1 * np.sum([x_np[r].sum() for r in (0, 1)]) + 0.2)
    np.testing.assert_allclose(want_conv[0], [first] * 3, rtol=1e-5)


def test_bias_attr_true_is_a_default_bias():
    x = data("x", [2, 3])
    out = layers.fc(x, size=4, bias_attr=True)
    ops = [op.type for op in tide.default_main_program().global_block().ops]
    assert ops == ["mul", "elementwise_add"] and out.shape[-1] == 4
