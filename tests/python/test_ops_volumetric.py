"""Volumetric (NCDHW) ops of 3-D CNNs for video and medical images: conv3d, conv3d_transpose,
pool3d, max_pool3d_with_index, trilinear_interp_v2 and nearest_interp_v2 on 5-D inputs, each
against an independent numpy reference of Paddle's rule (float32 and float64; NCDHW and NDHWC),
gradients by central finite differences (float64), and the errors of bad inputs."""

import itertools

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(11)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]


def rand(*shape, dtype="float64"):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-4} if dtype == "float32" else {"atol": 1e-10, "rtol": 1e-10}


def six(p):
    """paddings of 3 (d, h, w) or 6 (front, back, top, bottom, left, right) values as pairs."""
    return (
        [(p[a], p[a]) for a in range(3)]
        if len(p) == 3
        else [(p[2 * a], p[2 * a + 1]) for a in range(3)]
    )


def to_last(a):
    return np.ascontiguousarray(np.moveaxis(a, 1, -1))


# --- conv3d ------------------------------------------------------------------------------------


def conv3d_ref(x, w, strides, paddings, dilations, groups):
    """Correlation of x [N, C, D, H, W] by w [M, C / groups, kd, kh, kw] with zero padding."""
    pads = six(paddings)
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    m, cg = w.shape[:2]
    ks = w.shape[2:]
    outs = [
        (xp.shape[2 + a] - (dilations[a] * (ks[a] - 1) + 1)) // strides[a] + 1 for a in range(3)
    ]
    out = np.zeros((x.shape[0], m) + tuple(outs))
    mg = m // groups
    for g in range(groups):
        for tap in itertools.product(*[range(k) for k in ks]):
            sl = tuple(
                slice(
                    tap[a] * dilations[a],
                    tap[a] * dilations[a] + strides[a] * (outs[a] - 1) + 1,
                    strides[a],
                )
                for a in range(3)
            )
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            out[:, g * mg : (g + 1) * mg] += np.einsum(
                "ncdhw,mc->nmdhw", patch, w[g * mg : (g + 1) * mg, :][(Ellipsis,) + tap]
            )
    return out


def conv3d_attrs(strides, paddings, dilations, groups, fmt="NCDHW", algo="EXPLICIT"):
    return {
        "strides": strides,
        "paddings": paddings,
        "dilations": dilations,
        "groups": groups,
        "data_format": fmt,
        "padding_algorithm": algo,
    }


CONV3D_CASES = [
    # x shape, w shape, strides, paddings, dilations, groups
    ((2, 3, 4, 5, 5), (4, 3, 3, 3, 3), [1, 1, 1], [1, 1, 1], [1, 1, 1], 1),
    ((1, 4, 5, 6, 4), (6, 2, 2, 3, 2), [2, 1, 2], [0, 1, 1, 0, 2, 1], [1, 2, 1], 2),
    ((2, 2, 3, 4, 4), (3, 2, 1, 1, 1), [1, 1, 1], [0, 0, 0], [1, 1, 1], 1),  # pointwise
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONV3D_CASES)
@pytest.mark.parametrize("fmt", ["NCDHW", "NDHWC"])
def test_conv3d(dtype, case, fmt):
    xs, ws, s, p, d, g = case
    x, w = rand(*xs, dtype=dtype), rand(*ws, dtype=dtype)
    want = conv3d_ref(x, w, s, p, d, g).astype(dtype)
    if fmt == "NDHWC":
        x, want = to_last(x), to_last(want)
    t = make("conv3d", {"Input": x, "Filter": w}, {"Output": want}, conv3d_attrs(s, p, d, g, fmt))
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["Input", "Filter"], "Output", **GRAD)


def test_conv3d_same_and_valid():
    x, w = rand(1, 2, 5, 6, 7), rand(3, 2, 3, 2, 3)
    # SAME: output ceil(in / stride), the padding split with the extra cell at the end.
    s = [2, 2, 3]
    pads = []
    for a, (n, k) in enumerate(zip(x.shape[2:], w.shape[2:])):
        total = max((-(-n // s[a]) - 1) * s[a] + k - n, 0)
        pads += [total // 2, total - total // 2]
    want = conv3d_ref(x, w, s, pads, [1, 1, 1], 1)
    attrs = conv3d_attrs(s, [0, 0, 0], [2, 2, 2], 1, algo="SAME")  # SAME is never dilated
    make("conv3d", {"Input": x, "Filter": w}, {"Output": want}, attrs).check_output(
        **tol("float64")
    )
    want = conv3d_ref(x, w, [1, 1, 1], [0, 0, 0], [1, 1, 1], 1)
    attrs = conv3d_attrs([1, 1, 1], [1, 1, 1], [1, 1, 1], 1, algo="VALID")
    make("conv3d", {"Input": x, "Filter": w}, {"Output": want}, attrs).check_output(
        **tol("float64")
    )


def test_conv3d_errors():
    x, w = rand(1, 4, 3, 3, 3), rand(2, 4, 2, 2, 2)
    attrs = conv3d_attrs([1, 1, 1], [0, 0, 0], [1, 1, 1], 1)
    with pytest.raises(
        tide.TideError, match=r"conv3d.*Input must be 5-D \[N, C, D, H, W\], got \[4, 3, 3, 3\]"
    ):
        make("conv3d", {"Input": x[0], "Filter": w}, {"Output": x}, attrs).check_output()
    with pytest.raises(
        tide.TideError, match=r"conv3d.*Input \[1, 4, 3, 3, 3\] has 4 channels but Filter"
    ):
        make(
            "conv3d", {"Input": x, "Filter": w}, {"Output": x}, dict(attrs, groups=2)
        ).check_output()
    with pytest.raises(tide.TideError, match=r"conv3d.*paddings' needs 3 values \(d, h, w\) or 6"):
        make(
            "conv3d", {"Input": x, "Filter": w}, {"Output": x}, dict(attrs, paddings=[1, 1])
        ).check_output()
    with pytest.raises(tide.TideError, match=r"conv3d.*the output would be empty"):
        make(
            "conv3d", {"Input": x, "Filter": rand(2, 4, 4, 2, 2)}, {"Output": x}, attrs
        ).check_output()
    with pytest.raises(tide.TideError, match=r"conv3d.*Input is float64 but Filter is float32"):
        make(
            "conv3d", {"Input": x, "Filter": w.astype("float32")}, {"Output": x}, attrs
        ).check_output()


# --- conv3d_transpose --------------------------------------------------------------------------


def conv3d_transpose_ref(x, w, strides, paddings, dilations, groups, output_padding=(0, 0, 0)):
    """Each input cell adds w times its value into the output window at stride steps; then the
    paddings are cut off each side (output_padding extends the end)."""
    pads = six(paddings)
    c, mg = w.shape[:2]
    ks = w.shape[2:]
    ins = x.shape[2:]
    full = [(ins[a] - 1) * strides[a] + dilations[a] * (ks[a] - 1) + 1 for a in range(3)]
    out = np.zeros((x.shape[0], mg * groups) + tuple(f + op for f, op in zip(full, output_padding)))
    cg = c // groups
    for g in range(groups):
        for tap in itertools.product(*[range(k) for k in ks]):
            sl = tuple(
                slice(
                    tap[a] * dilations[a],
                    tap[a] * dilations[a] + strides[a] * (ins[a] - 1) + 1,
                    strides[a],
                )
                for a in range(3)
            )
            out[(slice(None), slice(g * mg, (g + 1) * mg)) + sl] += np.einsum(
                "ncdhw,cm->nmdhw",
                x[:, g * cg : (g + 1) * cg],
                w[g * cg : (g + 1) * cg][(Ellipsis,) + tap],
            )
    size = [full[a] - pads[a][0] - pads[a][1] + output_padding[a] for a in range(3)]
    return out[
        (slice(None), slice(None))
        + tuple(slice(pads[a][0], pads[a][0] + size[a]) for a in range(3))
    ]


CONV3D_T_CASES = [
    # x shape, w shape, strides, paddings, dilations, groups, output_padding
    ((2, 3, 3, 4, 3), (3, 2, 3, 3, 3), [1, 1, 1], [1, 1, 1], [1, 1, 1], 1, []),
    ((1, 4, 3, 2, 3), (4, 3, 2, 3, 2), [2, 2, 1], [0, 1, 1, 0, 0, 0], [1, 1, 2], 2, [1, 0, 0]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONV3D_T_CASES)
@pytest.mark.parametrize("fmt", ["NCDHW", "NDHWC"])
def test_conv3d_transpose(dtype, case, fmt):
    xs, ws, s, p, d, g, op = case
    x, w = rand(*xs, dtype=dtype), rand(*ws, dtype=dtype)
    want = conv3d_transpose_ref(x, w, s, p, d, g, op or (0, 0, 0)).astype(dtype)
    if fmt == "NDHWC":
        x, want = to_last(x), to_last(want)
    attrs = dict(conv3d_attrs(s, p, d, g, fmt), output_padding=op)
    t = make("conv3d_transpose", {"Input": x, "Filter": w}, {"Output": want}, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["Input", "Filter"], "Output", **GRAD)


def test_conv3d_transpose_output_size():
    x, w = rand(1, 2, 3, 3, 3), rand(2, 2, 3, 3, 3)
    want = conv3d_transpose_ref(x, w, [2, 2, 2], [1, 1, 1], [1, 1, 1], 1, (1, 0, 1))
    attrs = dict(conv3d_attrs([2, 2, 2], [1, 1, 1], [1, 1, 1], 1), output_size=[6, 5, 6])
    make("conv3d_transpose", {"Input": x, "Filter": w}, {"Output": want}, attrs).check_output(
        **tol("float64")
    )
    with pytest.raises(
        tide.TideError, match=r"conv3d_transpose.*output_size\[0\] = 8 must be in \[5, 7\)"
    ):
        attrs["output_size"] = [8, 5, 5]
        make("conv3d_transpose", {"Input": x, "Filter": w}, {"Output": want}, attrs).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"conv3d_transpose.*Input \[1, 2, 3, 3, 3\] has 2 channels but Filter \[3",
    ):
        make(
            "conv3d_transpose",
            {"Input": x, "Filter": rand(3, 2, 3, 3, 3)},
            {"Output": want},
            conv3d_attrs([1, 1, 1], [0, 0, 0], [1, 1, 1], 1),
        ).check_output()


# --- pool3d ------------------------------------------------------------------------------------


def pool_windows(n, out, k, s, pb, adaptive):
    """Per output index the input window [b, e) and the padded span (Paddle 3's divisor when not
    exclusive)."""
    wins = []
    for i in range(out):
        if adaptive:
            b, e = i * n // out, -(-(i + 1) * n // out)
            wins.append((b, e, e - b))
        else:
            start = i * s - pb
            end = min(start + k, n + pb)
            wins.append((max(start, 0), min(end, n), end - start))
    return wins


def pool3d_ref(
    x, pooling, ksize, strides, paddings, ceil_mode=False, exclusive=True, adaptive=False
):
    pads = six(paddings)
    wins = []
    for a in range(3):
        n = x.shape[2 + a]
        if adaptive:
            out = ksize[a]
        else:
            span = n - ksize[a] + pads[a][0] + pads[a][1]
            out = (span + (strides[a] - 1 if ceil_mode else 0)) // strides[a] + 1
        wins.append(pool_windows(n, out, ksize[a], strides[a], pads[a][0], adaptive))
    out = np.zeros(x.shape[:2] + tuple(len(w) for w in wins), x.dtype)
    for i, j, k in itertools.product(*[range(len(w)) for w in wins]):
        (d0, d1, sd), (h0, h1, sh), (w0, w1, sw) = wins[0][i], wins[1][j], wins[2][k]
        cell = x[:, :, d0:d1, h0:h1, w0:w1]
        if pooling == "max":
            out[:, :, i, j, k] = cell.max(axis=(2, 3, 4))
        else:
            div = cell[0, 0].size if exclusive or adaptive else sd * sh * sw
            out[:, :, i, j, k] = cell.sum(axis=(2, 3, 4)) / div
    return out


def pool3d_attrs(pooling, ksize, strides, paddings, fmt="NCDHW", **kw):
    attrs = {
        "pooling_type": pooling,
        "ksize": ksize,
        "strides": strides,
        "paddings": paddings,
        "data_format": fmt,
        "ceil_mode": False,
        "exclusive": True,
        "adaptive": False,
        "global_pooling": False,
    }
    attrs.update(kw)
    return attrs


POOL3D_CASES = [
    # pooling, ksize, strides, paddings, extra attributes
    ("max", [2, 2, 2], [2, 2, 2], [0, 0, 0], {}),
    ("max", [3, 2, 3], [2, 1, 2], [1, 0, 1, 1, 0, 1], {"ceil_mode": True}),
    ("avg", [3, 3, 3], [1, 1, 1], [1, 1, 1], {}),
    ("avg", [3, 3, 2], [2, 2, 2], [1, 1, 1], {"exclusive": False, "ceil_mode": True}),
    ("avg", [2, 3, 2], [1, 1, 1], [0, 0, 0], {"adaptive": True}),
    ("max", [3, 2, 2], [1, 1, 1], [0, 0, 0], {"adaptive": True}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", POOL3D_CASES)
@pytest.mark.parametrize("fmt", ["NCDHW", "NDHWC"])
def test_pool3d(dtype, case, fmt):
    pooling, k, s, p, extra = case
    x = rand(2, 3, 5, 6, 5, dtype=dtype)
    want = pool3d_ref(x, pooling, k, s, p, **extra)
    if fmt == "NDHWC":
        x, want = to_last(x), to_last(want)
    t = make("pool3d", {"X": x}, {"Out": want}, pool3d_attrs(pooling, k, s, p, fmt, **extra))
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_pool3d_global_and_same():
    x = rand(2, 3, 4, 5, 3)
    for pooling in ("max", "avg"):
        want = (
            x.max(axis=(2, 3, 4), keepdims=True)
            if pooling == "max"
            else x.mean(axis=(2, 3, 4), keepdims=True)
        )
        attrs = pool3d_attrs(pooling, [1, 1, 1], [1, 1, 1], [0, 0, 0], global_pooling=True)
        make("pool3d", {"X": x}, {"Out": want}, attrs).check_output(**tol("float64"))
    # SAME: output ceil(in / stride); the padding (split, the extra cell at the end) is skipped.
    attrs = pool3d_attrs("avg", [2, 3, 2], [2, 2, 2], [0, 0, 0], padding_algorithm="SAME")
    want = pool3d_ref(x, "avg", [2, 3, 2], [2, 2, 2], [0, 0, 1, 1, 0, 1])
    make("pool3d", {"X": x}, {"Out": want}, attrs).check_output(**tol("float64"))


def test_local_response_norm_as_pool3d():
    """F.local_response_norm's export: the squares, padded on the channel axis, avg-pooled by a
    (size, 1, 1) window over [N, 1, C, H, W]."""
    x = rand(2, 5, 3, 4)
    size = 3
    sq = np.pad(x * x, [(0, 0), (size // 2, (size - 1) // 2), (0, 0), (0, 0)])[:, None]
    want = np.stack([sq[:, :, c : c + size].mean(axis=2) for c in range(5)], axis=2)
    attrs = pool3d_attrs("avg", [size, 1, 1], [1, 1, 1], [0, 0, 0])
    make("pool3d", {"X": sq}, {"Out": want}, attrs).check_output(**tol("float64"))


def test_pool3d_errors():
    x = rand(1, 2, 3, 3, 3)
    attrs = pool3d_attrs("max", [2, 2, 2], [1, 1, 1], [0, 0, 0])
    with pytest.raises(
        tide.TideError, match=r"pool3d.*X must be 5-D \[N, C, D, H, W\], got \[2, 3, 3, 3\]"
    ):
        make("pool3d", {"X": x[0]}, {"Out": x}, attrs).check_output()
    with pytest.raises(tide.TideError, match=r"pool3d.*ksize needs 3 values \(d, h, w\), got 2"):
        make("pool3d", {"X": x}, {"Out": x}, dict(attrs, ksize=[2, 2])).check_output()
    with pytest.raises(tide.TideError, match=r"pool3d.*the output would be empty"):
        make("pool3d", {"X": x}, {"Out": x}, dict(attrs, ksize=[4, 2, 2])).check_output()


# --- max_pool3d_with_index ---------------------------------------------------------------------


def max_pool3d_index_ref(x, ksize, strides, paddings, ceil_mode=False, adaptive=False):
    """The max of each window and its flat position (d * H + h) * W + w in the volume, the first
    of equal maxima winning."""
    dims = x.shape[2:]
    wins = []
    for a in range(3):
        if adaptive:
            out = ksize[a]
        else:
            span = dims[a] - ksize[a] + 2 * paddings[a]
            out = (span + (strides[a] - 1 if ceil_mode else 0)) // strides[a] + 1
        wins.append(pool_windows(dims[a], out, ksize[a], strides[a], paddings[a], adaptive))
    shape = x.shape[:2] + tuple(len(w) for w in wins)
    out, mask = np.zeros(shape, x.dtype), np.zeros(shape, np.int32)
    for i, j, k in itertools.product(*[range(len(w)) for w in wins]):
        (d0, d1, _), (h0, h1, _), (w0, w1, _) = wins[0][i], wins[1][j], wins[2][k]
        cell = x[:, :, d0:d1, h0:h1, w0:w1].reshape(x.shape[:2] + (-1,))
        arg = cell.argmax(axis=2)
        dd, hh, ww = np.unravel_index(arg, (d1 - d0, h1 - h0, w1 - w0))
        out[:, :, i, j, k] = cell.max(axis=2)
        mask[:, :, i, j, k] = ((dd + d0) * dims[1] + hh + h0) * dims[2] + ww + w0
    return out, mask


MAX_POOL3D_INDEX_CASES = [
    # ksize, strides, paddings, extra attributes
    ([2, 2, 2], [2, 2, 2], [0, 0, 0], {}),
    ([3, 3, 2], [2, 1, 2], [1, 1, 0], {"ceil_mode": True}),
    ([2, 3, 2], [1, 1, 1], [0, 0, 0], {"adaptive": True}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", MAX_POOL3D_INDEX_CASES)
def test_max_pool3d_with_index(dtype, case):
    k, s, p, extra = case
    x = rand(2, 3, 5, 6, 5, dtype=dtype)
    out, mask = max_pool3d_index_ref(x, k, s, p, **extra)
    attrs = {"ksize": k, "strides": s, "paddings": p, "global_pooling": False, "adaptive": False}
    attrs.update(extra)
    t = make("max_pool3d_with_index", {"X": x}, {"Out": out, "Mask": mask}, attrs)
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_max_pool3d_with_index_global():
    x = rand(2, 3, 3, 4, 2)
    out, mask = max_pool3d_index_ref(x, [3, 4, 2], [1, 1, 1], [0, 0, 0])
    attrs = {
        "ksize": [1, 1, 1],
        "strides": [1, 1, 1],
        "paddings": [1, 1, 1],
        "global_pooling": True,
    }
    make("max_pool3d_with_index", {"X": x}, {"Out": out, "Mask": mask}, attrs).check_output(
        atol=0, rtol=0
    )


def test_max_pool3d_with_index_errors():
    x = rand(1, 2, 3, 3, 3)
    attrs = {"ksize": [2, 2, 2], "strides": [1, 1, 1], "paddings": [0, 0, 0]}
    with pytest.raises(
        tide.TideError, match=r"max_pool3d_with_index.*X must be 5-D \[N, C, D, H, W\]"
    ):
        make("max_pool3d_with_index", {"X": x[0]}, {"Out": x, "Mask": x}, attrs).check_output()
    with pytest.raises(
        tide.TideError, match=r"max_pool3d_with_index.*need 3 values each \(d, h, w\), got 2"
    ):
        make(
            "max_pool3d_with_index", {"X": x}, {"Out": x, "Mask": x}, dict(attrs, ksize=[2, 2])
        ).check_output()
    with pytest.raises(
        tide.TideError, match=r"max_pool3d_with_index.*window 4 is larger than the padded input 3"
    ):
        make(
            "max_pool3d_with_index", {"X": x}, {"Out": x, "Mask": x}, dict(attrs, ksize=[4, 2, 2])
        ).check_output()


# --- trilinear_interp_v2, nearest_interp_v2 on 5-D X -------------------------------------------


def interp_matrix(method, n_in, n_out, scale, align_corners, align_mode):
    """[n_out, n_in]: each output index's weights over the input (Paddle's Interpolate3D rule for
    one axis; the step in float32 as Paddle's)."""
    m = np.zeros((n_out, n_in))
    if n_out == n_in and scale is None:
        return np.eye(n_in)
    if n_out > 1:
        if align_corners:
            ratio = np.float32(n_in - 1) / np.float32(n_out - 1)
        else:
            ratio = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    else:
        ratio = np.float32(0)
    ratio = float(ratio)
    for k in range(n_out):
        if method == "nearest":
            i = int(np.floor(ratio * k + 0.5)) if align_corners else int(ratio * k)
            m[k, min(i, n_in - 1)] = 1
            continue
        src = ratio * (k + 0.5) - 0.5 if (align_mode == 0 and not align_corners) else ratio * k
        src = max(src, 0.0)
        lo = min(int(src), n_in - 1)
        hi = lo + 1 if lo + 1 < n_in else lo
        frac = src - lo
        m[k, lo] += 1 - frac
        m[k, hi] += frac
    return m


def interp3d_ref(x, method, out, scales=None, align_corners=False, align_mode=0):
    same = tuple(out) == x.shape[2:]
    ms = [
        np.eye(x.shape[2 + a])
        if same
        else interp_matrix(
            method, x.shape[2 + a], out[a], scales[a] if scales else None, align_corners, align_mode
        )
        for a in range(3)
    ]
    return np.einsum("ncdhw,id,jh,kw->ncijk", x, *ms)


def interp_attrs(
    method, out=(-1, -1, -1), scale=(), align_corners=False, align_mode=0, layout="NCDHW"
):
    return {
        "out_d": out[0],
        "out_h": out[1],
        "out_w": out[2],
        "scale": list(scale),
        "interp_method": method,
        "align_corners": align_corners,
        "align_mode": align_mode,
        "data_layout": layout,
    }


INTERP3D_CASES = [
    # op, out size attrs, scale attr, align_corners, align_mode, the reference's out size
    ("trilinear_interp_v2", (-1, -1, -1), (2.0, 2.0, 2.0), False, 0, (6, 8, 10)),
    ("trilinear_interp_v2", (5, 3, 7), (), True, 1, (5, 3, 7)),
    ("trilinear_interp_v2", (2, 6, 4), (), False, 1, (2, 6, 4)),
    ("trilinear_interp_v2", (-1, -1, -1), (1.5, 0.75, 1.3), False, 0, (4, 3, 6)),
    ("nearest_interp_v2", (-1, -1, -1), (2.0, 1.5, 2.0), False, 1, (6, 6, 10)),
    ("nearest_interp_v2", (4, 7, 3), (), True, 1, (4, 7, 3)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", INTERP3D_CASES)
@pytest.mark.parametrize("layout", ["NCDHW", "NDHWC"])
def test_interp3d(dtype, case, layout):
    op, out, scale, ac, mode, ref_out = case
    method = op.split("_")[0]
    x = rand(2, 2, 3, 4, 5, dtype=dtype)
    want = interp3d_ref(x, method, ref_out, scale or None, ac, mode).astype(dtype)
    if layout == "NDHWC":
        x, want = to_last(x), to_last(want)
    t = make(
        method + "_interp_v2",
        {"X": x},
        {"Out": want},
        interp_attrs(method, out, scale, ac, mode, layout),
    )
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_interp3d_size_inputs():
    x = rand(1, 2, 3, 4, 5)
    want = interp3d_ref(x, "trilinear", (4, 6, 3), None, False, 0)
    # PIR writes NCHW as the layout of a 5-D X too.
    attrs = interp_attrs("trilinear", (2, 2, 2), layout="NCHW")
    size = np.array([4, 6, 3], np.int32)
    make("trilinear_interp_v2", {"X": x, "OutSize": size}, {"Out": want}, attrs).check_output(
        **tol("float64")
    )
    parts = [("sz%d" % i, np.array([v], np.int64)) for i, v in enumerate([4, 6, 3])]
    t = make("trilinear_interp_v2", {"X": x, "SizeTensor": parts}, {"Out": want}, attrs)
    t.check_output(**tol("float64"))
    t.check_grad(["X"], "Out", **GRAD)
    # A Scale tensor: the size and the step 1 / scale.
    want = interp3d_ref(x, "nearest", (6, 8, 10), (2.0, 2.0, 2.0))
    scale = np.array([2.0], np.float32)
    attrs = interp_attrs("nearest")
    make("nearest_interp_v2", {"X": x, "Scale": scale}, {"Out": want}, attrs).check_output(
        **tol("float64")
    )


def test_interp3d_errors():
    x = rand(1, 2, 3, 4, 5)
    attrs = interp_attrs("trilinear", (4, 4, 4))
    with pytest.raises(
        tide.TideError,
        match=r"trilinear_interp_v2.*X must be 5-D \[N, C, D, H, W\], got \[2, 3, 4, 5\]",
    ):
        make("trilinear_interp_v2", {"X": x[0]}, {"Out": x}, attrs).check_output()
    with pytest.raises(
        tide.TideError, match=r"trilinear_interp_v2.*scale of a 5-D X needs 0, 1 or 3 values"
    ):
        make(
            "trilinear_interp_v2", {"X": x}, {"Out": x}, dict(attrs, scale=[2.0, 2.0])
        ).check_output()
    with pytest.raises(
        tide.TideError, match=r"trilinear_interp_v2.*OutSize must give 3 values \(d, h, w\)"
    ):
        size = np.array([4, 4], np.int32)
        make("trilinear_interp_v2", {"X": x, "OutSize": size}, {"Out": x}, attrs).check_output()
    with pytest.raises(tide.TideError, match=r"nearest_interp_v2.*output size must be positive"):
        make(
            "nearest_interp_v2", {"X": x}, {"Out": x}, interp_attrs("nearest", (0, 4, 4))
        ).check_output()
