"""matmul_v2's float kernels with a batch of X matrices over one Y matrix (a linear layer on
[B, S, K]) as one GEMM of B * S rows (ops_math's MatmulV2Kernel), and the shapes that keep one
GEMM per batch matrix (X transposed, Y batched, X broadcast over Y's batch): each against numpy's
matmul in float64, float32 within its rounding; S = 1 (a decode step's rows), Y transposed, Y of
rank 3 with a batch of 1."""

import numpy as np
import pytest
from op_test import make

RNG = np.random.RandomState(2029)

CASES = [  # X dims, Y dims, trans_x, trans_y
    ((4, 1, 16), (16, 9), False, False),  # a decode step's batch of 4 single rows
    ((2, 3, 5, 16), (16, 9), False, False),
    ((3, 5, 16), (9, 16), False, True),
    ((3, 5, 16), (1, 16, 9), False, False),
    ((3, 16, 5), (16, 9), True, False),  # X transposed: one GEMM per matrix
    ((3, 5, 16), (3, 16, 9), False, False),  # Y batched
    ((5, 16), (3, 16, 9), False, False),  # X broadcast over Y's batch
    ((2, 1, 5, 16), (3, 16, 9), False, False),  # both broadcast
]


@pytest.mark.parametrize("xs,ys,tx,ty", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_v2_rows(xs, ys, tx, ty, dtype):
    x, y = RNG.uniform(-1, 1, xs).astype(dtype), RNG.uniform(-1, 1, ys).astype(dtype)
    a = np.swapaxes(x, -1, -2) if tx else x
    b = np.swapaxes(y, -1, -2) if ty else y
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    t = make(
        "matmul_v2", {"X": x, "Y": y}, {"Out": want.astype(dtype)}, {"trans_x": tx, "trans_y": ty}
    )
    t.check_output(
        rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-5 if dtype == "float32" else 1e-12
    )
