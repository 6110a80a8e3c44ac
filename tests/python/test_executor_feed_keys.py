"""Executor.run's feed keys and fetch_list entries: a Variable key stands for its name (Fluid
takes names only, users write {x_var: array}); any other key, or a fetch entry neither a name nor
a Variable, is a TypeError naming its type, not a pybind 'incompatible function arguments' dump."""

import numpy as np
import pytest

from tide import layers


def _net():
    x = layers.data(name="x", shape=[3], dtype="float32")
    y = layers.data(name="y", shape=[3], dtype="float32")
    return x, y, layers.elementwise_add(x, layers.scale(y, scale=2.0))


def test_a_variable_as_a_feed_key_is_its_name(exe):
    x, y, out = _net()
    xs = np.array([[1.0, 2.0, 3.0]], "float32")
    ys = np.array([[10.0, 20.0, 30.0]], "float32")
    (got,) = exe.run(feed={x: xs, y: ys}, fetch_list=[out])
    np.testing.assert_array_equal(got, xs + 2 * ys)
    (mixed,) = exe.run(feed={x: xs, "y": ys}, fetch_list=[out])  # names and Variables mixed
    np.testing.assert_array_equal(mixed, got)


def test_a_variable_and_its_name_both_as_keys_is_an_error(exe):
    x, y, out = _net()
    xs = np.ones((1, 3), "float32")
    with pytest.raises(ValueError, match="feed 'x' is given twice"):
        exe.run(feed={x: xs, "x": xs, "y": xs}, fetch_list=[out])


@pytest.mark.parametrize("key,type_name", [(0, "int"), (b"x", "bytes"), (("x",), "tuple")])
def test_other_feed_keys_are_a_type_error_naming_the_type(exe, key, type_name):
    _, _, out = _net()
    xs = np.ones((1, 3), "float32")
    with pytest.raises(
        TypeError, match=r"feed key .* is a %s; a key is a variable name" % type_name
    ):
        exe.run(feed={key: xs, "y": xs}, fetch_list=[out])


def test_a_fetch_entry_neither_a_name_nor_a_variable_is_a_type_error(exe):
    _, _, out = _net()
    xs = np.ones((1, 3), "float32")
    with pytest.raises(TypeError, match=r"fetch_list\[1\] is a int \(3\), not a Variable"):
        exe.run(feed={"x": xs, "y": xs}, fetch_list=[out, 3])
    with pytest.raises(TypeError, match=r"fetch_list\[0\] is a ndarray"):
        exe.run(feed={"x": xs, "y": xs}, fetch_list=[xs])
