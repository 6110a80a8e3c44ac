"""Paddle's indexing, scattering and counting ops (indexops: plugins/ops_nn/cummax_cummin_op.cc,
...): outputs against numpy references written here, gradients against central finite
differences, and the errors of bad inputs."""

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-6)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# cummax, cummin


def cum_extreme(x, axis, take_max):
    """The running max (min) along axis and its index: a tie takes the later element, a NaN
    stays once met (Paddle's rule)."""
    xm = np.moveaxis(x, axis, -1)
    out, idx = np.empty_like(xm), np.zeros(xm.shape, np.int64)
    for line in np.ndindex(*xm.shape[:-1]):
        best, at = xm[line][0], 0
        for j, v in enumerate(xm[line]):
            if not np.isnan(best) and (np.isnan(v) or (v >= best if take_max else v <= best)):
                best, at = v, j
            out[line][j], idx[line][j] = best, at
    return np.moveaxis(out, -1, axis), np.moveaxis(idx, -1, axis)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cum_extreme(op, dtype, axis, rng):
    x = (rng.permutation(60).reshape(3, 4, 5) / 10.0 - 3).astype(dtype)  # 0.1 apart: no ties
    out, idx = cum_extreme(x, axis, op == "cummax")
    np.testing.assert_array_equal(
        out, (np.maximum if op == "cummax" else np.minimum).accumulate(x, axis)
    )
    t = make(op, {"x": x}, {"out": out, "indices": idx}, {"axis": axis})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["x"], "out", **grad_args(dtype))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cum_extreme_ties_nan_ints(op):
    x = np.array([[1.0, 3.0, 3.0, 2.0, np.nan, 5.0, 0.0]])
    out, idx = cum_extreme(x, 1, op == "cummax")
    assert idx[0].tolist() == ([0, 1, 2, 2, 4, 4, 4] if op == "cummax" else [0, 0, 0, 0, 4, 4, 4])
    make(op, {"x": x}, {"out": out, "indices": idx}, {"axis": -1}).check_output(atol=0, rtol=0)
    for dtype in ["int32", "int64"]:
        xi = np.array([[4, 1, 4, 7], [2, 2, 0, 9]], dtype)
        out, idx = cum_extreme(xi.astype("float64"), 1, op == "cummax")
        want = {"out": out.astype(dtype), "indices": idx.astype("int32")}
        make(op, {"x": xi}, want, {"axis": 1, "dtype": 2}).check_output(atol=0, rtol=0)


def test_cum_extreme_errors():
    x = np.ones((2, 3), "float32")
    with pytest.raises(tide.TideError, match="cummax.*axis 2 is out of range for rank 2"):
        make(
            "cummax", {"x": x}, {"out": x, "indices": x.astype("int64")}, {"axis": 2}
        ).check_output()
    with pytest.raises(
        tide.TideError, match="cummin.*'dtype'.*must be int32 or int64, got float32"
    ):
        make(
            "cummin", {"x": x}, {"out": x, "indices": x.astype("int64")}, {"dtype": 5}
        ).check_output()
