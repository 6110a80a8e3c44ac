"""Layers generated from an op's proto (tide/layers/generated.py): too many positional arguments
are an error, not inputs silently dropped; the docstring names the outputs in return order."""

import numpy as np
import pytest

import tide
from tide import layers


def test_too_many_positional_arguments_name_the_op_and_its_inputs():
    x = layers.data(name="x", shape=[3], dtype="float32")
    z = layers.data(name="z", shape=[3], dtype="float32")
    block = tide.default_main_program().current_block()
    n_ops = len(block.ops)
    # sign (the in-tree ops_math pack) has the one input X: z used to be dropped without a word
    with pytest.raises(TypeError, match=r"sign\(\) takes 1 positional.*\['X'\].*2 were given"):
        layers.sign(x, z)
    assert len(block.ops) == n_ops  # and no op was built
    # clip has three inputs (X, Min, Max): a fourth is one too many
    with pytest.raises(TypeError, match=r"clip\(\) takes 3 .*\['X', 'Min', 'Max'\].*4 were given"):
        layers.clip(x, z, z, z)


def test_an_input_given_positionally_and_by_keyword_is_an_error():
    x = layers.data(name="x", shape=[3], dtype="float32")
    z = layers.data(name="z", shape=[3], dtype="float32")
    with pytest.raises(TypeError, match=r"sign\(\): got multiple values for input 'X'"):
        layers.sign(x, X=z)


def test_positional_inputs_still_build_and_run(exe):
    x = layers.data(name="x", shape=[3], dtype="float32")
    out = layers.sign(x)
    assert [op.type for op in tide.default_main_program().current_block().ops] == ["sign"]
    xs = np.array([[-2.0, 0.0, 3.0]], "float32")
    (got,) = exe.run(feed={"x": xs}, fetch_list=[out])
    np.testing.assert_array_equal(got, np.sign(xs))


def test_docstring_lists_the_outputs_in_order_and_says_none():
    doc = layers.fake_quantize_abs_max.__doc__
    assert "\nOutputs: Out, OutScale\n" in doc
    assert "Attributes: bit_length=8" in doc
    x = layers.data(name="x", shape=[3], dtype="float32")
    out, scale = layers.fake_quantize_abs_max(x)  # the order the docstring gives
    assert out.op.output("Out") == [out.name] and out.op.output("OutScale") == [scale.name]
    doc = layers.sign.__doc__
    assert "\nInputs: X\nOutputs: Out\nAttributes: none" in doc
    assert not doc.rstrip().endswith(":")  # no empty list after "Attributes:"
