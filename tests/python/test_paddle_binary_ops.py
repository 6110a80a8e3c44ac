"""Paddle's binary and selection math ops: atan2, elementwise_fmax / elementwise_fmin (NaN
ignored), elementwise_heaviside, logcumsumexp, dist, kthvalue, mode and median, each against a
numpy reference of Paddle's rule, gradients by central finite differences (float64) and the
errors of bad inputs."""

import numpy as np
import pytest
from op_test import make

import tide
from tide import layers

RNG = np.random.RandomState(23)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]


def rand(*shape, dtype="float64"):
    return RNG.uniform(-1, 1, shape).astype(dtype)


# --- atan2 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_atan2(shapes, dtype):
    x1, x2 = rand(*shapes[0], dtype=dtype), rand(*shapes[1], dtype=dtype)
    t = make("atan2", {"X1": x1, "X2": x2}, {"Out": np.arctan2(x1, x2)})
    t.check_output(atol=1e-6, rtol=1e-6)
    if dtype == "float64":
        t.check_grad(["X1", "X2"], "Out", **GRAD)


def test_atan2_errors():
    with pytest.raises(
        tide.TideError, match=r"atan2.*X1 \[3, 4\] and X2 \[3, 5\] do not broadcast"
    ):
        make("atan2", {"X1": rand(3, 4), "X2": rand(3, 5)}, {"Out": rand(3, 4)}).check_output()


# --- elementwise_fmax / elementwise_fmin / elementwise_heaviside ----------------------------

NAN = float("nan")


def with_nans_and_ties(shape_x, shape_y):
    x, y = rand(*shape_x), rand(*shape_y)
    x.flat[0], x.flat[1] = NAN, 0.0
    y.flat[-1] = NAN
    if x.shape == y.shape:
        x.flat[2] = y.flat[2]  # a tie: the gradient goes to X
        x.flat[-1] = NAN  # both NaN: NaN, the gradient to X
    return x, y


def fminmax_grads(x, y, op):
    """Paddle's rule: X takes dOut where x >= y (fmax) / x <= y (fmin) or y is NaN."""
    xb, yb = np.broadcast_arrays(x, y)
    to_x = ((xb >= yb) if op == "fmax" else (xb <= yb)) | np.isnan(yb)
    return to_x.astype(x.dtype), (~to_x).astype(x.dtype)


def reduce_to(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    for i, d in enumerate(shape):
        if d == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdims=True)
    return g


@pytest.mark.parametrize("op", ["fmax", "fmin"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (1, 4)), ((3, 1), (1, 4))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fmax_fmin(op, shapes, dtype):
    x, y = with_nans_and_ties(*shapes)
    x, y = x.astype(dtype), y.astype(dtype)
    ref = np.fmax(x, y) if op == "fmax" else np.fmin(x, y)
    make(f"elementwise_{op}", {"X": x, "Y": y}, {"Out": ref}).check_output(atol=0, rtol=0)


@pytest.mark.parametrize("op", ["fmax", "fmin"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4))])
def test_fmax_fmin_grad_rule(op, shapes):
    """NaNs and ties have no finite differences: the grads against Paddle's rule directly."""
    x, y = with_nans_and_ties(*shapes)
    dx, dy = fminmax_grads(x, y, op)
    gx, gy = grads_of(f"elementwise_{op}", {"X": x, "Y": y})
    np.testing.assert_array_equal(gx, reduce_to(dx, x.shape))
    np.testing.assert_array_equal(gy, reduce_to(dy, y.shape))


@pytest.mark.parametrize("op", ["fmax", "fmin"])
def test_fmax_fmin_finite_differences(op):
    x, y = rand(3, 4), rand(1, 4)  # no ties, no NaNs
    ref = np.fmax(x, y) if op == "fmax" else np.fmin(x, y)
    make(f"elementwise_{op}", {"X": x, "Y": y}, {"Out": ref}).check_grad(["X", "Y"], "Out", **GRAD)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_fmax_fmin_ints(dtype):
    x, y = RNG.randint(-5, 5, (3, 4)).astype(dtype), RNG.randint(-5, 5, (4,)).astype(dtype)
    make("elementwise_fmax", {"X": x, "Y": y}, {"Out": np.fmax(x, y)}).check_output(atol=0)
    make("elementwise_fmin", {"X": x, "Y": y}, {"Out": np.fmin(x, y)}).check_output(atol=0)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4))])
@pytest.mark.parametrize("dtype", DTYPES + ["int64"])
def test_heaviside(shapes, dtype):
    x = RNG.randint(-2, 3, shapes[0]).astype(dtype)  # zeros among them
    y = RNG.randint(-9, 9, shapes[1]).astype(dtype)
    make("elementwise_heaviside", {"X": x, "Y": y}, {"Out": np.heaviside(x, y)}).check_output(
        atol=0, rtol=0
    )


def test_heaviside_grad():
    x = np.array([[-1.0, 0.0, 2.0], [0.0, 0.0, -3.0]])
    y = rand(1, 3)
    gx, gy = grads_of("elementwise_heaviside", {"X": x, "Y": y})
    np.testing.assert_array_equal(gx, np.zeros_like(x))  # Paddle's: zero for X
    np.testing.assert_array_equal(gy, [[1.0, 2.0, 0.0]])
    make("elementwise_heaviside", {"X": x, "Y": y}, {"Out": np.heaviside(x, y)}).check_grad(
        ["Y"], "Out", **GRAD
    )


def grads_of(op_type, inputs, attrs=None, extra_outputs=()):
    """d(sum(Out))/d(each input), in the order of `inputs`, through the op's grad op."""
    block = tide.default_main_program().global_block()
    ins = {}
    for name, arr in inputs.items():
        ins[name] = layers.data(
            name=name.lower(),
            shape=list(arr.shape),
            dtype=str(arr.dtype),
            append_batch_size=False,
            stop_gradient=False,
        )
    out = block.create_var(name="out", dtype=str(next(iter(inputs.values())).dtype))
    outs = {"Out": [out]}
    for name, dtype in extra_outputs:
        outs[name] = [block.create_var(name=name.lower(), dtype=dtype)]
    block.append_op(
        type=op_type, inputs={k: [v] for k, v in ins.items()}, outputs=outs, attrs=attrs or {}
    )
    tide.append_backward(layers.reduce_sum(out), parameter_list=[n.lower() for n in inputs])
    feed = {n.lower(): a for n, a in inputs.items()}
    fetch = [n.lower() + "@GRAD" for n in inputs]
    return tide.Executor(tide.CPUPlace()).run(feed=feed, fetch_list=fetch)
