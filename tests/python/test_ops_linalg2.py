"""linalg2's ops: lu, lu_unpack, matrix_rank (and matrix_rank_atol_rtol), lstsq, multi_dot
(plugins/ops_linalg), conj and nanmedian (plugins/ops_math), against independent float64
references (LAPACK's getrf and least-squares drivers through scipy, numpy.linalg, numpy's
nanmedian and a numpy rendering of Paddle's index rules); gradients by central differences;
the errors of bad inputs and attributes."""

import numpy as np
import pytest
import scipy.linalg
from op_test import make

import tide

RNG = np.random.RandomState(71)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]
TOL = {"float32": 2e-4, "float64": 1e-10}


def tol(dtype, scale=1.0):
    return {"atol": TOL[dtype] * scale, "rtol": TOL[dtype] * scale}


def error(op, inputs, outputs, match, attrs=None):
    with pytest.raises(tide.TideError, match=match):
        make(op, inputs, outputs, attrs).check_output()


# --- lu / lu_unpack --------------------------------------------------------------------------


def getrf(x):
    """LAPACK's getrf per matrix (scipy): packed LU, 1-based int32 pivots, int32 infos."""
    x = x.astype(np.float64)
    m, n = x.shape[-2:]
    lu = np.empty_like(x)
    piv = np.empty(x.shape[:-2] + (min(m, n),), np.int32)
    info = np.empty(x.shape[:-2], np.int32)
    for idx in np.ndindex(*x.shape[:-2]):
        a, p, i = scipy.linalg.lapack.dgetrf(x[idx])
        lu[idx], piv[idx], info[idx] = a, p + 1, i
    return lu, piv, info


def unpack(lu, piv):
    """P, L, U of X = P L U from getrf's output."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    eye = np.eye(m, k)
    low = np.tril(lu[..., :, :k], -1) + eye
    up = np.triu(lu[..., :k, :])
    pm = np.zeros(lu.shape[:-2] + (m, m))
    for idx in np.ndindex(*lu.shape[:-2]):
        perm = list(range(m))
        for j in range(k):
            p = piv[idx][j] - 1
            perm[j], perm[p] = perm[p], perm[j]
        pm[idx][perm, range(m)] = 1
    return pm, low, up


@pytest.mark.parametrize("shape", [(4, 4), (2, 4, 4), (3, 5), (5, 3), (2, 2, 3, 3), (1, 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu(shape, dtype):
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    lu, piv, info = getrf(x)
    t = make("lu", {"X": x}, {"Out": lu.astype(dtype), "Pivots": piv, "Infos": info})
    t.check_output(**tol(dtype, 10))
    pm, low, up = unpack(lu, piv)
    np.testing.assert_allclose(pm @ low @ up, x, atol=1e-5)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_lu_singular_infos():
    """A zero pivot: Infos is its 1-based column (LAPACK's), the factorisation goes on."""
    x = np.array([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]], np.eye(3)])
    x[0, :, 0] = 0.0
    lu, piv, info = getrf(x)
    assert info[0] != 0 and info[1] == 0
    make("lu", {"X": x}, {"Out": lu, "Pivots": piv, "Infos": info}).check_output()


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (2, 5, 3)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_unpack(shape, dtype):
    x = RNG.uniform(-1, 1, shape)
    lu, piv, _ = getrf(x)
    pm, low, up = unpack(lu, piv)
    lu = lu.astype(dtype)
    want = {"Pmat": pm.astype(dtype), "L": low.astype(dtype), "U": up.astype(dtype)}
    t = make("lu_unpack", {"X": lu, "Pivots": piv}, want)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X"], ["L", "U"], **GRAD)
        t.check_grad(["X"], ["L"], **GRAD)


def test_lu_unpack_switches():
    """unpack_ludata / unpack_pivots off: those outputs empty ([0]), as Paddle's."""
    lu, piv, _ = getrf(RNG.uniform(-1, 1, (2, 3, 3)))
    pm, low, up = unpack(lu, piv)
    empty = np.zeros([0])
    make(
        "lu_unpack",
        {"X": lu, "Pivots": piv},
        {"Pmat": pm, "L": empty, "U": empty},
        {"unpack_ludata": False},
    ).check_output()
    make(
        "lu_unpack",
        {"X": lu, "Pivots": piv},
        {"Pmat": empty, "L": low, "U": up},
        {"unpack_pivots": False},
    ).check_output()


def test_lu_errors():
    error("lu", {"X": np.ones(3)}, {"Out": np.ones(3), "Pivots": None}, r"lu.*X.*\[3\]")
    error(
        "lu",
        {"X": np.eye(3)},
        {"Out": np.eye(3), "Pivots": None},
        r"lu.*pivot = false.*not implemented on the CPU",
        {"pivot": False},
    )
    lu, piv, _ = getrf(np.eye(3))
    error(
        "lu_unpack",
        {"X": lu, "Pivots": piv[:2]},
        {"Pmat": None, "L": None, "U": None},
        r"lu_unpack.*Pivots must have dims \[3\].*\[2\]",
    )
    error(
        "lu_unpack",
        {"X": lu, "Pivots": np.array([0, 2, 3], np.int32)},
        {"Pmat": np.eye(3), "L": None, "U": None},
        r"lu_unpack.*Pivots\[0\] must be in \[1, 3\].*0",
    )


# --- matrix_rank ----------------------------------------------------------------------------


def low_rank(*shape, rank):
    a = RNG.uniform(-1, 1, shape[:-1] + (rank,))
    b = RNG.uniform(-1, 1, shape[:-2] + (rank, shape[-1]))
    return a @ b


def ref_rank(x, atol, rtol, hermitian=False):
    """numpy: the count of singular values (|eigenvalues|) above max(atol, rtol * the largest),
    atol and rtol broadcast against the batch dims."""
    x = x.astype(np.float64)
    s = np.abs(np.linalg.eigvalsh(x)) if hermitian else np.linalg.svd(x, compute_uv=False)
    tol = np.maximum(atol, rtol * s.max(-1))
    return np.sum(s > tol[..., None], -1).astype(np.int64)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_rank(dtype):
    x = np.concatenate([low_rank(2, 5, 4, rank=2), RNG.uniform(-1, 1, (1, 5, 4))]).astype(dtype)
    eps = np.finfo(dtype).eps * 5
    make("matrix_rank", {"X": x}, {"Out": ref_rank(x, 0.0, eps)}).check_output()
    # An explicit tol: the singular values above it.
    s = np.linalg.svd(x.astype(np.float64), compute_uv=False)
    t = float((s[2, 1] + s[2, 2]) / 2)
    make(
        "matrix_rank",
        {"X": x},
        {"Out": ref_rank(x, t, 0.0)},
        {"tol": t, "use_default_tol": False},
    ).check_output()
    # TolTensor broadcast with the batch dims: Out [2, 3].
    tt = np.array([[0.0], [t]], dtype)
    make(
        "matrix_rank",
        {"X": x, "TolTensor": tt},
        {"Out": ref_rank(x, tt, 0.0)},
        {"use_default_tol": False},
    ).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_rank_hermitian(dtype):
    a = low_rank(3, 4, 4, rank=2)
    x = (a + np.swapaxes(a, -1, -2)).astype(dtype)
    x[..., 0, 3] = 100.0  # the upper triangle is not read
    xs = np.tril(x) + np.swapaxes(np.tril(x, -1), -1, -2)
    eps = np.finfo(dtype).eps * 4
    want = ref_rank(xs, 0.0, eps, hermitian=True)
    make("matrix_rank", {"X": x}, {"Out": want}, {"hermitian": True}).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_rank_atol_rtol(dtype):
    x = RNG.uniform(-1, 1, (3, 5, 4)).astype(dtype)
    s = np.linalg.svd(x.astype(np.float64), compute_uv=False)
    atol = np.array([(s[0, 1] + s[0, 2]) / 2, 0.0, s[2, 3] / 2], dtype)  # off the values
    rtol = np.array(0.3, dtype)
    want = ref_rank(x, atol, 0.3)
    make(
        "matrix_rank_atol_rtol", {"X": x, "atol": atol, "rtol": rtol}, {"Out": want}
    ).check_output()
    # Without rtol: eps * max(M, N) where atol is 0, else 0.
    eps = np.finfo(dtype).eps * 5
    want = ref_rank(x, atol, np.where(atol == 0, eps, 0.0))
    make("matrix_rank_atol_rtol", {"X": x, "atol": atol}, {"Out": want}).check_output()


def test_matrix_rank_errors():
    error(
        "matrix_rank", {"X": np.ones(3)}, {"Out": np.ones((), np.int64)}, r"matrix_rank.*X.*\[3\]"
    )
    error(
        "matrix_rank",
        {"X": np.ones((2, 3))},
        {"Out": np.ones((), np.int64)},
        r"matrix_rank.*X.*square.*\[2, 3\]",
        {"hermitian": True},
    )
    error(
        "matrix_rank",
        {"X": np.ones((2, 3, 3)), "TolTensor": np.ones(3)},
        {"Out": np.ones(2, np.int64)},
        r"matrix_rank.*TolTensor \[3\] does not broadcast with X's batch dims \[2\]",
        {"use_default_tol": False},
    )


# --- lstsq -----------------------------------------------------------------------------------


def ref_lstsq(x, y, driver, rcond):
    """scipy's LAPACK drivers per matrix pair: solution, rank, singular values."""
    sol, ranks, svs = [], [], []
    for idx in np.ndindex(*x.shape[:-2]):
        s, _, r, sv = scipy.linalg.lstsq(
            x[idx].astype(np.float64), y[idx].astype(np.float64), cond=rcond, lapack_driver=driver
        )
        sol.append(s)
        ranks.append(r)
        svs.append(sv if sv is not None else np.zeros(0))
    b = x.shape[:-2]
    return (
        np.array(sol).reshape(b + sol[0].shape),
        np.array(ranks, np.int32).reshape(b),
        np.array(svs).reshape(b + svs[0].shape),
    )


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [((5, 3), (5, 2)), ((2, 6, 4), (2, 6, 3)), ((3, 5), (3, 2))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lstsq(driver, shape, dtype):
    x = RNG.uniform(-1, 1, shape[0]).astype(dtype)
    y = RNG.uniform(-1, 1, shape[1]).astype(dtype)
    rcond = 1e-5
    sol, rank, sv = ref_lstsq(x, y, "gelsd" if driver == "gels" else driver, rcond)
    m, n = x.shape[-2:]
    res = ((x.astype(np.float64) @ sol - y) ** 2).sum(-2)
    want = {"Solution": sol.astype(dtype)}
    want["Residuals"] = res.astype(dtype) if m > n and driver != "gelsy" else np.zeros(0, dtype)
    want["Rank"] = np.zeros(0, np.int64) if driver == "gels" else rank
    want["SingularValues"] = (
        sv.astype(dtype) if driver in ("gelsd", "gelss") else np.zeros(0, dtype)
    )
    attrs = {"driver": driver, "rcond": rcond}
    make("lstsq", {"X": x, "Y": y}, want, attrs).check_output(**tol(dtype, 10))


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss"])
def test_lstsq_rank_deficient(driver):
    """A rank-deficient X: the minimum-norm solution, its rank, and no Residuals (Paddle's [0])."""
    x = low_rank(2, 6, 4, rank=2)
    y = RNG.uniform(-1, 1, (2, 6, 3))
    sol, rank, _ = ref_lstsq(x, y, driver, 1e-6)
    assert list(rank) == [2, 2]
    got = make(
        "lstsq",
        {"X": x, "Y": y},
        {"Solution": sol, "Residuals": np.zeros(0), "Rank": rank, "SingularValues": np.zeros(0)},
        {"driver": driver, "rcond": 1e-6},
    ).forward()
    np.testing.assert_allclose(got["Solution"], sol, atol=1e-9)
    np.testing.assert_array_equal(got["Rank"], rank)
    assert got["Residuals"].shape == (0,)


def test_lstsq_errors():
    x, y = np.ones((5, 3)), np.ones((5, 2))
    outs = {"Solution": np.ones((3, 2))}
    error("lstsq", {"X": x, "Y": y}, outs, r"lstsq.*driver must be .*'gelsx'", {"driver": "gelsx"})
    error("lstsq", {"X": x, "Y": np.ones((4, 2))}, outs, r"lstsq.*Y \[4, 2\].*as many rows.*\(5\)")
    error(
        "lstsq",
        {"X": np.ones((2, 5, 3)), "Y": np.ones((3, 5, 2))},
        outs,
        r"lstsq.*same batch dims \(dim 0: 2 vs 3\)",
    )
    error("lstsq", {"X": x, "Y": np.ones((1, 5, 2))}, outs, r"lstsq.*must have the same rank")


# --- multi_dot -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes",
    [
        [(3, 4), (4, 5)],
        [(3, 4), (4, 5), (5, 2)],
        [(2, 30), (30, 3), (3, 40), (40, 2)],
        [(4,), (4, 5), (5, 3)],
        [(3, 4), (4, 5), (5,)],
        [(4,), (4, 5), (5,)],
        [(4,), (4,)],
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_dot(shapes, dtype):
    xs = [RNG.uniform(-1, 1, s).astype(dtype) for s in shapes]
    want = np.linalg.multi_dot([x.astype(np.float64) for x in xs])
    ins = {"X": [("x%d" % i, x) for i, x in enumerate(xs)]}
    t = make("multi_dot", ins, {"Out": np.asarray(want).astype(dtype)})
    t.check_output(**tol(dtype, 10))
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_multi_dot_errors():
    def ins(*shapes):
        return {"X": [("x%d" % i, np.ones(s)) for i, s in enumerate(shapes)]}

    error("multi_dot", ins((3, 4)), {"Out": np.ones((3, 4))}, r"multi_dot.*at least 2.*got 1")
    error(
        "multi_dot",
        ins((3, 4), (5, 2)),
        {"Out": np.ones((3, 2))},
        r"multi_dot.*X\[0\] \[3, 4\] and X\[1\] \[5, 2\] cannot be multiplied \(4 vs 5\)",
    )
    error(
        "multi_dot",
        ins((3, 4), (4,), (4, 2)),
        {"Out": np.ones((3, 2))},
        r"multi_dot.*X\[1\] must be 2-D.*\[4\]",
    )
    error(
        "multi_dot",
        ins((2, 3, 4), (4, 2)),
        {"Out": np.ones((3, 2))},
        r"multi_dot.*X\[0\] must be 1-D or 2-D.*\[2, 3, 4\]",
    )


# --- conj -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES + ["int32", "int64"])
def test_conj(dtype):
    x = (RNG.uniform(-5, 5, (3, 4, 2))).astype(dtype)
    t = make("conj", {"X": x}, {"Out": np.conj(x)})
    t.check_output()
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


# --- nanmedian ------------------------------------------------------------------------------


def ref_nanmedian(x, axis, keepdim, mode):
    """numpy: nanmedian's value ('min': the lower middle) and Paddle's MedianIndex rule (the
    middle elements' positions among the reduced ones, in the reduced dims' row-major order;
    -1 for a line of NaNs)."""
    nd = x.ndim
    axes = sorted(a % nd for a in axis) if axis and nd > 1 else list(range(nd))
    kept = [d for d in range(nd) if d not in axes]
    xt = np.transpose(x, kept + axes).reshape([x.shape[d] for d in kept] + [-1])
    lines = xt.reshape(-1, xt.shape[-1]).astype(np.float64)
    avg = mode == "avg"
    out, idx = [], []
    for line in lines:
        num = np.flatnonzero(~np.isnan(line))
        if num.size == 0:
            out.append(np.nan)
            idx.append([-1, -1] if avg else [-1])
            continue
        order = num[np.argsort(line[num], kind="stable")]
        v = num.size
        r = order[v // 2]
        le = order[v // 2 - 1] if v % 2 == 0 else r
        if avg:
            out.append((line[le] + line[r]) / 2)
            idx.append([le, r])
        else:
            out.append(line[le])
            idx.append([le])
    shape = [x.shape[d] for d in kept]
    if keepdim:
        shape = [1 if d in axes else x.shape[d] for d in range(nd)]
    out = np.array(out).reshape(shape)
    idx = np.array(idx, np.int64).reshape(shape + ([2] if avg else []))
    return out, idx


@pytest.mark.parametrize(
    "shape,axis,keepdim",
    [
        ((3, 5), [1], False),
        ((3, 6), [1], True),
        ((2, 3, 4), [0, 2], True),
        ((2, 3, 4), [-1, 0], False),
        ((2, 3, 4), [], False),
        ((7,), [0], False),
    ],
)
@pytest.mark.parametrize("mode", ["avg", "min"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_nanmedian(shape, axis, keepdim, mode, dtype):
    x = RNG.permutation(np.prod(shape)).reshape(shape).astype(np.float64) / 7 - 1
    x[RNG.uniform(size=shape) < 0.3] = np.nan
    x = x.astype(dtype)
    out, idx = ref_nanmedian(x, axis, keepdim, mode)
    if mode == "avg" and not np.isnan(out).any():  # the reference's values are numpy's
        want = np.nanmedian(x.astype(np.float64), axis=tuple(axis) or None, keepdims=keepdim)
        np.testing.assert_allclose(out, want)
    attrs = {"axis": axis, "keepdim": keepdim, "mode": mode}
    t = make("nanmedian", {"X": x}, {"Out": out.astype(dtype), "MedianIndex": idx}, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64" and not np.isnan(out).any():
        t.check_grad(["X"], "Out", **GRAD)


def test_nanmedian_nan_lines_and_ints():
    """A line of NaNs: NaN and index -1 (no gradient); every element NaN likewise; integers:
    the mean of the two middle values truncated, as Paddle's integer division."""
    x = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, 3.0]])
    make(
        "nanmedian",
        {"X": x},
        {"Out": np.array([np.nan, 2.0]), "MedianIndex": np.array([[-1, -1], [0, 2]])},
        {"axis": [1]},
    ).check_output()
    make(
        "nanmedian",
        {"X": np.full((2, 2), np.nan)},
        {"Out": np.array(np.nan), "MedianIndex": np.array(-1)},
        {"mode": "min"},
    ).check_output()
    for dtype in ("int32", "int64"):
        xi = np.array([[1, 2, 3, 4], [5, 6, 8, 9]], dtype)
        make(
            "nanmedian",
            {"X": xi},
            {"Out": np.array([2, 7], dtype), "MedianIndex": np.array([[1, 2], [1, 2]])},
            {"axis": [1]},
        ).check_output()


def test_nanmedian_errors():
    x = np.ones((2, 3))
    outs = {"Out": np.ones(2), "MedianIndex": None}
    error(
        "nanmedian",
        {"X": x},
        outs,
        r"nanmedian.*mode must be 'avg' or 'min'.*'max'",
        {"axis": [1], "mode": "max"},
    )
    error("nanmedian", {"X": x}, outs, r"nanmedian.*axis", {"axis": [2]})
    error("nanmedian", {"X": np.ones((2, 0))}, outs, r"nanmedian.*no elements", {"axis": [1]})
