"""More of Paddle's nn ops (nnextra): fold, unpool / unpool3d, lp_pool2d, linear_interp_v2,
crop_tensor, spectral_norm, bilinear_tensor_product, multiplex and shard_index; against numpy
float64 references written from Paddle's rules, gradients by central differences (spectral_norm's
against Paddle's own formula, which is not the exact derivative), and the errors of bad inputs."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(62)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]


def tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-5} if dtype == "float32" else {"atol": 1e-12, "rtol": 1e-12}


def check(t, dtype, grads, out="Out"):
    t.check_output(**tol(dtype))
    if dtype == "float64" and grads:
        t.check_grad(grads, out, **GRAD)


# --- fold -----------------------------------------------------------------------------------


def fold_blocks(out_hw, k, s, p, d):
    """The patch grid (Paddle's rule: the top / left padding on both sides)."""
    bh = (out_hw[0] + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    bw = (out_hw[1] + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    return bh, bw


def fold_ref(x, out_hw, k, s, p, d):
    """col2im: each column entry added to the pixel its patch position reads (p: t, l, b, r)."""
    n, ckk, _ = x.shape
    c = ckk // (k[0] * k[1])
    bh, bw = fold_blocks(out_hw, k, s, p, d)
    out = np.zeros((n, c) + tuple(out_hw))
    for ch in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                row = (ch * k[0] + i) * k[1] + j
                for by in range(bh):
                    for bx in range(bw):
                        y, xx = by * s[0] - p[0] + i * d[0], bx * s[1] - p[1] + j * d[1]
                        if 0 <= y < out_hw[0] and 0 <= xx < out_hw[1]:
                            out[:, ch, y, xx] += x[:, row, by * bw + bx]
    return out


@pytest.mark.parametrize(
    "out_hw,k,s,p,d",
    [
        ([4, 4], [2, 2], [1, 1], [0, 0, 0, 0], [1, 1]),
        ([5, 6], [2, 3], [2, 1], [1, 0, 1, 0], [1, 2]),
        ([5, 7], [3, 2], [2, 3], [1, 2, 1, 2], [2, 1]),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_fold(out_hw, k, s, p, d, dtype):
    bh, bw = fold_blocks(out_hw, k, s, p, d)
    x = RNG.uniform(-1, 1, (2, 3 * k[0] * k[1], bh * bw)).astype(dtype)
    want = fold_ref(x.astype("float64"), out_hw, k, s, p, d)
    attrs = {"output_sizes": out_hw, "kernel_sizes": k, "strides": s, "paddings": p}
    attrs["dilations"] = d
    check(make("fold", {"X": x}, {"Y": want.astype(dtype)}, attrs), dtype, ["X"], "Y")


def test_fold_errors():
    x = np.zeros((1, 12, 9))
    attrs = {"output_sizes": [4, 4], "kernel_sizes": [2, 2]}
    with pytest.raises(tide.TideError, match=r"fold.*X \[1, 12, 8\] must hold 3 \* 3 = 9 patches"):
        make("fold", {"X": x[:, :, :8]}, {"Y": np.zeros((1, 3, 4, 4))}, attrs).check_output()
    with pytest.raises(tide.TideError, match=r"fold.*dim 1 \(10\) must be a multiple of kh \* kw"):
        make("fold", {"X": x[:, :10]}, {"Y": np.zeros((1, 3, 4, 4))}, attrs).check_output()
    with pytest.raises(tide.TideError, match=r"fold.*output_sizes must be 2 positive values"):
        bad = dict(attrs, output_sizes=[4])
        make("fold", {"X": x}, {"Y": np.zeros((1, 3, 4, 4))}, bad).check_output()


# --- unpool / unpool3d -------------------------------------------------------------------------


def unique_indices(shape, out_plane):
    """Distinct flat indices in each output plane (as a max pool's mask gives)."""
    n, c = shape[:2]
    plane = int(np.prod(shape[2:]))
    idx = [RNG.permutation(out_plane)[:plane] for _ in range(n * c)]
    return np.array(idx).reshape(shape).astype("int32")


def unpool_ref(x, idx, out_spatial):
    n, c = x.shape[:2]
    out = np.zeros((n, c, int(np.prod(out_spatial))))
    out[np.arange(n)[:, None, None], np.arange(c)[None, :, None], idx.reshape(n, c, -1)] = (
        x.reshape(n, c, -1)
    )
    return out.reshape((n, c) + tuple(out_spatial))


@pytest.mark.parametrize("output_size", [[5, 5], []])
@pytest.mark.parametrize("dtype", DTYPES)
def test_unpool(output_size, dtype):
    x = RNG.uniform(-1, 1, (2, 3, 2, 2)).astype(dtype)
    spatial = output_size or [4, 4]  # (2 - 1) * 2 - 0 + 2
    idx = unique_indices(x.shape, int(np.prod(spatial)))
    want = unpool_ref(x.astype("float64"), idx, spatial)
    attrs = {"ksize": [2, 2], "strides": [2, 2], "paddings": [0, 0], "output_size": output_size}
    t = make("unpool", {"X": x, "Indices": idx}, {"Out": want.astype(dtype)}, attrs)
    check(t, dtype, ["X"])


@pytest.mark.parametrize("dtype", DTYPES)
def test_unpool3d(dtype):
    x = RNG.uniform(-1, 1, (1, 2, 2, 2, 3)).astype(dtype)
    spatial = [3, 4, 6]
    idx = unique_indices(x.shape, int(np.prod(spatial))).astype("int64")
    want = unpool_ref(x.astype("float64"), idx, spatial)
    attrs = {"ksize": [2, 2, 2], "strides": [2, 2, 2], "paddings": [0, 0, 0]}
    attrs["output_size"] = spatial
    t = make("unpool3d", {"X": x, "Indices": idx}, {"Out": want.astype(dtype)}, attrs)
    check(t, dtype, ["X"])


def test_unpool_repeated_index_keeps_the_last():
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    idx = np.array([[[[0, 5], [5, 1]]]], "int32")
    want = np.zeros((1, 1, 3, 3))
    want.flat[0], want.flat[5], want.flat[1] = 1.0, 3.0, 4.0
    attrs = {"ksize": [2, 2], "strides": [2, 2], "paddings": [0, 0], "output_size": [3, 3]}
    make("unpool", {"X": x, "Indices": idx}, {"Out": want}, attrs).check_output(atol=0, rtol=0)


def test_unpool_errors():
    x = np.zeros((1, 1, 2, 2))
    attrs = {"ksize": [2, 2], "strides": [2, 2], "paddings": [0, 0], "output_size": [3, 3]}
    with pytest.raises(tide.TideError, match=r"unpool.*Indices .*holds 9 at 3, outside \[0, 9\)"):
        idx = np.array([[[[0, 1], [2, 9]]]], "int32")
        make("unpool", {"X": x, "Indices": idx}, {"Out": np.zeros((1, 1, 3, 3))}, attrs).forward()
    with pytest.raises(
        tide.TideError, match=r"unpool.*Indices .*must have X's dims \[1, 1, 2, 2\]"
    ):
        idx = np.zeros((1, 1, 2, 1), "int32")
        make("unpool", {"X": x, "Indices": idx}, {"Out": np.zeros((1, 1, 3, 3))}, attrs).forward()
    with pytest.raises(tide.TideError, match=r"unpool.*data_format must be NCHW"):
        idx = np.zeros((1, 1, 2, 2), "int32")
        bad = dict(attrs, data_format="NHWC")
        make("unpool", {"X": x, "Indices": idx}, {"Out": np.zeros((1, 1, 3, 3))}, bad).forward()


# --- lp_pool2d --------------------------------------------------------------------------------


def pool_axis(n_in, k, s, pb, pe, ceil_mode, algo):
    """[(begin, end)] windows of one axis by pool2d's rules (clipped to the input)."""
    if algo == "VALID":
        pb = pe = 0
    elif algo == "SAME":
        out = -(-n_in // s)
        pad = max((out - 1) * s + k - n_in, 0)
        pb, pe = pad // 2, pad - pad // 2
    span = n_in - k + pb + pe
    out = (span + s - 1) // s + 1 if ceil_mode else span // s + 1
    return [(max(i * s - pb, 0), min(i * s - pb + k, n_in)) for i in range(out)]


def lp_pool_ref(x, p, k, s, pads, ceil_mode=False, algo="EXPLICIT", adaptive=False):
    """x: NCHW float64; pads (top, bottom, left, right)."""
    n, c, h, w = x.shape
    if adaptive:
        rows = [(i * h // k[0], -(-(i + 1) * h // k[0])) for i in range(k[0])]
        cols = [(j * w // k[1], -(-(j + 1) * w // k[1])) for j in range(k[1])]
    else:
        rows = pool_axis(h, k[0], s[0], pads[0], pads[1], ceil_mode, algo)
        cols = pool_axis(w, k[1], s[1], pads[2], pads[3], ceil_mode, algo)
    out = np.zeros((n, c, len(rows), len(cols)))
    for i, (r0, r1) in enumerate(rows):
        for j, (c0, c1) in enumerate(cols):
            win = x[:, :, r0:r1, c0:c1].reshape(n, c, -1)
            if np.isinf(p):
                out[:, :, i, j] = win.max(-1)
            else:
                out[:, :, i, j] = np.sum(win**p, -1) ** (1.0 / p)
    return out


@pytest.mark.parametrize(
    "p,k,s,pads,ceil_mode,algo,adaptive",
    [
        (2.0, [2, 2], [2, 2], [0, 0, 0, 0], False, "EXPLICIT", False),
        (3.0, [3, 2], [2, 1], [1, 0, 1, 1], True, "EXPLICIT", False),
        (1.5, [2, 3], [1, 2], [0, 0, 0, 0], False, "SAME", False),
        (-1.0, [3, 3], [2, 2], [0, 0, 0, 0], False, "VALID", False),
        (float("inf"), [2, 2], [1, 1], [1, 1, 0, 0], False, "EXPLICIT", False),
        (2.0, [2, 3], [1, 1], [0, 0, 0, 0], False, "EXPLICIT", True),
    ],
)
@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_lp_pool2d(p, k, s, pads, ceil_mode, algo, adaptive, nhwc, dtype):
    x = RNG.uniform(0.2, 1.5, (2, 3, 5, 6))  # positive: x^p is real
    x += np.arange(x.size).reshape(x.shape) * 1e-3  # no ties for inf
    want = lp_pool_ref(x.astype(dtype).astype("float64"), p, k, s, pads, ceil_mode, algo, adaptive)
    if nhwc:
        x, want = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), want.transpose(0, 2, 3, 1)
    attrs = {"ksize": k, "strides": s, "paddings": pads, "ceil_mode": ceil_mode}
    attrs.update(padding_algorithm=algo, adaptive=adaptive, norm_type=p)
    attrs["data_format"] = "NHWC" if nhwc else "NCHW"
    t = make("lp_pool2d", {"X": x.astype(dtype)}, {"Out": want.astype(dtype)}, attrs)
    check(t, dtype, ["X"])


def test_lp_pool2d_global():
    x = RNG.uniform(0.2, 1.5, (2, 3, 4, 5))
    want = np.sqrt(np.sum(x**2, (2, 3), keepdims=True))
    attrs = {"ksize": [1, 1], "global_pooling": True, "norm_type": 2.0}
    check(make("lp_pool2d", {"X": x}, {"Out": want}, attrs), "float64", ["X"])


def test_lp_pool2d_negative_values_as_paddle():
    """x^p of a negative x, not |x|^p: an odd p gives NaN where the sum is negative."""
    x = np.array([[[[-1.0, 2.0], [0.5, -0.25]]]])
    want2 = np.array([[[[np.sqrt(1 + 4 + 0.25 + 0.0625)]]]])
    attrs = {"ksize": [2, 2], "strides": [2, 2], "norm_type": 2.0}
    make("lp_pool2d", {"X": x}, {"Out": want2}, attrs).check_output(atol=1e-12, rtol=1e-12)
    want1 = np.array([[[[-1.0 + 2.0 + 0.5 - 0.25]]]])
    attrs["norm_type"] = 1.0
    make("lp_pool2d", {"X": x}, {"Out": want1}, attrs).check_output(atol=1e-12, rtol=1e-12)


def test_lp_pool2d_errors():
    x = np.ones((1, 1, 4, 4))
    with pytest.raises(tide.TideError, match=r"lp_pool2d.*norm_type must be nonzero"):
        attrs = {"ksize": [2, 2], "strides": [2, 2], "norm_type": 0.0}
        make("lp_pool2d", {"X": x}, {"Out": x[:, :, :2, :2]}, attrs).check_output()
    with pytest.raises(tide.TideError, match=r"lp_pool2d.*X must be 4-D"):
        attrs = {"ksize": [2, 2], "strides": [2, 2], "norm_type": 2.0}
        make("lp_pool2d", {"X": x[0]}, {"Out": x[0]}, attrs).check_output()


# --- linear_interp_v2 --------------------------------------------------------------------------


def linear_ref(x, out_w, align_corners, align_mode, scale=0.0):
    """x [N, C, W] float64, by Paddle's linear interpolation kernel."""
    in_w = x.shape[-1]
    if in_w == out_w:
        return x.copy()
    if out_w > 1:
        if align_corners:
            ratio = np.float32(in_w - 1) / np.float32(out_w - 1)
        else:
            ratio = np.float32(1.0 / scale) if scale > 0 else np.float32(in_w) / np.float32(out_w)
    else:
        ratio = 0.0
    ratio = float(ratio)
    half = align_mode == 0 and not align_corners
    out = np.zeros(x.shape[:-1] + (out_w,))
    for k in range(out_w):
        src = ratio * (k + 0.5) - 0.5 if half else ratio * k
        src = max(src, 0.0)
        lo = min(int(src), in_w - 1)
        hi = lo + 1 if lo + 1 < in_w else lo
        f = src - lo
        out[..., k] = (1 - f) * x[..., lo] + f * x[..., hi]
    return out


@pytest.mark.parametrize(
    "out_w,align_corners,align_mode", [(9, False, 0), (9, True, 1), (3, False, 1), (1, False, 0)]
)
@pytest.mark.parametrize("nwc", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_interp(out_w, align_corners, align_mode, nwc, dtype):
    x = RNG.uniform(-1, 1, (2, 3, 5))
    want = linear_ref(x.astype(dtype).astype("float64"), out_w, align_corners, align_mode)
    if nwc:
        x, want = np.ascontiguousarray(x.transpose(0, 2, 1)), want.transpose(0, 2, 1)
    attrs = {"out_w": out_w, "align_corners": align_corners, "align_mode": align_mode}
    attrs["data_layout"] = "NHWC" if nwc else "NCHW"
    t = make("linear_interp_v2", {"X": x.astype(dtype)}, {"Out": want.astype(dtype)}, attrs)
    check(t, dtype, ["X"])


@pytest.mark.parametrize("how", ["scale", "Scale", "OutSize", "SizeTensor"])
def test_linear_interp_size_inputs(how):
    x = RNG.uniform(-1, 1, (1, 2, 4))
    attrs = {"out_w": 3, "align_corners": False, "align_mode": 0}
    inputs = {"X": x}
    if how == "scale":
        attrs["scale"] = [1.5]
        want = linear_ref(x, 6, False, 0, scale=1.5)
    elif how == "Scale":
        inputs["Scale"] = np.array([2.5], "float32")
        want = linear_ref(x, 10, False, 0, scale=2.5)
    elif how == "OutSize":
        inputs["OutSize"] = np.array([7], "int32")
        want = linear_ref(x, 7, False, 0)
    else:
        inputs["SizeTensor"] = [("w", np.array([5], "int64"))]
        want = linear_ref(x, 5, False, 0)
    t = make("linear_interp_v2", inputs, {"Out": want}, attrs)
    check(t, "float64", ["X"])


def test_linear_interp_errors():
    x = np.zeros((1, 2, 4))
    with pytest.raises(tide.TideError, match=r"linear_interp_v2.*X must be 3-D"):
        make("linear_interp_v2", {"X": x[0]}, {"Out": x}, {"out_w": 3}).check_output()
    with pytest.raises(tide.TideError, match=r"linear_interp_v2.*output width must be positive"):
        make("linear_interp_v2", {"X": x}, {"Out": x}, {"out_w": -1}).check_output()
    with pytest.raises(tide.TideError, match=r"linear_interp_v2.*scale.*must be > 0, got -2"):
        make("linear_interp_v2", {"X": x}, {"Out": x}, {"scale": [-2.0]}).check_output()


# --- crop_tensor ------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["attrs", "Shape", "ShapeTensor"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_crop_tensor(how, dtype):
    x = RNG.uniform(-1, 1, (4, 5, 6)).astype(dtype)
    shape, offsets = [2, -1, 3], [1, 2, 3]
    want = x[1:3, 2:, 3:6]
    inputs, attrs = {"X": x}, {}
    if how == "attrs":
        attrs = {"shape": shape, "offsets": offsets}
    elif how == "Shape":
        inputs["Shape"] = np.array(shape, "int32")
        inputs["Offsets"] = np.array(offsets, "int64")
    else:
        inputs["ShapeTensor"] = [("s%d" % i, np.array([v], "int32")) for i, v in enumerate(shape)]
        inputs["OffsetsTensor"] = [
            ("o%d" % i, np.array([v], "int64")) for i, v in enumerate(offsets)
        ]
    check(make("crop_tensor", inputs, {"Out": want}, attrs), dtype, ["X"])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_crop_tensor_integers(dtype):
    x = np.arange(20, dtype=dtype).reshape(4, 5)
    attrs = {"shape": [2, 3], "offsets": [1, 1]}
    make("crop_tensor", {"X": x}, {"Out": x[1:3, 1:4]}, attrs).check_output()


def test_crop_tensor_errors():
    x = np.zeros((4, 5))
    with pytest.raises(tide.TideError, match=r"crop_tensor.*box at offset 3 of size 2 leaves"):
        attrs = {"shape": [2, 2], "offsets": [3, 0]}
        make("crop_tensor", {"X": x}, {"Out": x[:2, :2]}, attrs).forward()
    with pytest.raises(tide.TideError, match=r"crop_tensor.*one value per dim of X"):
        make("crop_tensor", {"X": x}, {"Out": x[:2]}, {"shape": [2]}).check_output()
    with pytest.raises(tide.TideError, match=r"crop_tensor.*values > 0 or -1.*got -2"):
        make("crop_tensor", {"X": x}, {"Out": x}, {"shape": [2, -2]}).check_output()


# --- spectral_norm ----------------------------------------------------------------------------


def spectral_ref(w, u, v, dim, iters, eps):
    """Out, and Paddle's grad rule as a function of Out@GRAD."""
    perm = [dim] + [i for i in range(w.ndim) if i != dim]
    m = w.transpose(perm).reshape(w.shape[dim], -1)
    for _ in range(iters):
        v = m.T @ u
        v = v / (np.linalg.norm(v) + eps)
        u = m @ v
        u = u / (np.linalg.norm(u) + eps)
    sigma = u @ m @ v
    inv = np.argsort(perm)

    def grad(g):
        gm = g.transpose(perm).reshape(m.shape)
        dm = gm * (1 - np.outer(u, v) * (m / sigma).sum()) / sigma
        return dm.reshape([w.shape[i] for i in perm]).transpose(inv)

    return w / sigma, grad


@pytest.mark.parametrize(
    "shape,dim", [((4, 3), 0), ((3, 4, 5), 1), ((2, 3, 2, 2), 1), ((3, 4, 5), 2)]
)
@pytest.mark.parametrize("iters", [0, 2])
@pytest.mark.parametrize("dtype", DTYPES)
def test_spectral_norm(shape, dim, iters, dtype):
    w = RNG.randn(*shape)
    h = shape[dim]
    u, v = RNG.randn(h), RNG.randn(w.size // h)
    w, u, v = w.astype(dtype), u.astype(dtype), v.astype(dtype)
    f64 = [a.astype("float64") for a in (w, u, v)]
    out, grad = spectral_ref(*f64, dim, iters, 1e-12)
    attrs = {"dim": dim, "power_iters": iters, "eps": 1e-12}
    t = make("spectral_norm", {"Weight": w, "U": u, "V": v}, {"Out": out.astype(dtype)}, attrs)
    t.check_output(**tol(dtype))
    g = RNG.randn(*shape).astype(dtype)
    ins = {"Weight": w, "U": u, "V": v, "Out@GRAD": g}
    want = grad(g.astype("float64")).astype(dtype)
    make("spectral_norm_grad", ins, {"Weight@GRAD": want}, attrs).check_output(**tol(dtype))


def test_spectral_norm_errors():
    w = np.zeros((4, 3))
    ins = {"Weight": w, "U": np.ones(4), "V": np.ones(3)}
    with pytest.raises(tide.TideError, match=r"spectral_norm.*dim must be in \[0, 2\).*got 2"):
        make("spectral_norm", ins, {"Out": w}, {"dim": 2}).check_output()
    with pytest.raises(tide.TideError, match=r"spectral_norm.*V must be \[3\].*got \[4\]"):
        make("spectral_norm", dict(ins, V=np.ones(4)), {"Out": w}).check_output()
    with pytest.raises(tide.TideError, match=r"spectral_norm.*power_iters must be >= 0"):
        make("spectral_norm", ins, {"Out": w}, {"power_iters": -1}).check_output()


# --- bilinear_tensor_product ------------------------------------------------------------------


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_bilinear_tensor_product(with_bias, dtype):
    x, y = RNG.uniform(-1, 1, (3, 4)), RNG.uniform(-1, 1, (3, 5))
    w = RNG.uniform(-1, 1, (2, 4, 5))
    want = np.einsum("bm,kmn,bn->bk", x, w, y)
    inputs = {"X": x.astype(dtype), "Y": y.astype(dtype), "Weight": w.astype(dtype)}
    if with_bias:
        b = RNG.uniform(-1, 1, (1, 2))
        inputs["Bias"] = b.astype(dtype)
        want = want + b
    t = make("bilinear_tensor_product", inputs, {"Out": want.astype(dtype)})
    check(t, dtype, list(inputs))


def test_bilinear_tensor_product_errors():
    x, y, w = np.zeros((3, 4)), np.zeros((3, 5)), np.zeros((2, 4, 5))
    op = "bilinear_tensor_product"
    with pytest.raises(
        tide.TideError, match=r"bilinear_tensor_product.*Weight .*must be \[K, 4, 5\]"
    ):
        make(op, {"X": x, "Y": y, "Weight": w[:, :3]}, {"Out": np.zeros((3, 2))}).check_output()
    with pytest.raises(tide.TideError, match=r"bilinear_tensor_product.*Bias .*must be \[1, 2\]"):
        ins = {"X": x, "Y": y, "Weight": w, "Bias": np.zeros((1, 3))}
        make(op, ins, {"Out": np.zeros((3, 2))}).check_output()
    with pytest.raises(tide.TideError, match=r"bilinear_tensor_product.*same batch"):
        make(op, {"X": x, "Y": y[:2], "Weight": w}, {"Out": np.zeros((3, 2))}).check_output()


# --- multiplex --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 3), (4, 2, 3)])
@pytest.mark.parametrize("dtype", DTYPES + ["int32", "int64"])
def test_multiplex(shape, dtype):
    xs = [RNG.uniform(-5, 5, shape).astype(dtype) for _ in range(3)]
    ids = np.array([[2], [0], [1], [2]], "int32")
    want = np.stack([xs[k][i] for i, k in enumerate(ids[:, 0])])
    inputs = {"X": [("x%d" % i, a) for i, a in enumerate(xs)], "Ids": ids}
    t = make("multiplex", inputs, {"Out": want})
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_multiplex_errors():
    a = np.zeros((3, 2))
    ins = {"X": [("a", a), ("b", a)], "Ids": np.array([[0], [2], [1]], "int32")}
    with pytest.raises(
        tide.TideError, match=r"multiplex.*Ids .*holds 2 at row 1, outside \[0, 2\)"
    ):
        make("multiplex", ins, {"Out": a}).forward()
    with pytest.raises(tide.TideError, match=r"multiplex.*Ids .*must be \[3, 1\]"):
        bad = dict(ins, Ids=np.zeros((2, 1), "int32"))
        make("multiplex", bad, {"Out": a}).check_output()
    with pytest.raises(tide.TideError, match=r"multiplex.*X\[1\] .*has \[3, 3\]"):
        bad = dict(ins, X=[("a", a), ("b", np.zeros((3, 3)))])
        make("multiplex", bad, {"Out": a}).check_output()


# --- shard_index ------------------------------------------------------------------------------


@pytest.mark.parametrize("nshards,shard_id,ignore_value", [(2, 1, -1), (3, 0, -7), (3, 2, 100)])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_shard_index(nshards, shard_id, ignore_value, dtype):
    index_num = 20
    x = RNG.randint(0, index_num, (5, 2, 1)).astype(dtype)
    size = -(-index_num // nshards)
    want = np.where(x // size == shard_id, x % size, ignore_value).astype(dtype)
    attrs = {"index_num": index_num, "nshards": nshards, "shard_id": shard_id}
    attrs["ignore_value"] = ignore_value
    make("shard_index", {"X": x}, {"Out": want}, attrs).check_output()


def test_shard_index_errors():
    x = np.array([[3], [20]], "int64")
    attrs = {"index_num": 20, "nshards": 2, "shard_id": 0}
    with pytest.raises(tide.TideError, match=r"shard_index.*X .*holds 20 at 1, outside \[0, 20\)"):
        make("shard_index", {"X": x}, {"Out": x}, attrs).forward()
    with pytest.raises(tide.TideError, match=r"shard_index.*shard_id must be in \[0, 2\).*got 2"):
        make("shard_index", {"X": x}, {"Out": x}, dict(attrs, shard_id=2)).forward()
    with pytest.raises(tide.TideError, match=r"shard_index.*at least 2-D with a last dim of 1"):
        make("shard_index", {"X": x[:, 0]}, {"Out": x[:, 0]}, attrs).forward()
