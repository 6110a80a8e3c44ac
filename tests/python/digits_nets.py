"""The digits data (scikit-learn's bundled 8x8 digits: 80% train, 20% test, shuffled once) and the
two small nets the precision tests train on it: an MLP and a LeNet-like conv net."""

import numpy as np
import pytest

import tide


def digits(shape, seed=0):
    """((train_x, train_y), (test_x, test_y)): x float32 in [0, 1] of `shape` per image, y int64
    [n, 1]. Skips the test where scikit-learn is missing."""
    datasets = pytest.importorskip("sklearn.datasets")
    x, y = datasets.load_digits(return_X_y=True)
    x = (x / 16.0).astype("float32").reshape((-1,) + shape)
    y = y.astype("int64").reshape(-1, 1)
    idx = np.random.RandomState(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    return (x[idx[:cut]], y[idx[:cut]]), (x[idx[cut:]], y[idx[cut:]])


def mlp(img):
    h = tide.layers.fc(img, size=128, act="relu")
    h = tide.layers.fc(h, size=64, act="relu")
    return tide.layers.fc(h, size=10, act="softmax")


def lenet(img):
    c1 = tide.layers.conv2d(img, num_filters=16, filter_size=3, padding=1, act="relu")
    p1 = tide.layers.pool2d(c1, pool_size=2, pool_stride=2, pool_type="max")
    c2 = tide.layers.conv2d(p1, num_filters=32, filter_size=3, padding=1, act="relu")
    p2 = tide.layers.pool2d(c2, pool_size=2, pool_stride=2, pool_type="max")
    h = tide.layers.fc(p2, size=64, act="relu")
    return tide.layers.fc(h, size=10, act="softmax")
