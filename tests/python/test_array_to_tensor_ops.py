"""tensor_array_to_tensor (Fluid's; Paddle 3.x's PIR array_to_tensor: paddle.stack / concat of a
list built in a loop), slice_array_dense (list[i]) and slice_array (list[a:b]) against numpy, with
Paddle's index rules (a negative index counts from the array's end at run time, clamped at 0;
slice_array's end clamped to the size, an empty range an error), their gradients against central
differences of a float64 numpy reference, and the errors for bad arrays and indices."""

import numpy as np
import pytest
from float64_grad import central_diff_of

import tide
from tide import layers


def array_of(shapes, dtype="float64"):
    """Data variables x0, x1, ... of these shapes written to a new array at 0, 1, ..."""
    xs = [
        layers.data("x%d" % k, shape=list(s), dtype=dtype, append_batch_size=False)
        for k, s in enumerate(shapes)
    ]
    arr = layers.create_array(dtype)
    for k, x in enumerate(xs):
        x.stop_gradient = False
        layers.array_write(x, layers.fill_constant([1], "int64", k), array=arr)
    return xs, arr


def append(op, inputs, outputs, attrs, out_type="LOD_TENSOR"):
    """The op appended to the current block, with new output variables; returns them."""
    block = tide.default_main_program().current_block()
    outs = {
        p: [block.create_var(name=tide.unique_name.generate(op + "_" + p), type=t)]
        for p, t in outputs.items()
    }
    block.append_op(type=op, inputs=inputs, outputs=outs, attrs=attrs)
    return [v[0] for v in outs.values()]


def to_tensor(arr, axis=0, use_stack=False):
    out, index = append(
        "tensor_array_to_tensor",
        {"X": [arr]},
        {"Out": "LOD_TENSOR", "OutIndex": "LOD_TENSOR"},
        {"axis": axis, "use_stack": use_stack},
    )
    return out, index


def feed_for(shapes, rng):
    return {"x%d" % k: rng.uniform(-1, 1, s) for k, s in enumerate(shapes)}


def weight_of(shape, rng, feed):
    """A float64 data variable `w` of `shape`, fed random values."""
    feed["w"] = rng.uniform(-1, 1, shape)
    return layers.data("w", shape=list(shape), dtype="float64", append_batch_size=False)


def check_grads(exe, loss, reference, feed):
    """The loss and the gradients of x0, x1, ... against reference(**feed)."""
    names = sorted(k for k in feed if k.startswith("x"))
    tide.append_backward(loss, parameter_list=names)
    got = exe.run(feed=feed, fetch_list=[loss] + [n + "@GRAD" for n in names])
    np.testing.assert_allclose(np.asarray(got[0]).ravel()[0], reference(**feed), rtol=1e-12)
    for name, g in zip(names, got[1:]):
        np.testing.assert_allclose(
            g, central_diff_of(reference, feed, name), rtol=1e-6, atol=1e-9, err_msg=name
        )


# (element shapes, axis, use_stack)
JOINS = {
    "stack_0": ([(2, 3)] * 3, 0, True),
    "stack_1": ([(2, 3)] * 3, 1, True),
    "stack_last": ([(2, 3)] * 2, 2, True),
    "stack_minus_1": ([(2, 3)] * 2, -1, True),
    "stack_one": ([(4,)], 0, True),
    "concat_0": ([(2, 3), (1, 3), (3, 3)], 0, False),
    "concat_1": ([(2, 3), (2, 1), (2, 4)], 1, False),
    "concat_minus_1": ([(2, 2, 3), (2, 2, 1)], -1, False),
    "concat_empty_part": ([(2, 3), (2, 0), (2, 2)], 1, False),
}


def numpy_join(parts, axis, use_stack):
    return np.stack(parts, axis) if use_stack else np.concatenate(parts, axis)


@pytest.mark.parametrize("case", sorted(JOINS))
def test_tensor_array_to_tensor_and_its_gradient(case, exe, rng):
    shapes, axis, use_stack = JOINS[case]
    _, arr = array_of(shapes)
    out, index = to_tensor(arr, axis, use_stack)
    feed = feed_for(shapes, rng)
    w = weight_of(numpy_join([np.zeros(s) for s in shapes], axis, use_stack).shape, rng, feed)
    loss = layers.reduce_sum(layers.elementwise_mul(layers.elementwise_mul(out, out), w))
    got, got_index = exe.run(feed=feed, fetch_list=[out, index])
    parts = [feed["x%d" % k] for k in range(len(shapes))]
    np.testing.assert_array_equal(got, numpy_join(parts, axis, use_stack))
    # OutIndex: each element's dim `axis` (past a stacked element's last dim, 0 as Paddle's).
    a = axis + len(shapes[0]) + use_stack if axis < 0 else axis
    want_index = [s[a] if a < len(s) else 0 for s in shapes]
    assert got_index.dtype == np.int32 and got_index.tolist() == want_index

    def reference(w, **xs):
        joined = numpy_join([xs["x%d" % k] for k in range(len(shapes))], axis, use_stack)
        return np.sum(joined * joined * w)

    check_grads(exe, loss, reference, feed)


def test_declared_dims():
    """Build time: the joined dim unknown, as Paddle declares it."""
    _, arr = array_of([(2, 3), (2, 3)])
    assert to_tensor(arr, 0, True)[0].shape == (-1, 2, 3)
    assert to_tensor(arr, -1, True)[0].shape == (2, 3, -1)
    out, index = to_tensor(arr, 1, False)
    assert out.shape == (2, -1) and index.shape == (-1,) and index.dtype == "int32"


def run_error(exe, build, feed, message):
    fetch = build()
    with pytest.raises(tide.TideError, match=message):
        exe.run(feed=feed, fetch_list=[fetch])


@pytest.mark.parametrize(
    "shapes, axis, use_stack, message",
    [
        (
            [(2, 3), (2, 4)],
            0,
            True,
            r"element 1 of array '.*' is float64 \[2, 4\], element 0 "
            r"float64 \[2, 3\]; stacked elements have one dims",
        ),
        (
            [(2, 3), (3, 3)],
            1,
            False,
            r"element 1 of .* \[3, 3\], element 0 float64 \[2, 3\]; concatenated elements differ in "
            r"dim 1 only",
        ),
        ([(2, 3), (2,)], 0, False, r"element 1 of array '.*' is float64 \[2\]"),
        ([(2, 3)], 2, False, r"axis 2 is outside \[-2, 1\] for concatenating"),
        ([(2, 3)], -4, True, r"axis -4 is outside \[-3, 2\] for stacking"),
        ([()], 0, False, r"axis 0 is outside \[0, -1\] for concatenating elements of dims \[\]"),
    ],
)
def test_tensor_array_to_tensor_errors(shapes, axis, use_stack, message, exe, rng):
    _, arr = array_of(shapes)
    run_error(
        exe,
        lambda: to_tensor(arr, axis, use_stack)[0],
        feed_for(shapes, rng),
        r"op 'tensor_array_to_tensor': " + message,
    )


def test_tensor_array_to_tensor_of_an_empty_or_unwritten_array(exe, rng):
    arr = layers.create_array("float32")
    run_error(exe, lambda: to_tensor(arr)[0], {}, r"array '.*' is empty; there is nothing to")
    with tide.program_guard(tide.Program(), tide.Program()):
        x = layers.data("x", shape=[2], dtype="float32", append_batch_size=False)
        gap = layers.create_array("float32")
        layers.array_write(x, layers.fill_constant([1], "int64", 1), array=gap)
        run_error(
            exe,
            lambda: to_tensor(gap, 0, True)[0],
            {"x": np.ones(2, "float32")},
            r"element 0 of array '.*' was never written",
        )


# ---------------------------------------------------------------------------------------------
# slice_array_dense and slice_array over an array of 3 elements.
SHAPES = [(2, 3)] * 3


def slice_dense(arr, start, as_tensor=False):
    if as_tensor:
        t = layers.fill_constant([1], "int64", start)
        inputs, attrs = {"Input": [arr], "StartsTensor": [t]}, {}
    else:
        inputs, attrs = {"Input": [arr]}, {"starts": [start]}
    return append("slice_array_dense", inputs, {"Out": "LOD_TENSOR"}, attrs)[0]


def slice_range(arr, start, end, as_list=False):
    if as_list:
        s, e = layers.fill_constant([1], "int64", start), layers.fill_constant([1], "int32", end)
        inputs, attrs = {"Input": [arr], "StartsTensorList": [s], "EndsTensorList": [e]}, {}
    else:
        inputs, attrs = {"Input": [arr]}, {"starts": [start], "ends": [end]}
    return append("slice_array", inputs, {"Out": "LOD_TENSOR_ARRAY"}, attrs)[0]


def paddle_index(i, n):
    """Paddle's element for list[i]: from the end when negative, clamped at 0."""
    return max(i + n if i < 0 else i, 0)


def paddle_range(start, end, n):
    """Paddle's slice_array range (phi's SliceArrayKernel)."""
    b = paddle_index(start, n)
    e = min(paddle_index(end, n), n)
    if start == -1 and e == 0:
        e = b + 1
    return b, e


@pytest.mark.parametrize("as_tensor", [False, True], ids=["attr", "tensor"])
@pytest.mark.parametrize("index", [0, 2, -1, -3, -5])
def test_slice_array_dense_and_its_gradient(index, as_tensor, exe, rng):
    _, arr = array_of(SHAPES)
    out = slice_dense(arr, index, as_tensor)
    assert out.shape == (2, 3)
    loss = layers.reduce_sum(layers.elementwise_mul(out, out))
    feed = feed_for(SHAPES, rng)
    k = paddle_index(index, 3)
    (got,) = exe.run(feed=feed, fetch_list=[out])
    np.testing.assert_array_equal(got, feed["x%d" % k])
    check_grads(exe, loss, lambda **xs: np.sum(xs["x%d" % k] ** 2), feed)


@pytest.mark.parametrize("as_list", [False, True], ids=["attr", "tensors"])
@pytest.mark.parametrize("start, end", [(0, 2), (-2, 3), (1, -1), (-10, 10), (-1, 0), (2, 5)])
def test_slice_array_and_its_gradient(start, end, as_list, exe, rng):
    _, arr = array_of(SHAPES)
    sub = slice_range(arr, start, end, as_list)
    out, _ = to_tensor(sub, 0, True)
    b, e = paddle_range(start, end, 3)
    feed = feed_for(SHAPES, rng)
    w = weight_of((e - b, 2, 3), rng, feed)
    loss = layers.reduce_sum(layers.elementwise_mul(layers.elementwise_mul(out, out), w))
    (got,) = exe.run(feed=feed, fetch_list=[out])
    np.testing.assert_array_equal(got, np.stack([feed["x%d" % k] for k in range(b, e)]))

    def reference(w, **xs):
        part = np.stack([xs["x%d" % k] for k in range(b, e)])
        return np.sum(part * part * w)

    check_grads(exe, loss, reference, feed)


def test_slice_array_leaves_its_input_whole(exe, rng):
    """Out is a new array: the input keeps its elements (Out written into the input's own
    variable keeps the slice only)."""
    _, arr = array_of(SHAPES)
    sub = slice_range(arr, 1, 3)
    (whole,) = exe.run(feed=feed_for(SHAPES, rng), fetch_list=[to_tensor(arr, 0, True)[0]])
    assert whole.shape == (3, 2, 3)
    block = tide.default_main_program().current_block()
    block.append_op(
        type="slice_array",
        inputs={"Input": [sub]},
        outputs={"Out": [sub]},
        attrs={"starts": [-1], "ends": [2]},
    )
    feed = feed_for(SHAPES, rng)
    (last,) = exe.run(feed=feed, fetch_list=[to_tensor(sub, 0, True)[0]])
    np.testing.assert_array_equal(last, feed["x2"][None])


@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda arr: slice_dense(arr, 3),
            r"op 'slice_array_dense': index 3 is past the end of "
            r"array '.*' \(3 element\(s\)\)",
        ),
        (
            lambda arr: slice_range(arr, 2, 1),
            r"op 'slice_array': the slice \[2, 1\) of array '.*' "
            r"\(3 element\(s\)\) is empty, which Paddle refuses too",
        ),
        (lambda arr: slice_range(arr, 5, 6), r"the slice \[5, 6\) of array"),
        (lambda arr: slice_range(arr, -1, -1), r"the slice \[-1, -1\) of array"),
        (
            lambda arr: append("slice_array_dense", {"Input": [arr]}, {"Out": "LOD_TENSOR"}, {})[0],
            r"no index: the attribute 'starts' is empty and neither StartsTensor nor "
            r"StartsTensorList is given",
        ),
    ],
)
def test_slice_errors(build, message, exe, rng):
    _, arr = array_of(SHAPES)
    out = build(arr)
    if out.type == "LOD_TENSOR_ARRAY":
        out = to_tensor(out, 0, True)[0]
    with pytest.raises(tide.TideError, match=message):
        exe.run(feed=feed_for(SHAPES, rng), fetch_list=[out])
