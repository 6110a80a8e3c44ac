"""The ops_linalg pack (dense linear algebra, batched over leading dims): determinant,
slogdeterminant, inverse, cholesky, triangular_solve, solve, cholesky_solve, svd, qr and eigh,
each against numpy.linalg; gradients by central finite differences (float64); decompositions,
which are unique only up to signs, by reconstruction, orthogonality and numpy's invariants; bad
inputs' errors."""

import numpy as np
import pytest
from op_test import make

import tide
from tide import layers

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


def run_op(op_type, inputs, outputs, attrs=None, weights=None):
    """The op's outputs ({param: array}) and, when `weights` ({output param: array}) is given,
    d sum(w * out) / d each input through its grad op: one program of its own."""
    with tide.program_guard(tide.Program(), tide.Program()):
        block = tide.default_main_program().global_block()
        ins = {
            n: layers.data(
                name=n.lower(),
                shape=list(a.shape),
                dtype=str(a.dtype),
                append_batch_size=False,
                stop_gradient=False,
            )
            for n, a in inputs.items()
        }
        dtype = str(next(iter(inputs.values())).dtype)
        outs = {n: block.create_var(name="out_" + n.lower(), dtype=dtype) for n in outputs}
        block.append_op(
            type=op_type,
            inputs={k: [v] for k, v in ins.items()},
            outputs={k: [v] for k, v in outs.items()},
            attrs=attrs or {},
        )
        feed = {n.lower(): a for n, a in inputs.items()}
        fetch = [outs[n].name for n in outputs]
        if weights:
            terms = []
            for n, w in weights.items():
                wv = layers.data(
                    name="w_" + n.lower(), shape=list(w.shape), dtype=dtype, append_batch_size=False
                )
                feed[wv.name] = w
                terms.append(layers.reduce_sum(layers.elementwise_mul(outs[n], wv)))
            loss = terms[0] if len(terms) == 1 else layers.sums(terms)
            tide.append_backward(loss, parameter_list=[n.lower() for n in inputs])
            fetch += [n.lower() + "@GRAD" for n in inputs]
        got = tide.Executor(tide.CPUPlace()).run(
            tide.default_main_program(), feed=feed, fetch_list=fetch
        )
    return dict(zip(list(outputs) + ["d" + n for n in inputs] * bool(weights), got))


def symmetric_central_diff(f, a, eps=1e-6):
    """d f / d a[i, j] along a symmetric perturbation (a[i, j] and a[j, i] together) for i >= j,
    as a lower-triangular array: what a gradient G of an op reading one triangle of a symmetric
    input must match as G[i, j] + G[j, i] (G[i, i] on the diagonal)."""
    g = np.zeros_like(a)
    for idx in np.ndindex(*a.shape):
        i, j = idx[-2:]
        if i < j:
            continue
        hi, lo = a.copy(), a.copy()
        t = idx[:-2] + (j, i)
        for m in {idx, t}:
            hi[m] += eps
            lo[m] -= eps
        g[idx] = (f(hi) - f(lo)) / (2 * eps)
    return g


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


# --- inverse ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 3, 2, 2)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_inverse(shape, dtype):
    x = well_conditioned(*shape, dtype=dtype)
    t = make("inverse", {"Input": x}, {"Output": np.linalg.inv(x.astype(np.float64))})
    t.check_output(atol=TOL[dtype], rtol=TOL[dtype])
    if dtype == "float64":
        t.check_grad(["Input"], "Output", **GRAD)


def test_inverse_errors():
    singular = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])
    error(
        "inverse",
        {"Input": singular},
        {"Output": singular},
        r"inverse.*Input.*matrix 1 of 2 is not invertible",
    )
    error(
        "inverse",
        {"Input": np.ones((2, 3))},
        {"Output": np.ones((2, 3))},
        r"inverse.*Input.*square.*\[2, 3\]",
    )


# --- cholesky -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 3, 3)])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky(shape, upper, dtype):
    a = spd(*shape, dtype=dtype)
    low = np.linalg.cholesky(a.astype(np.float64))
    want = np.swapaxes(low, -1, -2) if upper else low
    make("cholesky", {"X": a}, {"Out": want}, {"upper": upper}).check_output(
        atol=TOL[dtype], rtol=TOL[dtype]
    )


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_grad(upper):
    """Cholesky reads one triangle of a symmetric X: its (symmetric) gradient against central
    differences along symmetric perturbations of X."""
    a = spd(2, 4, 4)
    w = RNG.uniform(0.5, 1.5, a.shape)

    def f(v):
        low = np.linalg.cholesky(v)
        return np.sum(w * (np.swapaxes(low, -1, -2) if upper else low))

    got = run_op("cholesky", {"X": a}, ["Out"], {"upper": upper}, {"Out": w})["dX"]
    np.testing.assert_allclose(got, np.swapaxes(got, -1, -2), atol=1e-12)
    want = symmetric_central_diff(f, a)
    np.testing.assert_allclose(
        np.tril(got + np.swapaxes(got, -1, -2)) - np.tril(got) * np.eye(4),
        want,
        rtol=1e-6,
        atol=1e-8,
    )


def test_cholesky_errors():
    a = np.stack([spd(3, 3), -np.eye(3)])
    error("cholesky", {"X": a}, {"Out": a}, r"cholesky.*X.*matrix 1 of 2 is not positive definite")
    error("cholesky", {"X": np.ones((3, 2))}, {"Out": np.ones((3, 2))}, r"cholesky.*X.*square")


# --- triangular_solve ---------------------------------------------------------------------


def triangular_reference(x, y, upper, transpose, unitriangular):
    a = np.triu(x) if upper else np.tril(x)
    if unitriangular:
        a = a - a * np.eye(x.shape[-1]) + np.eye(x.shape[-1])
    if transpose:
        a = np.swapaxes(a, -1, -2)
    return np.linalg.solve(a.astype(np.float64), y.astype(np.float64))


@pytest.mark.parametrize(
    "shapes",
    [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1)), ((3, 3), (2, 3, 2)), ((2, 1, 3, 3), (3, 3, 2))],
)
@pytest.mark.parametrize(
    "upper,transpose,unitriangular",
    [
        (True, False, False),
        (False, False, False),
        (True, True, False),
        (False, True, True),
        (True, False, True),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_triangular_solve(shapes, upper, transpose, unitriangular, dtype):
    x = well_conditioned(*shapes[0], dtype=dtype)
    y = RNG.uniform(-1, 1, shapes[1]).astype(dtype)
    attrs = {"upper": upper, "transpose": transpose, "unitriangular": unitriangular}
    want = triangular_reference(x, y, upper, transpose, unitriangular)
    t = make("triangular_solve", {"X": x, "Y": y}, {"Out": want}, attrs)
    t.check_output(atol=TOL[dtype], rtol=TOL[dtype])
    if dtype == "float64":
        t.check_grad(["X", "Y"], "Out", **GRAD)


def test_triangular_solve_errors():
    x, y = well_conditioned(3, 3), np.ones((3, 2))
    error(
        "triangular_solve",
        {"X": np.ones((3, 2)), "Y": y},
        {"Out": y},
        r"triangular_solve.*X.*square.*\[3, 2\]",
    )
    error(
        "triangular_solve",
        {"X": x, "Y": np.ones((4, 2))},
        {"Out": y},
        r"triangular_solve.*Y \[4, 2\].*as many rows as X \[3, 3\] \(3\).*4",
    )
    error("triangular_solve", {"X": x, "Y": np.ones(3)}, {"Out": y}, r"triangular_solve.*Y.*\[3\]")
    error(
        "triangular_solve",
        {"X": well_conditioned(2, 3, 3), "Y": np.ones((4, 3, 2))},
        {"Out": y},
        r"triangular_solve.*batch dims of X \[2, 3, 3\] and Y \[4, 3, 2\] do not broadcast",
    )


# --- solve --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes",
    [
        ((3, 3), (3, 2)),
        ((2, 3, 3), (2, 3, 2)),
        ((2, 3, 3), (4, 1, 3, 2)),
        ((2, 3, 3), (3,)),
        ((2, 3, 3), (2, 3)),
        ((1, 3, 3), (2, 3, 1)),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve(shapes, dtype):
    x = well_conditioned(*shapes[0], dtype=dtype)
    y = RNG.uniform(-1, 1, shapes[1]).astype(dtype)
    vector = y.ndim == 1 or y.shape == x.shape[:-1]
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    want = np.linalg.solve(x64, y64[..., None])[..., 0] if vector else np.linalg.solve(x64, y64)
    t = make("solve", {"X": x, "Y": y}, {"Out": want})
    t.check_output(atol=TOL[dtype], rtol=TOL[dtype])
    if dtype == "float64":
        t.check_grad(["X", "Y"], "Out", **GRAD)


def test_solve_errors():
    singular = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])
    y = np.ones((2, 2, 1))
    error(
        "solve", {"X": singular, "Y": y}, {"Out": y}, r"solve.*X.*matrix 1 of 2 is not invertible"
    )
    error(
        "solve",
        {"X": np.eye(3), "Y": np.ones((2, 1))},
        {"Out": y},
        r"solve.*Y \[2, 1\].*as many rows as X \[3, 3\]",
    )
    error(
        "solve",
        {"X": np.ones((2, 3)), "Y": np.ones((2, 1))},
        {"Out": y},
        r"solve.*X.*square.*\[2, 3\]",
    )


# --- cholesky_solve -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes", [((3, 2), (3, 3)), ((2, 4, 1), (2, 4, 4)), ((2, 3, 2), (3, 3)), ((3, 2), (2, 3, 3))]
)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_solve(shapes, upper, dtype):
    b = RNG.uniform(-1, 1, shapes[0]).astype(dtype)
    low = np.linalg.cholesky(spd(*shapes[1]))
    f = np.swapaxes(low, -1, -2) if upper else low
    # Only the factor's triangle is read: noise in the other one changes nothing.
    noise = RNG.uniform(-1, 1, f.shape) * (
        np.tril(np.ones(f.shape[-2:]), -1) if upper else np.triu(np.ones(f.shape[-2:]), 1)
    )
    f = (f + noise).astype(dtype)
    a = low @ np.swapaxes(low, -1, -2)
    want = np.linalg.solve(a, b.astype(np.float64))
    t = make("cholesky_solve", {"X": b, "Y": f}, {"Out": want}, {"upper": upper})
    t.check_output(atol=TOL[dtype] * 10, rtol=TOL[dtype] * 10)
    if dtype == "float64":
        t.check_grad(["X", "Y"], "Out", **GRAD)


def test_cholesky_solve_errors():
    error(
        "cholesky_solve",
        {"X": np.ones((3, 2)), "Y": np.ones((3, 2))},
        {"Out": np.ones((3, 2))},
        r"cholesky_solve.*Y.*square.*\[3, 2\]",
    )
    error(
        "cholesky_solve",
        {"X": np.ones((4, 2)), "Y": np.eye(3)},
        {"Out": np.ones((3, 2))},
        r"cholesky_solve.*X \[4, 2\].*as many rows as Y \[3, 3\]",
    )


# --- svd ----------------------------------------------------------------------------------


def orthonormal_columns(a, tol):
    k = a.shape[-1]
    np.testing.assert_allclose(
        np.swapaxes(a, -1, -2) @ a, np.broadcast_to(np.eye(k), a.shape[:-2] + (k, k)), atol=tol
    )


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4), (2, 3, 5, 2)])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd(shape, full, dtype):
    """Singular vectors are unique up to sign: S against numpy, U diag(S) VH == X, U and VH
    orthonormal."""
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    m, n = shape[-2:]
    k = min(m, n)
    got = run_op("svd", {"X": x}, ["U", "S", "VH"], {"full_matrices": full})
    u, s, vh = got["U"], got["S"], got["VH"]
    assert u.shape == shape[:-2] + ((m, m) if full else (m, k)) and u.dtype == dtype
    assert s.shape == shape[:-2] + (k,) and vh.shape == shape[:-2] + ((n, n) if full else (k, n))
    tol = TOL[dtype] * 10
    want_s = np.linalg.svd(x.astype(np.float64), compute_uv=False)
    np.testing.assert_allclose(s, want_s, atol=tol)
    # S alone through OpTest too (U and VH only declared): the conformance kit's check.
    outs = {"U": None, "S": want_s.astype(dtype), "VH": None}
    make("svd", {"X": x}, outs, {"full_matrices": full}).check_output(atol=tol, rtol=tol)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], x, atol=tol)
    orthonormal_columns(u, tol)
    orthonormal_columns(np.swapaxes(vh, -1, -2), tol)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
def test_svd_grad(shape):
    x = RNG.uniform(-1, 1, shape)
    out = run_op("svd", {"X": x}, ["U", "S", "VH"])
    t = make("svd", {"X": x}, {"U": out["U"], "S": out["S"], "VH": out["VH"]})
    t.check_grad(["X"], "S", **GRAD)
    t.check_grad(["X"], ["U", "S", "VH"], max_relative_error=1e-4, numeric_grad_delta=1e-6)


def test_svd_full_matrices_grad():
    """With full_matrices only U's first K columns (VH's rows) carry gradient (Paddle's rule):
    square matrices, where every column is one of them, and S of a wide one."""
    x = RNG.uniform(-1, 1, (2, 3, 3))
    out = run_op("svd", {"X": x}, ["U", "S", "VH"], {"full_matrices": True})
    t = make("svd", {"X": x}, out, {"full_matrices": True})
    t.check_grad(["X"], ["U", "S", "VH"], max_relative_error=1e-4, numeric_grad_delta=1e-6)
    x = RNG.uniform(-1, 1, (3, 5))
    out = run_op("svd", {"X": x}, ["U", "S", "VH"], {"full_matrices": True})
    make("svd", {"X": x}, out, {"full_matrices": True}).check_grad(["X"], "S", **GRAD)


def test_svd_errors():
    error(
        "svd",
        {"X": np.ones(3)},
        {"U": np.ones(3), "S": np.ones(3), "VH": np.ones(3)},
        r"svd.*X.*\[3\]",
    )


# --- qr -----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (3, 3), (2, 3, 5, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr(shape, mode, dtype):
    """R as numpy's (LAPACK's Householder signs, Paddle's too), Q R == X, Q orthonormal."""
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    m, n = shape[-2:]
    got = run_op("qr", {"X": x}, ["Q", "R"], {"mode": mode})
    q, r = got["Q"], got["R"]
    tol = TOL[dtype] * 10
    want_r = np.linalg.qr(
        x.astype(np.float64), mode="complete" if mode == "complete" else "reduced"
    )[1]
    assert r.dtype == dtype
    np.testing.assert_allclose(r, want_r, atol=tol)
    outs = {"Q": None, "R": want_r.astype(dtype)}  # R through OpTest too (the kit's check)
    make("qr", {"X": x}, outs, {"mode": mode}).check_output(atol=tol, rtol=tol)
    if mode == "r":
        assert q.shape == (0,)
        return
    assert q.shape == shape[:-2] + (m, r.shape[-2])
    np.testing.assert_allclose(q @ r, x, atol=tol)
    orthonormal_columns(q, tol)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 3, 2)])
def test_qr_grad(shape):
    x = RNG.uniform(-1, 1, shape)
    out = run_op("qr", {"X": x}, ["Q", "R"])
    t = make("qr", {"X": x}, out)
    t.check_grad(["X"], ["Q", "R"], **GRAD)
    t.check_grad(["X"], "R", **GRAD)
    t.check_grad(["X"], "Q", **GRAD)


def test_qr_complete_grad_when_wide():
    x = RNG.uniform(-1, 1, (3, 4))
    out = run_op("qr", {"X": x}, ["Q", "R"], {"mode": "complete"})
    make("qr", {"X": x}, out, {"mode": "complete"}).check_grad(["X"], ["Q", "R"], **GRAD)


def test_qr_errors():
    x = RNG.uniform(-1, 1, (4, 3))
    outs = {"Q": x, "R": x}
    error(
        "qr",
        {"X": x},
        outs,
        r"qr.*mode must be 'reduced', 'complete' or 'r'.*'full'",
        {"mode": "full"},
    )
    error("qr", {"X": np.ones(3)}, outs, r"qr.*X.*\[3\]")
    w = {"R": np.ones((3, 3))}
    with pytest.raises(tide.TideError, match=r"qr.*no gradient with mode 'r'"):
        run_op("qr", {"X": x}, ["Q", "R"], {"mode": "r"}, w)
    with pytest.raises(tide.TideError, match=r"qr.*no gradient with mode 'complete' when M > N"):
        run_op("qr", {"X": x}, ["Q", "R"], {"mode": "complete"}, {"R": np.ones((4, 3))})


# --- eigh ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 5, 5)])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(shape, uplo, dtype):
    """Eigenvectors are unique up to sign: the eigenvalues against numpy's (ascending), A V == V
    diag(w), V orthonormal; only the UPLO triangle of X is read."""
    a = spd(*shape) - shape[-1] * 1.5 * np.eye(shape[-1])  # eigenvalues of both signs
    tri = np.tril if uplo == "L" else np.triu
    other = np.triu if uplo == "L" else np.tril
    k = 1 if uplo == "U" else -1
    x = (tri(a) + other(RNG.uniform(-9, 9, shape), -k)).astype(dtype)  # noise off the triangle
    got = run_op("eigh", {"X": x}, ["Eigenvalues", "Eigenvectors"], {"UPLO": uplo})
    w, v = got["Eigenvalues"], got["Eigenvectors"]
    tol = TOL[dtype] * 50
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), atol=tol)
    outs = {"Eigenvalues": np.linalg.eigvalsh(a).astype(dtype), "Eigenvectors": None}
    make("eigh", {"X": x}, outs, {"UPLO": uplo}).check_output(atol=tol, rtol=tol)
    assert np.all(np.diff(w, axis=-1) > 0)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol)
    orthonormal_columns(v, tol)


def aligned_columns(v, ref):
    """v with each column's sign flipped to point as ref's does."""
    return v * np.sign(np.sum(v * ref, axis=-2, keepdims=True))


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_grad(uplo):
    """d sum(w1 * eigenvalues + w2 * eigenvectors): symmetric, and against central differences
    of numpy's eigh along symmetric perturbations (eigenvector signs aligned with Tide's)."""
    a = spd(2, 4, 4)
    w1, w2 = RNG.uniform(0.5, 1.5, (2, 4)), RNG.uniform(0.5, 1.5, (2, 4, 4))
    got = run_op(
        "eigh",
        {"X": a},
        ["Eigenvalues", "Eigenvectors"],
        {"UPLO": uplo},
        {"Eigenvalues": w1, "Eigenvectors": w2},
    )
    v0 = got["Eigenvectors"]

    def f(x):
        w, v = np.linalg.eigh(x, UPLO=uplo)
        return np.sum(w1 * w) + np.sum(w2 * aligned_columns(v, v0))

    g = got["dX"]
    np.testing.assert_allclose(g, np.swapaxes(g, -1, -2), atol=1e-10)
    want = symmetric_central_diff(f, a)
    np.testing.assert_allclose(
        np.tril(g + np.swapaxes(g, -1, -2)) - np.tril(g) * np.eye(4), want, rtol=1e-5, atol=1e-7
    )


def test_eigh_errors():
    outs = {"Eigenvalues": np.ones(3), "Eigenvectors": np.eye(3)}
    error("eigh", {"X": np.eye(3)}, outs, r"eigh.*UPLO must be 'L' or 'U'.*'X'", {"UPLO": "X"})
    error("eigh", {"X": np.ones((3, 2))}, outs, r"eigh.*X.*square.*\[3, 2\]")


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigvalsh(uplo, dtype):
    """eigvalsh: eigh under Paddle's other name (with is_test); its grad V diag(dW) V^T against
    central differences along symmetric perturbations."""
    a = spd(2, 4, 4)
    attrs = {"UPLO": uplo, "is_test": False}
    outs = {"Eigenvalues": np.linalg.eigvalsh(a).astype(dtype), "Eigenvectors": None}
    make("eigvalsh", {"X": a.astype(dtype)}, outs, attrs).check_output(atol=TOL[dtype] * 50)
    if dtype == "float32":
        return
    w1 = RNG.uniform(0.5, 1.5, (2, 4))
    got = run_op("eigvalsh", {"X": a}, ["Eigenvalues", "Eigenvectors"], attrs, {"Eigenvalues": w1})
    g = got["dX"]
    want = symmetric_central_diff(lambda x: np.sum(w1 * np.linalg.eigvalsh(x, UPLO=uplo)), a)
    np.testing.assert_allclose(
        np.tril(g + np.swapaxes(g, -1, -2)) - np.tril(g) * np.eye(4), want, rtol=1e-5, atol=1e-7
    )
