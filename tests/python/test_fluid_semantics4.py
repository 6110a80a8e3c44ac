"""Fluid 1.x op semantics of issue 37 (part): cross_entropy's output dims for a label without the
last dim, uniform_random's diagonal and SelectedRows outputs (fill_constant's too), pow's
FactorTensor, assign of numpy arrays and LoDTensors (assign_value), sum skipping empty
SelectedRows, and the layers' argument checks (Fluid's exception classes)."""
import numpy as np
import pytest

import tide
from tide import layers


def _softmax(rng, shape):
    e = np.exp(rng.uniform(-1, 1, shape))
    return e / e.sum(-1, keepdims=True)


# ------------------------------------------------------------------------------------------------
# cross_entropy / cross_entropy2: Y has Label's dims (Fluid's InferShape), the last 1 only where
# Label has X's rank.
@pytest.mark.parametrize("label_shape,want", [([5], [5]), ([5, 1], [5, 1])])
def test_cross_entropy_output_has_the_label_dims(exe, rng, label_shape, want):
    x = layers.data(name="x", shape=[5, 4], dtype="float64", append_batch_size=False)
    label = layers.data(name="label", shape=label_shape, dtype="int64", append_batch_size=False)
    y = layers.cross_entropy(x, label)
    assert list(y.shape) == want
    xs = _softmax(rng, (5, 4))
    ls = np.array([0, 3, 1, 2, 3], "int64").reshape(label_shape)
    got, = exe.run(feed={"x": xs, "label": ls}, fetch_list=[y])
    assert list(got.shape) == want
    np.testing.assert_allclose(got.ravel(), -np.log(xs[np.arange(5), ls.ravel()]), rtol=1e-12)


def test_cross_entropy_soft_label_keeps_a_last_dim_of_1(exe, rng):
    x = layers.data(name="x", shape=[4], dtype="float64")
    label = layers.data(name="label", shape=[4], dtype="float64")
    y = layers.cross_entropy(x, label, soft_label=True)
    assert list(y.shape) == [-1, 1]
    xs, ls = _softmax(rng, (3, 4)), _softmax(rng, (3, 4))
    got, = exe.run(feed={"x": xs, "label": ls}, fetch_list=[y])
    np.testing.assert_allclose(got, -(ls * np.log(xs)).sum(-1, keepdims=True), rtol=1e-12)


def test_cross_entropy_gradient_with_a_label_without_the_last_dim(exe, rng):
    x = layers.data(name="x", shape=[3, 4], dtype="float64", append_batch_size=False,
                    stop_gradient=False)
    label = layers.data(name="label", shape=[3], dtype="int64", append_batch_size=False)
    loss = layers.mean(layers.cross_entropy(x, label))
    tide.append_backward(loss, parameter_list=["x"])
    xs, ls = _softmax(rng, (3, 4)), np.array([2, 0, 3], "int64")
    got, = exe.run(feed={"x": xs, "label": ls}, fetch_list=["x@GRAD"])
    want = np.zeros((3, 4))
    want[np.arange(3), ls] = -1.0 / (3 * xs[np.arange(3), ls])
    np.testing.assert_allclose(got, want, rtol=1e-12)
