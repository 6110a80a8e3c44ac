"""Python-side fixes from fuzzing (reports/fuzz.md): Operator._set_attr takes a Block for a
block attribute (sub_block), as append_op and Fluid's _set_attr do; a sub_block set this way to
the global block is then refused when the program is prepared."""

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
