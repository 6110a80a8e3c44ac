"""Paddle's set_value (ops_nn: set_value_op.cc), the op of a slice assignment x[...] = v: each
case's expected output is numpy's own assignment with the same index (slices, steps, negative
indices, integers for decrease_axes, None for none_axes), the value a tensor or the attributes'
constant; gradients of Input and ValueTensor against central finite differences; the value lists
of Paddle 2.6 (`values`) and of older releases (fp32_values, int64_values, ...); the bounds from
tensor lists; every data type the op moves; and the errors of bad attributes and values."""

import numpy as np
import pytest
from op_test import make

import tide

BIG = 2**63 - 1  # Paddle's open end
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def attrs(axes, starts, ends, steps=None, decrease=(), none=()):
    return {
        "axes": list(axes),
        "starts": list(starts),
        "ends": list(ends),
        "steps": list(steps or [1] * len(axes)),
        "decrease_axes": list(decrease),
        "none_axes": list(none),
    }


# (attributes, numpy index, the value's shape): x is [4, 5, 6].
TENSOR_CASES = {
    "dropped_axis": (attrs([1], [0], [1], decrease=[1]), np.s_[:, 0], (4, 6)),
    "negative_index": (attrs([2], [-1], [BIG], decrease=[2]), np.s_[..., -1], (4, 5)),
    "backwards_step": (
        attrs([1, 2], [4, 1], [0, 2], [-2, 1], decrease=[2]),
        np.s_[:, 4:0:-2, 1],
        (4, 2),
    ),
    "broadcast_vector": (attrs([1, 2], [-2, 2], [BIG, 4]), np.s_[:, -2:, 2:4], (2,)),
    "leading_ones_and_inner_broadcast": (
        attrs([0, 2], [1, 2], [3, 5]),
        np.s_[1:3, :, 2:5],
        (1, 1, 5, 1),
    ),
    "none_axis": (attrs([0], [1], [3], none=[0]), np.s_[None, 1:3], (1, 2, 5, 6)),
    "clamped_bounds": (attrs([0, 1], [-100, 3], [100, 100], [3, 1]), np.s_[::3, 3:], (2, 1, 6)),
}


def value_of(rng, shape, dtype):
    return rng.uniform(-2, 2, shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(TENSOR_CASES))
def test_tensor_value(case, dtype, rng):
    a, idx, vshape = TENSOR_CASES[case]
    x = value_of(rng, (4, 5, 6), dtype)
    v = value_of(rng, vshape, dtype)
    want = x.copy()
    want[idx] = v
    t = make("set_value", {"Input": x, "ValueTensor": v}, {"Out": want}, a)
    t.check_output()
    t.check_grad(["Input", "ValueTensor"], "Out", **grad_args(dtype))


# (attributes, numpy index, values, shape)
CONSTANT_CASES = {
    "strided_box": (attrs([0, 1], [1, 0], [3, BIG], [1, 2]), np.s_[1:3, ::2], [0.5], [1]),
    "none_and_integers": (
        attrs([0, 1], [0, 2], [1, 3], decrease=[0, 1], none=[1]),
        np.s_[0, None, 2],
        [-1.0],
        [1],
    ),
    "row_of_values": (attrs([1], [-1], [BIG], decrease=[1]), np.s_[:, -1], [1, 2, 3, 4, 5, 6], [6]),
    "reversed_whole_axis": (attrs([2], [-1], [-BIG], [-1]), np.s_[..., ::-1], [7.0], [1]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(CONSTANT_CASES))
def test_constant_value(case, dtype, rng):
    a, idx, values, shape = CONSTANT_CASES[case]
    x = value_of(rng, (4, 5, 6), dtype)
    want = x.copy()
    want[idx] = np.array(values, dtype).reshape(shape)
    t = make("set_value", {"Input": x}, {"Out": want}, dict(a, values=values, shape=shape))
    t.check_output()
    # Input@GRAD is Out@GRAD with the assigned slice zeroed (Paddle's legacy program passed it
    # whole; its phi kernel, like Tide, zeroes the slice).
    t.check_grad(["Input"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "float16"])
def test_data_types_moved(dtype, rng):
    x = rng.randint(0, 2, (3, 4)).astype(dtype)
    v = rng.randint(0, 2, (3,)).astype(dtype)
    want = x.copy()
    want[:, 1] = v
    make(
        "set_value",
        {"Input": x, "ValueTensor": v},
        {"Out": want},
        attrs([1], [1], [2], decrease=[1]),
    ).check_output()
    want[::2, 2:] = 1
    make(
        "set_value",
        {"Input": want.copy()},
        {"Out": want},
        dict(attrs([0, 1], [0, 2], [BIG, BIG], [2, 1]), values=[1], shape=[1]),
    ).check_output()


def test_typed_value_lists_of_paddle_before_2_6():
    # Paddle 2.0-2.5 wrote the constant in the list of its type (and a `dtype`).
    i64 = np.zeros((2, 3), "int64")
    want = i64.copy()
    want[1] = 2**60 + 1  # exact: int64_values is read as int64, not through a float64
    a = dict(attrs([0], [1], [2], decrease=[0]), int64_values=[2**60 + 1], shape=[1], dtype=3)
    make("set_value", {"Input": i64}, {"Out": want}, a).check_output()
    f = np.zeros((2, 3), "float32")
    want = f.copy()
    want[:, 1:] = [[1.5, -2.5]]
    a = dict(attrs([1], [1], [3]), fp32_values=[1.5, -2.5], shape=[1, 2])
    make("set_value", {"Input": f}, {"Out": want}, a).check_output()
    b = np.zeros((2, 3), bool)
    want = b.copy()
    want[0] = True
    a = dict(attrs([0], [0], [1], decrease=[0]), bool_values=[1], shape=[1], dtype=0)
    make("set_value", {"Input": b}, {"Out": want}, a).check_output()
    i32 = np.zeros((4,), "int32")
    want = i32.copy()
    want[-2:] = [5, 6]
    a = dict(attrs([0], [-2], [BIG]), int32_values=[5, 6], shape=[2], dtype=2)
    make("set_value", {"Input": i32}, {"Out": want}, a).check_output()


def test_bounds_from_tensor_lists(rng):
    # x[1:-1:2, j] = v with the bounds as one-element int tensors (a bound computed at run time).
    x = value_of(rng, (6, 4), "float32")
    v = value_of(rng, (2,), "float32")
    want = x.copy()
    want[1:-1:2, 3] = v

    def one(*vals, dtype="int64"):
        return [("%s_%d" % (dtype, i), np.array([n], dtype)) for i, n in enumerate(vals)]

    inputs = {
        "Input": x,
        "ValueTensor": v,
        "StartsTensorList": one(1, 3),
        "EndsTensorList": [("e0", np.array([-1], "int32")), ("e1", np.array([4], "int32"))],
        "StepsTensorList": [("s0", np.array([2], "int64")), ("s1", np.array([1], "int64"))],
    }
    t = make("set_value", inputs, {"Out": want}, attrs([0, 1], [0, 0], [0, 0], decrease=[1]))
    t.check_output()
    t.check_grad(["Input", "ValueTensor"], "Out", **grad_args("float32"))


def test_empty_slice_leaves_input_unchanged(rng):
    x = value_of(rng, (4, 3), "float32")
    a = dict(attrs([0], [3], [1]), values=[9.0], shape=[1])
    make("set_value", {"Input": x}, {"Out": x.copy()}, a).check_output()


def test_in_a_program_with_backward(exe):
    # A Tide program: the generated layer, then append_backward through it.
    x = tide.layers.data(name="x", shape=[3, 4], dtype="float32", append_batch_size=False)
    v = tide.layers.data(name="v", shape=[3], dtype="float32", append_batch_size=False)
    x.stop_gradient = v.stop_gradient = False
    out = tide.layers.set_value(
        x, v, axes=[1], starts=[-1], ends=[BIG], steps=[1], decrease_axes=[1]
    )
    loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(out, out))
    grads = tide.backward.append_backward(loss, parameter_list=None) or []
    xs = np.arange(12, dtype="float32").reshape(3, 4)
    vs = np.array([10, 20, 30], "float32")
    gx, gv = tide.framework.grad_var_name("x"), tide.framework.grad_var_name("v")
    got, dx, dv = exe.run(feed={"x": xs, "v": vs}, fetch_list=[out, gx, gv])
    want = xs.copy()
    want[:, -1] = vs
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(dx, np.where(np.arange(4) == 3, 0, 2 * xs))
    np.testing.assert_array_equal(dv, 2 * vs)
    del grads


ERRORS = [
    (
        dict(attrs([1], [0], [2], [0]), values=[1.0], shape=[1]),
        None,
        r"op 'set_value': steps\[0\] \(axis 1\) is 0",
    ),
    (
        dict(attrs([3], [0], [1]), values=[1.0], shape=[1]),
        None,
        r"op 'set_value': axes\[0\] = 3 is out of range for Input 'input_in' of dims \[4, 5\]",
    ),
    (
        attrs([1], [0], [2]),
        np.ones((3, 2), "float32"),
        r"op 'set_value': the value ValueTensor 'valuetensor_in' of dims \[3, 2\] cannot be "
        r"broadcast to the assigned slice of dims \[4, 2\]",
    ),
    (
        dict(attrs([1], [0], [3]), values=[1.0, 2.0], shape=[2]),
        None,
        r"op 'set_value': the value of attribute values of dims \[2\] cannot be broadcast to "
        r"the assigned slice of dims \[4, 3\]",
    ),
    (
        dict(attrs([1], [0], [3]), values=[1.0, 2.0], shape=[3]),
        None,
        r"op 'set_value': attribute shape \[3\] holds 3 elements, but values has 2",
    ),
    (attrs([1], [0], [3]), None, r"op 'set_value': no value to assign"),
    (
        dict(attrs([1], [0], [3], decrease=[1]), values=[1.0], shape=[1]),
        None,
        r"op 'set_value': decrease_axes holds 1, whose slice takes 3 elements",
    ),
    (
        attrs([1], [0], [1], decrease=[1]),
        np.ones((4,), "int64"),  # (a float64 value the executor casts to Input's float32)
        r"op 'set_value': ValueTensor 'valuetensor_in' is int64, Input 'input_in' float32",
    ),
    (
        {"axes": [0, 1], "starts": [0], "ends": [1, 1], "values": [1.0], "shape": [1]},
        None,
        r"op 'set_value': axes, starts, ends and steps must have one value per axis "
        r"\(2 axes, 1 starts, 2 ends, 2 steps\)",
    ),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_bad_input_is_a_clear_error(case):
    a, value, message = ERRORS[case]
    inputs = {"Input": np.zeros((4, 5), "float32")}
    if value is not None:
        inputs["ValueTensor"] = value
    with pytest.raises(tide.TideError, match=message):
        make("set_value", inputs, {"Out": inputs["Input"]}, a).check_output()
