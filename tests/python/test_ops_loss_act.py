"""Paddle's losses and special functions (lossact): huber_loss, kldiv_loss and
sigmoid_cross_entropy_with_logits; against numpy float64 references, gradients by central
differences, and the errors of bad inputs."""

import math

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(61)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]


def tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-5} if dtype == "float32" else {"atol": 1e-12, "rtol": 1e-12}


# --- huber_loss ----------------------------------------------------------------------------


def huber(x, y, delta):
    r = y - x
    return np.where(np.abs(r) <= delta, 0.5 * r * r, delta * (np.abs(r) - 0.5 * delta)), r


@pytest.mark.parametrize("delta", [1.0, 0.3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_huber_loss(delta, dtype):
    x, y = RNG.uniform(-1, 1, (4, 5)), RNG.uniform(-1, 1, (4, 5))
    r = y - x
    y[np.abs(np.abs(r) - delta) < 1e-3] += 0.01  # off the switch
    x, y = x.astype(dtype), y.astype(dtype)
    # delta is a float32 attribute: the reference uses its float32 value.
    out, res = huber(x.astype("float64"), y.astype("float64"), float(np.float32(delta)))
    t = make(
        "huber_loss",
        {"X": x, "Y": y},
        {"Out": out.astype(dtype), "Residual": res.astype(dtype)},
        {"delta": delta},
    )
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X", "Y"], "Out", **GRAD)


def test_huber_loss_errors():
    x = np.zeros((3, 4))
    with pytest.raises(
        tide.TideError, match=r"huber_loss.*Y .*must have X's dims \[3, 4\].*\[3, 5\]"
    ):
        y = np.zeros((3, 5))
        make(
            "huber_loss", {"X": x, "Y": y}, {"Out": x, "Residual": x}, {"delta": 1.0}
        ).check_output()
    with pytest.raises(tide.TideError, match=r"delta.*huber_loss must be >= 0, got -1"):
        make(
            "huber_loss", {"X": x, "Y": x}, {"Out": x, "Residual": x}, {"delta": -1.0}
        ).check_output()


# --- kldiv_loss ----------------------------------------------------------------------------


def kldiv(x, t, reduction, log_target):
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        loss = np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)) - t * x, 0.0)
    if reduction == "none":
        return loss
    s = loss.sum()
    return {"sum": s, "mean": s / loss.size, "batchmean": s / x.shape[0]}[reduction]


@pytest.mark.parametrize("reduction", ["none", "batchmean", "mean", "sum"])
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_kldiv_loss(reduction, log_target, dtype):
    x = np.log(RNG.uniform(0.05, 1, (3, 4, 2)))
    t = RNG.uniform(-0.2, 1, (3, 4, 2))  # some targets <= 0: loss 0 there
    if log_target:
        t = np.log(RNG.uniform(0.05, 1, (3, 4, 2)))
    x, t = x.astype(dtype), t.astype(dtype)
    want = np.asarray(kldiv(x.astype("float64"), t.astype("float64"), reduction, log_target))
    attrs = {"reduction": reduction, "log_target": log_target}
    tt = make("kldiv_loss", {"X": x, "Target": t}, {"Loss": want.astype(dtype)}, attrs)
    tt.check_output(**tol(dtype))
    if dtype == "float64":
        tt.check_grad(["X"], "Loss", **GRAD)


def test_kldiv_loss_errors():
    x = np.zeros((3, 4))
    with pytest.raises(tide.TideError, match=r"kldiv_loss.*reduction must be 'none'.*got 'avg'"):
        make("kldiv_loss", {"X": x, "Target": x}, {"Loss": x}, {"reduction": "avg"}).check_output()
    with pytest.raises(tide.TideError, match=r"kldiv_loss.*Target .*must have X's dims"):
        make("kldiv_loss", {"X": x, "Target": x[:2]}, {"Loss": x}).check_output()


# --- sigmoid_cross_entropy_with_logits -----------------------------------------------------


def sigmoid_ce(x, label, pos_weight, normalize, ignore_index):
    w = 1.0 if pos_weight is None else pos_weight  # F's 1 + (pos_weight - 1) * label
    out = (1 - label) * x + w * np.log1p(np.exp(-x))
    ignored = label.astype(np.int64) == ignore_index
    out = np.where(ignored, 0.0, out)
    if normalize:
        out = out / max(np.sum(np.abs(label - ignore_index) > 1e-6), 1)
    return out


@pytest.mark.parametrize(
    "with_pos_weight,normalize,ignore_index",
    [(False, False, -100), (True, False, -100), (False, True, -1), (True, True, 1)],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sigmoid_cross_entropy_with_logits(with_pos_weight, normalize, ignore_index, dtype):
    x = RNG.uniform(-5, 5, (4, 6))
    label = RNG.uniform(0, 1, (4, 6))
    label[0, :3] = 1.0
    label[1, :2] = ignore_index  # ignored entries: loss and gradient 0
    inputs = {"X": x.astype(dtype), "Label": label.astype(dtype)}
    pw = None
    if with_pos_weight:
        pw = RNG.uniform(0.5, 3, (4, 6))
        inputs["pos_weight"] = pw.astype(dtype)
    want = sigmoid_ce(
        x.astype(dtype).astype("float64"),
        label.astype(dtype).astype("float64"),
        None if pw is None else pw.astype(dtype).astype("float64"),
        normalize,
        ignore_index,
    )
    attrs = {"normalize": normalize, "ignore_index": ignore_index}
    t = make("sigmoid_cross_entropy_with_logits", inputs, {"Out": want.astype(dtype)}, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_sigmoid_cross_entropy_large_logits():
    """No overflow: e^-|x| only."""
    x = np.array([[-800.0, 800.0, 0.0]])
    label = np.array([[1.0, 0.0, 0.5]])
    want = np.array([[800.0, 800.0, np.log(2.0)]])
    op = "sigmoid_cross_entropy_with_logits"
    make(op, {"X": x, "Label": label}, {"Out": want}).check_output(atol=1e-12, rtol=1e-12)


def test_sigmoid_cross_entropy_errors():
    x = np.zeros((3, 4))
    op = "sigmoid_cross_entropy_with_logits"
    with pytest.raises(tide.TideError, match=r"sigmoid_cross_entropy_with_logits.*pos_weight"):
        make(op, {"X": x, "Label": x, "pos_weight": x[:, :2]}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match=r"sigmoid_cross_entropy_with_logits.*Label .*float64"):
        make(op, {"X": x, "Label": x.astype("float32")}, {"Out": x}).check_output()


# --- softmax_with_cross_entropy's use_softmax (PIR's cross_entropy_with_softmax) -------------


@pytest.mark.parametrize("soft_label", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_with_cross_entropy_of_probabilities(soft_label, dtype):
    """use_softmax = false: Logits are probabilities; Softmax is a copy, Loss -log p[label]."""
    p = RNG.uniform(0.1, 1, (5, 4))
    p /= p.sum(-1, keepdims=True)
    p = p.astype(dtype)
    if soft_label:
        label = RNG.uniform(0, 1, (5, 4))
        label = (label / label.sum(-1, keepdims=True)).astype(dtype)
        loss = -np.sum(label * np.log(p.astype("float64")), -1, keepdims=True)
    else:
        label = RNG.randint(0, 4, (5, 1)).astype("int64")
        label[2, 0] = -100  # ignore_index: loss 0
        picked = np.take_along_axis(p.astype("float64"), np.maximum(label, 0), -1)
        loss = np.where(label == -100, 0.0, -np.log(picked))
    attrs = {"soft_label": soft_label, "use_softmax": False}
    t = make(
        "softmax_with_cross_entropy",
        {"Logits": p, "Label": label},
        {"Softmax": p, "Loss": loss.astype(dtype)},
        attrs,
    )
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["Logits"], "Loss", **GRAD)


# --- sequence_mask's MaxLenTensor (PIR's sequence_mask passes max_len as a tensor) ----------


@pytest.mark.parametrize("maxlen_dtype", ["int32", "int64"])
@pytest.mark.parametrize("lengths_dtype", ["int32", "int64"])
def test_sequence_mask_max_len_tensor(maxlen_dtype, lengths_dtype):
    lengths = np.array([[1, 3], [5, 0]], lengths_dtype)
    maxlen = np.array([6], maxlen_dtype)
    want = (np.arange(6) < lengths[..., None]).astype("float32")
    t = make(
        "sequence_mask",
        {"X": lengths, "MaxLenTensor": maxlen},
        {"Y": want},
        {"maxlen": 2, "out_dtype": 5},  # MaxLenTensor wins over the attribute
    )
    t.check_output(atol=0, rtol=0)


def test_sequence_mask_max_len_tensor_errors():
    lengths = np.array([1, 3], "int64")
    with pytest.raises(tide.TideError, match=r"sequence_mask.*MaxLenTensor .*one value.*\[2\]"):
        t = make("sequence_mask", {"X": lengths, "MaxLenTensor": lengths}, {"Y": lengths})
        t.check_output()
    with pytest.raises(
        tide.TideError, match=r"sequence_mask.*MaxLenTensor .*int32 or int64.*float"
    ):
        m = np.array([4.0], "float32")
        make("sequence_mask", {"X": lengths, "MaxLenTensor": m}, {"Y": lengths}).check_output()


# --- temporal_shift --------------------------------------------------------------------------


def temporal_shift(x, seg_num, ratio, nhwc):
    if nhwc:
        x = x.transpose(0, 3, 1, 2)
    nt, c, h, w = x.shape
    v = x.reshape(nt // seg_num, seg_num, c, h, w)
    c1, c2 = int(c * np.float32(ratio)), int(c * 2 * np.float32(ratio))
    out = np.zeros_like(v)
    out[:, 1:, :c1] = v[:, :-1, :c1]  # from the previous frame
    out[:, :-1, c1:c2] = v[:, 1:, c1:c2]  # from the next frame
    out[:, :, c2:] = v[:, :, c2:]
    out = out.reshape(nt, c, h, w)
    return out.transpose(0, 2, 3, 1) if nhwc else out


@pytest.mark.parametrize("seg_num,ratio", [(2, 0.25), (3, 0.2), (4, 0.4)])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_temporal_shift(seg_num, ratio, data_format, dtype):
    shape = (2 * seg_num, 5, 2, 3) if data_format == "NCHW" else (2 * seg_num, 2, 3, 5)
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    want = temporal_shift(x, seg_num, ratio, data_format == "NHWC")
    attrs = {"seg_num": seg_num, "shift_ratio": ratio, "data_format": data_format}
    t = make("temporal_shift", {"X": x}, {"Out": want}, attrs)
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_temporal_shift_errors():
    x = np.zeros((6, 4, 2, 2))
    op = "temporal_shift"
    with pytest.raises(tide.TideError, match=r"temporal_shift.*X .*first dim 6 is not a multiple"):
        make(op, {"X": x}, {"Out": x}, {"seg_num": 4}).check_output()
    with pytest.raises(tide.TideError, match=r"temporal_shift.*shift_ratio must be in \(0, 0.5\)"):
        make(op, {"X": x}, {"Out": x}, {"seg_num": 2, "shift_ratio": 0.6}).check_output()
    with pytest.raises(tide.TideError, match=r"temporal_shift.*data_format must be 'NCHW' or"):
        make(op, {"X": x}, {"Out": x}, {"seg_num": 2, "data_format": "NCDHW"}).check_output()
    with pytest.raises(tide.TideError, match=r"temporal_shift.*X .*must be 4-D.*\[6, 4\]"):
        make(op, {"X": x[:, :, 0, 0]}, {"Out": x}, {"seg_num": 2}).check_output()


# --- i0, i0e, i1, i1e, polygamma ----------------------------------------------------------


def bessel_i(order, x):
    """I_order(x) (order 0 or 1) from its power series sum (x/2)^(2k+order) / (k! (k+order)!),
    in float64: every term positive, so exact to rounding for the |x| <= 12 tested here."""
    out = np.zeros_like(x, dtype="float64")
    for idx, v in np.ndenumerate(x.astype("float64")):
        term = (abs(v) / 2) ** order
        k, s = 0, 0.0
        while True:
            s += term
            k += 1
            term *= (v / 2) ** 2 / (k * (k + order))
            if term <= 1e-17 * s:
                break
        out[idx] = s if order == 0 or v >= 0 else -s
    return out


BESSEL = {
    "i0": lambda x: bessel_i(0, x),
    "i0e": lambda x: np.exp(-np.abs(x)) * bessel_i(0, x),
    "i1": lambda x: bessel_i(1, x),
    "i1e": lambda x: np.exp(-np.abs(x)) * bessel_i(1, x),
}


@pytest.mark.parametrize("op", sorted(BESSEL))
@pytest.mark.parametrize("dtype", DTYPES)
def test_bessel(op, dtype):
    x = RNG.uniform(-12, 12, (4, 6))  # both of Cephes' intervals, |x| <= 8 and beyond
    x[0, :3] = [0.0, 8.0, -8.0]
    x = x.astype(dtype)
    want = BESSEL[op](x)
    t = make(op, {"x": x}, {"out": want.astype(dtype)})
    t.check_output(atol=0, rtol=2e-6 if dtype == "float32" else 1e-13)
    if dtype == "float64":
        x[0, 0] = 0.5  # the grads' 0 / 0 form at x = 0 is checked below
        make(op, {"x": x}, {"out": BESSEL[op](x)}).check_grad(["x"], "out", **GRAD)


@pytest.mark.parametrize("op", ["i1", "i1e"])
def test_bessel_grad_at_zero(op):
    x, g = np.zeros((1, 3)), np.array([[1.0, 2.0, -3.0]])
    t = make(op + "_grad", {"x": x, "out@GRAD": g}, {"x@GRAD": 0.5 * g})
    t.check_output(atol=0, rtol=0)


def polygamma(n, x, terms=2000):
    """psi^(n)(x) = (-1)^(n+1) n! sum_k 1 / (x + k)^(n+1), the sum's tail past `terms` by
    Euler-Maclaurin (integral, half term, first derivative term)."""
    k = np.arange(terms, dtype="float64")
    x = np.asarray(x, dtype="float64")[..., None]
    s = np.sum((x + k) ** -(n + 1.0), axis=-1)
    a = x[..., 0] + terms
    s += a**-n / n + 0.5 * a ** -(n + 1.0) + (n + 1) / 12 * a ** -(n + 2.0)
    return (-1) ** (n + 1) * math.factorial(n) * s


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_polygamma(n, dtype):
    x = RNG.uniform(0.3, 12, (3, 5))
    x[0, 0] = -1.5  # a negative non-integer: the sum holds there too
    x = x.astype(dtype)
    t = make("polygamma", {"x": x}, {"out": polygamma(n, x).astype(dtype)}, {"n": n})
    t.check_output(atol=0, rtol=2e-6 if dtype == "float32" else 1e-11)
    if dtype == "float64":
        t.check_grad(["x"], "out", **GRAD)


def test_polygamma_order_zero_is_digamma():
    x = np.array([[0.5, 1.0, 3.25, 10.0]])
    g = 0.5772156649015329  # Euler's constant; digamma's closed forms at these points
    h9 = sum(1.0 / k for k in range(1, 10))
    psi_quarter = -g - math.pi / 2 - 3 * math.log(2)
    digamma = np.array([[-g - 2 * math.log(2), -g, psi_quarter + 4 + 0.8 + 1 / 2.25, h9 - g]])
    make("polygamma", {"x": x}, {"out": digamma}, {"n": 0}).check_output(atol=0, rtol=1e-12)
    # Its gradient is trigamma: polygamma of order 1.
    grad = make(
        "polygamma_grad",
        {"x": x, "out@GRAD": np.ones_like(x)},
        {"x@GRAD": polygamma(1, x)},
        {"n": 0},
    )
    grad.check_output(atol=0, rtol=1e-11)


def test_polygamma_poles_and_errors():
    x = np.array([[0.0, -2.0]])
    out = make("polygamma", {"x": x}, {"out": x}, {"n": 1}).forward()
    assert np.all(np.isinf(out["out"]))
    with pytest.raises(
        tide.TideError, match=r"attribute 'n' of polygamma must be a non-negative.*-1"
    ):
        make("polygamma", {"x": x}, {"out": x}, {"n": -1}).check_output()


# --- rms_norm, fused_rms_norm_quant ----------------------------------------------------------


def rms(s, axis_from, eps):
    axes = tuple(range(axis_from, s.ndim))
    return 1.0 / np.sqrt(np.mean(s * s, axis=axes, keepdims=True) + eps)


@pytest.mark.parametrize("with_scale", [True, False])
@pytest.mark.parametrize("normalized", [(4,), (3, 4)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm(with_scale, normalized, dtype):
    x = RNG.uniform(-1, 1, (2, 3, 4)).astype(dtype)
    scale = RNG.uniform(0.5, 1.5, normalized).astype(dtype)
    at = x.ndim - len(normalized)
    r = rms(x.astype("float64"), at, 1e-5)
    y = x * r * (scale if with_scale else 1.0)
    inputs = {"x": x, "scale": scale} if with_scale else {"x": x}
    outs = {"y": y.astype(dtype), "invvar": r.reshape(x.shape[:at]).astype(dtype)}
    t = make("rms_norm", inputs, outs, {"normalized_shape": list(normalized), "epsilon": 1e-5})
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["x", "scale"] if with_scale else ["x"], "y", **GRAD)


def fused_rms(x, weight, eps, axis, bias=None, residual=None, norm_bias=None):
    s = x + residual + (0 if bias is None else bias) if residual is not None else x
    out = s * rms(s, axis, eps) * weight + (0 if norm_bias is None else norm_bias)
    return out, s, rms(s, axis, eps).reshape(-1)


@pytest.mark.parametrize(
    "parts", [(), ("norm_bias",), ("residual",), ("residual", "bias", "norm_bias"), ("bias",)]
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_rms_norm_quant(parts, dtype):
    x = RNG.uniform(-1, 1, (3, 2, 4)).astype(dtype)
    cols = 8  # begin_norm_axis 1: [3] rows of 2 * 4
    inputs = {"x": x, "norm_weight": RNG.uniform(0.5, 1.5, (cols,)).astype(dtype)}
    for p in parts:
        inputs[p] = RNG.uniform(-1, 1, x.shape if p == "residual" else (cols,)).astype(dtype)
    f64 = {k: v.astype("float64") for k, v in inputs.items()}
    w = f64["norm_weight"].reshape(2, 4)
    nb = f64["norm_bias"].reshape(2, 4) if "norm_bias" in f64 else None
    bias = f64["bias"].reshape(2, 4) if "bias" in f64 else None
    # Paddle's kernels use bias only with residual.
    out, s, inv = fused_rms(f64["x"], w, 1e-6, 1, bias, f64.get("residual"), nb)
    outs = {"out": out.astype(dtype), "residual_out": s.astype(dtype), "inv_var": inv.astype(dtype)}
    attrs = {"epsilon": 1e-6, "begin_norm_axis": 1}
    t = make("fused_rms_norm_quant", inputs, outs, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(sorted(inputs), ["out", "residual_out"] if parts else "out", **GRAD)


def test_rms_norm_errors():
    x = np.ones((2, 3, 4))
    w = np.ones(12)
    attrs = {"epsilon": 1e-6, "begin_norm_axis": 1, "quant_scale": 0.5}
    op = "fused_rms_norm_quant"
    outs = {"out": x}
    with pytest.raises(tide.TideError, match=r"fused_rms_norm_quant.*quant_scale = 0.5 asks for"):
        make(op, {"x": x, "norm_weight": w}, outs, attrs).check_output()
    attrs["quant_scale"] = -1.0
    with pytest.raises(tide.TideError, match=r"fused_rms_norm_quant.*norm_weight .*\(12\).*\[5\]"):
        make(op, {"x": x, "norm_weight": np.ones(5)}, outs, attrs).check_output()
    with pytest.raises(tide.TideError, match=r"fused_rms_norm_quant.*begin_norm_axis 3 is outside"):
        make(op, {"x": x, "norm_weight": w}, outs, {**attrs, "begin_norm_axis": 3}).check_output()
    with pytest.raises(tide.TideError, match=r"rms_norm.*x .*\[2, 3, 4\] does not end in.*\[3\]"):
        make("rms_norm", {"x": x}, {"y": x}, {"normalized_shape": [3]}).check_output()


# --- swiglu ----------------------------------------------------------------------------------


def silu(a):
    return a / (1 + np.exp(-a))


@pytest.mark.parametrize("with_y", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_swiglu(with_y, dtype):
    x = RNG.uniform(-3, 3, (2, 3, 6)).astype(dtype)
    if with_y:
        y = RNG.uniform(-1, 1, (2, 3, 6)).astype(dtype)
        inputs, want = {"x": x, "y": y}, silu(x.astype("float64")) * y
    else:
        inputs, want = {"x": x}, silu(x[..., :3].astype("float64")) * x[..., 3:]
    t = make("swiglu", inputs, {"out": want.astype(dtype)})
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(sorted(inputs), "out", **GRAD)


def test_swiglu_errors():
    x = np.ones((2, 5))
    with pytest.raises(tide.TideError, match=r"swiglu.*x .*\[2, 5\] is split in two halves"):
        make("swiglu", {"x": x}, {"out": x}).check_output()
    with pytest.raises(tide.TideError, match=r"swiglu.*y \[2, 4\] must have x's dims \[2, 5\]"):
        make("swiglu", {"x": x, "y": np.ones((2, 4))}, {"out": x}).check_output()
