"""Op tests of the ops_math pack through the Python harness: outputs vs numpy, grads vs finite
differences, float32 and float64."""

import numpy as np
import pytest
from op_test import OpTest

DTYPES = ["float32", "float64"]
# float32 finite differences are coarse: looser tolerance, bigger step.
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "op,fn",
    [
        ("elementwise_add", np.add),
        ("elementwise_sub", np.subtract),
        ("elementwise_mul", np.multiply),
        ("elementwise_div", np.divide),
        ("elementwise_max", np.maximum),
        ("elementwise_min", np.minimum),
    ],
)
# Y inside X's dims, and Y over X's trailing dims (a bias: the kernels' row-loop path).
@pytest.mark.parametrize(
    "y_shape,axis,y_as", [((3,), 1, (1, 3, 1)), ((3, 4), 1, (1, 3, 4)), ((4,), -1, (1, 1, 4))]
)
def test_elementwise_broadcast(op, fn, dtype, y_shape, axis, y_as, rng):
    class T(OpTest):
        op_type = op

        def setup(self, dtype):
            x = rand(rng, (2, 3, 4), dtype, 0.5, 2.0)
            y = rand(rng, y_shape, dtype, 0.5, 2.0)
            if op in (
                "elementwise_max",
                "elementwise_min",
            ):  # no ties: finite differences jump there
                near = np.abs(x - y.reshape(y_as)) < 0.1
                x = np.where(near, x + 0.25, x).astype(dtype)
            self.inputs = {"X": x, "Y": y}
            self.attrs = {"axis": axis}
            self.outputs = {"Out": fn(x, y.reshape(y_as))}

    t = T()
    t.setup(dtype)
    t.check_output()
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_mul_flattens_and_grads(dtype, rng):
    class T(OpTest):
        op_type = "mul"

        def setup(self, dtype):
            x = rand(rng, (2, 3, 4), dtype)
            y = rand(rng, (12, 5), dtype)
            self.inputs = {"X": x, "Y": y}
            self.attrs = {"x_num_col_dims": 1}
            self.outputs = {"Out": x.reshape(2, 12) @ y}

    t = T()
    t.setup(dtype)
    t.check_output(rtol=1e-5, atol=1e-5)
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "op,fn",
    [
        ("relu", lambda x: np.maximum(x, 0)),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
        ("tanh", np.tanh),
        ("square", np.square),
    ],
)
def test_activations(op, fn, dtype, rng):
    class T(OpTest):
        op_type = op

        def setup(self, dtype):
            x = rand(rng, (3, 5), dtype)
            x[np.abs(x) < 0.05] = 0.3  # keep away from relu's kink
            self.inputs = {"X": x}
            self.outputs = {"Out": fn(x).astype(dtype)}

    t = T()
    t.setup(dtype)
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_and_mean(dtype, rng):
    class Softmax(OpTest):
        op_type = "softmax"

        def setup(self, dtype):
            x = rand(rng, (4, 6), dtype, -3, 3)
            e = np.exp(x - x.max(axis=1, keepdims=True))
            self.inputs = {"X": x}
            self.outputs = {"Out": (e / e.sum(axis=1, keepdims=True)).astype(dtype)}

    t = Softmax()
    t.setup(dtype)
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))

    class Mean(OpTest):
        op_type = "mean"

        def setup(self, dtype):
            x = rand(rng, (4, 6), dtype)
            self.inputs = {"X": x}
            self.outputs = {"Out": np.array([x.mean()], dtype=dtype)}

    t = Mean()
    t.setup(dtype)
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax_large_split_over_threads(axis, rng):
    """Enough lines for the kernel to split them over the CPU pool (by the dims before the
    axis): each line against float64 numpy, -inf entries (masked positions) exactly 0."""
    from op_test import make

    x = rng.uniform(-8, 8, (64, 33, 40)).astype("float32")
    masked = (slice(None), slice(None), 5) if axis == -1 else (slice(None), 3, slice(None))
    x[masked] = -np.inf
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=axis, keepdims=True))
    want = (e / e.sum(axis=axis, keepdims=True)).astype("float32")
    t = make("softmax", {"X": x}, {"Out": want}, {"axis": axis})
    t.check_output(rtol=1e-5, atol=1e-7)
    assert np.all(t.forward()["Out"][masked] == 0.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "xs,ys,tx,ty",
    [
        ((3, 5), (5, 4), False, False),  # a few rows: tide/gemm_skinny.hpp's kernels
        ((12, 5), (4, 5), False, True),  # more rows: the BLAS; B transposed
        ((5, 3), (5, 4), True, False),  # X transposed
        ((4, 1, 6), (6, 7), False, False),  # a batch of X over one Y (a decode step's rows)
        ((2, 3, 4, 6), (2, 3, 6, 5), False, False),  # batches of heads
        ((2, 1, 4, 6), (3, 5, 6), False, True),  # batch dims broadcast
        ((6,), (6, 3), False, False),  # a vector times a matrix: [3]
        ((2, 6), (6,), False, False),  # a matrix times a vector: [2]
        ((4, 0), (0, 3), False, False),  # k = 0: zeros
    ],
)
def test_matmul_v2(dtype, xs, ys, tx, ty, rng):
    """matmul_v2 in float32 / float64 (numpy's matmul with Paddle's transposes) against float64
    numpy, and its grads by finite differences: what the conformance kit runs on a device's
    matmul_v2 kernels."""
    from op_test import make

    x, y = rand(rng, xs, dtype), rand(rng, ys, dtype)
    a = np.swapaxes(x, -1, -2) if tx else x
    b = np.swapaxes(y, -1, -2) if ty else y
    want = np.matmul(a.astype(np.float64), b).astype(dtype)
    t = make("matmul_v2", {"X": x, "Y": y}, {"Out": want}, {"trans_x": tx, "trans_y": ty})
    t.check_output(rtol=1e-5, atol=1e-6)
    if x.size and y.size:
        t.check_grad(["X", "Y"], "Out", **grad_args(dtype))
