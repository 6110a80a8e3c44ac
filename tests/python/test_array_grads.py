"""Gradients through tensor arrays (issue 37): elements written and never read, elements without
a gradient, overwritten elements, and While loops whose state is an array (Fluid's
test_while_op pattern), each against central differences of a float64 numpy reference."""

import numpy as np
import pytest
from float64_grad import central_diff_of

import tide
from tide import layers


def _data(name, shape=(2, 3)):
    return layers.data(
        name=name, shape=list(shape), dtype="float64", append_batch_size=False, stop_gradient=False
    )


def _index(v):
    return layers.fill_constant([1], "int64", v)


def _check_grads(exe, loss, reference, feed, wrt):
    pairs = tide.append_backward(loss, parameter_list=wrt)
    assert sorted(p.name for p, _ in pairs) == sorted(wrt)
    got = exe.run(feed=feed, fetch_list=[loss] + [n + "@GRAD" for n in wrt])
    np.testing.assert_allclose(np.asarray(got[0]).ravel()[0], reference(**feed), rtol=1e-12)
    for name, g in zip(wrt, got[1:]):
        np.testing.assert_allclose(
            g,
            central_diff_of(reference, feed, name),
            rtol=1e-6,
            atol=1e-9,
            err_msg="gradient of " + name,
        )


def test_an_element_written_and_never_read_gets_a_zero_gradient(exe, rng):
    # Fluid's read_from_array with X_W: write_to_array's gradient is 0 where nothing read.
    x, y = _data("x"), _data("y")
    arr = layers.array_write(layers.scale(x, 2.0), _index(0))
    layers.array_write(layers.tanh(y), _index(1), array=arr)
    a = layers.array_read(arr, _index(0))
    loss = layers.mean(layers.elementwise_mul(a, a))

    def reference(x, y):
        return np.mean((2 * x) ** 2)

    feed = {"x": rng.uniform(-1, 1, (2, 3)), "y": rng.uniform(-1, 1, (2, 3))}
    _check_grads(exe, loss, reference, feed, ["x", "y"])


@pytest.mark.parametrize("constant_first", [False, True])
def test_an_element_without_a_gradient_leaves_the_others_theirs(exe, rng, constant_first):
    # A stop_gradient element written into the array must not cut the array off the backward
    # pass (it used to: no gradient for x, and no error).
    x = _data("x")
    c = layers.fill_constant([2, 3], "float64", 0.5)
    at_x, at_c = (_index(1), _index(0)) if constant_first else (_index(0), _index(1))
    if constant_first:
        arr = layers.array_write(c, at_c)
        layers.array_write(layers.scale(x, 3.0), at_x, array=arr)
    else:
        arr = layers.array_write(layers.scale(x, 3.0), at_x)
        layers.array_write(c, at_c, array=arr)
    a, b = layers.array_read(arr, at_x), layers.array_read(arr, at_c)
    loss = layers.mean(layers.elementwise_mul(a, layers.elementwise_add(a, b)))

    def reference(x):
        return np.mean(3 * x * (3 * x + 0.5))

    _check_grads(exe, loss, reference, {"x": rng.uniform(-1, 1, (2, 3))}, ["x"])


def test_an_overwritten_element_passes_no_gradient_to_its_old_value(exe, rng):
    x, y = _data("x"), _data("y")
    arr = layers.array_write(layers.scale(x, 2.0), _index(0))
    layers.array_write(layers.scale(y, 3.0), _index(0), array=arr)  # replaces 2x
    a = layers.array_read(arr, _index(0))
    loss = layers.mean(layers.elementwise_mul(a, a))

    def reference(x, y):
        return np.mean((3 * y) ** 2)

    feed = {"x": rng.uniform(-1, 1, (2, 3)), "y": rng.uniform(-1, 1, (2, 3))}
    _check_grads(exe, loss, reference, feed, ["x", "y"])


def test_while_whose_state_is_an_array(exe, rng):
    # Fluid's test_while_op: mem[i + 1] = f(data[i], mem[i]) with the index incremented in place
    # between the read and the write; element 1 is also read after the loop.
    x, d0, d1, d2 = _data("x"), _data("d0"), _data("d1"), _data("d2")
    i = layers.zeros(shape=[1], dtype="int64")
    mem = layers.array_write(layers.tanh(x), i)
    data = layers.array_write(d0, i)
    i = layers.increment(i)
    layers.array_write(d1, i, array=data)
    i = layers.increment(i)
    layers.array_write(d2, i, array=data)
    i = layers.zeros(shape=[1], dtype="int64")
    n = layers.fill_constant([1], "int64", 3)
    cond = layers.less_than(i, n)
    loop = layers.While(cond)
    with loop.block():
        d = layers.array_read(data, i)
        prev = layers.array_read(mem, i)
        result = layers.elementwise_add(layers.tanh(layers.elementwise_mul(prev, d)), prev)
        layers.increment(i, in_place=True)
        layers.array_write(result, i, array=mem)
        layers.less_than(i, n, cond=cond)
    last = layers.array_read(mem, i)
    loss = layers.elementwise_add(
        layers.mean(layers.elementwise_mul(last, last)),
        layers.mean(layers.array_read(mem, _index(1))),
    )

    def reference(x, d0, d1, d2):
        m = [np.tanh(x)]
        for d in (d0, d1, d2):
            m.append(np.tanh(m[-1] * d) + m[-1])
        return np.mean(m[3] * m[3]) + np.mean(m[1])

    feed = {k: rng.uniform(-1, 1, (2, 3)) for k in ("x", "d0", "d1", "d2")}
    _check_grads(exe, loss, reference, feed, ["x", "d0", "d1", "d2"])
    (got,) = exe.run(feed=feed, fetch_list=["x@GRAD"])  # a second run: the same gradient
    np.testing.assert_allclose(got, central_diff_of(reference, feed, "x"), rtol=1e-6, atol=1e-9)


def test_while_updating_an_array_element_in_place(exe, rng):
    # a[0] = tanh(a[0] * x) + a[0], three times: each write replaces the element the same
    # iteration read, so its gradient before the write is the read's alone.
    x = _data("x")
    zero = _index(0)
    arr = layers.array_write(layers.scale(x, 0.5), zero)
    i = layers.fill_constant([1], "int64", 0)
    n = layers.fill_constant([1], "int64", 3)
    cond = layers.less_than(i, n)
    loop = layers.While(cond)
    with loop.block():
        v = layers.array_read(arr, zero)
        layers.array_write(
            layers.elementwise_add(layers.tanh(layers.elementwise_mul(v, x)), v), zero, array=arr
        )
        layers.increment(i, in_place=True)
        layers.less_than(i, n, cond=cond)
    a = layers.array_read(arr, zero)
    loss = layers.mean(layers.elementwise_mul(a, a))

    def reference(x):
        v = 0.5 * x
        for _ in range(3):
            v = np.tanh(v * x) + v
        return np.mean(v * v)

    _check_grads(exe, loss, reference, {"x": rng.uniform(-1, 1, (2, 3))}, ["x"])


def test_while_overwriting_an_element_it_never_reads(exe, rng):
    # Each iteration replaces a[0] (written before the loop) and a[1] without reading them: only
    # the last iteration's writes reach the loss, and a[0]'s value before the loop gets nothing.
    # Paddle (2.6, 3.x) gives every iteration's write the gradient: 1 + 2 + 3 times too much.
    x, y = _data("x"), _data("y")
    zero, one = _index(0), _index(1)
    arr = layers.array_write(layers.tanh(y), zero)
    i = layers.fill_constant([1], "int64", 0)
    n = layers.fill_constant([1], "int64", 3)
    cond = layers.less_than(i, n)
    loop = layers.While(cond)
    with loop.block():
        k = layers.scale(layers.cast(i, "float64"), 1.0, bias=1.0)  # 1, 2, 3
        layers.array_write(layers.elementwise_mul(x, k), zero, array=arr)
        layers.array_write(layers.tanh(layers.elementwise_mul(x, k)), one, array=arr)
        layers.increment(i, in_place=True)
        layers.less_than(i, n, cond=cond)
    a0, a1 = layers.array_read(arr, zero), layers.array_read(arr, one)
    loss = layers.mean(layers.elementwise_add(layers.elementwise_mul(a0, a0), a1))

    def reference(x, y):
        return np.mean((3 * x) ** 2 + np.tanh(3 * x))

    feed = {"x": rng.uniform(-1, 1, (2, 3)), "y": rng.uniform(-1, 1, (2, 3))}
    _check_grads(exe, loss, reference, feed, ["x", "y"])


def test_nested_whiles_overwriting_an_element(exe, rng):
    # The inner loop's gradient takes the outer step's array gradient whole; the element it
    # clears stays cleared for the outer loop's earlier iterations.
    x, y = _data("x"), _data("y")
    zero = _index(0)
    arr = layers.array_write(layers.tanh(y), zero)
    j = layers.fill_constant([1], "int64", 0)
    two = layers.fill_constant([1], "int64", 2)
    outer_cond = layers.less_than(j, two)
    outer = layers.While(outer_cond)
    with outer.block():
        i = layers.fill_constant([1], "int64", 0)
        three = layers.fill_constant([1], "int64", 3)
        inner_cond = layers.less_than(i, three)
        inner = layers.While(inner_cond)
        with inner.block():
            k = layers.elementwise_mul(
                layers.scale(layers.cast(j, "float64"), 1.0, bias=1.0),
                layers.scale(layers.cast(i, "float64"), 1.0, bias=1.0),
            )
            layers.array_write(layers.elementwise_mul(x, k), zero, array=arr)
            layers.increment(i, in_place=True)
            layers.less_than(i, three, cond=inner_cond)
        layers.increment(j, in_place=True)
        layers.less_than(j, two, cond=outer_cond)
    a = layers.array_read(arr, zero)
    loss = layers.mean(layers.elementwise_mul(a, a))

    def reference(x, y):
        return np.mean((6 * x) ** 2)  # the last write: j = 1, i = 2

    feed = {"x": rng.uniform(-1, 1, (2, 3)), "y": rng.uniform(-1, 1, (2, 3))}
    _check_grads(exe, loss, reference, feed, ["x", "y"])
