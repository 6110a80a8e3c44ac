"""int8 kernels for the fake-quant forms Paddle's older quantization writes that the quant_fake
fixture (test_int8_ptq.py) lacks, on a conv-conv-fc net built here (issue 32): the freeze
pass's form (fake_quantize_moving_average_abs_max on the input, a convolution on int8 levels,
fake_channel_wise_dequantize_max_abs after it), weights stored as levels behind a
fake_dequantize_max_abs, an out_threshold attribute and a moving_average_abs_max_scale observer
giving the next op's range, fake-quantized fc weights. The reference is the same program run as
saved in float32 (the fake-quant kernels, checked against Paddle's rule in test_quant_ops.py)."""

import collections

import numpy as np
import pytest
from kernel_libraries import has_mkldnn

import tide
from tide.contrib.quantization import has_fake_quant, quantize_qdq

RNG = np.random.default_rng(32)


def _param(block, scope, name, array):
    array = np.asarray(array, np.float32)
    block.create_var(name=name, shape=list(array.shape), dtype="float32", persistable=True)
    scope.var(name).get_tensor().set(array, tide.CPUPlace())
    return name


def _var(block, name):
    return block.create_var(name=name, dtype="float32")


def fake_quant_net(scope, x):
    """The net (block 0 of a new program) and its parameters in `scope`; `x` sets the input's
    scale. Returns (program, names of the values whose ranges the model records)."""
    program = tide.Program()
    block = program.global_block()
    with tide.program_guard(program, tide.Program()):
        tide.layers.data(name="x", shape=[3, 8, 8], dtype="float32")
    for n in ("x.q", "c1", "c1.dq", "r1", "w2", "c2", "h", "h.obs", "w3", "fc.mul", "out"):
        _var(block, n)
    # Freeze form: the input's levels (s_x), conv on levels, Out = X * s_w[c] / 127 * s_x / 127.
    s_x = float(np.abs(x).max())
    _param(block, scope, "x.scale", [s_x])
    w1_scale = RNG.uniform(0.2, 0.6, 4)
    _param(block, scope, "w1", RNG.integers(-127, 128, (4, 3, 3, 3)))
    _param(block, scope, "w1.scale", w1_scale)
    block.append_op(
        "fake_quantize_moving_average_abs_max",
        inputs={"X": ["x"], "InScale": ["x.scale"]},
        outputs={"Out": ["x.q"]},
    )
    conv = {"strides": [1, 1], "paddings": [1, 1]}
    block.append_op(
        "conv2d",
        inputs={"Input": ["x.q"], "Filter": ["w1"]},
        outputs={"Output": ["c1"]},
        attrs=conv,
    )
    block.append_op(
        "fake_channel_wise_dequantize_max_abs",
        inputs={"X": ["c1"], "Scales": ["w1.scale", "x.scale"]},
        outputs={"Out": ["c1.dq"]},
        attrs={"quant_bits": [8, 8], "quant_axis": 1},
    )
    block.append_op("relu", inputs={"X": ["c1.dq"]}, outputs={"Out": ["r1"]})
    # Weights as levels behind a fake_dequantize_max_abs; the input's range: out_threshold.
    _param(block, scope, "w2.levels", RNG.integers(-127, 128, (4, 4, 3, 3)))
    _param(block, scope, "w2.scale", [0.3])
    block.append_op(
        "fake_dequantize_max_abs",
        inputs={"X": ["w2.levels"], "Scale": ["w2.scale"]},
        outputs={"Out": ["w2"]},
        attrs={"max_range": 127.0},
    )
    block.append_op(
        "conv2d", inputs={"Input": ["r1"], "Filter": ["w2"]}, outputs={"Output": ["c2"]}, attrs=conv
    )
    block.append_op(
        "reshape2", inputs={"X": ["c2"]}, outputs={"Out": ["h"]}, attrs={"shape": [-1, 256]}
    )
    # An observer on the fc's input; fake-quantized float32 weights (per output channel).
    _param(block, scope, "h.scale", [1.0])  # set from the run as saved
    block.append_op(
        "moving_average_abs_max_scale",
        inputs={"X": ["h"]},
        outputs={"Out": ["h.obs"], "OutScale": ["h.scale"]},
    )
    _param(block, scope, "w3.float", RNG.standard_normal((256, 5)) * 0.05)
    block.append_op(
        "fake_channel_wise_quantize_dequantize_abs_max",
        inputs={"X": ["w3.float"]},
        outputs={"Out": ["w3"]},
        attrs={"quant_axis": 1},
    )
    block.append_op("matmul_v2", inputs={"X": ["h.obs"], "Y": ["w3"]}, outputs={"Out": ["fc.mul"]})
    _param(block, scope, "b3", RNG.standard_normal(5) * 0.1)
    block.append_op(
        "elementwise_add", inputs={"X": ["fc.mul"], "Y": ["b3"]}, outputs={"Out": ["out"]}
    )
    return program


def test_fake_quant_forms_run_in_int8():
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    program = fake_quant_net(scope, x)
    assert has_fake_quant(program)
    # The ranges the model would have recorded: r1's on the relu (out_threshold), h's observed.
    r1, h = exe.run(program.clone(), feed={"x": x}, fetch_list=["r1", "h"], scope=scope)
    relu = next(op for op in program.global_block().ops if op.type == "relu")
    relu._set_attr("out_threshold", float(np.abs(r1).max()))
    scope.find_var("h.scale").get_tensor().set(
        np.array([np.abs(h).max()], np.float32), tide.CPUPlace()
    )
    (want,) = exe.run(program.clone(), feed={"x": x}, fetch_list=["out"], scope=scope)

    levels, w1_scale = (np.array(scope.find_var(n).get_tensor()) for n in ("w1", "w1.scale"))
    quantize_qdq(program, scope, fetch_list=["out"])
    block = program.global_block()
    assert not has_fake_quant(program), [op.type for op in block.ops]
    int8 = collections.Counter(
        op.type
        for op in block.ops
        if op.has_attr("mkldnn_data_type") and op.attr("mkldnn_data_type") == "int8"
    )
    assert int8 == {"fused_conv2d": 2, "fc": 1}, int8
    convs = [op for op in block.ops if op.type == "fused_conv2d"]
    assert convs[0].attr("Scale_in") == pytest.approx(127 / np.abs(x).max())
    (out,) = exe.run(program, feed={"x": x}, fetch_list=["out"], scope=scope)
    kernels = [k for t, k in exe.last_run_info()["kernels"] if t in ("fused_conv2d", "fc")]
    assert len(kernels) == 3 and all("int8" in k for k in kernels), kernels
    if has_mkldnn():
        assert all("mkldnn" in k for k in kernels), kernels
    # The freeze form's conv weights, dequantized from their levels: levels * s_w / 127.
    w1 = np.array(scope.find_var("w1").get_tensor(), copy=True)
    np.testing.assert_allclose(w1, levels * w1_scale.reshape(4, 1, 1, 1) / 127, rtol=1e-6)
    err = float(np.abs(out - want).max() / np.abs(want).max())
    print("fake-quant forms int8: max error %.4f of the largest output" % err)
    assert err < 0.05, err


def test_a_run_time_scale_is_refused_naming_the_op():
    program = tide.Program()
    block = program.global_block()
    with tide.program_guard(program, tide.Program()):
        tide.layers.data(name="x", shape=[4], dtype="float32")
    _var(block, "x.q")
    block.append_op("fake_quantize_abs_max", inputs={"X": ["x"]}, outputs={"Out": ["x.q"]})
    with pytest.raises(ValueError, match="op 'fake_quantize_abs_max' on 'x' .*each run's"):
        quantize_qdq(program, tide.Scope(), fetch_list=["x.q"])
