"""Paddle's einsum, frobenius_norm, matrix_power, baddbmm and renorm (plugins/ops_math): outputs
against numpy float64 references (np.einsum, np.linalg.norm, np.linalg.matrix_power), gradients
by central differences, and the errors of bad inputs."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(31)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]
TOL = {"float32": 1e-5, "float64": 1e-12}


def uniform(shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape)


# --- einsum ----------------------------------------------------------------------------------

# (equation, operand shapes): attention, batched matmul, reductions, outer products, diagonals,
# ellipsis broadcasting, implicit outputs, labels summed away in one operand.
EINSUM_CASES = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bcij,bcjk->bcik", [(2, 3, 4, 5), (2, 3, 5, 2)]),
    ("bcij->bj", [(2, 3, 4, 5)]),
    ("i,j->ij", [(4,), (5,)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,i->i", [(5,), (5,)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (5, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 4, 5), (3, 5, 2)]),
    ("b...,b...->b...", [(2, 3, 4), (2, 1, 4)]),
    ("...i,...i", [(3, 4), (2, 3, 4)]),
    ("i...->...", [(3, 2, 4)]),
    ("abc,cd->ad", [(2, 3, 4), (4, 5)]),
    ("abc,bd->dc", [(2, 3, 4), (3, 5)]),
    ("ab,ab->", [(3, 4), (3, 4)]),
    ("xab,xba->x", [(2, 3, 4), (2, 4, 3)]),
    ("ij,kj->ik", [(1, 4), (3, 4)]),
]


def einsum_inputs(shapes, dtype):
    return [("op%d" % i, uniform(s).astype(dtype)) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_einsum(eq, shapes, dtype):
    ops = einsum_inputs(shapes, dtype)
    want = np.einsum(eq, *[a.astype("float64") for _, a in ops]).astype(dtype)
    t = make("einsum", {"Operands": ops}, {"Out": want}, {"equation": eq})
    t.check_output(atol=TOL[dtype], rtol=TOL[dtype])
    if dtype == "float64":
        t.check_grad([n for n, _ in ops], "Out", **GRAD)


def test_einsum_broadcast_label_of_size_one():
    # Paddle's Python turns '...' into letters, so a letter may meet sizes 1 and n.
    a, b = uniform((2, 1, 4, 5)), uniform((3, 5, 2))
    ops = [("a", a), ("b", b[None])]
    t = make("einsum", {"Operands": ops}, {"Out": a @ b}, {"equation": "xyij,xyjk->xyik"})
    t.check_output(atol=1e-12, rtol=1e-12)
    t.check_grad(["a", "b"], "Out", **GRAD)


def einsum_error(eq, shapes, match):
    ops = einsum_inputs(shapes, "float32")
    out = np.zeros((1,), "float32")
    with pytest.raises(tide.TideError, match=match):
        make("einsum", {"Operands": ops}, {"Out": out}, {"equation": eq}).check_output()


def test_einsum_errors():
    einsum_error("ij,jk->ik", [(3, 4)], r"einsum.*2 operand term\(s\) but Operands holds 1")
    einsum_error(
        "ijk->i", [(3, 4)], r"einsum.*term 'ijk'.*names 3 dims but Operands\[0\] is \[3, 4\]"
    )
    einsum_error(
        "ij,jk->ik", [(3, 4), (5, 2)], r"einsum.*label 'j' has size 4 in Operands\[0\] but 5"
    )
    einsum_error("ij->ik", [(3, 4)], r"einsum.*output label 'k'.*is in no operand")
    einsum_error("ii->i", [(3, 4)], r"einsum.*label 'i' repeats in term 'ii' with sizes 3 and 4")
    einsum_error("i,i,i->i", [(3,), (3,), (3,)], r"einsum.*1 or 2 tensors.*got 3")
    einsum_error("...i->i", [(2, 3)], r"einsum.*'...' in its operands but not in its output")
    einsum_error("i2->i", [(2, 3)], r"einsum.*has '2' in 'i2'; labels are letters")
    einsum_error("ij->ii", [(2, 3)], r"einsum.*output label 'i'.*repeats")


# --- baddbmm ---------------------------------------------------------------------------------


@pytest.mark.parametrize("in_shape", [(2, 3, 5), (2, 5), (2, 1), (1, 3, 5), (2, 1, 5), (1, 1, 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_baddbmm(in_shape, dtype):
    x, y = uniform((2, 3, 4)).astype(dtype), uniform((2, 4, 5)).astype(dtype)
    inp = uniform(in_shape).astype(dtype)
    alpha, beta = 1.5, -0.5
    wide = inp.astype("float64")
    if wide.ndim == 2:  # [B, N]: read as [B, 1, N]
        wide = wide[:, None, :]
    want = beta * wide + alpha * (x.astype("float64") @ y.astype("float64"))
    t = make(
        "baddbmm",
        {"Input": inp, "X": x, "Y": y},
        {"Out": want.astype(dtype)},
        {"Alpha": alpha, "Beta": beta},
    )
    t.check_output(atol=TOL[dtype], rtol=TOL[dtype])
    if dtype == "float64":
        t.check_grad(["Input", "X", "Y"], "Out", **GRAD)


def test_baddbmm_defaults():
    inp, x, y = uniform((2, 3, 5)), uniform((2, 3, 4)), uniform((2, 4, 5))
    make("baddbmm", {"Input": inp, "X": x, "Y": y}, {"Out": inp + x @ y}).check_output()


@pytest.mark.parametrize(
    "shapes,match",
    [
        (((2, 3, 5), (2, 3, 4), (2, 5, 5)), r"baddbmm.*do not multiply"),
        (((2, 3, 5), (2, 3, 4), (3, 4, 5)), r"baddbmm.*one batch size"),
        (((2, 3, 5), (3, 4), (4, 5)), r"baddbmm.*X and Y must be 3-D"),
        (((2, 2, 5), (2, 3, 4), (2, 4, 5)), r"baddbmm.*Input \[2, 2, 5\] does not broadcast"),
        (((5,), (2, 3, 4), (2, 4, 5)), r"baddbmm.*Input must be 3-D \[B, M, N\] or 2-D"),
    ],
)
def test_baddbmm_errors(shapes, match):
    inp, x, y = (uniform(s).astype("float32") for s in shapes)
    with pytest.raises(tide.TideError, match=match):
        make("baddbmm", {"Input": inp, "X": x, "Y": y}, {"Out": inp}).check_output()


# --- frobenius_norm --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dim,keep_dim,reduce_all",
    [
        ([1, 2], False, False),
        ([-1, -2], True, False),
        ([0], False, False),
        ([0, 1, 2], False, False),
        ([1], False, True),
        ([], True, False),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_frobenius_norm(dim, keep_dim, reduce_all, dtype):
    x = uniform((2, 3, 4)).astype(dtype)
    axes = None if reduce_all or not dim else tuple(dim)
    want = np.sqrt(np.sum(x.astype("float64") ** 2, axis=axes, keepdims=keep_dim))
    if want.ndim == 0:
        want = want.reshape(1)  # Fluid's reduce ops give [1] for a full reduction
    attrs = {"dim": dim, "keep_dim": keep_dim, "reduce_all": reduce_all}
    t = make("frobenius_norm", {"X": x}, {"Out": want.astype(dtype)}, attrs)
    t.check_output(atol=TOL[dtype], rtol=TOL[dtype])
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_frobenius_norm_matches_linalg_norm():
    x = uniform((3, 4, 5))
    want = np.linalg.norm(x, "fro", axis=(0, 2))
    make("frobenius_norm", {"X": x}, {"Out": want}, {"dim": [0, 2]}).check_output(atol=1e-12)


def test_frobenius_norm_errors():
    x = uniform((2, 3)).astype("float32")
    with pytest.raises(
        tide.TideError, match=r"frobenius_norm.*dim 2 is out of range for X \[2, 3\]"
    ):
        make("frobenius_norm", {"X": x}, {"Out": x}, {"dim": [2]}).check_output()


# --- matrix_power ----------------------------------------------------------------------------


def well_conditioned(shape):
    return uniform(shape, -0.5, 0.5) + 2.0 * np.eye(shape[-1])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2, -3])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 4, 4)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_power(n, shape, dtype):
    x = well_conditioned(shape).astype(dtype)
    want = np.linalg.matrix_power(x.astype("float64"), n).astype(dtype)
    t = make("matrix_power", {"X": x}, {"Out": want}, {"n": n})
    t.check_output(
        atol=1e-4 if dtype == "float32" else 1e-11, rtol=1e-4 if dtype == "float32" else 1e-11
    )
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_matrix_power_errors():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], "float32")
    with pytest.raises(tide.TideError, match=r"matrix_power.*matrix 0 of X is singular.*n = -1"):
        make("matrix_power", {"X": singular}, {"Out": singular}, {"n": -1}).check_output()
    x = uniform((2, 3)).astype("float32")
    with pytest.raises(tide.TideError, match=r"matrix_power.*must be square, got X \[2, 3\]"):
        make("matrix_power", {"X": x}, {"Out": x}, {"n": 2}).check_output()
    v = uniform((3,)).astype("float32")
    with pytest.raises(tide.TideError, match=r"matrix_power.*at least 2-D\), got \[3\]"):
        make("matrix_power", {"X": v}, {"Out": v}, {"n": 2}).check_output()


# --- renorm ----------------------------------------------------------------------------------


def renorm_ref(x, p, axis, max_norm):
    others = tuple(d for d in range(x.ndim) if d != axis % x.ndim)
    norm = np.sum(np.abs(x) ** p, axis=others, keepdims=True) ** (1.0 / p)
    return np.where(norm > max_norm, x * (max_norm / norm), x)


@pytest.mark.parametrize(
    "p,axis,max_norm", [(2.0, 1, 1.0), (1.0, 0, 2.0), (3.0, -1, 0.75), (2.0, 2, 100.0)]
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_renorm(p, axis, max_norm, dtype):
    x = uniform((2, 3, 4)).astype(dtype)
    want = renorm_ref(x.astype("float64"), p, axis, max_norm).astype(dtype)
    t = make("renorm", {"X": x}, {"Out": want}, {"p": p, "axis": axis, "max_norm": max_norm})
    t.check_output(atol=TOL[dtype], rtol=TOL[dtype])
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_renorm_errors():
    x = uniform((2, 3)).astype("float32")
    with pytest.raises(tide.TideError, match=r"renorm.*axis"):
        make("renorm", {"X": x}, {"Out": x}, {"p": 2.0, "axis": 2, "max_norm": 1.0}).check_output()
    with pytest.raises(tide.TideError, match=r"renorm.*p must be > 0, got -1"):
        make("renorm", {"X": x}, {"Out": x}, {"p": -1.0, "axis": 0, "max_norm": 1.0}).check_output()


def test_unsqueeze2_without_axes_keeps_x():
    # paddle.einsum("...ij,jk->...ik", y, w) saves an unsqueeze of y with no axes ('...' needs
    # no dims added): Paddle 3.x leaves y as it is.
    x = uniform((2, 3)).astype("float32")
    make("unsqueeze2", {"X": x}, {"Out": x, "XShape": None}, {"axes": []}).check_output(atol=0)
