"""Paddle's vision ops: grid_sampler (F.grid_sample, 4-D and 5-D X) and affine_grid
(F.affine_grid, 4-D and 5-D output shapes),
bicubic_interp_v2 (F.interpolate(mode="bicubic")), unfold (F.unfold), put_along_axis and
searchsorted, each against a float64 numpy reference of Paddle's rule (its CPU kernels),
gradients by central finite differences (float64), and the errors of bad inputs."""

import itertools

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(23)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]


def rand(*shape, dtype="float64", lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-5} if dtype == "float32" else {"atol": 1e-12, "rtol": 1e-12}


# --- grid_sampler ------------------------------------------------------------------------------


def source_position(g, size, align_corners, padding):
    """Paddle's grid coordinate -> pixel position along one axis (phi grid_sample_kernel.cc)."""
    mx = size - 1.0
    x = (g + 1) * mx / 2 if align_corners else (g + 1) * size / 2 - 0.5
    if padding == "border":
        x = min(max(x, 0.0), mx)
    elif padding == "reflection":
        if align_corners:
            if mx == 0:
                return 0.0
            span = 2 * mx
            extra = abs(x) % span
            x = min(extra, span - extra)
        else:
            span = 2 * size
            extra = abs(x + 0.5) % span
            x = min(max(min(extra, span - extra) - 0.5, 0.0), mx)
    return x


def grid_sample(x, grid, mode, padding, align_corners):
    n, c, h, w = x.shape
    _, oh, ow, _ = grid.shape
    out = np.zeros((n, c, oh, ow))

    def pixel(b, yy, xx):
        if 0 <= xx <= w - 1 and 0 <= yy <= h - 1:
            return x[b, :, int(yy), int(xx)].astype(np.float64)
        return np.zeros(c)

    for b, i, j in itertools.product(range(n), range(oh), range(ow)):
        px = source_position(float(grid[b, i, j, 0]), w, align_corners, padding)
        py = source_position(float(grid[b, i, j, 1]), h, align_corners, padding)
        if mode == "nearest":
            rx, ry = np.rint(px), np.rint(py)  # halves to even, as Paddle 3.3.1
            out[b, :, i, j] = pixel(b, ry, rx)
            continue
        x0, y0 = np.floor(px), np.floor(py)
        fx, fy = px - x0, py - y0
        out[b, :, i, j] = (
            pixel(b, y0, x0) * (1 - fx) * (1 - fy)
            + pixel(b, y0, x0 + 1) * fx * (1 - fy)
            + pixel(b, y0 + 1, x0) * (1 - fx) * fy
            + pixel(b, y0 + 1, x0 + 1) * fx * fy
        )
    return out


def grid_sample_3d(x, grid, mode, padding, align_corners):
    """A 5-D X [N, C, D, H, W] at Grid [N, D', H', W'] = (x, y, z): trilinear or nearest."""
    n, c, d, h, w = x.shape
    _, od, oh, ow, _ = grid.shape
    out = np.zeros((n, c, od, oh, ow))

    def voxel(b, zz, yy, xx):
        if 0 <= xx <= w - 1 and 0 <= yy <= h - 1 and 0 <= zz <= d - 1:
            return x[b, :, int(zz), int(yy), int(xx)].astype(np.float64)
        return np.zeros(c)

    for b, k, i, j in itertools.product(range(n), range(od), range(oh), range(ow)):
        px = source_position(float(grid[b, k, i, j, 0]), w, align_corners, padding)
        py = source_position(float(grid[b, k, i, j, 1]), h, align_corners, padding)
        pz = source_position(float(grid[b, k, i, j, 2]), d, align_corners, padding)
        if mode == "nearest":
            out[b, :, k, i, j] = voxel(b, np.rint(pz), np.rint(py), np.rint(px))
            continue
        x0, y0, z0 = np.floor(px), np.floor(py), np.floor(pz)
        fx, fy, fz = px - x0, py - y0, pz - z0
        acc = np.zeros(c)
        for dz, dy, dx in itertools.product((0, 1), repeat=3):
            wgt = (fx if dx else 1 - fx) * (fy if dy else 1 - fy) * (fz if dz else 1 - fz)
            acc += voxel(b, z0 + dz, y0 + dy, x0 + dx) * wgt
        out[b, :, k, i, j] = acc
    return out


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_grid_sampler(mode, padding, align_corners, dtype):
    x = rand(2, 3, 4, 5, dtype=dtype)
    grid = rand(2, 3, 6, 2, dtype=dtype, lo=-1.6, hi=1.6)  # some points outside X
    want = grid_sample(x, grid, mode, padding, align_corners).astype(dtype)
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align_corners}
    t = make("grid_sampler", {"X": x, "Grid": grid}, {"Output": want}, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X", "Grid"] if mode == "bilinear" else ["X"], "Output", **GRAD)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_grid_sampler_3d(mode, padding, align_corners, dtype):
    # The rule checked against Paddle 3.3.1 (outputs, and its X / Grid grads the exact derivative)
    x = rand(2, 3, 3, 4, 5, dtype=dtype)
    grid = rand(2, 2, 3, 4, 3, dtype=dtype, lo=-1.6, hi=1.6)  # some points outside X
    want = grid_sample_3d(x, grid, mode, padding, align_corners).astype(dtype)
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align_corners}
    t = make("grid_sampler", {"X": x, "Grid": grid}, {"Output": want}, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X", "Grid"] if mode == "bilinear" else ["X"], "Output", **GRAD)


@pytest.mark.parametrize("shape", [(1, 1, 1, 1, 1), (1, 2, 2, 1, 3), (3, 1, 4, 2, 2)])
def test_grid_sampler_3d_shapes(shape):
    x = rand(*shape)
    grid = rand(shape[0], 1, 2, 3, 3, lo=-1.2, hi=1.2)
    for ac in (True, False):
        want = grid_sample_3d(x, grid, "bilinear", "reflection", ac)
        attrs = {"padding_mode": "reflection", "align_corners": ac}
        t = make("grid_sampler", {"X": x, "Grid": grid}, {"Output": want}, attrs)
        t.check_output(**tol("float64"))
        t.check_grad(["X"], "Output", **GRAD)


def test_grid_sampler_3d_exact_points_and_halves():
    x = np.arange(24, dtype=np.float64).reshape(1, 1, 2, 3, 4)
    grid = np.array([[[[[-1, -1, -1], [1, 1, 1], [0, 0, 0], [1, -1, 1], [3, 0, 0]]]]], np.float64)
    want = np.array([[[[[0, 23, 11.5, 15, 0]]]]])
    make("grid_sampler", {"X": x, "Grid": grid}, {"Output": want}).check_output(atol=0, rtol=0)
    # nearest: positions 0.5, 1.5, 2.5, 3.5 read columns 0, 2, 2, 4 (Paddle 3.3.1, as in 2-D)
    x = np.arange(5, dtype=np.float64).reshape(1, 1, 1, 1, 5).repeat(2, 2).repeat(2, 3)
    grid = np.array([[[[[-0.75, -1, -1], [-0.25, -1, -1], [0.25, -1, -1], [0.75, -1, -1]]]]])
    want = np.array([[[[[0, 2, 2, 4]]]]], np.float64)
    make(
        "grid_sampler", {"X": x, "Grid": grid}, {"Output": want}, {"mode": "nearest"}
    ).check_output(atol=0, rtol=0)


def test_grid_sampler_defaults_and_exact_points():
    # Paddle's defaults: bilinear, zeros, align_corners; the corners sample the corner pixels.
    x = np.arange(12, dtype=np.float64).reshape(1, 1, 3, 4)
    grid = np.array([[[[-1, -1], [1, -1], [1, 1], [0, 0], [3, 0]]]], np.float64)
    want = np.array([[[[0, 3, 11, 5.5, 0]]]])
    make("grid_sampler", {"X": x, "Grid": grid}, {"Output": want}).check_output(atol=0, rtol=0)


def test_grid_sampler_nearest_halves_to_even():
    # Paddle 3.3.1: positions 0.5, 1.5, 2.5, 3.5 (align_corners, W = 5) read columns 0, 2, 2, 4
    x = np.arange(5, dtype=np.float64).reshape(1, 1, 1, 5).repeat(2, axis=2)
    grid = np.array([[[[-0.75, -1], [-0.25, -1], [0.25, -1], [0.75, -1]]]])
    want = np.array([[[[0, 2, 2, 4]]]], np.float64)
    attrs = {"mode": "nearest"}
    make("grid_sampler", {"X": x, "Grid": grid}, {"Output": want}, attrs).check_output(
        atol=0, rtol=0
    )


def test_grid_sampler_errors():
    x = rand(1, 2, 3, 3)
    with pytest.raises(tide.TideError, match=r"grid_sampler.*Grid must be \[N, H_out, W_out, 2\]"):
        make("grid_sampler", {"X": x, "Grid": rand(1, 2, 2, 3)}, {"Output": x}).check_output()
    with pytest.raises(tide.TideError, match=r"grid_sampler.*X must be 4-D.*\[2, 3, 3\]"):
        make(
            "grid_sampler", {"X": rand(2, 3, 3), "Grid": rand(2, 2, 2, 2)}, {"Output": x}
        ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"grid_sampler.*Grid must be \[N, D_out, H_out, W_out, 3\].*\[1, 2, 2, 2\]",
    ):
        make(
            "grid_sampler", {"X": rand(1, 2, 3, 3, 3), "Grid": rand(1, 2, 2, 2)}, {"Output": x}
        ).check_output()
    with pytest.raises(tide.TideError, match=r"grid_sampler.*must have one batch size"):
        make(
            "grid_sampler", {"X": rand(1, 2, 3, 3, 3), "Grid": rand(2, 1, 2, 2, 3)}, {"Output": x}
        ).check_output()
    with pytest.raises(tide.TideError, match="padding_mode.*got 'wrap'"):
        grid = rand(1, 2, 2, 2)
        make(
            "grid_sampler", {"X": x, "Grid": grid}, {"Output": x}, {"padding_mode": "wrap"}
        ).check_output()


# --- affine_grid -------------------------------------------------------------------------------


def affine_grid(theta, shape, align_corners):
    """Output [N, (D,) H, W, k] = Theta [N, k, k + 1] times (x, y, (z,) 1) (k = 2 or 3)."""
    spatial = shape[2:]  # (D,) H, W

    def lin(k):
        # One point: its centre 0 (Paddle 3.3.1 computes 0 / 0 = NaN there with align_corners).
        v = np.linspace(-1.0, 1.0, k) if k > 1 else np.zeros(k)
        return v if align_corners else v * (k - 1) / k

    axes = np.meshgrid(*[lin(k) for k in spatial], indexing="ij")  # (z,) y, x over (D,) H, W
    base = np.stack(list(axes)[::-1] + [np.ones_like(axes[0])], -1)  # [(D,) H, W, k + 1]
    return np.einsum("...j,nkj->n...k", base, theta.astype(np.float64))


@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("shape_input", [False, True])
@pytest.mark.parametrize(
    "shape", [[2, 3, 4, 5], [2, 3, 4, 5, 6], [1, 1, 1, 3, 2], [2, 1, 3, 1, 1], [1, 2, 1, 3]]
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_affine_grid(align_corners, shape_input, shape, dtype):
    # The 5-D rule checked against Paddle 3.3.1's F.affine_grid of a 5-D out_shape.
    k = len(shape) - 2
    theta = rand(shape[0], k, k + 1, dtype=dtype)
    want = affine_grid(theta, shape, align_corners).astype(dtype)
    inputs = {"Theta": theta}
    attrs = {"align_corners": align_corners}
    if shape_input:
        inputs["OutputShape"] = np.array(shape, np.int32)
    else:
        attrs["output_shape"] = shape
    t = make("affine_grid", inputs, {"Output": want}, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["Theta"], "Output", **GRAD)


def test_affine_grid_errors():
    with pytest.raises(
        tide.TideError,
        match=r"affine_grid.*Theta must be \[N, 2, 3\] or \[N, 3, 4\], got \[2, 3, 3\]",
    ):
        make(
            "affine_grid",
            {"Theta": rand(2, 3, 3)},
            {"Output": rand(1)},
            {"output_shape": [2, 1, 2, 2]},
        ).check_output()
    with pytest.raises(
        tide.TideError, match=r"affine_grid.*output_shape.*\[N, C, D, H, W\], got \[2, 2\]"
    ):
        make(
            "affine_grid", {"Theta": rand(2, 2, 3)}, {"Output": rand(1)}, {"output_shape": [2, 2]}
        ).check_output()
    with pytest.raises(
        tide.TideError,
        match=r"affine_grid.*Theta must be \[N, 3, 4\] for output_shape \[2, 1, 2, 2, 2\]",
    ):
        make(
            "affine_grid",
            {"Theta": rand(2, 2, 3)},
            {"Output": rand(1)},
            {"output_shape": [2, 1, 2, 2, 2]},
        ).check_output()
    with pytest.raises(
        tide.TideError, match=r"affine_grid.*Theta must be \[2, 3, 4\].*got \[2, 2, 3\]"
    ):
        shape = np.array([2, 1, 2, 2, 2], np.int32)
        make(
            "affine_grid", {"Theta": rand(2, 2, 3), "OutputShape": shape}, {"Output": rand(1)}
        ).check_output()
    with pytest.raises(tide.TideError, match=r"affine_grid.*holds -2 at index 3"):
        shape = np.array([2, 1, 2, -2, 2], np.int32)
        make(
            "affine_grid", {"Theta": rand(2, 3, 4), "OutputShape": shape}, {"Output": rand(1)}
        ).check_output()


# --- bicubic_interp_v2 -------------------------------------------------------------------------


def cubic_weights(src_size, dst_size, ratio, align_corners):
    """[dst, src] matrix of Paddle's bicubic (A = -0.75, border clamped)."""
    a = -0.75

    def near(t):
        return ((a + 2) * t - (a + 3)) * t * t + 1

    def far(t):
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a

    m = np.zeros((dst_size, src_size))
    for k in range(dst_size):
        src = ratio * k if align_corners else ratio * (k + 0.5) - 0.5
        base = int(np.floor(src))
        t = src - base
        for tap, wt in enumerate([far(t + 1), near(t), near(1 - t), far(2 - t)]):
            m[k, min(max(base - 1 + tap, 0), src_size - 1)] += wt
    return m


def bicubic(x, oh, ow, align_corners, scale=None, nhwc=False):
    if nhwc:
        x = x.transpose(0, 3, 1, 2)
    ih, iw = x.shape[2:]

    def ratio(i, o, s):  # Paddle's, in float32
        if o <= 1:
            return 0.0
        if align_corners:
            return float(np.float32(i - 1) / np.float32(o - 1))
        return float(np.float32(1.0 / s)) if s else float(np.float32(i) / np.float32(o))

    mh = cubic_weights(ih, oh, ratio(ih, oh, scale and scale[0]), align_corners)
    mw = cubic_weights(iw, ow, ratio(iw, ow, scale and scale[1]), align_corners)
    y = np.einsum("ih,nchw,jw->ncij", mh, x.astype(np.float64), mw)
    return y.transpose(0, 2, 3, 1) if nhwc else y


@pytest.mark.parametrize(
    "shape,out,align_corners,layout",
    [
        ((2, 3, 4, 5), (7, 3), False, "NCHW"),
        ((2, 3, 4, 5), (7, 3), True, "NCHW"),
        ((1, 5, 6, 2), (3, 4), False, "NHWC"),
        ((1, 2, 1, 3), (2, 5), True, "NCHW"),  # a 1-pixel axis
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_bicubic_interp(shape, out, align_corners, layout, dtype):
    x = rand(*shape, dtype=dtype)
    want = bicubic(x, *out, align_corners, nhwc=layout == "NHWC").astype(dtype)
    attrs = {
        "out_h": out[0],
        "out_w": out[1],
        "align_corners": align_corners,
        "align_mode": 0,
        "data_layout": layout,
        "interp_method": "bicubic",
    }
    t = make("bicubic_interp_v2", {"X": x}, {"Out": want}, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_bicubic_interp_size_inputs():
    x = rand(1, 2, 4, 6)
    attrs = {"align_corners": False, "align_mode": 0, "interp_method": "bicubic"}
    # scale attribute: Out = floor(in * scale), source step 1 / scale
    want = bicubic(x, 6, 9, False, scale=(1.5, 1.5))
    make("bicubic_interp_v2", {"X": x}, {"Out": want}, dict(attrs, scale=[1.5])).check_output(
        atol=1e-12, rtol=1e-12
    )
    # OutSize, and SizeTensor over it
    want = bicubic(x, 3, 8, False)
    make(
        "bicubic_interp_v2", {"X": x, "OutSize": np.array([3, 8], np.int32)}, {"Out": want}, attrs
    ).check_output(atol=1e-12, rtol=1e-12)
    size = [("h", np.array([3], np.int32)), ("w", np.array([8], np.int32))]
    make(
        "bicubic_interp_v2",
        {"X": x, "OutSize": np.array([5, 5], np.int32), "SizeTensor": size},
        {"Out": want},
        attrs,
    ).check_output(atol=1e-12, rtol=1e-12)


def test_bicubic_interp_identity():
    # same size with align_corners: t = 0 at every pixel, weights (0, 1, 0, 0)
    x = rand(1, 1, 3, 4)
    attrs = {"out_h": 3, "out_w": 4, "align_corners": True, "interp_method": "bicubic"}
    make("bicubic_interp_v2", {"X": x}, {"Out": x}, attrs).check_output(atol=1e-12, rtol=1e-12)


# --- unfold ------------------------------------------------------------------------------------


def unfold(x, k, s, p, d):
    n, c, h, w = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    oh = (h + p[0] + p[2] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (w + p[1] + p[3] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    rows = []
    for ci in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                patch = xp[
                    :,
                    ci,
                    i * d[0] : i * d[0] + s[0] * oh : s[0],
                    j * d[1] : j * d[1] + s[1] * ow : s[1],
                ]
                rows.append(patch[:, :oh, :ow].reshape(n, -1))
    return np.stack(rows, 1)


@pytest.mark.parametrize(
    "k,s,p,d",
    [
        ([2, 2], [1, 1], [0, 0, 0, 0], [1, 1]),
        ([3, 2], [2, 1], [1, 0, 2, 1], [1, 2]),
        ([1, 3], [1, 2], [0, 1, 0, 1], [1, 1]),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unfold(k, s, p, d, dtype):
    x = rand(2, 3, 5, 6, dtype=dtype)
    attrs = {"kernel_sizes": k, "strides": s, "paddings": p, "dilations": d}
    t = make("unfold", {"X": x}, {"Y": unfold(x, k, s, p, d).astype(dtype)}, attrs)
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Y", **GRAD)


def test_unfold_errors():
    x = rand(1, 1, 3, 3)
    with pytest.raises(
        tide.TideError, match=r"unfold.*height kernel \(4, dilation 1\) spans 4.*padded height 3"
    ):
        make("unfold", {"X": x}, {"Y": x}, {"kernel_sizes": [4, 1]}).check_output()
    with pytest.raises(tide.TideError, match=r"unfold.*paddings must be 4 values.*got \[1, 1\]"):
        make(
            "unfold", {"X": x}, {"Y": x}, {"kernel_sizes": [2, 2], "paddings": [1, 1]}
        ).check_output()


# --- put_along_axis ----------------------------------------------------------------------------


def put_along_axis(arr, index, value, axis, reduce, include_self):
    out = arr.copy()
    value = np.broadcast_to(value, index.shape) if value.size == 1 else value
    sums = {}
    for pos in np.ndindex(*index.shape):
        tgt = list(pos)
        tgt[axis] = index[pos] % arr.shape[axis]
        tgt = tuple(tgt)
        v = value[pos]
        if reduce == "assign":
            out[tgt] = v
            continue
        sums.setdefault(tgt, []).append(v)
    for tgt, vs in sums.items():
        vals = ([arr[tgt]] if include_self else []) + vs
        fn = {"add": np.sum, "mul": np.prod, "mean": np.mean, "amin": np.min, "amax": np.max}[
            reduce
        ]
        r = fn(np.array(vals, arr.dtype))
        if reduce == "mean" and arr.dtype.kind == "i":
            r = np.sum(vals) // len(vals)  # Paddle's integer mean floors
        out[tgt] = r
    return out


@pytest.mark.parametrize("reduce", ["assign", "add", "mul", "mean", "amin", "amax"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", DTYPES + ["int64"])
def test_put_along_axis(reduce, include_self, dtype):
    arr = RNG.randint(-5, 6, (3, 4, 5)).astype(dtype)
    index = RNG.randint(-4, 4, (3, 6, 2))  # repeats; negative counts from the end
    value = RNG.randint(1, 6, (3, 6, 2)).astype(dtype)
    if reduce == "assign":  # one write per target: the result must not hang on the write order
        index, value = index[:, :1], value[:, :1]
    want = put_along_axis(arr, index, value, 1, reduce, include_self)
    attrs = {"Axis": 1, "Reduce": reduce, "Include_self": include_self}
    make(
        "put_along_axis", {"Input": arr, "Index": index, "Value": value}, {"Result": want}, attrs
    ).check_output(atol=1e-12, rtol=1e-6)


@pytest.mark.parametrize("reduce,include_self", [("assign", True), ("add", True), ("add", False)])
def test_put_along_axis_grad(reduce, include_self):
    arr = rand(3, 4, 2)
    index = (
        np.array([[[0, 3]], [[2, 2]], [[1, 0]]])
        if reduce == "add"
        else np.array([[[0, 3]], [[2, 1]], [[1, 0]]])
    )
    value = rand(3, 1, 2)
    want = put_along_axis(arr, index, value, 1, reduce, include_self)
    attrs = {"Axis": 1, "Reduce": reduce, "Include_self": include_self}
    t = make(
        "put_along_axis", {"Input": arr, "Index": index, "Value": value}, {"Result": want}, attrs
    )
    t.check_output(atol=1e-12, rtol=1e-12)
    t.check_grad(["Input", "Value"], "Result", **GRAD)


def test_put_along_axis_scalar_value():
    arr = rand(2, 3)
    index = np.array([[2], [0]])
    want = arr.copy()
    want[0, 2] = want[1, 0] = 7.0
    make(
        "put_along_axis",
        {"Input": arr, "Index": index, "Value": np.array([7.0])},
        {"Result": want},
        {"Axis": 1},
    ).check_output(atol=0, rtol=0)


def test_put_along_axis_errors():
    arr = rand(2, 3)
    with pytest.raises(
        tide.TideError, match=r"put_along_axis.*Index.*\[1\] = 3 is out of range \[-3, 3\)"
    ):
        make(
            "put_along_axis",
            {"Input": arr, "Index": np.array([[0], [3]]), "Value": rand(2, 1)},
            {"Result": arr},
            {"Axis": 1},
        ).check_output()
    with pytest.raises(tide.TideError, match="put_along_axis.*Reduce must be.*got 'max'"):
        make(
            "put_along_axis",
            {"Input": arr, "Index": np.array([[0], [1]]), "Value": rand(2, 1)},
            {"Result": arr},
            {"Axis": 1, "Reduce": "max"},
        ).check_output()


# --- searchsorted ------------------------------------------------------------------------------


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("out_int32", [False, True])
@pytest.mark.parametrize("dtype", DTYPES + ["int32", "int64"])
def test_searchsorted(right, out_int32, dtype):
    seq = np.sort(RNG.randint(-5, 6, (2, 3, 7)), -1).astype(dtype)  # ties
    values = RNG.randint(-7, 8, (2, 3, 4)).astype(dtype)
    side = "right" if right else "left"
    want = np.stack(
        [[np.searchsorted(seq[i, j], values[i, j], side) for j in range(3)] for i in range(2)]
    )
    want = want.astype(np.int32 if out_int32 else np.int64)
    attrs = {"right": right, "out_int32": out_int32}
    t = make("searchsorted", {"SortedSequence": seq, "Values": values}, {"Out": want}, attrs)
    out = t.check_output(atol=0, rtol=0)
    assert np.asarray(out[0]).dtype == want.dtype
    # a 1-D sequence is shared by every row
    want1 = np.searchsorted(seq[0, 0], values, side).astype(want.dtype)
    make(
        "searchsorted", {"SortedSequence": seq[0, 0], "Values": values}, {"Out": want1}, attrs
    ).check_output(atol=0, rtol=0)


def test_searchsorted_errors():
    with pytest.raises(
        tide.TideError,
        match=r"searchsorted.*SortedSequence \[2, 5\] must be 1-D or have Values' leading dims",
    ):
        make(
            "searchsorted",
            {"SortedSequence": rand(2, 5), "Values": rand(3, 2)},
            {"Out": np.zeros((3, 2), np.int64)},
        ).check_output()
