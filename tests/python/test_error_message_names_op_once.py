"""An op plugin's error names its op ("op 'X': ..."); the core adds what it knows (block, op
index, shape inference, the plugin file) without naming the op a second time."""

import re

import numpy as np
import pytest

import tide
from tide import layers

MATH = r"\(%s; plugin \S*libtide_ops_math\S*\)$"


def _once(msg, op):
    assert len(re.findall(r"op '%s'" % re.escape(op), msg)) == 1, msg


def test_compile_time_shape_inference_error():
    with tide.program_guard(tide.Program()):
        x = layers.data(name="x", shape=[3], dtype="float32", append_batch_size=False)
        y = layers.data(name="y", shape=[4], dtype="float32", append_batch_size=False)
        with pytest.raises(tide.TideError) as e:
            layers.elementwise_add(x, y)
    msg = str(e.value)
    _once(msg, "elementwise_add")
    assert re.match(r"op 'elementwise_add': cannot broadcast Y \[4\] onto X \[3\] at axis 0", msg)
    assert re.search(MATH % "shape inference", msg), msg


def test_run_time_shape_inference_error():
    p = tide.Program()
    with tide.program_guard(p):
        a = layers.data(name="a", shape=[-1], dtype="float32", append_batch_size=False)
        b = layers.data(name="b", shape=[-1], dtype="float32", append_batch_size=False)
        c = layers.elementwise_add(a, b)
    exe = tide.Executor(tide.CPUPlace())
    with pytest.raises(tide.TideError) as e:
        exe.run(p, feed={"a": np.ones(3, "float32"), "b": np.ones(4, "float32")}, fetch_list=[c])
    msg = str(e.value)
    _once(msg, "elementwise_add")
    assert msg.startswith("op 'elementwise_add': cannot broadcast Y [4] onto X [3]"), msg
    assert re.search(MATH % r"block 0, #\d+, shape inference", msg), msg


def test_kernel_error_names_op_variable_block_and_plugin():
    p = tide.Program()
    with tide.program_guard(p):
        x = layers.data(name="x", shape=[3], dtype="float32", append_batch_size=False)
        arr = layers.create_array("float32")
        layers.array_write(x, layers.fill_constant([1], "int64", 0), array=arr)
        r = layers.array_read(arr, layers.fill_constant([1], "int64", 4))
    exe = tide.Executor(tide.CPUPlace())
    with pytest.raises(tide.TideError) as e:
        exe.run(p, feed={"x": np.arange(3, dtype="float32")}, fetch_list=[r])
    msg = str(e.value)
    _once(msg, "read_from_array")
    assert re.match(
        r"op 'read_from_array': index 4 is past the end of array '%s' \(1 element\(s\)\) "
        r"\(block 0, #\d+; plugin \S*libtide_ops_control\S*\)$" % re.escape(arr.name),
        msg,
    ), msg
