"""Ops that the PaddleOCR / PaddleClas / PaddleNLP families save (issue 31; the fixtures are
test_paddle_families.py's): conv2d_transpose (PaddleOCR's DBHead) and Paddle 2.x's
nearest_interp_v2 / bilinear_interp_v2 (F.upsample / F.interpolate in the DBFPN neck), each
against a float64 numpy reference of Paddle's rule, with gradients by central finite
differences."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(2026)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64


# --- conv2d_transpose --------------------------------------------------------------------------


def conv_transpose_ref(x, w, stride, pad, dil, groups, out_hw):
    """Each input pixel adds w times its value at stride steps (Paddle's definition); pad is
    (top, bottom, left, right), cut from the full output."""
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    cg = c // groups
    full = np.zeros(
        (
            n,
            mg * groups,
            (h - 1) * stride[0] + dil[0] * (kh - 1) + 1 + 8,
            (wd - 1) * stride[1] + dil[1] * (kw - 1) + 1 + 8,
        )
    )
    for g in range(groups):
        for ci in range(cg):
            for i in range(h):
                for j in range(wd):
                    v = x[:, g * cg + ci, i, j][:, None, None, None]
                    for ki in range(kh):
                        for kj in range(kw):
                            oy, ox = i * stride[0] + ki * dil[0], j * stride[1] + kj * dil[1]
                            full[:, g * mg : (g + 1) * mg, oy, ox] += (
                                v[:, :, 0, 0] * w[g * cg + ci, :, ki, kj]
                            )
    return full[:, :, pad[0] : pad[0] + out_hw[0], pad[2] : pad[2] + out_hw[1]]


@pytest.mark.parametrize(
    "stride,paddings,dil,groups,extra",
    [
        ([2, 2], [0, 0], [1, 1], 1, {}),  # DBHead's 2x2 stride 2
        ([1, 1], [1, 1], [1, 1], 1, {}),
        ([2, 1], [1, 0, 0, 1], [1, 2], 2, {}),
        ([2, 2], [1, 1], [1, 1], 1, {"output_padding": [1, 0]}),
        ([3, 2], [0, 0], [1, 1], 1, {"output_size": [9, 8]}),
    ],
)
def test_conv2d_transpose(stride, paddings, dil, groups, extra):
    x = RNG.uniform(-1, 1, (2, 4, 3, 4))
    w = RNG.uniform(-1, 1, (4, 3, 3, 2))
    p = paddings * 2 if len(paddings) == 2 else paddings
    p = [p[0], p[0], p[1], p[1]] if len(paddings) == 2 else paddings
    base = [
        (x.shape[2 + a] - 1) * stride[a]
        - p[2 * a]
        - p[2 * a + 1]
        + dil[a] * (w.shape[2 + a] - 1)
        + 1
        for a in range(2)
    ]
    out_hw = extra.get("output_size") or [
        b + o for b, o in zip(base, extra.get("output_padding", [0, 0]))
    ]
    want = conv_transpose_ref(x, w, stride, p, dil, groups, out_hw)
    attrs = {"strides": stride, "paddings": paddings, "dilations": dil, "groups": groups, **extra}
    t = make("conv2d_transpose", {"Input": x, "Filter": w}, {"Output": want}, attrs)
    t.check_output(rtol=1e-12, atol=1e-12)
    t.check_grad(["Input", "Filter"], "Output", **GRAD)


def test_depthwise_conv2d_transpose():
    """What Paddle emits for groups == channels with one output channel each: the same op."""
    x, w = RNG.uniform(-1, 1, (2, 3, 3, 4)), RNG.uniform(-1, 1, (3, 1, 3, 3))
    want = conv_transpose_ref(x, w, [2, 2], [1, 1, 1, 1], [1, 1], 3, [5, 7])
    attrs = {"strides": [2, 2], "paddings": [1, 1], "groups": 3}
    t = make("depthwise_conv2d_transpose", {"Input": x, "Filter": w}, {"Output": want}, attrs)
    t.check_output(rtol=1e-12, atol=1e-12)
    t.check_grad(["Input", "Filter"], "Output", **GRAD)


def test_conv2d_transpose_nhwc():
    """data_format NHWC: the NCHW result transposed, grads too."""
    x = RNG.uniform(-1, 1, (2, 4, 3, 4))
    w = RNG.uniform(-1, 1, (4, 2, 2, 2))
    want = conv_transpose_ref(x, w, [2, 2], [0, 0, 0, 0], [1, 1], 1, [6, 8])
    t = make(
        "conv2d_transpose",
        # contiguous: the finite differences perturb the array in place through a flat view
        {"Input": np.ascontiguousarray(x.transpose(0, 2, 3, 1)), "Filter": w},
        {"Output": want.transpose(0, 2, 3, 1)},
        {"strides": [2, 2], "data_format": "NHWC"},
    )
    t.check_output(rtol=1e-12, atol=1e-12)
    t.check_grad(["Input", "Filter"], "Output", **GRAD)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("form", ["OutputSize", "OutputSizeTensor"])
def test_conv2d_transpose_run_time_output_size(form, dtype):
    """Paddle 3.x's PIR conv2d_transpose with output_size computed at run time (a UNet's
    `deconv(x, output_size=paddle.shape(skip)[2:])`, or a list of the skip's dims): one int
    tensor (OutputSize) or one-element tensors (OutputSizeTensor) over the attribute; the
    output and both grads as the attribute gives them."""
    x, w = RNG.uniform(-1, 1, (2, 4, 3, 4)), RNG.uniform(-1, 1, (4, 3, 3, 2))
    want = conv_transpose_ref(x, w, [3, 2], [0, 0, 0, 0], [1, 1], 1, [9, 8])
    if form == "OutputSize":
        size = np.array([9, 8], dtype=dtype)
    else:
        size = [("osize_h", np.array([9], dtype=dtype)), ("osize_w", np.array([8], dtype=dtype))]
    t = make(
        "conv2d_transpose",
        {"Input": x, "Filter": w, form: size},
        {"Output": want},
        {"strides": [3, 2], "output_size": [7, 7]},  # the input wins over a stale attribute
    )
    t.check_output(rtol=1e-12, atol=1e-12)
    t.check_grad(["Input", "Filter"], "Output", **GRAD)
    with pytest.raises(tide.TideError, match=r"output_size\[0\] = 12 must be in \[9, 12\)"):
        make(
            "conv2d_transpose",
            {"Input": x, "Filter": w, "OutputSize": np.array([12, 8], dtype=dtype)},
            {"Output": np.zeros((2, 3, 12, 8))},
            {"strides": [3, 2]},
        ).check_output()


def test_conv2d_transpose_refuses_an_output_size_past_a_stride():
    x, w = RNG.uniform(-1, 1, (1, 2, 3, 3)), RNG.uniform(-1, 1, (2, 1, 2, 2))
    with pytest.raises(tide.TideError, match=r"output_size\[0\] = 9 must be in \[6, 8\)"):
        make(
            "conv2d_transpose",
            {"Input": x, "Filter": w},
            {"Output": np.zeros((1, 1, 9, 6))},
            {"strides": [2, 2], "output_size": [9, 6]},
        ).check_output()


# --- nearest_interp_v2 / bilinear_interp_v2 ----------------------------------------------------


def ratio_v2(n_in, n_out, scale):
    """Paddle's v2 step (float32): 1 / scale when a scale gave the size, else in / out."""
    if n_out <= 1:
        return 0.0
    return float(np.float32(1.0 / scale)) if scale > 0 else float(np.float32(n_in / n_out))


def interp_ref(x, method, out_hw, scales):
    n, c, h, w = x.shape
    rh, rw = ratio_v2(h, out_hw[0], scales[0]), ratio_v2(w, out_hw[1], scales[1])
    out = np.zeros((n, c) + tuple(out_hw))

    def taps(k, n_in, r):
        if method == "nearest":
            i = min(int(r * k), n_in - 1)
            return i, i, 1.0, 0.0
        src = max(r * (k + 0.5) - 0.5, 0.0)  # align_mode 0: half-pixel centres
        lo = min(int(src), n_in - 1)
        return lo, min(lo + 1, n_in - 1), 1 - (src - lo), src - lo

    for i in range(out_hw[0]):
        y0, y1, wy0, wy1 = taps(i, h, rh)
        for j in range(out_hw[1]):
            x0, x1, wx0, wx1 = taps(j, w, rw)
            out[:, :, i, j] = wy0 * (wx0 * x[:, :, y0, x0] + wx1 * x[:, :, y0, x1]) + wy1 * (
                wx0 * x[:, :, y1, x0] + wx1 * x[:, :, y1, x1]
            )
    return out


@pytest.mark.parametrize("method", ["nearest", "bilinear"])
@pytest.mark.parametrize(
    "scale,in_hw",
    [
        ([2.0, 2.0], (3, 4)),  # DBFPN's 2x upsampling
        ([1.5, 2.5], (5, 3)),  # the step is 1 / scale, not in / out (5 x 1.5 -> 7)
        ([], (4, 4)),  # out_h / out_w
        ([1.2, 1.2], (4, 4)),  # Out has X's size: X as it is (Paddle copies), not the step 1 / 1.2
    ],
)
def test_interp_v2(method, scale, in_hw):
    x = RNG.uniform(-1, 1, (2, 3) + in_hw)
    attrs = {
        "scale": scale,
        "interp_method": method,
        "align_corners": False,
        "align_mode": 0 if method == "bilinear" else 1,
    }
    if scale:
        out_hw = [int(np.float32(in_hw[a]) * np.float32(scale[a])) for a in range(2)]
        scales = [0, 0] if tuple(out_hw) == in_hw else scale
    else:
        out_hw, scales = [6, 7], [0, 0]
        attrs.update(out_h=6, out_w=7)
    want = interp_ref(x, method, out_hw, scales)
    t = make(method + "_interp_v2", {"X": x}, {"Out": want}, attrs)
    t.check_output(rtol=1e-6, atol=1e-6)
    t.check_grad(["X"], "Out", **GRAD)


@pytest.mark.parametrize("method", ["nearest", "bilinear"])
def test_interp_v2_out_size_keeps_the_scale_step(method):
    """Paddle's v2: OutSize gives the size, a scale still gives the step (1 / 1.5, not 5 / 9)."""
    x = RNG.uniform(-1, 1, (1, 2, 5, 4))
    attrs = {"scale": [1.5, 1.5], "interp_method": method, "align_corners": False, "align_mode": 0}
    want = interp_ref(x, method, [9, 4], [1.5, 1.5])
    make(
        method + "_interp_v2",
        {"X": x, "OutSize": np.array([9, 4], dtype=np.int32)},
        {"Out": want},
        attrs,
    ).check_output(rtol=1e-6, atol=1e-6)
