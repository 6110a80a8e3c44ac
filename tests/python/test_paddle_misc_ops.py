"""Paddle's misc math ops (mathmisc): Paddle 3.x's attributes of round (decimals), softplus (beta,
threshold) and thresholded_relu (value); tan, log2, log10, frac; bitwise_and / or / xor / not;
eye, diag_v2, dot, mv, cross, lerp and addmm; against numpy float64 references, gradients by
central differences, and the errors of bad inputs."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(23)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]


def uniform(lo, hi, shape=(3, 5)):
    return RNG.uniform(lo, hi, shape)


def round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_decimals(dtype):
    """Half away from 0, as Paddle; decimals > 0 scales by 10^d first, decimals < 0 divides."""
    x = np.array([[-2.5, -0.5, 0.5, 1.5, 2.4999, 7.25, -13.75, 149.0, 151.0, -250.0]], dtype)
    make("round", {"X": x}, {"Out": round_half_away(x)}).check_output(atol=0, rtol=0)
    y = uniform(-20, 20).astype(dtype)
    want = round_half_away(y.astype(dtype) * dtype_t(dtype)(10)) / dtype_t(dtype)(10)
    t = make("round", {"X": y}, {"Out": want}, {"decimals": 1.0})
    t.check_output(atol=1e-6, rtol=0)
    want = round_half_away(x / dtype_t(dtype)(100)) * dtype_t(dtype)(100)
    make("round", {"X": x}, {"Out": want}, {"decimals": -2.0}).check_output(atol=0, rtol=0)
    grad = make("round_grad", {"X": y, "Out@GRAD": np.ones_like(y)}, {"X@GRAD": np.zeros_like(y)})
    grad.check_output(atol=0, rtol=0)


def dtype_t(dtype):
    return np.dtype(dtype).type


def softplus(x, beta, threshold):
    bx = beta * x
    return np.where(bx > threshold, x, np.logaddexp(0.0, bx) / beta)


@pytest.mark.parametrize("attrs", [{}, {"beta": 2.0, "threshold": 1.5}, {"beta": 0.5}])
def test_softplus_beta_threshold(attrs):
    x = uniform(-4, 4, (4, 6))
    beta, threshold = attrs.get("beta", 1.0), attrs.get("threshold", 20.0)
    x[np.abs(beta * x - threshold) < 1e-3] += 0.01  # off the switch
    t = make("softplus", {"X": x}, {"Out": softplus(x, beta, threshold)}, attrs)
    t.check_output(atol=1e-12, rtol=1e-12)
    t.check_grad(["X"], "Out", **GRAD)


def test_softplus_large_x():
    x = np.array([30.0, 100.0, 1000.0, -1000.0])
    make("softplus", {"X": x}, {"Out": softplus(x, 1.0, 20.0)}).check_output(atol=0, rtol=1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
def test_thresholded_relu_value(dtype):
    x = uniform(-2, 2).astype(dtype)
    x[np.abs(x - 0.5) < 1e-3] += 0.01
    want = np.where(x > 0.5, x, 0.25).astype(dtype)
    t = make("thresholded_relu", {"X": x}, {"Out": want}, {"threshold": 0.5, "value": 0.25})
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


# --- tan, log2, log10, frac ----------------------------------------------------------------


@pytest.mark.parametrize(
    "op,lo,hi,ref",
    [
        ("tan", -1.3, 1.3, np.tan),
        ("log2", 0.1, 5.0, np.log2),
        ("log10", 0.1, 5.0, np.log10),
        ("frac", -4.0, 4.0, lambda x: x - np.trunc(x)),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary(op, lo, hi, ref, dtype):
    x = uniform(lo, hi).astype(dtype)
    if op == "frac":
        x[np.abs(x - np.round(x)) < 1e-3] += 0.01  # off the jumps
    t = make(op, {"X": x}, {"Out": ref(x.astype("float64")).astype(dtype)})
    t.check_output(atol=1e-6 if dtype == "float32" else 1e-12, rtol=1e-6)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


# --- bitwise_and / or / xor / not ----------------------------------------------------------

INT_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]


def ints(shape, dtype):
    if dtype == "bool":
        return RNG.randint(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    return RNG.randint(max(info.min, -1000), min(info.max, 1000) + 1, shape).astype(dtype)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,))])
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_bitwise(shapes, dtype):
    x, y = ints(shapes[0], dtype), ints(shapes[1], dtype)
    for op, ref in [
        ("bitwise_and", np.bitwise_and),
        ("bitwise_or", np.bitwise_or),
        ("bitwise_xor", np.bitwise_xor),
    ]:
        make(op, {"X": x, "Y": y}, {"Out": ref(x, y)}).check_output(atol=0, rtol=0)
    make("bitwise_not", {"X": x}, {"Out": np.invert(x)}).check_output(atol=0, rtol=0)


def test_bitwise_errors():
    x = np.ones((2, 3), "float32")
    with pytest.raises(tide.TideError, match="bitwise_and.*X must be bool or an integer type"):
        make("bitwise_and", {"X": x, "Y": x}, {"Out": x}).check_output()
    a, b = ints((3, 4), "int32"), ints((3, 5), "int32")
    with pytest.raises(tide.TideError, match=r"bitwise_or.*X \[3, 4\] and Y \[3, 5\]"):
        make("bitwise_or", {"X": a, "Y": b}, {"Out": a}).check_output()


# --- eye, diag_v2, dot, mv, cross, lerp, addmm ---------------------------------------------


@pytest.mark.parametrize("rows,cols", [(3, 3), (2, 5), (4, -1), (5, 2)])
@pytest.mark.parametrize("dtype,code", [("float32", 5), ("float64", 6), ("int64", 3)])
def test_eye(rows, cols, dtype, code):
    want = np.eye(rows, rows if cols < 0 else cols, dtype=dtype)
    t = make("eye", {}, {"Out": want}, {"num_rows": rows, "num_columns": cols, "dtype": code})
    t.check_output(atol=0, rtol=0)


@pytest.mark.parametrize("offset", [0, 1, -2])
@pytest.mark.parametrize("dtype", DTYPES)
def test_diag_vector(offset, dtype):
    x = uniform(-1, 1, (4,)).astype(dtype)
    want = np.diag(x, offset)
    want[want == 0] = 0.5  # padding_value off the diagonal (x has no exact 0)
    t = make("diag_v2", {"X": x}, {"Out": want}, {"offset": offset, "padding_value": 0.5})
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


@pytest.mark.parametrize("offset", [0, 2, -1])
@pytest.mark.parametrize("dtype", DTYPES)
def test_diag_matrix(offset, dtype):
    x = uniform(-1, 1, (3, 5)).astype(dtype)
    t = make("diag_v2", {"X": x}, {"Out": np.diag(x, offset)}, {"offset": offset})
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_diag_error():
    with pytest.raises(tide.TideError, match=r"diag_v2.*offset 5 is outside X \[3, 5\]"):
        x = uniform(-1, 1, (3, 5))
        make("diag_v2", {"X": x}, {"Out": x}, {"offset": 5}).check_output()


@pytest.mark.parametrize("shape", [(6,), (3, 5)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_dot(shape, dtype):
    x, y = uniform(-1, 1, shape).astype(dtype), uniform(-1, 1, shape).astype(dtype)
    want = np.sum(x.astype("float64") * y, axis=-1).astype(dtype)
    t = make("dot", {"X": x, "Y": y}, {"Out": want})
    t.check_output(atol=1e-6, rtol=1e-6)
    if dtype == "float64":
        t.check_grad(["X", "Y"], "Out", **GRAD)


def test_dot_error():
    with pytest.raises(tide.TideError, match=r"dot.*X \[3, 4\] and Y \[3, 5\] must have the same"):
        x, y = uniform(0, 1, (3, 4)), uniform(0, 1, (3, 5))
        make("dot", {"X": x, "Y": y}, {"Out": x[:, 0]}).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
def test_mv(dtype):
    x, v = uniform(-1, 1, (4, 3)).astype(dtype), uniform(-1, 1, (3,)).astype(dtype)
    t = make("mv", {"X": x, "Vec": v}, {"Out": (x.astype("float64") @ v).astype(dtype)})
    t.check_output(atol=1e-6, rtol=1e-6)
    if dtype == "float64":
        t.check_grad(["X", "Vec"], "Out", **GRAD)


def test_mv_error():
    with pytest.raises(tide.TideError, match=r"mv.*X \[4, 3\]'s columns and Vec \[2\] differ"):
        x, v = uniform(0, 1, (4, 3)), uniform(0, 1, (2,))
        make("mv", {"X": x, "Vec": v}, {"Out": x[:, 0]}).check_output()


@pytest.mark.parametrize("shape,dim,axis", [((4, 3), 9, 1), ((3, 4), 9, 0), ((2, 3, 3), -1, -1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross(shape, dim, axis, dtype):
    x, y = uniform(-1, 1, shape).astype(dtype), uniform(-1, 1, shape).astype(dtype)
    t = make("cross", {"X": x, "Y": y}, {"Out": np.cross(x, y, axis=axis)}, {"dim": dim})
    t.check_output(atol=1e-6, rtol=1e-6)
    if dtype == "float64":
        t.check_grad(["X", "Y"], "Out", **GRAD)


def test_cross_error():
    x = uniform(0, 1, (2, 4))
    with pytest.raises(tide.TideError, match=r"cross.*X \[2, 4\] has no dim of size 3"):
        make("cross", {"X": x, "Y": x}, {"Out": x}).check_output()


@pytest.mark.parametrize(
    "sx,sy,sw", [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (4,)), ((4,), (4,), (2, 1, 4))]
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_lerp(sx, sy, sw, dtype):
    x, y = uniform(-1, 1, sx).astype(dtype), uniform(-1, 1, sy).astype(dtype)
    w = uniform(0, 1, sw).astype(dtype)
    t = make("lerp", {"X": x, "Y": y, "Weight": w}, {"Out": x + w * (y - x)})
    t.check_output(atol=1e-6, rtol=1e-6)
    if dtype == "float64":
        t.check_grad(["X", "Y"], "Out", no_grad_set={"Weight"}, **GRAD)


@pytest.mark.parametrize("sin", [(4, 5), (5,), (1, 5), (4, 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_addmm(sin, dtype):
    inp = uniform(-1, 1, sin).astype(dtype)
    x, y = uniform(-1, 1, (4, 3)).astype(dtype), uniform(-1, 1, (3, 5)).astype(dtype)
    want = (0.5 * inp + 2.0 * (x.astype("float64") @ y)).astype(dtype)
    t = make("addmm", {"Input": inp, "X": x, "Y": y}, {"Out": want}, {"Alpha": 2.0, "Beta": 0.5})
    t.check_output(atol=1e-6, rtol=1e-6)
    if dtype == "float64":
        t.check_grad(["Input", "X", "Y"], "Out", **GRAD)


def test_addmm_error():
    a = uniform(0, 1, (4, 3))
    with pytest.raises(tide.TideError, match=r"addmm.*X \[4, 3\] and Y \[4, 3\] do not multiply"):
        make("addmm", {"Input": a, "X": a, "Y": a}, {"Out": a}).check_output()


# --- prelu's data_format -------------------------------------------------------------------


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_prelu_channel_data_format(data_format):
    """mode 'channel' takes dim 1 (NCHW) or the last dim (NHWC) as the channels."""
    x = uniform(-1, 1, (2, 3, 4, 5))
    c = 3 if data_format == "NCHW" else 5
    alpha = uniform(0.1, 0.5, (c,))
    shape = (1, c, 1, 1) if data_format == "NCHW" else (1, 1, 1, c)
    want = np.where(x > 0, x, alpha.reshape(shape) * x)
    attrs = {"mode": "channel", "data_format": data_format}
    t = make("prelu", {"X": x, "Alpha": alpha}, {"Out": want}, attrs)
    t.check_output(atol=1e-12, rtol=1e-12)
    t.check_grad(["X", "Alpha"], "Out", **GRAD)
