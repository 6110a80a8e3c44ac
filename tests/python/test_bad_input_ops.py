"""Inputs a fuzzer found (reports of the fuzz walkthrough) that kernels read out of bounds, left
an output unwritten or narrowed before checking: each is now refused naming the op, or computed
as numpy does. One op per case, built by hand as a hand-written or transpiled program would."""

import numpy as np
import pytest
from kernel_libraries import LIBS

import tide
from tide import layers


def run_op(op, inputs, outputs, attrs=None, lod=None, lib="plain"):
    """Runs one `op` on numpy `inputs` ({param: array or [arrays]}); returns the fetched outputs
    ({param: count}) in order. `lod`: {input name: recursive sequence lengths}."""
    main, feed, fetch = tide.Program(), {}, []
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        ins = {}
        for param, arrays in inputs.items():
            ins[param] = []
            for k, a in enumerate(arrays if isinstance(arrays, list) else [arrays]):
                name = "%s_%d" % (param, k)
                level = 1 if lod and name in lod else 0
                b.create_var(name=name, shape=list(a.shape), dtype=a.dtype.name, lod_level=level)
                t = a
                if level:
                    t = tide.LoDTensor(a)
                    t.set_recursive_sequence_lengths(lod[name])
                feed[name] = t
                ins[param].append(name)
        outs = {p: ["%s_out%d" % (p, k) for k in range(n)] for p, n in outputs.items()}
        for names in outs.values():
            for n in names:
                b.create_var(name=n, dtype="float32")
            fetch += names
        attrs = dict(attrs or {}, **({"use_mkldnn": True} if lib == "mkldnn" else {}))
        b.append_op(op, inputs=ins, outputs=outs, attrs=attrs)
    return tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=fetch)


def test_reading_a_variable_delete_var_freed_is_an_error():
    """delete_var frees a tensor's memory and keeps its dims; a later reader crashed (SIGSEGV)."""
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        x = layers.fill_constant(shape=[2], dtype="float32", value=1.0)
        main.global_block().append_op("delete_var", inputs={"X": [x]}, outputs={})
        y = layers.scale(x, scale=2.0)
    with pytest.raises(tide.TideError, match=r"scale.*input 'X'.*\[2\] holds no data.*freed"):
        tide.Executor(tide.CPUPlace()).run(main, fetch_list=[y])


def test_sequence_slice_offset_that_would_overflow():
    x = np.arange(18, dtype="float32").reshape(9, 2)
    offset, length = np.array([[2**63 - 1], [0]], "int64"), np.array([[2], [1]], "int64")
    with pytest.raises(tide.TideError, match="sequence_slice.*Offset\\[0\\].*exceeds the length 4"):
        run_op(
            "sequence_slice",
            {"X": x, "Offset": offset, "Length": length},
            {"Out": 1},
            lod={"X_0": [[4, 5]]},
        )


def test_gather_nd_of_an_empty_index_tuple_takes_all_of_x():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    (out,) = run_op("gather_nd", {"X": x, "Index": np.zeros((2, 0), "int64")}, {"Out": 1})
    np.testing.assert_array_equal(out, np.stack([x, x]))


@pytest.mark.parametrize("op", ["cross_entropy", "cross_entropy2"])
def test_cross_entropy_without_classes(op):
    label = np.zeros((5, 1), "int64")
    outs = {"Y": 1, "MatchX": 1, "XShape": 1} if op == "cross_entropy2" else {"Y": 1}
    with pytest.raises(tide.TideError, match=op + ".*X \\[5, 0\\] has no classes"):
        run_op(op, {"X": np.zeros((5, 0), "float32"), "Label": label}, outs)


BIG = 2**32 + 1  # 1 once narrowed to int32


@pytest.mark.parametrize(
    "op,inputs,outputs,attrs,shown",
    [
        ("arg_max", {}, {"Out": 1}, {"axis": BIG}, "axis 4294967297 is out of range"),
        ("concat", {"AxisTensor": np.array([BIG], "int64")}, {"Out": 1}, {}, "outside int32"),
        (
            "split",
            {"AxisTensor": np.array([BIG], "int64")},
            {"Out": 2},
            {"num": 2},
            "outside int32",
        ),
        (
            "split",
            {"SectionsTensorList": [np.array([BIG], "int64"), np.array([-1], "int64")]},
            {"Out": 2},
            {"axis": 1, "sections": [-1, -1]},
            "outside int32",
        ),
        (
            "gather",
            {"Index": np.array([0, 1], "int64"), "Axis": np.array([BIG], "int64")},
            {"Out": 1},
            {},
            "axis 4294967297 is out of range",
        ),
        (
            "unsqueeze2",
            {"AxesTensor": np.array([2**32], "int64")},
            {"Out": 1, "XShape": 1},
            {"axes": []},
            "outside int32",
        ),
    ],
)
def test_int64_axes_are_checked_whole(op, inputs, outputs, attrs, shown):
    x = np.arange(8, dtype="float32").reshape(2, 4)
    xs = [x, x] if op == "concat" else x
    with pytest.raises(tide.TideError, match=op + ".*" + shown):
        run_op(op, {"X": xs, **inputs}, outputs, attrs)


@pytest.mark.parametrize(
    "op", ["bilinear_interp", "nearest_interp", "bilinear_interp_v2", "nearest_interp_v2"]
)
def test_interpolating_an_image_without_pixels(op):
    x = np.zeros((1, 2, 0, 4), "float32")
    with pytest.raises(tide.TideError, match=op + ".*has no pixels to interpolate"):
        run_op(op, {"X": x}, {"Out": 1}, {"out_h": 2, "out_w": 2})
    (out,) = run_op(
        op, {"X": np.zeros((0, 2, 3, 4), "float32")}, {"Out": 1}, {"out_h": 2, "out_w": 2}
    )
    assert out.shape == (0, 2, 2, 2)  # an empty batch is no error


@pytest.mark.parametrize(
    "fmt,shape,paddings",
    [("NCHW", (1, 1, 0, 3), [1, 1, 1, 1]), ("NHWC", (1, 0, 3, 1), [1, 1, 0, 0])],
)
def test_edge_padding_of_nothing(fmt, shape, paddings):
    attrs = {"paddings": paddings, "mode": "edge", "data_format": fmt}
    with pytest.raises(tide.TideError, match="pad2d.*edge padding.*no rows or columns"):
        run_op("pad2d", {"X": np.zeros(shape, "float32")}, {"Out": 1}, attrs)
    (out,) = run_op(
        "pad2d", {"X": np.zeros(shape, "float32")}, {"Out": 1}, dict(attrs, mode="constant")
    )
    assert 0 not in out.shape[1:3]  # constant padding of nothing is the padding


def test_sequence_pad_grad_shorter_than_the_longest_sequence():
    x = np.ones((7, 3), "float32")
    with pytest.raises(tide.TideError, match="sequence_pad_grad.*shorter than X's longest .*4"):
        run_op(
            "sequence_pad_grad",
            {"X": x, "Out@GRAD": np.full((4, 2, 3), 5.0, "float32")},
            {"X@GRAD": 1},
            {"padded_length": -1},
            lod={"X_0": [[2, 0, 4, 1]]},
        )


# --- round two: the new ops, and the oneDNN kernels --------------------------------------------


@pytest.mark.parametrize("lib", LIBS)
def test_int8_fc_of_an_empty_batch(lib):
    """oneDNN's int8 matmul divided by the zero dim (SIGFPE); empty inputs go to the plain kernel."""
    attrs = {
        "in_num_col_dims": 2,
        "Scale_in": 50.0,
        "Scale_out": 25.0,
        "Scale_weights": [100.0, 100.0],
    }
    x, w = np.zeros((0, 3, 4), "uint8"), np.ones((4, 2), "float32")
    (out,) = run_op("fc", {"Input": x, "W": w}, {"Out": 1}, attrs, lib=lib)
    assert out.shape == (0, 3, 2)


@pytest.mark.parametrize("lib", LIBS)
def test_batch_norm_training_on_an_empty_batch(lib):
    """oneDNN's wrote garbage into the running statistics; every kernel refuses it alike."""
    ins = {
        "X": np.zeros((0, 3, 2, 2), "float32"),
        "Scale": np.ones(3, "float32"),
        "Bias": np.zeros(3, "float32"),
        "Mean": np.zeros(3, "float32"),
        "Variance": np.ones(3, "float32"),
    }
    outs = {"Y": 1, "MeanOut": 1, "VarianceOut": 1, "SavedMean": 1, "SavedVariance": 1}
    with pytest.raises(tide.TideError, match="batch_norm"):
        run_op("batch_norm", ins, outs, {"is_test": False, "momentum": 0.9}, lib=lib)


@pytest.mark.parametrize("lib", LIBS)
def test_concat_axis_tensor_beyond_int32(lib):
    ins = {"X": [np.ones((2, 3), "float32")] * 2, "AxisTensor": np.array([2**32 + 1], "int64")}
    with pytest.raises(tide.TideError, match="concat.*4294967297, outside int32"):
        run_op("concat", ins, {"Out": 1}, lib=lib)


@pytest.mark.parametrize("n", [1, 8, 16, 17])
def test_sqrt_of_infinity(n):
    """Eigen's vectorised fast sqrt (x * rsqrt(x)) gave NaN for +inf inside a packet."""
    for dtype in ["float32", "float64"]:
        x = np.full(n, np.inf, dtype)
        x[0] = 4.0
        (out,) = run_op("sqrt", {"X": x}, {"Out": 1})
        np.testing.assert_array_equal(out, np.sqrt(x))


@pytest.mark.parametrize(
    "op,ins",
    [
        ("tile", {"X": np.ones(4, "float32"), "RepeatTimes": np.array([2**62])}),
        (
            "pad3d",
            {
                "X": np.ones((1, 1, 2, 2, 2), "float32"),
                "Paddings": np.array([2**63 - 1, 2**63 - 1, 0, 0, 0, 0]),
            },
        ),
    ],
)
def test_output_sizes_past_int64(op, ins):
    with pytest.raises(tide.TideError, match=op + ".*past int64"):
        run_op(op, ins, {"Out": 1})


@pytest.mark.parametrize("shift", [-(2**63 - 1), -(2**63), 2**63 - 1, 5, -4])
@pytest.mark.parametrize("axis", [[0], []])
def test_roll_by_any_int64_shift(shift, axis):
    x = np.arange(3, dtype="float32")
    (out,) = run_op("roll", {"X": x}, {"Out": 1}, {"shifts": [shift], "axis": axis})
    np.testing.assert_array_equal(out, np.roll(x, shift % 3))
