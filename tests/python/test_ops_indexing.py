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


# ---------------------------------------------------------------------------------------------
# masked_fill


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((4,), (2, 4))]
)
def test_masked_fill(dtype, shapes, rng):
    x = rand(rng, shapes[0], dtype)
    mask = rng.randint(0, 2, shapes[1]).astype(bool)
    value = np.array(0.75, dtype)
    want = np.where(mask, value, x)
    t = make("masked_fill", {"x": x, "mask": mask, "value": value}, {"out": want})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["x", "value"], "out", **grad_args(dtype))


def test_masked_fill_ints_and_errors():
    x = np.arange(6, dtype="int64").reshape(2, 3)
    mask = np.array([True, False, True])
    want = np.where(mask, -1, x)
    value = np.array([-1], "int64")
    make("masked_fill", {"x": x, "mask": mask, "value": value}, {"out": want}).check_output()
    with pytest.raises(
        tide.TideError, match=r"masked_fill.*mask \[2\] does not broadcast with x \[2, 3\]"
    ):
        make("masked_fill", {"x": x, "mask": mask[:2], "value": value}, {"out": x}).check_output()
    with pytest.raises(tide.TideError, match="masked_fill.*mask .* must be bool, got int64"):
        make("masked_fill", {"x": x, "mask": x, "value": value}, {"out": x}).check_output()
    with pytest.raises(tide.TideError, match="masked_fill.*value .* must hold one element"):
        make("masked_fill", {"x": x, "mask": mask, "value": x}, {"out": x}).check_output()


# ---------------------------------------------------------------------------------------------
# index_add


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis,index", [(0, [0, 2, 0]), (1, [3, -1]), (-1, [1, 0, 1, 4])])
def test_index_add(dtype, axis, index, rng):
    x = rand(rng, (3, 4, 5), dtype)
    index = np.array(index, "int64")
    vshape = list(x.shape)
    vshape[axis] = len(index)
    value = rand(rng, vshape, dtype)
    want = x.copy()
    np.add.at(np.moveaxis(want, axis, 0), index, np.moveaxis(value, axis, 0))
    t = make(
        "index_add", {"X": x, "Index": index, "AddValue": value}, {"Out": want}, {"axis": axis}
    )
    t.check_output(atol=1e-6, rtol=1e-6)
    t.check_grad(["X", "AddValue"], "Out", **grad_args(dtype))


def test_index_add_ints_and_errors():
    x = np.zeros((3, 2), "int32")
    index = np.array([2, 2], "int32")
    value = np.array([[1, 2], [3, 4]], "int32")
    want = np.array([[0, 0], [0, 0], [4, 6]], "int32")
    make("index_add", {"X": x, "Index": index, "AddValue": value}, {"Out": want}).check_output()
    with pytest.raises(
        tide.TideError, match=r"index_add.*Index .*\[1\] = 3 is out of range \[-3, 3\)"
    ):
        bad = np.array([0, 3], "int32")
        make("index_add", {"X": x, "Index": bad, "AddValue": value}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match=r"index_add.*AddValue .* must be \[3, 2\]"):
        make(
            "index_add", {"X": x, "Index": index, "AddValue": value}, {"Out": x}, {"axis": 1}
        ).check_output()


# ---------------------------------------------------------------------------------------------
# scatter_nd_add


def scatter_nd_add_ref(x, index, updates):
    out = x.copy()
    k = index.shape[-1]
    flat_index = index.reshape(int(np.prod(index.shape[:-1])), k)
    flat_updates = updates.reshape((flat_index.shape[0],) + x.shape[k:])
    for tup, u in zip(flat_index, flat_updates):
        out[tuple(tup)] += u  # numpy wraps negative indices as Paddle does
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "index",
    [[[0, 1], [2, 3], [0, 1]], [[1], [-1]], [[[0, 0, 4]], [[2, 3, -1]]], [[]]],
)
def test_scatter_nd_add(dtype, index, rng):
    x = rand(rng, (3, 4, 5), dtype)
    index = np.array(index, "int64").reshape(np.array(index).shape)
    k = index.shape[-1]
    updates = rand(rng, index.shape[:-1] + x.shape[k:], dtype)
    want = scatter_nd_add_ref(x, index, updates)
    t = make("scatter_nd_add", {"X": x, "Index": index, "Updates": updates}, {"Out": want})
    t.check_output(atol=1e-6, rtol=1e-6)
    t.check_grad(["X", "Updates"], "Out", **grad_args(dtype))


def test_scatter_nd_add_errors():
    x = np.zeros((3, 4), "float32")
    index = np.array([[0, 4]], "int64")
    updates = np.ones((1,), "float32")
    with pytest.raises(
        tide.TideError, match=r"scatter_nd_add.*Index .* holds 4 for dim 1 of X \[3, 4\]"
    ):
        make(
            "scatter_nd_add", {"X": x, "Index": index, "Updates": updates}, {"Out": x}
        ).check_output()
    with pytest.raises(tide.TideError, match=r"scatter_nd_add.*Updates .* must be \[1\]"):
        u = np.ones((2,), "float32")
        make("scatter_nd_add", {"X": x, "Index": index, "Updates": u}, {"Out": x}).check_output()
    with pytest.raises(
        tide.TideError, match=r"scatter_nd_add.*last dim \(3\) must be at most X's rank"
    ):
        i3 = np.zeros((1, 3), "int64")
        make("scatter_nd_add", {"X": x, "Index": i3, "Updates": updates}, {"Out": x}).check_output()


# ---------------------------------------------------------------------------------------------
# reductions over bool and small integer types (paddle.nansum / quantile sum a bool mask)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("dim,keep", [([1], False), ([0, 2], True), ([], False)])
def test_reduce_sum_small_types(dtype, dim, keep, rng):
    x = rng.randint(0, 2 if dtype == "bool" else 5, (3, 4, 5)).astype(dtype)
    axis = tuple(dim) if dim else None
    # Paddle's rule: a bool sum counts (int64); the other types sum in their own type.
    want = x.sum(axis=axis, keepdims=keep).astype("int64" if dtype == "bool" else dtype)
    attrs = {"dim": dim, "keep_dim": keep, "reduce_all": not dim}
    make("reduce_sum", {"X": x}, {"Out": want.reshape(want.shape or (1,))}, attrs).check_output()


@pytest.mark.parametrize(
    "xtype,otype",
    [("bool", "int32"), ("int32", "int64"), ("float32", "float64"), ("int64", "float32")],
)
def test_reduce_sum_out_dtype(xtype, otype, rng):
    x = rng.randint(0, 3, (4, 6)).astype(xtype)
    code = {"int32": 2, "int64": 3, "float32": 5, "float64": 6}[otype]
    want = x.astype(otype).sum(axis=1, dtype=otype)
    make("reduce_sum", {"X": x}, {"Out": want}, {"dim": [1], "out_dtype": code}).check_output()


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_reduce_mean_integers_truncate(dtype):
    x = np.array([[1, 2], [-3, -4], [7, 7]], dtype)
    want = np.trunc(x.sum(axis=1) / 2).astype(dtype)
    make("reduce_mean", {"X": x}, {"Out": want}, {"dim": [1]}).check_output()


@pytest.mark.parametrize("op,ref", [("reduce_all", np.all), ("reduce_any", np.any)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_reduce_all_any_numbers(op, ref, dtype, rng):
    x = (rng.randint(0, 3, (3, 4)) * rng.randint(0, 2, (3, 1))).astype(dtype)
    x[0, 0] = 0.5 if dtype.startswith("float") else x[0, 0]  # non-zero, not 1: still true
    make(op, {"X": x}, {"Out": ref(x != 0, axis=1)}, {"dim": [1]}).check_output()


def test_reduce_sum_bad_out_dtype():
    x = np.ones((2, 3), "float32")
    with pytest.raises(tide.TideError, match="reduce_sum': attribute 'out_dtype' is 99"):
        make(
            "reduce_sum", {"X": x}, {"Out": x.sum(1)}, {"dim": [1], "out_dtype": 99}
        ).check_output()


# ---------------------------------------------------------------------------------------------
# index_put


def index_put_ref(x, indices, value, accumulate):
    out = x.copy()
    key = tuple(indices)
    if accumulate:
        np.add.at(out, key, np.broadcast_to(value, out[key].shape))
    else:
        out[key] = value  # numpy, as Paddle's CPU kernel, keeps the last of repeated positions
    return out


INDEX_PUTS = [  # x's shape, indices, value's shape
    ((4, 5), [[0, 2, -1]], (5,)),
    ((4, 5), [[0, 2], [1, -2]], (2,)),
    ((4, 5), [[0, 2], [1, 4]], ()),
    ((3, 4, 5), [[[0], [2]], [1, 3, 0]], (2, 3, 5)),
    ((3, 4, 5), [[2, 1]], (1, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("case", range(len(INDEX_PUTS)))
def test_index_put(dtype, accumulate, case, rng):
    shape, indices, vshape = INDEX_PUTS[case]
    x = rand(rng, shape, dtype)
    idx = [np.array(i, "int64") for i in indices]
    value = rand(rng, vshape, dtype)
    want = index_put_ref(x, idx, value, accumulate)
    ins = {"x": x, "indices": [("idx%d" % k, i) for k, i in enumerate(idx)], "value": value}
    t = make("index_put", ins, {"out": want}, {"accumulate": accumulate})
    t.check_output(atol=1e-6, rtol=1e-6)
    t.check_grad(["x", "value"], "out", **grad_args(dtype))


def test_index_put_repeats_bool_mask_and_int32():
    x = np.zeros((3, 4), "float64")
    rows, cols = np.array([0, 0], "int32"), np.array([1, 1], "int32")
    value = np.array([1.0, 2.0])
    for accumulate, v in [(False, 2.0), (True, 3.0)]:
        want = x.copy()
        want[0, 1] = v
        ins = {"x": x, "indices": [("r", rows), ("c", cols)], "value": value}
        make("index_put", ins, {"out": want}, {"accumulate": accumulate}).check_output()
    mask = np.array([[True, False, False, True], [False] * 4, [False, True, False, False]])
    xi = np.arange(12, dtype="int64").reshape(3, 4)
    want = xi.copy()
    want[mask] = -7
    ins = {"x": xi, "indices": [("m", mask)], "value": np.array(-7, "int64")}
    make("index_put", ins, {"out": want}).check_output()


def test_index_put_errors():
    x = np.zeros((3, 4), "float32")
    v = np.ones((2,), "float32")
    with pytest.raises(
        tide.TideError, match=r"index_put.*indices\[1\] .* holds 4, out of range \[-4, 4\)"
    ):
        ins = {"x": x, "indices": [("r", np.array([0, 1])), ("c", np.array([0, 4]))], "value": v}
        make("index_put", ins, {"out": x}).check_output()
    with pytest.raises(
        tide.TideError, match=r"index_put.*value .* \[3\] does not broadcast to .* \[2\]"
    ):
        ins = {
            "x": x,
            "indices": [("r", np.array([0, 1])), ("c", np.array([0, 1]))],
            "value": np.ones(3, "float32"),
        }
        make("index_put", ins, {"out": x}).check_output()
    with pytest.raises(
        tide.TideError, match=r"index_put.*indices\[1\] .* \[3\] does not broadcast"
    ):
        ins = {"x": x, "indices": [("r", np.array([0, 1])), ("c", np.array([0, 1, 2]))], "value": v}
        make("index_put", ins, {"out": x}).check_output()


# ---------------------------------------------------------------------------------------------
# diag_embed, triu_indices, tril_indices


def diag_embed_ref(x, offset, dim1, dim2):
    n = x.shape[-1]
    m = n + abs(offset)
    mats = np.zeros(x.shape[:-1] + (m, m), x.dtype)
    for i in range(n):
        r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
        mats[..., r, c] = x[..., i]
    rank = x.ndim + 1
    a1, a2 = dim1 % rank, dim2 % rank
    # mats' last two dims (rows, columns) go to a1, a2; the batch dims keep their order
    return np.moveaxis(mats, [-2, -1], [a1, a2])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,offset,dim1,dim2",
    [((4,), 0, -2, -1), ((2, 3), 1, -2, -1), ((2, 3), -2, 0, 2), ((2, 3, 4), 0, 3, 1)],
)
def test_diag_embed(dtype, shape, offset, dim1, dim2, rng):
    x = rand(rng, shape, dtype)
    want = diag_embed_ref(x, offset, dim1, dim2)
    if shape == (4,) and offset == 0:
        np.testing.assert_array_equal(want, np.diag(x))
    attrs = {"offset": offset, "dim1": dim1, "dim2": dim2}
    t = make("diag_embed", {"Input": x}, {"Out": want}, attrs)
    t.check_output(atol=0, rtol=0)
    t.check_grad(["Input"], "Out", **grad_args(dtype))


def test_diag_embed_ints_and_errors():
    x = np.array([[1, 2], [3, 4]], "int64")
    make("diag_embed", {"Input": x}, {"Out": diag_embed_ref(x, 0, -2, -1)}).check_output()
    with pytest.raises(
        tide.TideError, match="diag_embed.*dim1 \\(1\\) and dim2 \\(-2\\) must name different"
    ):
        make("diag_embed", {"Input": x}, {"Out": x}, {"dim1": 1, "dim2": -2}).check_output()
    with pytest.raises(tide.TideError, match=r"diag_embed.*dim1 3 is out of range \[-3, 3\)"):
        make("diag_embed", {"Input": x}, {"Out": x}, {"dim1": 3}).check_output()


@pytest.mark.parametrize(
    "rows,cols,offset", [(4, 4, 0), (4, 3, -1), (3, 5, 1), (3, 5, 7), (3, 5, -9), (0, 2, 0)]
)
@pytest.mark.parametrize("dtype,code", [("int64", 3), ("int32", 2)])
def test_tri_indices(rows, cols, offset, dtype, code):
    up = np.array(np.triu_indices(rows, offset, cols), dtype).reshape(2, -1)
    low = np.array(np.tril_indices(rows, offset, cols), dtype).reshape(2, -1)
    attrs = {"row": rows, "col": cols, "offset": offset, "dtype": code}
    make("triu_indices", {}, {"out": up}, attrs).check_output()
    attrs = {"rows": rows, "cols": cols, "offset": offset, "dtype": code}
    make("tril_indices", {}, {"out": low}, attrs).check_output()


def test_tri_indices_errors():
    with pytest.raises(
        tide.TideError, match="tril_indices.*'dtype' must be int32 or int64, got float32"
    ):
        make(
            "tril_indices",
            {},
            {"out": np.zeros((2, 1), "int64")},
            {"rows": 2, "cols": 2, "dtype": 5},
        ).check_output()
    with pytest.raises(tide.TideError, match="triu_indices.*>= 0 rows and columns, got -1 x 2"):
        make(
            "triu_indices", {}, {"out": np.zeros((2, 1), "int64")}, {"row": -1, "col": 2}
        ).check_output()


# ---------------------------------------------------------------------------------------------
# bincount, histogram


@pytest.mark.parametrize("xtype", ["int32", "int64"])
@pytest.mark.parametrize("wtype", [None, "float32", "float64", "int64"])
@pytest.mark.parametrize("minlength", [0, 3, 12])
def test_bincount(xtype, wtype, minlength, rng):
    x = rng.randint(0, 8, (20,)).astype(xtype)
    ins = {"X": x}
    if wtype is None:
        want = np.bincount(x, minlength=minlength).astype("int64")
    else:
        w = rng.randint(-3, 4, (20,)).astype(wtype)
        ins["Weights"] = w
        out_type = "float32" if wtype == "float32" else "float64"
        want = np.bincount(x, w.astype("float64"), minlength).astype(out_type)
    make("bincount", ins, {"Out": want}, {"minlength": minlength}).check_output(atol=1e-6)


@pytest.mark.parametrize("mtype", ["int32", "int64"])
@pytest.mark.parametrize("minlength", [0, 5, 12])
def test_bincount_minlength_tensor(mtype, minlength, rng):
    # paddle.histogramdd computes bincount's minlength at run time (PIR operand 2): the MinLength
    # input ([1] or []) wins over the attribute.
    x = rng.randint(0, 8, (15,)).astype("int64")
    want = np.bincount(x, minlength=minlength).astype("int64")
    for m in (np.array([minlength], mtype), np.array(minlength, mtype)):
        ins = {"X": x, "MinLength": m}
        make("bincount", ins, {"Out": want}, {"minlength": 30}).check_output(atol=0)


def test_bincount_errors():
    x = np.array([0, 2, -1, 1], "int64")
    with pytest.raises(tide.TideError, match=r"bincount.*X .* holds -1 at index 2; .*non-negative"):
        make("bincount", {"X": x}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match="bincount.*minlength must be >= 0, got -2"):
        make("bincount", {"X": np.abs(x)}, {"Out": x}, {"minlength": -2}).check_output()
    with pytest.raises(tide.TideError, match=r"bincount.*MinLength .* must be >= 0, got -3"):
        ins = {"X": np.abs(x), "MinLength": np.array([-3], "int64")}
        make("bincount", ins, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match=r"bincount.*MinLength .* must hold one value, got 2"):
        ins = {"X": np.abs(x), "MinLength": np.array([3, 4], "int64")}
        make("bincount", ins, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match="bincount.*X .* must be int32 or int64, got float32"):
        make("bincount", {"X": x.astype("float32")}, {"Out": x}).check_output()


def histogram_ref(x, bins, lo, hi, weight=None, density=False):
    """np.histogram with Paddle's range rules (min = max = 0: X's range; an empty range widened
    by 1 each way)."""
    if lo == 0 and hi == 0 and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    counts, _ = np.histogram(x.astype("float64"), bins, (lo, hi), weights=weight)
    if density:
        return (counts / (counts.sum() * (hi - lo) / bins)).astype("float32")
    return counts.astype("int64" if weight is None else weight.dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize(
    "bins,lo,hi", [(5, -1.0, 1.0), (4, 0.0, 0.0), (7, -0.5, 3.5), (3, 2.0, 2.0)]
)
@pytest.mark.parametrize("density", [False, True])
def test_histogram(dtype, bins, lo, hi, density, rng):
    x = rng.uniform(-2, 4, (4, 6)) if dtype.startswith("float") else rng.randint(-2, 5, (4, 6))
    x = x.astype(dtype)
    attrs = {"bins": bins, "min": lo, "max": hi, "density": density}
    want = histogram_ref(x, bins, lo, hi, density=density)
    make("histogram", {"X": x}, {"Out": want}, attrs).check_output(atol=1e-6, rtol=1e-5)
    if dtype.startswith("float"):
        w = rng.uniform(0.1, 2, x.shape).astype(dtype)
        want = histogram_ref(x, bins, lo, hi, w, density)
        make("histogram", {"X": x, "Weight": w}, {"Out": want}, attrs).check_output(
            atol=1e-5, rtol=1e-5
        )


def test_histogram_errors():
    x = np.ones((3,), "float32")
    with pytest.raises(tide.TideError, match=r"histogram.*max \(1\) must be >= min \(3\)"):
        make("histogram", {"X": x}, {"Out": x}, {"bins": 4, "min": 3.0, "max": 1.0}).check_output()
    with pytest.raises(tide.TideError, match="histogram.*bins must be >= 1, got 0"):
        make("histogram", {"X": x}, {"Out": x}, {"bins": 0}).check_output()


# ---------------------------------------------------------------------------------------------
# unique


def unique_ref(x, axis, sorted_):
    """np.unique's four returns; unsorted: the distinct values in order of first appearance."""
    out, first, inverse, counts = np.unique(
        x, return_index=True, return_inverse=True, return_counts=True, axis=axis
    )
    inverse = inverse.reshape(-1)
    if not sorted_:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        out = np.take(out, order, axis=0 if axis is None else axis)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return out, first, inverse, counts


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("is_sorted", [True, False])
@pytest.mark.parametrize("itype,code", [("int64", 3), ("int32", 2)])
def test_unique(dtype, axis, is_sorted, itype, code, rng):
    x = rng.randint(0, 3, (5, 4)).astype(dtype)
    x[3] = x[1]  # a repeated row
    x[:, 2] = x[:, 0]  # and a repeated column
    out, first, inverse, counts = unique_ref(x, axis, is_sorted)
    attrs = {"axis": [] if axis is None else [axis], "dtype": code, "is_sorted": is_sorted}
    attrs.update(return_index=True, return_inverse=True, return_counts=True)
    want = {
        "Out": out,
        "Indices": first.astype(itype),
        "Index": inverse.astype(itype),
        "Counts": counts.astype(itype),
    }
    make("unique", {"X": x}, want, attrs).check_output(atol=0, rtol=0)


def test_unique_out_and_index_only_and_errors():
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0])
    want = {"Out": np.array([3.0, 1.0, 2.0]), "Index": np.array([0, 1, 0, 2, 1])}
    make("unique", {"X": x}, want).check_output()  # Fluid's defaults: unsorted, int64
    with pytest.raises(
        tide.TideError, match="unique.*'dtype' .* must be int32 or int64, got float64"
    ):
        make("unique", {"X": x}, want, {"dtype": 6}).check_output()
    with pytest.raises(tide.TideError, match="unique.*axis 1 is out of range for rank 1"):
        make("unique", {"X": x}, want, {"axis": [1]}).check_output()


# ---------------------------------------------------------------------------------------------
# the integer and bool kernels of the ops that move data


def typed(rng, shape, dtype):
    if dtype == "bool":
        return rng.randint(0, 2, shape).astype(bool)
    return rng.randint(-9, 10, shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64"])
def test_moves_of_ints_and_bools(dtype, rng):
    x = typed(rng, (3, 4), dtype)
    make(
        "diag_embed", {"Input": x}, {"Out": diag_embed_ref(x, 1, -2, -1)}, {"offset": 1}
    ).check_output()
    mask = rng.randint(0, 2, (4,)).astype(bool)
    value = typed(rng, (1,), dtype)
    want = np.where(mask, value[0], x)
    make("masked_fill", {"x": x, "mask": mask, "value": value}, {"out": want}).check_output()
    rows, cols = np.array([2, 0]), np.array([1, 3])
    v = typed(rng, (2,), dtype)
    ins = {"x": x, "indices": [("r", rows), ("c", cols)], "value": v}
    make("index_put", ins, {"out": index_put_ref(x, [rows, cols], v, False)}).check_output()
    if dtype == "bool":
        return
    index = np.array([1, 1, 0])
    add = typed(rng, (3, 3), dtype)
    want = x.copy()
    np.add.at(want.T, index, add.T)
    make(
        "index_add", {"X": x, "Index": index, "AddValue": add}, {"Out": want}, {"axis": 1}
    ).check_output()
    nd = np.array([[0, 1], [2, 3], [0, 1]])
    upd = typed(rng, (3,), dtype)
    want = scatter_nd_add_ref(x, nd, upd)
    make("scatter_nd_add", {"X": x, "Index": nd, "Updates": upd}, {"Out": want}).check_output()


def test_histogram_reads_paddle_3_programs():
    # Paddle 3's legacy programs record histogram at version 1 (Weight, density): Tide has both.
    assert tide._C.paddle_op_versions()["histogram"] == 1
