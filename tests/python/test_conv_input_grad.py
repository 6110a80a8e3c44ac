"""conv2d_grad's Input@GRAD on the plain float32 kernel: for a "same"-padded stride-1 conv
(plugins/ops_nn/conv_backward_data.h) it is a forward conv of Output@GRAD with the filter turned
180 degrees and its channels swapped (Winograd's F(2x2, 3x3) or the direct kernel), elsewhere GEMMs
and col2im. Each is checked against a float64 numpy scatter of Output@GRAD through the filter
(an independent formulation), with Filter@GRAD alongside: 3x3 padded 1 (Winograd; the direct
kernel for few channels), 5x5 padded 2, asymmetric padding, NHWC, odd sizes, and shapes that keep
the GEMM (few positions, no padding, stride 2, dilation, groups)."""

import numpy as np
import pytest

import tide

# (id, N, C, H, W, M, kh, kw, strides, paddings [top, bottom, left, right], dilations, groups,
#  data_format)
CASES = [
    ("3x3_winograd", 2, 40, 15, 13, 36, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1, "NCHW"),
    ("3x3_direct_few_channels", 4, 16, 32, 33, 24, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1, "NCHW"),
    ("5x5_pad2_direct", 2, 24, 48, 47, 20, 5, 5, [1, 1], [2, 2, 2, 2], [1, 1], 1, "NCHW"),
    # few positions: the GEMM keeps it (the direct kernel's per-run packing would not pay)
    ("3x3_few_positions_gemm", 1, 48, 5, 6, 40, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1, "NCHW"),
    ("3x3_asym_pad", 2, 36, 24, 20, 33, 3, 3, [1, 1], [1, 2, 2, 1], [1, 1], 1, "NCHW"),
    ("3x3_nhwc", 2, 32, 11, 12, 40, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1, "NHWC"),
    # the GEMM keeps these: the backward's padding would exceed the forward's, a stride, a
    # dilation, groups
    ("3x3_unpadded_gemm", 2, 32, 10, 9, 32, 3, 3, [1, 1], [0, 0, 0, 0], [1, 1], 1, "NCHW"),
    ("3x3_stride2_gemm", 1, 32, 13, 12, 32, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 1, "NCHW"),
    ("3x3_dilated_gemm", 1, 32, 12, 12, 32, 3, 3, [1, 1], [2, 2, 2, 2], [2, 2], 1, "NCHW"),
    ("3x3_grouped_gemm", 1, 32, 9, 9, 32, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 2, "NCHW"),
]


def out_size(case):
    _, n, c, h, w, m, kh, kw, st, p, d, _, _ = case
    oh = (h + p[0] + p[1] - (d[0] * (kh - 1) + 1)) // st[0] + 1
    ow = (w + p[2] + p[3] - (d[1] * (kw - 1) + 1)) // st[1] + 1
    return oh, ow


def reference_grads(case, x, f, d):
    """Input@GRAD and Filter@GRAD (float64) of sum(conv(x, f) * d), NCHW: d scattered back through
    every filter tap (Input@GRAD) and correlated with the taps' input windows (Filter@GRAD)."""
    _, n, c, h, w, m, kh, kw, st, p, dil, groups, _ = case
    oh, ow = out_size(case)
    xp = np.zeros((n, c, h + p[0] + p[1], w + p[2] + p[3]))
    xp[:, :, p[0] : p[0] + h, p[2] : p[2] + w] = x
    dxp = np.zeros_like(xp)
    df = np.zeros(f.shape)
    cg, mg = c // groups, m // groups
    for gi in range(groups):
        cs, ms = slice(gi * cg, (gi + 1) * cg), slice(gi * mg, (gi + 1) * mg)
        for ky in range(kh):
            for kx in range(kw):
                ys = slice(ky * dil[0], ky * dil[0] + st[0] * (oh - 1) + 1, st[0])
                xs = slice(kx * dil[1], kx * dil[1] + st[1] * (ow - 1) + 1, st[1])
                tap = f[ms, :, ky, kx].astype(np.float64)  # [mg, cg]
                dxp[:, cs, ys, xs] += np.einsum("nmhw,mc->nchw", d[:, ms], tap)
                df[ms, :, ky, kx] += np.einsum("nmhw,nchw->mc", d[:, ms], xp[:, cs, ys, xs])
    return dxp[:, :, p[0] : p[0] + h, p[2] : p[2] + w], df


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_conv2d_input_and_filter_grads_match_float64(case, rng):
    name, n, c, h, w, m, kh, kw, strides, paddings, dilations, groups, fmt = case
    oh, ow = out_size(case)
    x = rng.uniform(-1, 1, (n, c, h, w)).astype("float32")
    f = rng.uniform(-1, 1, (m, c // groups, kh, kw)).astype("float32")
    d = rng.uniform(-1, 1, (n, m, oh, ow)).astype("float32")
    nhwc = fmt == "NHWC"
    to_fmt = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1))) if nhwc else (lambda a: a)
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        xv = b.create_var(name="x", shape=to_fmt(x).shape, dtype="float32", stop_gradient=False)
        fv = b.create_var(name="f", shape=f.shape, dtype="float32", stop_gradient=False)
        out = b.create_var(name="out", dtype="float32")
        b.append_op(
            "conv2d",
            inputs={"Input": [xv], "Filter": [fv]},
            outputs={"Output": [out]},
            attrs={
                "strides": strides,
                "paddings": paddings,
                "dilations": dilations,
                "groups": groups,
                "data_format": fmt,
            },
        )
        dv = b.create_var(name="d", shape=to_fmt(d).shape, dtype="float32")
        loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(out, dv))
        tide.append_backward(loss, no_grad_set={"d"})
    exe = tide.Executor(tide.CPUPlace())
    gx, gf = exe.run(
        main,
        feed={"x": to_fmt(x), "f": f, "d": to_fmt(d)},
        fetch_list=["x@GRAD", "f@GRAD"],
        scope=tide.Scope(),
    )
    want_x, want_f = reference_grads(case, x, f, d)
    if nhwc:
        want_x = want_x.transpose(0, 2, 3, 1)
    # float32 sums of M * kh * kw (Input@GRAD) or N * oh * ow (Filter@GRAD) products in [-1, 1]
    tol_x = 4e-6 * (m // groups * kh * kw) ** 0.5 + 1e-6
    tol_f = 4e-6 * (n * oh * ow) ** 0.5 + 1e-6
    np.testing.assert_allclose(gx, want_x, rtol=1e-5, atol=tol_x, err_msg=name + " Input@GRAD")
    np.testing.assert_allclose(gf, want_f, rtol=1e-5, atol=tol_f, err_msg=name + " Filter@GRAD")
