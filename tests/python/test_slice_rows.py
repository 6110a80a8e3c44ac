"""slice / strided_slice by rows (ops_nn's SliceKernel: each row of the box, its innermost dim,
located once and copied, as a run where the innermost step is 1) against numpy's indexing,
exactly: rotate_half's halves of the last dim, a middle-axis slice keeping whole rows, strided and
backward innermost steps, a rank-1 input, decrease_axis down to one element. test_ops_tensor has
the grads and the other bounds."""

import numpy as np
import pytest
from op_test import make

RNG = np.random.RandomState(2028)

CASES = [  # input shape, axes, starts, ends, strides, numpy index
    ((2, 7, 4, 64), [3], [0], [32], [1], np.s_[..., :32]),  # rotate_half's x1
    ((2, 7, 4, 64), [3], [32], [2**31 - 1], [1], np.s_[..., 32:]),  # and x2
    ((3, 6, 5), [1], [2], [5], [1], np.s_[:, 2:5]),
    ((3, 6, 5), [0, 2], [1, 0], [3, 5], [1, 2], np.s_[1:3, :, 0:5:2]),
    ((3, 6, 5), [2, 1], [4, 5], [-100, 0], [-1, -2], np.s_[:, 5:0:-2, 4::-1]),
    ((9,), [0], [1], [8], [3], np.s_[1:8:3]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_slice_rows(case, dtype):
    shape, axes, starts, ends, strides, idx = CASES[case]
    x = RNG.uniform(-1, 1, shape)
    x = (x > 0) if dtype == "bool" else (x * 100).astype(dtype)
    attrs = {"axes": axes, "starts": starts, "ends": ends}
    if all(s == 1 for s in strides):
        make("slice", {"Input": x}, {"Out": x[idx]}, attrs).check_output(atol=0, rtol=0)
    make("strided_slice", {"Input": x}, {"Out": x[idx]}, dict(attrs, strides=strides)).check_output(
        atol=0, rtol=0
    )


def test_slice_decrease_to_one_element():
    x = RNG.uniform(-1, 1, (3, 4)).astype("float32")
    attrs = {"axes": [0, 1], "starts": [2, 1], "ends": [3, 2], "decrease_axis": [0, 1]}
    make("slice", {"Input": x}, {"Out": x[2, 1:2]}, attrs).check_output(atol=0, rtol=0)
