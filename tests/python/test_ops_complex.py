"""Complex values (complex64 / complex128) in the op packs: Paddle's complex, real, imag,
as_complex and as_real, the complex kernels of abs, angle, conj, exp, the element-wise
arithmetic, scale, the reductions, matmul_v2, einsum, cast, the fill ops, assign, set_value and
the data-movement ops of ops_nn; each against numpy's complex arithmetic on the same data, with
the output data types (complex <-> its real type), broadcast, 0-D and empty shapes, and the
errors of bad input. Then the Python side (feeding, fetching, saving and loading complex
tensors), gradients through complex values reaching real parameters (the complex grads
themselves: test_complex_grads.py) and small PIR programs using the new rows, written here as Paddle 3.3.1 saves them."""

import json

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(23)
CDTYPES = ["complex64", "complex128"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}
COMPLEX_OF = {v: k for k, v in REAL_OF.items()}


def tol(dtype):
    if dtype in ("complex64", "float32"):
        return {"atol": 1e-5, "rtol": 1e-5}
    return {"atol": 1e-12, "rtol": 1e-12}


def crand(shape, dtype):
    re = RNG.uniform(-2, 2, shape)
    im = RNG.uniform(-2, 2, shape)
    return (re + 1j * im).astype(dtype)


def check(op, ins, outs, attrs=None, dtype=None, **kw):
    """Runs the op, compares every output with numpy's and checks each fetched output's dtype is
    the expected array's (shape inference declared it: OpTest compares the two)."""
    t = make(op, ins, outs, attrs)
    got = t.check_output(**(kw or tol(dtype or "complex128")))
    for name, arr, _ in _outs(outs):
        if arr is None:
            continue
        fetched = next(g for n, g in zip(_fetched_names(outs), got) if n == name).numpy()
        assert fetched.dtype == arr.dtype, "%s %s: %s, expected %s" % (
            op,
            name,
            fetched.dtype,
            arr.dtype,
        )
    return got


def _outs(outs):
    res = []
    for param, v in outs.items():
        if isinstance(v, list):
            res.extend((n, a, param) for n, a in v)
        else:
            res.append((param.lower() + "_out", v, param))
    return res


def _fetched_names(outs):
    return [n for n, a, _ in _outs(outs) if a is not None]


# --- complex, real, imag, as_complex, as_real ----------------------------------------------

SHAPE_PAIRS = [
    ((3, 4), (3, 4)),
    ((2, 3, 4), (4,)),
    ((3, 1), (1, 4)),
    ((4,), (2, 3, 4)),
    ((), ()),
    ((), (2, 3)),
    ((0, 3), (3,)),
    ((2, 0), (1, 1)),
]


@pytest.mark.parametrize("rdtype", ["float32", "float64"])
@pytest.mark.parametrize("xs,ys", SHAPE_PAIRS)
def test_complex_broadcasts_numpy_style(rdtype, xs, ys):
    x = RNG.uniform(-2, 2, xs).astype(rdtype)
    y = RNG.uniform(-2, 2, ys).astype(rdtype)
    want = (x + 1j * y).astype(COMPLEX_OF[rdtype])
    check("complex", {"X": x, "Y": y}, {"Out": want}, dtype=rdtype)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (2, 1, 5), (), (0, 4)])
def test_real_imag_abs_angle_conj_exp(dtype, shape):
    x = crand(shape, dtype)
    if x.size:
        x.reshape(-1)[0] = 0  # angle(0) = 0, |0| = 0
    rdt = REAL_OF[dtype]
    check("real", {"X": x}, {"Out": x.real.copy()}, dtype=dtype)
    check("imag", {"X": x}, {"Out": x.imag.copy()}, dtype=dtype)
    check("abs", {"X": x}, {"Out": np.abs(x).astype(rdt)}, dtype=dtype)
    check("angle", {"X": x}, {"Out": np.angle(x).astype(rdt)}, dtype=dtype)
    check("conj", {"X": x}, {"Out": np.conj(x)}, dtype=dtype)
    check("exp", {"X": x}, {"Out": np.exp(x)}, dtype=dtype)


def test_abs_keeps_its_magnitude_at_the_extremes():
    # |z| without overflow (3e37 squared is no float32) and the signs of the parts of angle.
    x = np.array([3e37 + 4e37j, 3e-38 - 4e-38j, -1 + 0j, -1 - 0j, 1j, -1j], "complex64")
    check("abs", {"X": x}, {"Out": np.abs(x)}, dtype="complex64")
    check("angle", {"X": x}, {"Out": np.angle(x).astype("float32")}, dtype="complex64")


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (5,), (), (0, 3)])
def test_as_complex_and_as_real(dtype, shape):
    rdt = REAL_OF[dtype]
    pairs = RNG.uniform(-2, 2, shape + (2,)).astype(rdt)
    want = (pairs[..., 0] + 1j * pairs[..., 1]).astype(dtype)
    check("as_complex", {"X": pairs}, {"Out": want}, dtype=dtype)
    z = crand(shape, dtype)
    check("as_real", {"X": z}, {"Out": np.stack([z.real, z.imag], -1)}, dtype=dtype)


# --- arithmetic -------------------------------------------------------------------------------

ARITH = {
    "elementwise_add": np.add,
    "elementwise_sub": np.subtract,
    "elementwise_mul": np.multiply,
    "elementwise_div": np.divide,
}


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", sorted(ARITH))
@pytest.mark.parametrize(
    "xs,ys,axis",
    [
        ((3, 4), (3, 4), -1),
        ((2, 3, 4), (4,), -1),  # Y over X's trailing dims
        ((2, 3, 4), (3,), 1),  # Fluid's axis: Y over X's middle dim
        ((2, 3, 4), (1, 3, 1), -1),
        ((3, 1), (1, 4), -1),  # numpy: both repeat
        ((4,), (2, 3, 4), -1),
        ((), (), -1),
        ((2, 3), (), -1),
        ((0, 4), (4,), -1),
    ],
)
def test_elementwise_arithmetic(dtype, op, xs, ys, axis):
    x, y = crand(xs, dtype), crand(ys, dtype)
    if axis == 1:
        want = ARITH[op](x, y.reshape(1, 3, 1))
    else:
        want = ARITH[op](x, y)
    check(op, {"X": x, "Y": y}, {"Out": want.astype(dtype)}, {"axis": axis}, dtype=dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("broadcast", [False, True])
def test_division_by_complex_zero_and_large_values(dtype, broadcast):
    # numpy's (C99's) results: large operands do not overflow on the way (|y|^2 would), and
    # (1 + 1j) / 0 is inf + inf j (Paddle 3.3.1's CPU kernel gives NaN there).
    x = np.array([1 + 1j, 1e30 + 1e30j, 2 - 1j, 1e-30 + 1e-30j], dtype)
    y = np.array([0, 2e30 - 1e30j, 1e-30 + 1e-30j, 1e-30 - 2e-30j], dtype)
    if broadcast:
        x = np.stack([x, x])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = x / y
    check("elementwise_div", {"X": x, "Y": y}, {"Out": want}, atol=0, rtol=1e-6)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("after", [True, False])
@pytest.mark.parametrize("tensor", [False, True])
def test_scale_takes_a_real_factor_and_bias(dtype, after, tensor):
    x = crand((3, 4), dtype)
    ins = {"X": x}
    attrs = {"scale": 2.5, "bias": -1.5, "bias_after_scale": after}
    if tensor:  # Paddle 3's scale reads its factor from a float32 tensor
        ins["ScaleTensor"] = np.array([0.5], "float32")
        attrs["scale"] = 9.0
    s = 0.5 if tensor else 2.5
    want = x * s - 1.5 if after else (x - 1.5) * s
    check("scale", ins, {"Out": want.astype(dtype)}, attrs, dtype=dtype)


# --- reductions -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize(
    "dims,keep,all_",
    [([1], False, False), ([0, 2], True, False), ([-1], False, False), ([0], False, True)],
)
def test_reduce_sum_and_mean(dtype, dims, keep, all_):
    x = crand((2, 3, 4), dtype)
    axis = None if all_ else tuple(dims)
    attrs = {"dim": dims, "keep_dim": keep, "reduce_all": all_}
    want_sum = np.sum(x, axis=axis, keepdims=keep).astype(dtype)
    want_mean = np.mean(x, axis=axis, keepdims=keep).astype(dtype)
    if all_:  # Fluid's rule: a reduction to no dims is [1]
        want_sum, want_mean = want_sum.reshape(1), want_mean.reshape(1)
    check("reduce_sum", {"X": x}, {"Out": want_sum}, attrs, dtype=dtype)
    check("reduce_mean", {"X": x}, {"Out": want_mean}, attrs, dtype=dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_reduce_of_0d_and_empty(dtype):
    z = crand((), dtype)
    attrs = {"dim": [], "keep_dim": False, "reduce_all": True}
    check("reduce_sum", {"X": z}, {"Out": z.reshape(1)}, attrs, dtype=dtype)
    check("reduce_mean", {"X": z}, {"Out": z.reshape(1)}, attrs, dtype=dtype)
    e = crand((0, 3), dtype)
    check("reduce_sum", {"X": e}, {"Out": np.zeros(3, dtype)}, {"dim": [0]}, dtype=dtype)
    check("reduce_sum", {"X": e}, {"Out": np.zeros((0,), dtype)}, {"dim": [1]}, dtype=dtype)
    # mean over nothing is 0/0, NaN in both parts (numpy's and Paddle's)
    got = make("reduce_mean", {"X": e}, {"Out": np.zeros(3, dtype)}, {"dim": [0]}).forward()["Out"]
    assert np.isnan(got.real).all() and np.isnan(got.imag).all()


@pytest.mark.parametrize("dtype", CDTYPES)
def test_reduce_sum_to_a_real_out_dtype_sums_the_real_parts(dtype):
    # Paddle's c.sum(dtype='float32') casts first: the real parts are summed.
    x = crand((3, 4), dtype)
    rdt = REAL_OF[dtype]
    attrs = {"dim": [1], "out_dtype": {"float32": 5, "float64": 6}[rdt]}
    check("reduce_sum", {"X": x}, {"Out": x.real.sum(1).astype(rdt)}, attrs, dtype=dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_mean_and_sum_of_tensors(dtype):
    x = crand((3, 5), dtype)
    check("mean", {"X": x}, {"Out": np.array([x.mean()], dtype)}, dtype=dtype)
    y = crand((3, 5), dtype)
    check("sum", {"X": [("a", x), ("b", y)]}, {"Out": (x + y).astype(dtype)}, dtype=dtype)


# --- products ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize(
    "xs,ys,tx,ty",
    [
        ((4, 6), (6, 3), False, False),
        ((6, 4), (6, 3), True, False),
        ((4, 6), (3, 6), False, True),
        ((6, 4), (3, 6), True, True),
        ((2, 1, 4, 6), (3, 6, 5), False, False),  # batch dims broadcast
        ((6,), (6,), False, False),  # vector . vector: [1], Tide's rule
        ((4, 0), (0, 3), False, False),  # k = 0: zeros
    ],
)
def test_matmul_v2(dtype, xs, ys, tx, ty):
    x, y = crand(xs, dtype), crand(ys, dtype)
    a = np.swapaxes(x, -1, -2) if tx else x  # a plain transpose: Paddle does not conjugate
    b = np.swapaxes(y, -1, -2) if ty else y
    want = np.matmul(a, b).astype(dtype)
    want = want.reshape(1) if want.ndim == 0 else want
    check("matmul_v2", {"X": x, "Y": y}, {"Out": want}, {"trans_x": tx, "trans_y": ty}, dtype=dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("bixy,ioxy->boxy", [(2, 3, 4, 4), (3, 5, 4, 4)]),  # the FNO spectral layer
        ("ij,jk->ik", [(3, 4), (4, 2)]),
        ("ii->i", [(3, 3)]),
        ("bij->bj", [(2, 3, 4)]),
        ("...i,...i->...", [(2, 3, 4), (3, 4)]),
    ],
)
def test_einsum(dtype, eq, shapes):
    ops = [crand(s, dtype) for s in shapes]
    want = np.einsum(eq, *ops).astype(dtype)
    ins = {"Operands": [("op%d" % i, a) for i, a in enumerate(ops)]}
    check("einsum", ins, {"Out": want}, {"equation": eq}, dtype=dtype)


# --- cast -------------------------------------------------------------------------------------

CODES = {
    "bool": 0,
    "int16": 1,
    "int32": 2,
    "int64": 3,
    "float16": 4,
    "float32": 5,
    "float64": 6,
    "uint8": 20,
    "int8": 21,
    "complex64": 23,
    "complex128": 24,
}


def cast(x, to):
    return make(
        "cast",
        {"X": x},
        {"Out": np.zeros(x.shape, to)},
        {"in_dtype": CODES[x.dtype.name], "out_dtype": CODES[to]},
    ).forward()["Out"]


@pytest.mark.parametrize("to", CDTYPES)
@pytest.mark.parametrize("src", ["float32", "float64", "int32", "int64", "bool", "float16"])
def test_cast_real_to_complex_has_imaginary_zero(src, to):
    x = (RNG.uniform(-5, 5, (3, 4)) > 0) if src == "bool" else RNG.uniform(-5, 5, (3, 4))
    x = x.astype(src)
    got = cast(x, to)
    assert got.dtype == np.dtype(to)
    np.testing.assert_array_equal(got, x.astype(to))


@pytest.mark.parametrize("src", CDTYPES)
@pytest.mark.parametrize("to", ["float32", "float64", "int32", "int64", "float16", "bool"])
def test_cast_complex_to_real_keeps_the_real_part(src, to):
    x = crand((3, 4), src) * 3
    x[0, 0] = 0
    x[0, 1] = 1j  # to bool: true (the number is not 0), as Paddle's
    got = cast(x, to)
    assert got.dtype == np.dtype(to)
    if to == "bool":
        want = x != 0
    elif to.startswith("int"):
        want = np.trunc(x.real).astype(to)
    else:
        want = x.real.astype(to)
    np.testing.assert_array_equal(got, want)


def test_cast_complex_to_int_saturates_as_floats_do():
    # Tide's float -> int rule on the real part: truncates, saturates, NaN is 0 (Paddle's C++
    # conversion is undefined there and gives INT_MIN).
    x = np.array([1e20 + 1j, -1e20, np.nan + 0j, 2.7 - 5j], "complex64")
    np.testing.assert_array_equal(cast(x, "int32"), [2**31 - 1, -(2**31), 0, 2])


def test_cast_between_complex_types():
    x = crand((2, 3), "complex128")
    np.testing.assert_array_equal(cast(x, "complex64"), x.astype("complex64"))
    y = crand((2, 3), "complex64")
    np.testing.assert_array_equal(cast(y, "complex128"), y.astype("complex128"))
    np.testing.assert_array_equal(cast(y, "complex64"), y)


# --- making and copying tensors ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES)
def test_fill_ops(dtype):
    code = CODES[dtype]
    check(
        "fill_constant",
        {},
        {"Out": np.full((2, 3), 1.5, dtype)},
        {"shape": [2, 3], "value": 1.5, "dtype": code},
        dtype=dtype,
    )
    got = make(
        "fill_constant",
        {},
        {"Out": np.zeros((2,), dtype)},
        {"shape": [2], "str_value": "-inf", "dtype": code},
    ).forward()["Out"]
    assert np.all(got.real == -np.inf) and np.all(got.imag == 0)
    x = RNG.uniform(-1, 1, (3, 2)).astype("float32")
    check(
        "fill_any_like",
        {"X": x},
        {"Out": np.full((3, 2), 2.0, dtype)},
        {"value": 2.0, "dtype": code},
        dtype=dtype,
    )
    z = crand((3, 2), dtype)
    check("fill_any_like", {"X": z}, {"Out": np.full((3, 2), -1, dtype)}, {"value": -1.0})
    check("fill_zeros_like", {"X": z}, {"Out": np.zeros((3, 2), dtype)})
    check("assign", {"X": z}, {"Out": z}, dtype=dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_set_value_writes_a_complex_slice(dtype):
    # The FNO layer: out = zeros(complex); out[:, :, :4, :4] = o
    x = np.zeros((2, 3, 8, 5), dtype)
    v = crand((2, 3, 4, 4), dtype)
    attrs = {
        "axes": [2, 3],
        "starts": [0, 0],
        "ends": [4, 4],
        "steps": [1, 1],
        "decrease_axes": [],
        "none_axes": [],
    }
    want = x.copy()
    want[:, :, :4, :4] = v
    check("set_value", {"Input": x, "ValueTensor": v}, {"Out": want}, attrs, dtype=dtype)
    # A constant: its real part, imaginary 0.
    attrs.update(values=[2.5], shape=[1])
    want = x.copy()
    want[:, :, :4, :4] = 2.5
    check("set_value", {"Input": x}, {"Out": want}, attrs, dtype=dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_set_value_complex_constant(dtype):
    # x[1:3, 0] = [1 + 2j, -3 + 0.5j]: PIR's complex Scalars, read as values + values_imag.
    x = crand((4, 3), dtype)
    attrs = {"axes": [0, 1], "starts": [1, 0], "ends": [3, 1], "steps": [1, 1],
             "decrease_axes": [1], "none_axes": [], "values": [1.0, -3.0],
             "values_imag": [2.0, 0.5], "shape": [2]}  # fmt: skip
    want = x.copy()
    want[1:3, 0] = [1 + 2j, -3 + 0.5j]
    check("set_value", {"Input": x}, {"Out": want}, attrs, dtype=dtype)
    r = x.real.copy()
    with pytest.raises(
        tide.TideError, match=r"set_value.*a complex value \(values_imag\) for Input"
    ):
        make("set_value", {"Input": r}, {"Out": r}, attrs).check_output()
    attrs["values_imag"] = [0.0, 0.0]  # imaginary parts 0: a real constant
    want = r.copy()
    want[1:3, 0] = [1, -3]
    check("set_value", {"Input": r}, {"Out": want}, attrs, dtype=REAL_OF[dtype])


def moves(x):
    i = lambda v: np.array(v, "int64")  # noqa: E731
    return [
        ("concat", {"X": [("a", x), ("b", x[:, :1])]}, {"Out": np.concatenate([x, x[:, :1]], 1)},
         {"axis": 1}),
        ("split", {"X": x}, {"Out": [("o0", x[:, :1]), ("o1", x[:, 1:])]},
         {"axis": 1, "sections": [1, 2]}),
        ("slice", {"Input": x}, {"Out": x[:, 1:3]}, {"axes": [1], "starts": [1], "ends": [3]}),
        ("strided_slice", {"Input": x}, {"Out": x[:, ::2]},
         {"axes": [1], "starts": [0], "ends": [3], "strides": [2]}),
        ("stack", {"X": [("a", x), ("b", x)]}, {"Y": np.stack([x, x], 0)}, {"axis": 0}),
        ("unstack", {"X": x}, {"Y": [("y0", x[0]), ("y1", x[1])]}, {"axis": 0, "num": 2}),
        ("unbind", {"X": x}, {"Out": [("u%d" % k, x[:, k]) for k in range(3)]}, {"axis": 1}),
        ("unsqueeze2", {"X": x}, {"Out": x[:, None], "XShape": None}, {"axes": [1]}),
        ("squeeze2", {"X": x[:, :1]}, {"Out": x[:, 0], "XShape": None}, {"axes": [1]}),
        ("reshape", {"X": x}, {"Out": x.reshape(6, 4)}, {"shape": [6, 4]}),
        ("flatten", {"X": x}, {"Out": x.reshape(2, 12)}, {"axis": 1}),
        ("flatten2", {"X": x}, {"Out": x.reshape(2, 12), "XShape": None}, {"axis": 1}),
        ("transpose", {"X": x}, {"Out": x.transpose(2, 0, 1)}, {"axis": [2, 0, 1]}),
        ("reshape2", {"X": x}, {"Out": x.reshape(6, 4), "XShape": None}, {"shape": [6, 4]}),
        ("flatten_contiguous_range", {"X": x}, {"Out": x.reshape(2, 12), "XShape": None},
         {"start_axis": 1, "stop_axis": 2}),
        ("transpose2", {"X": x}, {"Out": x.transpose(2, 0, 1), "XShape": None},
         {"axis": [2, 0, 1]}),
        ("gather", {"X": x, "Index": i([1, 0, 1])}, {"Out": x[[1, 0, 1]]}, {}),
        ("gather_nd", {"X": x, "Index": i([[1, 2], [0, 0]])}, {"Out": x[[1, 0], [2, 0]]}, {}),
        ("index_select", {"X": x, "Index": i([2, 0])}, {"Out": x[:, [2, 0]]}, {"dim": 1}),
        ("flip", {"X": x}, {"Out": x[:, ::-1, ::-1]}, {"axis": [1, 2]}),
        ("roll", {"X": x}, {"Out": np.roll(x, 1, axis=2)}, {"shifts": [1], "axis": [2]}),
        ("expand_v2", {"X": x[:1]}, {"Out": np.broadcast_to(x[:1], (3, 3, 4))},
         {"shape": [3, 3, 4]}),
        ("expand_as_v2", {"X": x[:1]}, {"Out": np.broadcast_to(x[:1], (2, 3, 4))},
         {"target_shape": [2, 3, 4]}),
        ("tile", {"X": x}, {"Out": np.tile(x, (1, 2, 1))}, {"repeat_times": [1, 2, 1]}),
        ("pad", {"X": x}, {"Out": np.pad(x, ((0, 0), (1, 0), (0, 2)), constant_values=1.5)},
         {"paddings": [0, 0, 1, 0, 0, 2], "pad_value": 1.5}),  # a real pad value: 1.5 + 0j
        ("shape", {"Input": x}, {"Out": np.array([2, 3, 4], "int32")}, {}),
    ]  # fmt: skip


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("index", range(len(moves(np.zeros((2, 3, 4))))))
def test_moves_keep_the_values(dtype, index):
    op, ins, outs, attrs = moves(crand((2, 3, 4), dtype))[index]
    make(op, ins, outs, attrs).check_output(atol=0, rtol=0)


# --- bad input --------------------------------------------------------------------------------


def test_errors_name_the_op_input_and_value():
    f32 = np.ones((3, 4), "float32")
    c64 = f32.astype("complex64")
    with pytest.raises(
        tide.TideError, match=r"as_complex.*X .* \[3, 4\] must have a last dim of 2"
    ):
        make("as_complex", {"X": f32}, {"Out": np.zeros(3, "complex64")}).check_output()
    with pytest.raises(tide.TideError, match=r"as_complex.*X .* is 0-D"):
        make("as_complex", {"X": np.float32(1)}, {"Out": np.zeros((), "complex64")}).check_output()
    with pytest.raises(tide.TideError, match=r"complex.*X \[3, 4\] and Y \[5\] do not broadcast"):
        make("complex", {"X": f32, "Y": np.ones(5, "float32")}, {"Out": c64}).check_output()
    with pytest.raises(tide.TideError, match=r"complex.*X .* is float32 but Y .* is float64"):
        make("complex", {"X": f32, "Y": f32.astype("float64")}, {"Out": c64}).check_output()
    with pytest.raises(
        tide.TideError, match=r"complex.*X .* must be float32 or float64, got int32"
    ):
        i32 = f32.astype("int32")
        make("complex", {"X": i32, "Y": i32}, {"Out": c64}).check_output()
    for op in ("real", "imag", "as_real"):
        with pytest.raises(
            tide.TideError, match=op + r".*X .* must be complex64 or complex128, got float32"
        ):
            make(op, {"X": f32}, {"Out": f32}).check_output()
    with pytest.raises(tide.TideError, match=r"angle.*X .* must be float32, float64, complex64"):
        make("angle", {"X": f32.astype("int32")}, {"Out": f32}).check_output()


def test_mixed_and_unsupported_types_are_refused():
    c64 = np.ones((3, 4), "complex64")
    # A complex X with a real Y (Paddle's program casts one of them first).
    with pytest.raises(tide.TideError, match=r"elementwise_add"):
        make(
            "elementwise_add", {"X": c64, "Y": np.ones((3, 4), "float32")}, {"Out": c64}
        ).check_output()
    # Ops that compare values have no complex kernel.
    for op in ("elementwise_max", "relu", "reduce_max"):
        ins = {"X": c64, "Y": c64} if op == "elementwise_max" else {"X": c64}
        with pytest.raises(tide.TideError, match=op + r".*complex64"):
            make(op, ins, {"Out": c64}).check_output()


# --- Python: layers, feeding, fetching, saving ------------------------------------------------


def run(main, startup, feed, fetch, scope=None):
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(scope or tide.Scope()):
        exe.run(startup)
        return exe.run(main, feed=feed, fetch_list=fetch)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_layers_take_complex_dtypes(dtype):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        z = tide.layers.data(name="z", shape=[3], dtype=dtype)
        x = tide.layers.data(name="x", shape=[3], dtype=REAL_OF[dtype])
        c = tide.layers.complex(x, x)
        assert c.dtype == dtype
        s = tide.layers.elementwise_mul(z, c)
        r = tide.layers.real(s)
        assert r.dtype == REAL_OF[dtype]
        a = tide.layers.abs(z)
        assert a.dtype == REAL_OF[dtype]
        k = tide.layers.cast(x, dtype)
        assert k.dtype == dtype
        f = tide.layers.fill_constant([2], dtype, 1.5)
        assert f.dtype == dtype
    zv, xv = crand((2, 3), dtype), RNG.uniform(-1, 1, (2, 3)).astype(REAL_OF[dtype])
    out = run(main, startup, {"z": zv, "x": xv}, [s, r, a, k, f])
    want = [zv * (xv + 1j * xv), (zv * (xv + 1j * xv)).real, np.abs(zv), xv.astype(dtype)]
    for got, w in zip(out, want):
        assert got.dtype == w.dtype
        np.testing.assert_allclose(got, w, **tol(dtype))
    np.testing.assert_array_equal(out[4], np.full(2, 1.5, dtype))


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("filename", [None, "all"])
def test_complex_variables_save_and_load(tmp_path, dtype, filename):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        w = tide.layers.create_global_var([2, 3], 0.0, dtype, persistable=True, name="w")
        out = tide.layers.scale(w, scale=2.0)
    value = crand((2, 3), dtype)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        exe.run(startup)
        scope.find_var("w").get_tensor().set(value, tide.CPUPlace())
        tide.io.save_persistables(exe, str(tmp_path), main, filename=filename)
    other = tide.Scope()
    with tide.scope_guard(other):
        exe.run(startup)
        tide.io.load_persistables(exe, str(tmp_path), main, filename=filename)
        loaded = np.array(other.find_var("w").get_tensor())
        (doubled,) = exe.run(main, fetch_list=[out])
    assert loaded.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(loaded, value)
    np.testing.assert_array_equal(doubled, value * 2)


# --- the backward pass ------------------------------------------------------------------------


def test_a_gradient_through_complex_values_adds_to_the_real_path():
    """A real parameter used both directly and through complex values: its gradient is the sum
    of both paths (mean(|w + iw|) adds sqrt(2) sign(w) / 4); with the complex variable in
    no_grad_set, w trains on the real path alone."""
    xv = RNG.uniform(-1, 1, (2, 4)).astype("float32")
    for no_grad in (False, True):
        main, startup = tide.Program(), tide.Program()
        with tide.program_guard(main, startup):
            x = tide.layers.data(name="x", shape=[4], dtype="float32")
            w = tide.layers.create_parameter([4], "float32", name="w")
            c = tide.layers.complex(w, w)
            through_complex = tide.layers.reduce_mean(tide.layers.abs(c))
            real_path = tide.layers.reduce_mean(tide.layers.elementwise_mul(x, w))
            loss = tide.layers.elementwise_add(real_path, through_complex)
            params_grads = tide.append_backward(loss, no_grad_set={c.name} if no_grad else None)
        assert [p.name for p, _ in params_grads] == ["w"]
        grad_ops = {op.type for op in main.global_block().ops}
        assert ("complex_grad" in grad_ops) != no_grad
        scope = tide.Scope()
        exe = tide.Executor(tide.CPUPlace())
        exe.run(startup, scope=scope)
        wv = np.array(scope.find_var("w").get_tensor())
        (g,) = exe.run(main, feed={"x": xv}, fetch_list=[params_grads[0][1]], scope=scope)
        want = xv.mean(0) / 4 + (0 if no_grad else np.sqrt(2) * np.sign(wv) / 4)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-7)


def test_training_only_through_complex_values():
    """A parameter whose only path to the loss is complex trains (SGD: w -= lr * grad)."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        w = tide.layers.create_parameter([4], "float32", name="w")
        loss = tide.layers.reduce_mean(tide.layers.abs(tide.layers.complex(w, w)))
        tide.optimizer.SGD(learning_rate=0.1).minimize(loss)
    scope = tide.Scope()
    exe = tide.Executor(tide.CPUPlace())
    exe.run(startup, scope=scope)
    w0 = np.array(scope.find_var("w").get_tensor())
    (lv,) = exe.run(main, fetch_list=[loss], scope=scope)
    w1 = np.array(scope.find_var("w").get_tensor())
    np.testing.assert_allclose(lv, np.mean(np.sqrt(2) * np.abs(w0)), rtol=1e-6)
    np.testing.assert_allclose(w1, w0 - 0.1 * np.sqrt(2) * np.sign(w0) / 4, rtol=1e-5, atol=1e-7)


# --- PIR programs (Paddle 3.3.1's format) -----------------------------------------------------

PIR_TYPES = {"float32": "0.t_f32", "float64": "0.t_f64", "complex64": "0.t_c64",
             "complex128": "0.t_c128", "int64": "0.t_i64", "bool": "0.t_bool"}  # fmt: skip


class Pir:
    """A PIR program as paddle.jit.save writes it: data ops, operations on value ids, a fetch."""

    def __init__(self):
        self.ops, self.next = [], 1

    def _value(self, dtype, shape):
        v = self.next
        self.next += 1
        out = {"%": v, "TT": {"#": "0.t_dtensor", "D": [{"#": PIR_TYPES[dtype]}, list(shape),
                                                        "NCHW", [], 0]}}  # fmt: skip
        return v, out

    def op(self, kind, inputs, dtype, shape, /, **attrs):
        v, out = self._value(dtype, shape)
        a = [{"AT": at, "N": n} for n, at in attrs.items()]
        self.ops.append({"#": "1." + kind, "A": a, "I": [{"%": i} for i in inputs], "O": [out],
                         "OA": []})  # fmt: skip
        return v

    def data(self, name, dtype, shape):
        return self.op("data", [], dtype, shape, name={"#": "0.a_str", "D": name},
                       shape={"#": "1.a_intarray", "D": list(shape)},
                       dtype={"#": "1.a_dtype", "D": dtype},
                       place={"#": "1.a_place", "D": [0, 0, ""]})  # fmt: skip

    def int_array(self, values):
        arr = {"#": "0.a_array", "D": [{"#": "0.a_i64", "D": v} for v in values]}
        return self.op("full_int_array", [], "int64", [len(values)], value=arr,
                       dtype={"#": "1.a_dtype", "D": "int64"},
                       place={"#": "1.a_place", "D": [1, 0, ""]})  # fmt: skip

    def full(self, shape, value, dtype):
        return self.op("full", [], dtype, shape, shape={"#": "1.a_intarray", "D": list(shape)},
                       value={"#": "0.a_f64", "D": value}, dtype={"#": "1.a_dtype", "D": dtype},
                       place={"#": "1.a_place", "D": [0, 0, ""]})  # fmt: skip

    def save(self, path, fetch, dtype, shape):
        self.op("fetch", [fetch], dtype, shape, name={"#": "0.a_str", "D": "fetch_name_0"},
                col={"#": "0.a_i32", "D": 0})  # fmt: skip
        prog = {"base_code": {"magic": "pir", "trainable": True, "version": 4},
                "program": {"regions": [{"#": "region_0", "blocks": [
                    {"#": "block_0", "args": [], "ops": self.ops}]}]}}  # fmt: skip
        path.mkdir(parents=True, exist_ok=True)
        (path / "inference.json").write_text(json.dumps(prog))
        return str(path / "inference")


def run_pir(prefix, feed):
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(prefix, exe)
        return exe.run(program, feed=feed, fetch_list=fetches)[0]


@pytest.mark.parametrize("dtype", CDTYPES)
def test_pir_complex_real_imag_as_complex_as_real(tmp_path, dtype):
    """as_real(as_complex(x) * complex(real(..), imag(..))) and the other new rows, with a
    complex full and a cast, as Paddle 3.3.1 writes them."""
    rdt = REAL_OF[dtype]
    p = Pir()
    x = p.data("x0", rdt, [3, 4, 2])
    c = p.op("as_complex", [x], dtype, [3, 4])
    re, im = p.op("real", [c], rdt, [3, 4]), p.op("imag", [c], rdt, [3, 4])
    d = p.op("complex", [im, re], dtype, [3, 4])  # i * conj(c)
    z = p.full([3, 4], 0.5, dtype)  # paddle.full(..., dtype=complex): a real value
    k = p.op("cast", [re], dtype, [3, 4], dtype={"#": "1.a_dtype", "D": dtype})
    s = p.op("add", [p.op("multiply", [c, d], dtype, [3, 4]), p.op("add", [z, k], dtype, [3, 4])],
             dtype, [3, 4])  # fmt: skip
    a = p.op("abs", [s], rdt, [3, 4])
    g = p.op("angle", [p.op("conj", [s], dtype, [3, 4])], rdt, [3, 4])
    out = p.op("as_real", [p.op("complex", [a, g], dtype, [3, 4])], rdt, [3, 4, 2])
    prefix = p.save(tmp_path / dtype, out, rdt, [3, 4, 2])
    xv = RNG.uniform(-2, 2, (3, 4, 2)).astype(rdt)
    cv = (xv[..., 0] + 1j * xv[..., 1]).astype(dtype)
    sv = cv * (cv.imag + 1j * cv.real) + (0.5 + cv.real)
    want = np.stack([np.abs(sv), np.angle(np.conj(sv))], -1).astype(rdt)
    got = run_pir(prefix, {"x0": xv})
    assert got.dtype == np.dtype(rdt)
    np.testing.assert_allclose(got, want, **tol(dtype))


def test_pir_set_value_of_a_complex_constant(tmp_path):
    """c[:, 0] = 1 + 2j on a complex64 tensor: Paddle 3.3.1 writes its value as a complex128
    Scalar in set_value_'s `values`."""
    p = Pir()
    x = p.data("x", "float32", [2, 3])
    c = p.op("complex", [x, x], "complex64", [2, 3])
    starts, ends, steps = p.int_array([0]), p.int_array([1]), p.int_array([1])
    i64s = lambda v: {"#": "0.a_array", "D": [{"#": "0.a_i64", "D": k} for k in v]}  # noqa: E731
    values = {"#": "0.a_array", "D": [{"#": "0.a_c128", "D": [1.0, 2.0]}]}
    s = p.op("set_value_", [c, starts, ends, steps], "complex64", [2, 3], axes=i64s([1]),
             decrease_axes=i64s([1]), none_axes=i64s([]), shape=i64s([1]), values=values)  # fmt: skip
    out = p.op("as_real", [s], "float32", [2, 3, 2])
    prefix = p.save(tmp_path, out, "float32", [2, 3, 2])
    xv = RNG.uniform(-1, 1, (2, 3)).astype("float32")
    want = (xv + 1j * xv).astype("complex64")
    want[:, 0] = 1 + 2j
    np.testing.assert_array_equal(run_pir(prefix, {"x": xv}), np.stack([want.real, want.imag], -1))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_pir_complex_math_functions(tmp_path, dtype):
    """Paddle 3.3.1's unary math on a complex tensor (sin, sqrt, log, tanh, pow, sigmoid, where)
    through the PIR rows, as numpy computes it."""
    rdt = REAL_OF[dtype]
    p = Pir()
    x = p.data("x0", rdt, [3, 4, 2])
    c = p.op("as_complex", [x], dtype, [3, 4])
    s = p.op("sin", [c], dtype, [3, 4])
    r = p.op(
        "sqrt", [p.op("log", [p.op("tanh", [s], dtype, [3, 4])], dtype, [3, 4])], dtype, [3, 4]
    )
    q = p.op("pow", [r], dtype, [3, 4], y={"#": "0.a_f32", "D": 2.0})
    g = p.op("sigmoid", [c], dtype, [3, 4])
    cond = p.op("greater_than", [x, p.full([3, 4, 2], 0.0, rdt)], "bool", [3, 4, 2])
    first = p.op("slice", [cond, p.int_array([0]), p.int_array([1])], "bool", [3, 4],
                 axes={"#": "0.a_array", "D": [{"#": "0.a_i64", "D": 2}]},
                 infer_flags={"#": "0.a_array", "D": [{"#": "0.a_i64", "D": 1}]},
                 decrease_axis={"#": "0.a_array", "D": [{"#": "0.a_i64", "D": 2}]})  # fmt: skip
    w = p.op("where", [first, q, g], dtype, [3, 4])
    out = p.op("as_real", [w], rdt, [3, 4, 2])
    prefix = p.save(tmp_path / dtype, out, rdt, [3, 4, 2])
    xv = RNG.uniform(-1.5, 1.5, (3, 4, 2)).astype(rdt)
    cv = (xv[..., 0] + 1j * xv[..., 1]).astype(np.complex128)
    want = np.where(
        xv[..., 0] > 0, np.sqrt(np.log(np.tanh(np.sin(cv)))) ** 2, 1 / (1 + np.exp(-cv))
    )
    got = run_pir(prefix, {"x0": xv})
    assert got.dtype == np.dtype(rdt)
    np.testing.assert_allclose(
        got,
        np.stack([want.real, want.imag], -1),
        rtol=1e-4 if dtype == "complex64" else 1e-10,
        atol=1e-5 if dtype == "complex64" else 1e-12,
    )
