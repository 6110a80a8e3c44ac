"""tril_triu by rows (ops_nn's MaskTriangle: each row's kept columns copied, the rest zeroed)
against numpy's tril / triu at every diagonal from past the last column to below the last row,
square and not, batched, each type the kernel takes; and its grad (the same mask) by central
differences."""

import numpy as np
import pytest
from op_test import make

RNG = np.random.RandomState(2027)


@pytest.mark.parametrize("shape", [(4, 5), (2, 5, 3), (3, 1, 4, 4)])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("diagonal", [-7, -5, -4, -3, -1, 0, 2, 3, 4, 6])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_tril_triu_every_diagonal(shape, lower, diagonal, dtype):
    x = RNG.uniform(-1, 1, shape)
    x = (x > 0) if dtype == "bool" else (x * 100).astype(dtype)
    want = np.tril(x, diagonal) if lower else np.triu(x, diagonal)
    make("tril_triu", {"X": x}, {"Out": want}, {"lower": lower, "diagonal": diagonal}).check_output(
        atol=0, rtol=0
    )


@pytest.mark.parametrize("lower,diagonal", [(True, -1), (False, 2), (True, 5), (False, -5)])
def test_tril_triu_grad(lower, diagonal):
    x = RNG.uniform(-1, 1, (2, 3, 4))
    want = np.tril(x, diagonal) if lower else np.triu(x, diagonal)
    t = make("tril_triu", {"X": x}, {"Out": want}, {"lower": lower, "diagonal": diagonal})
    t.check_grad(["X"], "Out", max_relative_error=1e-5, numeric_grad_delta=1e-6)
