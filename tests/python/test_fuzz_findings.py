"""Python-side fixes from fuzzing (reports/fuzz.md): Operator._set_attr takes a Block for a
block attribute (sub_block), as append_op and Fluid's _set_attr do; a sub_block set this way to
the global block is then refused when the program is prepared. From the second round
(reports/fuzz2.md): layers that check an int argument take numpy integers (as the generated
layers and Fluid do), and unbind of a dim of 0 gives no parts instead of an op without outputs."""

import numpy as np
import pytest

import tide
from tide import _C, layers


def test_set_attr_takes_a_block_for_sub_block(exe):
    if not _C.has_op("while"):
        pytest.skip("no while: the ops_control plugin is not built")
    main = tide.default_main_program()
    c = layers.fill_constant(shape=[1], dtype="bool", value=False)
    w = layers.While(c)
    with w.block():
        layers.fill_constant(shape=[1], dtype="float32", value=0.0)
    op = main.global_block().ops[-1]
    body = main.block(1)
    op._set_attr("sub_block", body)  # used to raise "cannot use a Block as an op attribute"
    assert exe.run(main, fetch_list=[c])[0].tolist() == [False]
    op._set_attr("sub_block", main.global_block())
    with pytest.raises(tide.InvalidArgumentError, match="while.*sub_block.*block 0"):
        exe.run(main, fetch_list=[c])


def test_int_arguments_take_numpy_integers(exe):
    x = layers.data(name="x", shape=[2, 3], dtype="float32", append_batch_size=False)
    outs = [
        layers.unbind(x, axis=np.int64(1))[0],
        layers.argmax(x, axis=np.int32(1)),
        layers.argmin(x, axis=np.int64(-1)),
        layers.reduce_sum(x, dim=np.int64(1)),
        layers.reduce_sum(x, dim=[np.int64(0), 1]),
        layers.one_hot(layers.reshape(layers.argmax(x, axis=1), [2, 1]), depth=np.int64(4)),
    ]
    xs = np.array([[1, 5, 2], [7, 0, 3]], "float32")
    got = exe.run(feed={"x": xs}, fetch_list=outs)
    np.testing.assert_array_equal(got[0], xs[:, 0])
    assert got[1].tolist() == [1, 0] and got[2].tolist() == [0, 1]
    np.testing.assert_allclose(got[3], xs.sum(1))
    np.testing.assert_allclose(got[4], xs.sum())
    np.testing.assert_array_equal(got[5], np.eye(4, dtype="float32")[[1, 0]])
    with pytest.raises(TypeError, match="unbind: 'axis' must be an int"):
        layers.unbind(x, axis=True)
    with pytest.raises(TypeError, match="one_hot: 'depth' must be an int"):
        layers.one_hot(x, depth=4.0)


def test_unbind_of_an_empty_dim_gives_no_parts():
    x = layers.data(name="x", shape=[0, 3], dtype="float32", append_batch_size=False)
    assert layers.unbind(x, axis=0) == []
    assert len(layers.unbind(x, axis=1)) == 3
