"""The ops_linalg pack (dense linear algebra, batched over leading dims): determinant,
slogdeterminant, inverse, cholesky, triangular_solve, solve, cholesky_solve, svd, qr and eigh,
each against numpy.linalg; gradients by central finite differences (float64); decompositions,
which are unique only up to signs, by reconstruction, orthogonality and numpy's invariants; bad
inputs' errors."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(31)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]
TOL = {"float32": 2e-4, "float64": 1e-10}


def well_conditioned(*shape, dtype="float64"):
    """Square matrices [..., n, n] away from singular: random plus n on the diagonal."""
    n = shape[-1]
    a = RNG.uniform(-1, 1, shape) + n * np.eye(n)
    return a.astype(dtype)


def spd(*shape, dtype="float64"):
    """Symmetric positive definite matrices [..., n, n]."""
    a = RNG.uniform(-1, 1, shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def error(op, inputs, outputs, match, attrs=None):
    with pytest.raises(tide.TideError, match=match):
        make(op, inputs, outputs, attrs).check_output()


# --- determinant / slogdeterminant ---------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 1), (2, 3, 5, 5)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_determinant(shape, dtype):
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    t = make("determinant", {"Input": x}, {"Out": np.linalg.det(x.astype(np.float64))})
    t.check_output(atol=TOL[dtype], rtol=TOL[dtype])
    if dtype == "float64":
        make("determinant", {"Input": well_conditioned(*shape)}, {"Out": None}).check_grad(
            ["Input"], "Out", **GRAD
        )


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 3, 5, 5)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_slogdeterminant(shape, dtype):
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    sign, logabs = np.linalg.slogdet(x.astype(np.float64))
    t = make("slogdeterminant", {"Input": x}, {"Out": np.stack([sign, logabs]).astype(dtype)})
    t.check_output(atol=TOL[dtype] * 10, rtol=TOL[dtype])
    if dtype == "float64":
        make("slogdeterminant", {"Input": x}, {"Out": None}).check_grad(["Input"], "Out", **GRAD)


def test_singular_determinants():
    """A singular matrix: det 0, slogdet's sign 0 and log |det| -inf (numpy's and Paddle's)."""
    x = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, -3.0]]])
    make("determinant", {"Input": x}, {"Out": np.array([0.0, -6.0])}).check_output()
    want = np.array([[0.0, -1.0], [-np.inf, np.log(6.0)]])
    make("slogdeterminant", {"Input": x}, {"Out": want}).check_output()


def test_determinant_errors():
    for op in ("determinant", "slogdeterminant"):
        error(
            op, {"Input": np.ones((2, 3))}, {"Out": np.ones(())}, op + r".*Input.*square.*\[2, 3\]"
        )
        error(op, {"Input": np.ones(3)}, {"Out": np.ones(())}, op + r".*Input.*\[3\]")
