"""Fluid 1.x semantics, third round (issue 14): clip of a SelectedRows (merged, then clipped) and
GradientClipByValue over sparse gradients; lars_momentum refusing a SelectedRows Grad (as Fluid
1.8's kernels do); fill_constant's ValueTensor refused where Out's dtype cannot hold it;
strided_slice's StartsTensor / EndsTensor / StridesTensor and their ...TensorList forms, in
Fluid 1.8's order, and the strided_slice layer taking Variables. Outputs against numpy, gradients
against central finite differences, float32 and float64.

Where Tide differs from Fluid 1.x: strided_slice's bound tensors may be int64 as well as int32;
values beyond int32 are clamped (they mean "to the end"). At build time a bound from a tensor
leaves the sliced dims unknown (-1) and the others known (Fluid: every dim -1 with a 1-D bound
tensor; with lists, per axis by infer_flags). strided_slice clamps out-of-range bounds as Python
does (an empty slice is [0] dims), where Fluid 1.8 refuses some of them. Fluid's op comment calls
StartsTensor the highest priority, its kernels read StartsTensorList first: Tide follows the
kernels. lars_momentum's refusal of a SelectedRows Grad comes at build time already (Fluid's at
run time)."""

import numpy as np
import pytest
from op_test import make
from test_fluid_semantics import DTYPE_CODE, DTYPES, grad_args, rand
from test_fluid_semantics2 import _embedding_step, out_shape_of
from test_layers_fluid_args import check_grad, data, op_of, run
from test_ops_selected_rows import TOL, merged, run_op

import tide
from tide import layers
from tide.clip import GradientClipByValue, append_gradient_clip_ops


# ---------------------------------------------------------------------------------------------
# clip of a SelectedRows: merged first, then clipped (Fluid 1.8's clip_op.h)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bounds", ["attributes", "Min/Max inputs"])
def test_clip_merges_selected_rows_then_clips(dtype, bounds, rng):
    rows = [6, 1, 6, 6, 3, 1]  # row 6 three times, row 1 twice: their sums are clipped
    values = rand(rng, (6, 4), dtype) * 0.8
    lo, hi = -0.625, 0.5  # exact in float32 (the attributes are float)
    attrs, dense = {"min": lo, "max": hi}, None
    if bounds != "attributes":  # the inputs win over the attributes
        attrs = {"min": -9.0, "max": 9.0}
        dense = {"Min": np.array([lo], dtype), "Max": np.array([hi], dtype)}
    got_rows, got, height = run_op(
        "clip", {"X": [(rows, values)]}, attrs, dense_inputs=dense, dtype=dtype
    )
    want_rows, m = merged([(rows, values)], 4)
    assert got_rows == want_rows == [1, 3, 6] and height == 10
    assert ((m < lo) | (m > hi)).any() and ((m > lo) & (m < hi)).any()  # both kinds of element
    np.testing.assert_allclose(got, np.clip(m, lo, hi), **TOL[dtype])
    # Clipping before merging would differ: the test tells the two orders apart.
    per_listed = merged([(rows, np.clip(values.astype(np.float64), lo, hi))], 4)[1]
    assert not np.allclose(per_listed, np.clip(m, lo, hi))


def test_clip_of_selected_rows_is_a_selected_rows_at_build_time():
    block = tide.default_main_program().global_block()
    x = block.create_var(name="x", shape=[10, 4], dtype="float32", type="SELECTED_ROWS")
    out = block.create_var(name="out", dtype="float32")
    block.append_op("clip", inputs={"X": x}, outputs={"Out": out}, attrs={"min": -1.0, "max": 1.0})
    assert out.type == "SELECTED_ROWS" and tuple(out.shape) == (10, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradient_clip_by_value_of_a_sparse_grad(dtype, rng):
    rows, values, height = [5, 0, 5, 2], rand(rng, (4, 3), dtype), 7
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        p = b.create_var(name="p", shape=[height, 3], dtype=dtype, persistable=True)
        g = b.create_var(
            name="g", shape=[height, 3], dtype=dtype, type="SELECTED_ROWS", persistable=True
        )
        ((_, c),) = append_gradient_clip_ops(
            [(p, g)], GradientClipByValue(0.375, -0.25)
        )  # exact in float32
        assert c.type == "SELECTED_ROWS"
        c.persistable = True
    scope = tide.Scope()
    sr = scope.var("g").get_selected_rows()
    sr.set_rows(rows)
    sr.set_height(height)
    sr.get_tensor().set(values, tide.CPUPlace(), False)
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    out = scope.find_var(c.name).get_selected_rows()
    want_rows, m = merged([(rows, values)], 3)
    assert list(out.rows()) == want_rows and out.height() == height
    np.testing.assert_allclose(np.array(out.get_tensor()), np.clip(m, -0.25, 0.375), **TOL[dtype])


def test_sparse_embedding_clipped_by_value_as_its_dense_twin():
    """An is_sparse embedding step clipped by value (ids repeated) updates the table as the dense
    gradient clipped by value does: the dense gradient of a row is the sum of its lookups."""
    clip = GradientClipByValue(0.05)
    dense_before, dense_after = _embedding_step(False, clip)
    sparse_before, sparse_after = _embedding_step(True, clip)
    np.testing.assert_array_equal(dense_before, sparse_before)
    assert not np.allclose(dense_after, dense_before)
    np.testing.assert_allclose(sparse_after, dense_after, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# lars_momentum: a dense Grad only (Fluid 1.8's kernels enforce a LoDTensor)
def test_lars_momentum_refuses_a_sparse_grad_naming_it():
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup), tide.unique_name.guard():
        ids = layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
        emb = layers.embedding(
            ids, size=[6, 3], is_sparse=True, param_attr=tide.ParamAttr(name="table")
        )
        loss = layers.reduce_sum(layers.square(emb))
        opt = tide.optimizer.LarsMomentumOptimizer(0.1, momentum=0.9)
        with pytest.raises(
            tide.TideError,
            match=r"op 'lars_momentum': Grad \('table@GRAD"
            r"[^']*'\) is a SelectedRows \(a sparse "
            r"gradient\); lars_momentum takes a dense Grad",
        ):
            opt.minimize(loss)


def test_lars_momentum_kernel_refuses_a_sparse_grad():
    """The kernel checks what the variable holds, for programs built elsewhere."""
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        ins = {}
        for name, shape in (
            ("Param", [4, 2]),
            ("Grad", [4, 2]),
            ("Velocity", [4, 2]),
            ("LearningRate", [1]),
        ):
            ins[name] = b.create_var(
                name=name.lower(), shape=shape, dtype="float32", persistable=True
            )
        b.append_op(
            "lars_momentum",
            inputs=ins,
            outputs={"ParamOut": ins["Param"], "VelocityOut": ins["Velocity"]},
            attrs={"mu": 0.9},
        )
    scope = tide.Scope()
    for name, value in (
        ("param", np.ones((4, 2))),
        ("velocity", np.zeros((4, 2))),
        ("learningrate", np.array([0.1])),
    ):
        scope.var(name).get_tensor().set(value.astype("float32"), tide.CPUPlace(), False)
    sr = scope.var("grad").get_selected_rows()
    sr.set_rows([1, 1])
    sr.set_height(4)
    sr.get_tensor().set(np.ones((2, 2), "float32"), tide.CPUPlace(), False)
    with pytest.raises(
        tide.TideError,
        match=r"op 'lars_momentum': Grad \('grad'\) is a "
        r"SelectedRows",
    ):
        tide.Executor(tide.CPUPlace()).run(main, scope=scope)


# ---------------------------------------------------------------------------------------------
# fill_constant's ValueTensor: refused where Out's dtype cannot hold it
@pytest.mark.parametrize(
    "dtype,value",
    [
        ("int32", np.array([3e9], "float64")),
        ("int32", np.array([2**31], "int64")),
        ("int64", np.array([np.nan], "float32")),
        ("int32", np.array([-(2**31) - 1], "int64")),
    ],
)
def test_fill_constant_value_tensor_that_the_dtype_cannot_hold(dtype, value):
    with pytest.raises(
        tide.TideError, match=r"op 'fill_constant': ValueTensor \S+ does not fit " + dtype
    ):
        make(
            "fill_constant",
            {"ValueTensor": value},
            {"Out": np.zeros([2], dtype)},
            {"shape": [2], "dtype": DTYPE_CODE[dtype]},
        ).forward()


@pytest.mark.parametrize(
    "dtype,value,want",
    [
        ("int64", np.array([2**62 + 1], "int64"), 2**62 + 1),  # exact, not through a float
        ("int32", np.array([-(2**31)], "int64"), -(2**31)),
        ("int32", np.array([7.9], "float32"), 7),
        ("float64", np.array([-3], "int32"), -3.0),
        ("bool", np.array([0.5], "float64"), True),
    ],
)
def test_fill_constant_value_tensor_values(dtype, value, want):
    t = make(
        "fill_constant",
        {"ValueTensor": value},
        {"Out": np.full([2, 3], want, dtype)},
        {"shape": [2, 3], "dtype": DTYPE_CODE[dtype], "value": 99.0},
    )
    t.check_output(rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------
# strided_slice: ...TensorList over ...Tensor over the attribute, each bound kind on its own
X_SHAPE = (4, 3, 6)
AXES = [0, 2]


def bound_inputs(kind, values, source):
    """The op's inputs giving bound `kind` (Starts, Ends, Strides) from `source`."""
    if source == "tensor":
        return {kind + "Tensor": np.array(values, "int32")}
    if source == "list":
        return {
            kind + "TensorList": [
                ("%s%d" % (kind.lower(), i), np.array([v], dt))
                for i, (v, dt) in enumerate(zip(values, ["int32", "int64"]))
            ]
        }
    return {}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "sources",
    [
        ("tensor", "attr", "attr"),
        ("attr", "list", "attr"),
        ("attr", "attr", "tensor"),
        ("list", "tensor", "list"),
        ("tensor", "tensor", "tensor"),
        ("list", "list", "list"),
    ],
)
def test_strided_slice_bounds_from_tensors(dtype, sources, rng):
    x = rand(rng, X_SHAPE, dtype)
    starts, ends, strides = [3, -1], [0, 0], [-2, -2]  # what the tensors hold
    inputs = {"Input": x}
    attrs = {"axes": AXES, "starts": [0, 0], "ends": [4, 6], "strides": [1, 1]}  # they lose
    for kind, values, source in (
        ("Starts", starts, sources[0]),
        ("Ends", ends, sources[1]),
        ("Strides", strides, sources[2]),
    ):
        if source == "attr":
            attrs[kind.lower()] = values
        inputs.update(bound_inputs(kind, values, source))
    t = make("strided_slice", inputs, {"Out": x[3:0:-2, :, -1:0:-2]}, attrs)
    t.check_output(rtol=0, atol=0)
    t.check_grad(["Input"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_slice_list_wins_over_tensor(dtype, rng):
    x = rand(rng, X_SHAPE, dtype)
    inputs = {"Input": x}
    inputs.update(bound_inputs("Starts", [9, 9], "tensor"))  # loses to the list
    inputs.update(bound_inputs("Starts", [1, 1], "list"))
    inputs.update(bound_inputs("Strides", [5, 5], "tensor"))
    inputs.update(bound_inputs("Strides", [2, 3], "list"))
    t = make(
        "strided_slice",
        inputs,
        {"Out": x[1:4:2, :, 1:6:3]},
        {"axes": AXES, "starts": [0, 0], "ends": [4, 6], "strides": [1, 1]},
    )
    t.check_output(rtol=0, atol=0)
    t.check_grad(["Input"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_slice_tensor_bounds_with_decrease_axis(dtype, rng):
    x = rand(rng, X_SHAPE, dtype)
    inputs = {
        "Input": x,
        "StartsTensor": np.array([2, 1], "int64"),
        "EndsTensor": np.array([3, 2**40], "int64"),  # beyond int32: to the end
        "StridesTensor": np.array([1, 2], "int32"),
    }
    t = make("strided_slice", inputs, {"Out": x[2, :, 1::2]}, {"axes": AXES, "decrease_axis": [0]})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["Input"], "Out", **grad_args(dtype))


def test_strided_slice_build_time_dims():
    x = ([4, 3, 6], "float32")
    attrs = {"axes": AXES, "starts": [1, 0], "ends": [3, 6], "strides": [1, 2]}
    assert out_shape_of("strided_slice", {"Input": x}, attrs) == (2, 3, 3)
    for param in ("StartsTensor", "EndsTensor", "StridesTensor"):
        assert out_shape_of("strided_slice", {"Input": x, param: ([2], "int32")}, attrs) == (
            -1,
            3,
            -1,
        )
    lst = [([1], "int32"), ([1], "int32")]
    assert out_shape_of("strided_slice", {"Input": x, "StridesTensorList": lst}, attrs) == (
        -1,
        3,
        -1,
    )
    assert out_shape_of(
        "strided_slice", {"Input": x, "EndsTensor": ([2], "int32")}, dict(attrs, decrease_axis=[0])
    ) == (3, -1)


@pytest.mark.parametrize(
    "inputs,attrs,message",
    [
        ({"StridesTensor": np.array([1, 0], "int32")}, {}, r"strides\[1\] is 0"),
        (
            {"StridesTensorList": [("s0", np.array([1], "int32"))]},
            {},
            r"strides must have one value per axis \(2 axes, 1 strides\)",
        ),
        (
            {"StartsTensor": np.array([1.0, 0.0], "float32")},
            {},
            r"StartsTensor \('startstensor_in'\) must be int32 or int64, got float32",
        ),
        (
            {"EndsTensorList": [("e0", np.array([1, 2], "int32")), ("e1", np.array([1], "int32"))]},
            {},
            r"EndsTensorList\[0\] \('e0'\) must hold one value, got 2",
        ),
        ({}, {"strides": []}, r"strides must have one value per axis \(2 axes, 0 strides\)"),
    ],
)
def test_strided_slice_bound_errors(inputs, attrs, message):
    x = np.ones(X_SHAPE, "float32")
    all_attrs = dict({"axes": AXES, "starts": [0, 0], "ends": [2, 2], "strides": [1, 1]}, **attrs)
    with pytest.raises(tide.TideError, match="op 'strided_slice': " + message):
        make("strided_slice", dict(inputs, Input=x), {"Out": x}, all_attrs).forward()


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_slice_layer_takes_variables(exe, rng, dtype):
    x_np = rand(rng, X_SHAPE, dtype)
    x = data("x", X_SHAPE, dtype)
    st, en, sd = data("st", [2], "int32"), data("en", [1], "int64"), data("sd", [1], "int32")
    outs = [
        layers.strided_slice(x, AXES, st, [0, en], [-1, sd]),
        layers.strided_slice(x, AXES, [3, -1], [0, 0], [-1, -2]),
    ]
    op = op_of(outs[0])
    assert op.input("StartsTensor") and op.input("EndsTensorList") and op.input("StridesTensorList")
    assert op.attr("infer_flags") == [1, -1] and op.attr("ends") == [0, -1]
    assert outs[0].shape == (-1, 3, -1) and outs[1].shape == (3, 3, 3)
    feed = {
        "x": x_np,
        "st": np.array([3, -1], "int32"),
        "en": np.array([0], "int64"),
        "sd": np.array([-2], "int32"),
    }
    for got in run(exe, outs, feed):
        np.testing.assert_array_equal(got, x_np[3:0:-1, :, -1:0:-2])
    check_grad(
        exe,
        lambda v: layers.strided_slice(v, AXES, st, [0, en], [-1, sd]),
        rand(rng, X_SHAPE, dtype),
        feed,
    )


def test_strided_slice_layer_argument_types():
    x = data("x", X_SHAPE)
    with pytest.raises(TypeError, match=r"^strided_slice: the type of 'strides\[1\]' must be "):
        layers.strided_slice(x, AXES, [0, 0], [2, 2], [1, 0.5])
    with pytest.raises(TypeError, match=r"^strided_slice: the data type of 'starts' must be "):
        layers.strided_slice(x, AXES, data("f", [2]), [2, 2], [1, 1])
