"""Gradients of ops_math's ops for complex inputs: elementwise_add / sub / mul / div (broadcast
both ways and Fluid's `axis`), abs, exp, angle, conj, scale, mean, reduce_sum / reduce_mean
(reduce_sum to a real out_dtype too), sum, assign, matmul_v2 (transposes, broadcast batches,
1-D operands), einsum and cast between real and complex types. The convention is Paddle's and
PyTorch's: z@GRAD = dL/dRe(z) + i dL/dIm(z) for a real loss L. Each op's output against numpy,
then its gradient against central finite differences of the real and imaginary parts
(OpTest.check_grad), complex128 with a tight tolerance and complex64 with a loose one; the grads
at the kinks (abs and angle at 0) and their formulas run on the grad ops themselves; a chain of
two-operand einsums (Paddle's Python splits a three-operand einsum so), and a real loss computed
through complex values from real parameters, against finite differences of the whole program;
the errors of bad input to the grad kernels."""

import itertools

import numpy as np
import pytest
from op_test import make

import tide

CDTYPES = ["complex64", "complex128"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}
# (max_relative_error, numeric_grad_delta): complex64's loss is summed in float32.
GRAD_TOL = {"complex64": (0.02, 0.01), "complex128": (1e-6, 1e-5)}
OUT_TOL = {"complex64": {"atol": 1e-5, "rtol": 1e-5}, "complex128": {"atol": 1e-12, "rtol": 1e-12}}
CODES = {"float32": 5, "float64": 6, "complex64": 23, "complex128": 24}
DOUT, DX = "Out@GRAD", "X@GRAD"


COMPLEX_OF = {v: k for k, v in REAL_OF.items()}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def crand(rng, shape, dtype, lo=0.0):
    """Random complex values; with lo > 0, of modulus in [lo, 2] (a divisor, angle's input)."""
    if not lo:
        return (rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(dtype)
    r = rng.uniform(lo, 2, shape)
    return (r * np.exp(1j * rng.uniform(-np.pi, np.pi, shape))).astype(dtype)


def check(op, ins, outs, attrs, dtype, grads, loss_outs=("Out",), no_grad_set=None):
    """The op's outputs against numpy, then the gradients of `grads` against finite
    differences."""
    t = make(op, ins, outs, attrs)
    t.check_output(**OUT_TOL[dtype])
    t.check_grad(list(grads), list(loss_outs), no_grad_set=no_grad_set, **grad_args(dtype))


# --- element-wise arithmetic ------------------------------------------------------------------

ARITH = {
    "elementwise_add": np.add,
    "elementwise_sub": np.subtract,
    "elementwise_mul": np.multiply,
    "elementwise_div": np.divide,
}
# (X's dims, Y's dims, axis, Y's dims as broadcast against X): each of the grad kernel's paths.
BROADCASTS = [
    ((2, 3), (2, 3), -1, None),  # same dims
    ((2, 3, 2), (2,), -1, None),  # Y over X's trailing dims (a bias)
    ((2, 3, 2), (3,), 1, (1, 3, 1)),  # Fluid's axis: Y over X's middle dims
    ((2, 3, 2), (1, 3, 1), -1, None),  # a dim of 1 inside Y
    ((3, 1), (1, 2), -1, None),  # numpy: both repeat
    ((2,), (2, 2, 2), -1, None),  # Y of higher rank
    ((2, 2), (), -1, None),  # 0-D Y
]


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", sorted(ARITH))
@pytest.mark.parametrize("xs,ys,axis,y_as", BROADCASTS)
def test_elementwise_arithmetic(dtype, op, xs, ys, axis, y_as, rng):
    x = crand(rng, xs, dtype)
    y = crand(rng, ys, dtype, lo=0.5)
    want = ARITH[op](x, y if y_as is None else y.reshape(y_as)).astype(dtype)
    check(op, {"X": x, "Y": y}, {"Out": want}, {"axis": axis}, dtype, ["X", "Y"])


@pytest.mark.parametrize("dtype", CDTYPES)
def test_elementwise_grads_are_the_conjugate_rules(dtype, rng):
    """On the grad ops: mul's dX = dOut conj(Y), dY = dOut conj(X); div's dX = dOut / conj(Y),
    dY = -dOut conj(Out / Y); add / sub's dOut and -dOut (summed over Y's broadcast dim)."""
    x, y, g = crand(rng, (2, 3), dtype), crand(rng, (3,), dtype, lo=0.5), crand(rng, (2, 3), dtype)
    out = x / y
    tol = OUT_TOL[dtype]
    grad_ins = {"X": x, "Y": y, DOUT: g}
    cases = [
        ("elementwise_mul_grad", grad_ins, g * np.conj(y), (g * np.conj(x)).sum(0)),
        ("elementwise_div_grad", dict(grad_ins, Out=out), g / np.conj(y),
         (-g * np.conj(out / y)).sum(0)),
        ("elementwise_add_grad", grad_ins, g, g.sum(0)),
        ("elementwise_sub_grad", grad_ins, g, -g.sum(0)),
    ]  # fmt: skip
    for op, ins, dx, dy in cases:
        outs = {DX: dx.astype(dtype), "Y@GRAD": dy.astype(dtype)}
        make(op, ins, outs, {"axis": -1}).check_output(**tol)


# --- abs, exp, angle, conj ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
def test_abs_exp_angle_conj(dtype, rng):
    rdt = REAL_OF[dtype]
    x = crand(rng, (2, 3), dtype, lo=0.5)
    check("abs", {"X": x}, {"Out": np.abs(x).astype(rdt)}, {}, dtype, ["X"])
    check("exp", {"X": x}, {"Out": np.exp(x)}, {}, dtype, ["X"])
    # angle jumps by 2 pi across the negative real axis: no element near it
    x = np.where(np.abs(np.angle(x)) > 2.8, -x, x).astype(dtype)
    check("angle", {"X": x}, {"Out": np.angle(x).astype(rdt)}, {}, dtype, ["X"])
    check("conj", {"X": x}, {"Out": np.conj(x)}, {}, dtype, ["X"])


@pytest.mark.parametrize("dtype", CDTYPES)
def test_abs_at_zero_has_gradient_zero(dtype, rng):
    """|z| has no derivative at 0; its grad is 0 there (Paddle's and PyTorch's), which the
    central differences give too (|d| - |-d| = 0)."""
    x = crand(rng, (2, 3), dtype, lo=0.5)
    x[0, 1] = 0
    check("abs", {"X": x}, {"Out": np.abs(x).astype(REAL_OF[dtype])}, {}, dtype, ["X"])


@pytest.mark.parametrize("dtype", CDTYPES)
def test_abs_and_angle_grads_on_the_grad_ops(dtype, rng):
    """abs_grad: dOut X / |X|; angle_grad: dOut (-y + ix) / |X|^2; both 0 at X = 0 (where
    angle's differences jump from 0 to pi); large and tiny X stay finite."""
    rdt = REAL_OF[dtype]
    x = crand(rng, (6,), dtype, lo=0.5)
    x[0] = 0
    x[1] = 3e30 - 4e30j if dtype == "complex64" else 3e300 - 4e300j
    x[2] = 3e-30 + 4e-30j if dtype == "complex64" else 3e-300 + 4e-300j
    g = rng.uniform(0.5, 1.5, 6).astype(rdt)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        unit = np.where(x == 0, 0, x / np.abs(x))
        rot = np.where(x == 0, 0, 1j / np.conj(x.astype("complex128")))
    tol = {"atol": 0, "rtol": 1e-5 if dtype == "complex64" else 1e-12}
    make("abs_grad", {"X": x, DOUT: g}, {DX: (g * unit).astype(dtype)}).check_output(**tol)
    make("angle_grad", {"X": x, DOUT: g}, {DX: (g * rot).astype(dtype)}).check_output(**tol)


# --- scale, assign, mean, sum, reductions ----------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("after", [True, False])
def test_scale_and_assign(dtype, after, rng):
    x = crand(rng, (2, 3), dtype)
    attrs = {"scale": 2.5, "bias": -1.5, "bias_after_scale": after}
    want = x * 2.5 - 1.5 if after else (x - 1.5) * 2.5
    check("scale", {"X": x}, {"Out": want.astype(dtype)}, attrs, dtype, ["X"])
    # Paddle 3's factor from a float32 tensor (no gradient to it here)
    ins = {"X": x, "ScaleTensor": np.array([0.5], "float32")}
    check("scale", ins, {"Out": (x * 0.5).astype(dtype)}, {"scale": 9.0}, dtype, ["X"],
          no_grad_set={"scaletensor_in"})  # fmt: skip
    check("assign", {"X": x}, {"Out": x}, {}, dtype, ["X"])


@pytest.mark.parametrize("dtype", CDTYPES)
def test_mean_and_sum(dtype, rng):
    x, y = crand(rng, (2, 3), dtype), crand(rng, (2, 3), dtype)
    check("mean", {"X": x}, {"Out": np.array([x.mean()], dtype)}, {}, dtype, ["X"])
    ins = {"X": [("a", x), ("b", y)]}
    check("sum", ins, {"Out": (x + y).astype(dtype)}, {}, dtype, ["X"])


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_mean"])
@pytest.mark.parametrize(
    "dims,keep,all_",
    [([1], False, False), ([0, 2], True, False), ([-1], False, False), ([0], False, True)],
)
def test_reduce_sum_and_mean(dtype, op, dims, keep, all_, rng):
    x = crand(rng, (2, 3, 2), dtype)
    fn = np.sum if op == "reduce_sum" else np.mean
    want = fn(x, axis=None if all_ else tuple(dims), keepdims=keep).astype(dtype)
    if all_:
        want = want.reshape(1)
    attrs = {"dim": dims, "keep_dim": keep, "reduce_all": all_}
    check(op, {"X": x}, {"Out": want}, attrs, dtype, ["X"])


@pytest.mark.parametrize("dtype", CDTYPES)
def test_reduce_sum_to_the_real_type_takes_the_real_parts_gradient(dtype, rng):
    """Paddle's c.sum(dtype=float) sums the real parts: X@GRAD = Out@GRAD + 0i."""
    x = crand(rng, (2, 3), dtype)
    rdt = REAL_OF[dtype]
    attrs = {"dim": [1], "out_dtype": CODES[rdt]}
    check("reduce_sum", {"X": x}, {"Out": x.real.sum(1).astype(rdt)}, attrs, dtype, ["X"])
    g = rng.uniform(0.5, 1.5, 2).astype(rdt)
    dx = np.repeat(g[:, None], 3, 1).astype(dtype)
    grad_ins = {"X": x, "Out": x.real.sum(1).astype(rdt), DOUT: g}
    make("reduce_sum_grad", grad_ins, {DX: dx}, attrs).check_output(atol=0, rtol=0)


# --- matmul_v2, einsum ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize(
    "xs,ys,tx,ty",
    [
        ((2, 3), (3, 2), False, False),
        ((3, 2), (3, 2), True, False),
        ((2, 3), (2, 3), False, True),
        ((3, 2), (2, 3), True, True),
        ((2, 1, 2, 3), (2, 3, 2), False, False),  # batch dims broadcast both ways
        ((2, 3, 2), (2, 3), True, True),  # a matrix Y under a batch of X
        ((3,), (3,), False, False),  # vector . vector: [1]
        ((3,), (2, 3, 2), False, False),  # a 1-D X: a row
        ((2, 3), (3,), False, False),  # a 1-D Y: a column
        ((3,), (2, 3), True, True),  # transposes of a vector are ignored
    ],
)
def test_matmul_v2(dtype, xs, ys, tx, ty, rng):
    x, y = crand(rng, xs, dtype), crand(rng, ys, dtype)
    a = np.swapaxes(x, -1, -2) if tx and x.ndim > 1 else x
    b = np.swapaxes(y, -1, -2) if ty and y.ndim > 1 else y
    want = np.matmul(a, b).astype(dtype)
    want = want.reshape(1) if want.ndim == 0 else want
    attrs = {"trans_x": tx, "trans_y": ty}
    check("matmul_v2", {"X": x, "Y": y}, {"Out": want}, attrs, dtype, ["X", "Y"])


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 2)]),
        ("ij,kj->ki", [(2, 3), (2, 3)]),  # B transposed, output permuted
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),  # batch
        ("bixy,ioxy->boxy", [(2, 2, 2, 2), (2, 3, 2, 2)]),  # the FNO spectral layer
        ("ij,j->i", [(2, 3), (3,)]),
        ("iij,jk->ik", [(2, 2, 3), (3, 2)]),  # a diagonal
        ("ij,kl->", [(2, 2), (2, 3)]),  # labels summed away in each
        ("...i,...i->...", [(2, 3), (1, 3)]),  # broadcast
        ("ii->i", [(3, 3)]),
        ("bij->bj", [(2, 3, 2)]),
    ],
)
def test_einsum(dtype, eq, shapes, rng):
    ops = [crand(rng, s, dtype) for s in shapes]
    want = np.asarray(np.einsum(eq, *ops)).astype(dtype)
    ins = {"Operands": [("op%d" % i, a) for i, a in enumerate(ops)]}
    check("einsum", ins, {"Out": want}, {"equation": eq}, dtype, ["Operands"])


# --- cast -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "src,to",
    [
        ("float32", "complex64"),
        ("float64", "complex128"),
        ("float64", "complex64"),
        ("complex64", "float32"),
        ("complex128", "float64"),
        ("complex128", "float32"),
        ("complex64", "complex128"),
        ("complex128", "complex64"),
    ],
)
def test_cast_between_real_and_complex(src, to, rng):
    """The grad casts back: real -> complex gives dX = Re(dOut), complex -> real dX = dOut + 0i
    (the imaginary parts do not reach Out)."""
    x = crand(rng, (2, 3), src) if src in CDTYPES else rng.uniform(-2, 2, (2, 3)).astype(src)
    want = (x.real if to not in CDTYPES else x).astype(to)
    attrs = {"in_dtype": CODES[src], "out_dtype": CODES[to]}
    tol_of = "complex128" if {src, to} <= {"float64", "complex128"} else "complex64"
    check("cast", {"X": x}, {"Out": want}, attrs, tol_of, ["X"])


# --- programs ---------------------------------------------------------------------------------


def append(block, op, ins, dtype, attrs=None):
    """Appends `op` with Out a new variable of `dtype`; returns Out."""
    out = block.create_var(name=tide.unique_name.generate(op), dtype=dtype)
    block.append_op(op, inputs=ins, outputs={"Out": out}, attrs=attrs or {})
    return out


def check_program_grads(make_loss, inputs, wrt, delta, rtol):
    """make_loss(block, {name: variable}) builds a real [1] loss from `inputs` (name: array);
    the gradients append_backward gives each input in `wrt` against central differences of the
    loss (of the real and the imaginary part of a complex input)."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        block = main.global_block()
        vs = {
            n: block.create_var(
                name=n, shape=a.shape, dtype=a.dtype.name, stop_gradient=n not in wrt
            )
            for n, a in inputs.items()
        }
        loss = make_loss(block, vs)
        forward = main.clone()
        tide.append_backward(loss)
    exe = tide.Executor(tide.CPUPlace())

    def run(program, feeds, fetch):
        with tide.scope_guard(tide.Scope()):
            feed = {n: tide.LoDTensor(np.ascontiguousarray(a)) for n, a in feeds.items()}
            return [np.array(t) for t in exe.run(program, feed=feed, fetch_list=fetch)]

    analytic = run(main, inputs, [n + "@GRAD" for n in wrt])
    for name, got in zip(wrt, analytic):
        base = inputs[name]
        steps = [delta, 1j * delta] if np.iscomplexobj(base) else [delta]
        numeric = np.zeros(base.shape, complex if np.iscomplexobj(base) else float)
        for idx, step in itertools.product(np.ndindex(base.shape), steps):
            hi, lo = base.copy(), base.copy()
            hi[idx] += step
            lo[idx] -= step
            diff = run(forward, dict(inputs, **{name: hi}), [loss.name])[0].item()
            diff -= run(forward, dict(inputs, **{name: lo}), [loss.name])[0].item()
            numeric[idx] += diff / (2 * delta) * (step / delta)
        assert got.dtype == base.dtype, (name, got.dtype, base.dtype)
        np.testing.assert_allclose(got, numeric, rtol=rtol, atol=rtol, err_msg=name)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_three_operand_einsum_as_a_chain_of_pairs(dtype, rng):
    """einsum('ij,jk,kl->il') as Paddle's Python runs it, two two-operand einsums; each operand's
    gradient is the real rule's with the others conjugated."""
    a, b, c = crand(rng, (2, 3), dtype), crand(rng, (3, 2), dtype), crand(rng, (2, 2), dtype)
    rdt = REAL_OF[dtype]
    w = rng.uniform(0.5, 1.5, (2, 2, 2)).astype(rdt)

    def loss(block, v):
        ab = append(
            block, "einsum", {"Operands": [v["a"], v["b"]]}, dtype, {"equation": "ij,jk->ik"}
        )
        abc = append(block, "einsum", {"Operands": [ab, v["c"]]}, dtype, {"equation": "ik,kl->il"})
        parts = append(block, "as_real", {"X": abc}, rdt)
        weighted = append(block, "elementwise_mul", {"X": parts, "Y": v["w"]}, rdt)
        return append(block, "mean", {"X": weighted}, rdt)

    err, delta = GRAD_TOL[dtype]
    check_program_grads(loss, {"a": a, "b": b, "c": c, "w": w}, ["a", "b", "c"], delta, err)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_einsum_takes_at_most_two_operands(dtype, rng):
    ops = [crand(rng, (2, 2), dtype) for _ in range(3)]
    ins = {"Operands": [("op%d" % i, a) for i, a in enumerate(ops)]}
    with pytest.raises(Exception, match=r"einsum.*1 or 2 tensors"):
        make("einsum", ins, {"Out": ops[0]}, {"equation": "ij,jk,kl->il"}).forward()


@pytest.mark.parametrize("rdt", ["float32", "float64"])
def test_real_loss_through_complex_values_from_real_parameters(rdt, rng):
    """Real parameters a, b become z = a + b c (cast to complex, a complex constant c), then
    w = M z (matmul_v2), e = exp(0.3 w); the loss (real) is mean(|e|) + mean(angle(w)) + the real
    parts' sum of e * conj(z) / z: every complex grad kernel of ops_math on the path to a and b,
    whose gradients must match finite differences of the whole program."""
    cdt = COMPLEX_OF[rdt]
    a, b = rng.uniform(-1, 1, 3).astype(rdt), rng.uniform(-1, 1, 3).astype(rdt)
    c = np.array([1j, 0.5 + 1j, -0.5 + 1j], cdt)
    m = crand(rng, (3, 3), cdt) * 0.5

    def loss(block, v):
        def op(kind, ins, dtype=cdt, **attrs):
            return append(block, kind, ins, dtype, attrs)

        def to_complex(x):
            return op("cast", {"X": x}, in_dtype=CODES[rdt], out_dtype=CODES[cdt])

        bc = op("elementwise_mul", {"X": to_complex(v["b"]), "Y": v["c"]})
        z = op("elementwise_add", {"X": to_complex(v["a"]), "Y": bc})
        w = op("matmul_v2", {"X": v["m"], "Y": z}, trans_x=False, trans_y=False)
        e = op("exp", {"X": op("scale", {"X": w}, scale=0.3)})
        term1 = op("mean", {"X": op("abs", {"X": e}, rdt)}, rdt)
        angles = op("angle", {"X": w}, rdt)
        term2 = op("reduce_mean", {"X": angles}, rdt, dim=[0], reduce_all=True)
        ratio = op(
            "elementwise_div",
            {"X": op("elementwise_mul", {"X": e, "Y": op("conj", {"X": z})}), "Y": z},
        )
        real_sum = dict(dim=[0], reduce_all=True, out_dtype=CODES[rdt])
        term3 = op("reduce_sum", {"X": ratio}, rdt, **real_sum)
        return op("sum", {"X": [term1, term2, term3]}, rdt)

    delta, rtol = (1e-2, 2e-2) if rdt == "float32" else (1e-6, 1e-6)
    check_program_grads(loss, {"a": a, "b": b, "c": c, "m": m}, ["a", "b"], delta, rtol)


# --- errors -----------------------------------------------------------------------------------


def test_grad_kernels_refuse_bad_input(rng):
    x = crand(rng, (2, 3), "complex128")
    g = rng.uniform(0.5, 1.5, (2, 3))
    bad = [
        # Out@GRAD of the wrong dims
        ("abs_grad", {"X": x, DOUT: g[:, :2]}, {}, r"abs_grad.*Out@GRAD"),
        ("angle_grad", {"X": x, DOUT: g[:1]}, {}, r"angle_grad.*Out@GRAD"),
        ("exp_grad", {"Out": x, DOUT: x[:1]}, {}, r"exp_grad.*Out@GRAD"),
        ("matmul_v2_grad", {"X": x, "Y": x.T, DOUT: x}, {}, r"matmul_v2_grad.*Out@GRAD"),
        ("elementwise_mul_grad", {"X": x, "Y": x, DOUT: x[:1]}, {}, r"Out@GRAD"),
        ("reduce_sum_grad", {"X": x, "Out": x[0], DOUT: x}, {"dim": [0]}, r"Out@GRAD"),
        # abs / angle's Out@GRAD is real: a complex one is refused, naming the types
        ("abs_grad", {"X": x, DOUT: x}, {}, r"complex128.*float64|float64.*complex128"),
        ("angle_grad", {"X": x, DOUT: x}, {}, r"complex128.*float64|float64.*complex128"),
        # X complex, Y real
        ("elementwise_mul_grad", {"X": x, "Y": g, DOUT: x}, {}, r"complex128.*float64|float64.*complex128"),
    ]  # fmt: skip
    for op, ins, attrs, pattern in bad:
        with pytest.raises(Exception, match=pattern):
            make(op, ins, {DX: x}, attrs).forward()
