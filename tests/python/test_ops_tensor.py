"""Fluid's tensor ops (ops_nn: slice_expand_ops.cc, stack_squeeze_ops.cc, index_ops.cc,
similarity_ops.cc): outputs against numpy, gradients against central finite differences
(float32 and float64) where Fluid has them, the integer types where they move data, and their
errors.

Where Tide differs from Fluid 1.x: squeeze2 keeps a listed dim that is not 1 (Fluid 1.8's rule;
older ones refused it); scatter with overwrite=False zeroes the listed rows and then adds every
update (Fluid's CPU rule)."""

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# slice, strided_slice
SLICES = [  # axes, starts, ends, numpy index
    ([0], [1], [3], np.s_[1:3]),
    ([1, 2], [0, -3], [2, 100], np.s_[:, 0:2, -3:]),
    ([2], [-100], [-1], np.s_[:, :, :-1]),
    ([0, 1], [2, 1], [1, 3], np.s_[2:1, 1:3]),  # empty along axis 0
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(SLICES)))
def test_slice(case, dtype, rng):
    axes, starts, ends, idx = SLICES[case]
    x = rand(rng, (4, 3, 5), dtype)
    t = make("slice", {"Input": x}, {"Out": x[idx]}, {"axes": axes, "starts": starts, "ends": ends})
    t.check_output()
    if x[idx].size:
        t.check_grad(["Input"], "Out", **grad_args(dtype))


def test_slice_decrease_axis_and_integers():
    x = np.arange(24, dtype="int64").reshape(2, 3, 4)
    make(
        "slice",
        {"Input": x},
        {"Out": x[1, :, 1:3]},
        {"axes": [0, 2], "starts": [1, 1], "ends": [2, 3], "decrease_axis": [0]},
    ).check_output()
    with pytest.raises(tide.TideError, match="decrease_axis 2 takes 2 elements"):
        make(
            "slice",
            {"Input": x},
            {"Out": x},
            {"axes": [2], "starts": [1], "ends": [3], "decrease_axis": [2]},
        ).check_output()


STRIDED = [  # axes, starts, ends, strides, numpy index
    ([0], [0], [4], [2], np.s_[0:4:2]),
    ([1, 2], [2, 4], [-100, 0], [-1, -2], np.s_[:, 2::-1, 4:0:-2]),
    ([2], [-1], [-6], [-1], np.s_[:, :, -1:-6:-1]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(STRIDED)))
def test_strided_slice(case, dtype, rng):
    axes, starts, ends, strides, idx = STRIDED[case]
    x = rand(rng, (4, 3, 5), dtype)
    t = make(
        "strided_slice",
        {"Input": x},
        {"Out": x[idx]},
        {"axes": axes, "starts": starts, "ends": ends, "strides": strides},
    )
    t.check_output()
    t.check_grad(["Input"], "Out", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# squeeze2, unsqueeze2, expand, expand_as, stack, unstack, pad
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "axes,shape", [([], (3, 4)), ([0], (3, 1, 4)), ([-2, 3], (1, 3, 4)), ([1], (1, 3, 1, 4))]
)
def test_squeeze2(axes, shape, dtype, rng):
    x = rand(rng, (1, 3, 1, 4), dtype)
    t = make("squeeze2", {"X": x}, {"Out": x.reshape(shape), "XShape": None}, {"axes": axes})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "axes,shape",
    [([0], (1, 3, 4)), ([-1], (3, 4, 1)), ([0, 2], (1, 3, 1, 4)), ([1, -1], (3, 1, 4, 1))],
)
def test_unsqueeze2(axes, shape, dtype, rng):
    x = rand(rng, (3, 4), dtype)
    t = make("unsqueeze2", {"X": x}, {"Out": x.reshape(shape), "XShape": None}, {"axes": axes})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_expand_and_expand_as(dtype, rng):
    x = rand(rng, (2, 1, 3), dtype)
    t = make("expand", {"X": x}, {"Out": np.tile(x, (2, 4, 1))}, {"expand_times": [2, 4, 1]})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))
    target = np.zeros((4, 3, 6), dtype)
    t = make("expand_as", {"X": x, "target_tensor": target}, {"Out": np.tile(x, (2, 3, 2))})
    t.check_output()
    t.check_grad(["X"], "Out", no_grad_set={"target_tensor_in"}, **grad_args(dtype))


def test_expand_errors():
    x = np.ones((2, 3), "float32")
    with pytest.raises(tide.TideError, match="expand_times has 1 values"):
        make("expand", {"X": x}, {"Out": x}, {"expand_times": [2]}).check_output()
    with pytest.raises(tide.TideError, match="not a multiple"):
        make(
            "expand_as", {"X": x, "target_tensor": np.ones((4, 4), "float32")}, {"Out": x}
        ).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_and_unstack(axis, dtype, rng):
    xs = [("s%d" % i, rand(rng, (2, 3), dtype)) for i in range(3)]
    want = np.stack([a for _, a in xs], axis=axis)
    t = make("stack", {"X": xs}, {"Y": want}, {"axis": axis})
    t.check_output()
    t.check_grad(["X"], "Y", **grad_args(dtype))
    parts = [("u%d" % i, p) for i, p in enumerate(np.moveaxis(want, axis, 0))]
    t = make("unstack", {"X": want}, {"Y": parts}, {"axis": axis, "num": 3})
    t.check_output()
    t.check_grad(["X"], "Y", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad(dtype, rng):
    x = rand(rng, (2, 3), dtype)
    want = np.pad(x, ((1, 0), (2, 3)), constant_values=0.5)
    t = make("pad", {"X": x}, {"Out": want}, {"paddings": [1, 0, 2, 3], "pad_value": 0.5})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# gather, scatter, gather_nd
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_gather(index_dtype, dtype, rng):
    x = rand(rng, (5, 3, 2), dtype)
    idx = np.array([4, 0, 4, 2], index_dtype)  # a repeated row: its gradients add up
    t = make("gather", {"X": x, "Index": idx}, {"Out": x[idx]})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_gather_index_out_of_range():
    x = np.ones((3, 2), "float32")
    with pytest.raises(tide.TideError, match="gather.*Index.*holds 3, outside \\[0, 3\\)"):
        make("gather", {"X": x, "Index": np.array([0, 3], "int64")}, {"Out": x}).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("overwrite", [True, False])
def test_scatter(overwrite, dtype, rng):
    x = rand(rng, (5, 3), dtype)
    ids = np.array([3, 1], "int64")
    upd = rand(rng, (2, 3), dtype)
    want = x.copy()
    want[ids] = upd
    t = make(
        "scatter", {"X": x, "Ids": ids, "Updates": upd}, {"Out": want}, {"overwrite": overwrite}
    )
    t.check_output()
    t.check_grad(["X", "Updates"], "Out", **grad_args(dtype))


def test_scatter_accumulates_repeated_ids_without_overwrite():
    x = np.ones((3, 2), "float64")
    upd = np.array([[1.0, 2.0], [3.0, 4.0]])
    want = np.array([[4.0, 6.0], [1.0, 1.0], [1.0, 1.0]])
    make(
        "scatter",
        {"X": x, "Ids": np.array([0, 0], "int64"), "Updates": upd},
        {"Out": want},
        {"overwrite": False},
    ).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_nd(dtype, rng):
    x = rand(rng, (3, 4, 2), dtype)
    idx = np.array([[[0, 1], [2, 3]], [[1, 1], [0, 0]]], "int64")  # [2, 2, 2]: picks rows of 2
    want = x[idx[..., 0], idx[..., 1]]
    t = make("gather_nd", {"X": x, "Index": idx}, {"Out": want})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# one_hot, arg_max/arg_min, argsort, where_index, range, shape, cumsum
def test_one_hot():
    ids = np.array([[1], [0], [3]], "int64")
    make(
        "one_hot", {"X": ids}, {"Out": np.eye(4, dtype="float32")[ids[:, 0]]}, {"depth": 4}
    ).check_output()
    with pytest.raises(tide.TideError, match="one_hot.*holds 4, outside \\[0, 4\\)"):
        make(
            "one_hot",
            {"X": np.array([[4]], "int64")},
            {"Out": np.zeros((1, 4), "float32")},
            {"depth": 4},
        ).check_output()
    make(
        "one_hot",
        {"X": np.array([[4], [2]], "int64")},
        {"Out": np.array([[0, 0, 0, 0], [0, 0, 1, 0]], "float32")},
        {"depth": 4, "allow_out_of_range": True},
    ).check_output()


@pytest.mark.parametrize("dtype", DTYPES + ["int32", "int64"])
@pytest.mark.parametrize("axis,keepdims", [(0, False), (1, True), (-1, False)])
def test_arg_max_min(axis, keepdims, dtype, rng):
    x = rng.permutation(24).reshape(2, 3, 4).astype(dtype)
    for op, fn in (("arg_max", np.argmax), ("arg_min", np.argmin)):
        want = fn(x, axis=axis)
        if keepdims:
            want = np.expand_dims(want, axis)
        make(
            op, {"X": x}, {"Out": want.astype("int64")}, {"axis": axis, "keepdims": keepdims}
        ).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis,descending", [(-1, False), (0, True), (1, False)])
def test_argsort(axis, descending, dtype, rng):
    x = (rng.permutation(24).reshape(2, 3, 4) / 7.0).astype(dtype)
    ids = np.argsort(-x if descending else x, axis=axis, kind="stable")
    t = make(
        "argsort",
        {"X": x},
        {"Out": np.take_along_axis(x, ids, axis), "Indices": ids.astype("int64")},
        {"axis": axis, "descending": descending},
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_where_index_range_shape():
    cond = np.array([[True, False, True], [False, False, True]])
    make(
        "where_index", {"Condition": cond}, {"Out": np.argwhere(cond).astype("int64")}
    ).check_output()
    make(
        "where_index", {"Condition": np.zeros((2, 2), bool)}, {"Out": np.zeros((0, 2), "int64")}
    ).check_output()
    for start, end, step, dtype in (
        (0, 10, 3, "int64"),
        (5, -1, -2, "int32"),
        (0.5, 2.0, 0.25, "float32"),
    ):
        make(
            "range",
            {
                "Start": np.array([start], dtype),
                "End": np.array([end], dtype),
                "Step": np.array([step], dtype),
            },
            {"Out": np.arange(start, end, step).astype(dtype)},
        ).check_output()
    make(
        "shape", {"Input": np.zeros((2, 5, 1), "float32")}, {"Out": np.array([2, 5, 1], "int32")}
    ).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "axis,exclusive,reverse",
    [(-1, False, False), (0, True, False), (1, False, True), (1, True, True)],
)
def test_cumsum(axis, exclusive, reverse, dtype, rng):
    x = rand(rng, (3, 4), dtype)
    xr = np.flip(x, axis) if reverse else x
    c = np.cumsum(xr, axis=axis)
    if exclusive:
        c = c - xr
    want = np.flip(c, axis) if reverse else c
    t = make(
        "cumsum",
        {"X": x},
        {"Out": want.astype(dtype)},
        {"axis": axis, "exclusive": exclusive, "reverse": reverse},
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# cos_sim, norm, label_smooth, maxout
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("yrows", [4, 1])
def test_cos_sim(yrows, dtype, rng):
    x = rand(rng, (4, 5), dtype)
    y = rand(rng, (yrows, 5), dtype)
    xn = np.linalg.norm(x, axis=1, keepdims=True)
    yn = np.linalg.norm(y, axis=1, keepdims=True)
    want = (x * y).sum(1, keepdims=True) / (xn * yn)
    t = make("cos_sim", {"X": x, "Y": y}, {"Out": want.astype(dtype), "XNorm": xn, "YNorm": yn})
    t.check_output()
    t.check_grad(["X", "Y"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_norm(axis, dtype, rng):
    x = rand(rng, (3, 4, 2), dtype)
    n = np.sqrt((x.astype(np.float64) ** 2).sum(axis, keepdims=True) + 1e-10)
    t = make(
        "norm", {"X": x}, {"Out": (x / n).astype(dtype), "Norm": n.astype(dtype)}, {"axis": axis}
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("prior", [False, True])
def test_label_smooth(prior, dtype, rng):
    x = np.eye(4, dtype=dtype)[[0, 2, 3]]
    inputs = {"X": x}
    p = rng.dirichlet(np.ones(4)).astype(dtype)
    if prior:
        inputs["PriorDist"] = p
    want = 0.9 * x + 0.1 * (p if prior else 0.25)
    t = make("label_smooth", inputs, {"Out": want.astype(dtype)}, {"epsilon": 0.1})
    t.check_output()
    t.check_grad(["X"], "Out", no_grad_set={"priordist_in"}, **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_maxout(dtype, rng):
    x = (rng.permutation(2 * 6 * 2 * 2).reshape(2, 6, 2, 2) / 10.0).astype(dtype)
    want = x.reshape(2, 3, 2, 2, 2).max(axis=2)
    t = make("maxout", {"X": x}, {"Out": want}, {"groups": 2})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


# ---------------------------------------------------------------------------------------------
# The Python layers: Fluid's names and keywords, TypeErrors naming the argument.
def test_layers_build_and_run(exe):
    x = tide.layers.data(name="x", shape=[3, 4], dtype="float32")
    s = tide.layers.slice(x, axes=[1], starts=[1], ends=[3])
    u = tide.layers.unsqueeze(s, axes=[1])
    q = tide.layers.squeeze(u, axes=[1])
    st = tide.layers.stack([x, x], axis=1)
    parts = tide.layers.unstack(st, axis=1)
    e = tide.layers.expand(x, expand_times=[1, 2, 1])
    am = tide.layers.argmax(x, axis=2)
    srt, ids = tide.layers.argsort(x, axis=-1, descending=True)
    cs = tide.layers.cumsum(x, axis=1)
    r = tide.layers.range(0, 6, 2, "int64")
    xs = np.random.RandomState(3).rand(2, 3, 4).astype("float32")
    got = exe.run(feed={"x": xs}, fetch_list=[s, q, st, parts[1], e, am, srt, ids, cs, r])
    np.testing.assert_allclose(got[0], xs[:, 1:3])
    np.testing.assert_allclose(got[1], xs[:, 1:3])
    np.testing.assert_allclose(got[2], np.stack([xs, xs], 1))
    np.testing.assert_allclose(got[3], xs)
    np.testing.assert_allclose(got[4], np.tile(xs, (1, 2, 1)))
    np.testing.assert_array_equal(got[5], xs.argmax(2))
    np.testing.assert_allclose(got[6], -np.sort(-xs, -1))
    np.testing.assert_array_equal(got[7], np.argsort(-xs, -1, kind="stable"))
    np.testing.assert_allclose(got[8], np.cumsum(xs, 1), rtol=1e-6)
    np.testing.assert_array_equal(got[9], [0, 2, 4])


def test_layers_type_errors_name_the_argument():
    x = tide.layers.data(name="x", shape=[3], dtype="float32")
    with pytest.raises(TypeError, match="gather.*'index'"):
        tide.layers.gather(x, [0, 1])
    with pytest.raises(TypeError, match="reduce_sum.*'dim'"):
        tide.layers.reduce_sum(x, dim="1")
    with pytest.raises(TypeError, match="slice.*'axes'"):
        tide.layers.slice(x, axes=1.5, starts=[0], ends=[1])
    with pytest.raises(TypeError, match="elu.*'x'"):
        tide.layers.elu(np.ones(3))
    with pytest.raises(TypeError, match="leaky_relu.*'alpha'"):
        tide.layers.leaky_relu(x, alpha="big")
    with pytest.raises(TypeError, match="one_hot.*'depth'"):
        tide.layers.one_hot(x, depth=2.0)
    for act in ("exp", "abs", "round", "softsign", "tanh_shrink"):
        with pytest.raises(TypeError, match="%s.*'x'" % act):
            getattr(tide.layers, act)([1.0, 2.0])


# ---------------------------------------------------------------------------------------------
# bilinear_interp, nearest_interp (numpy references written from Fluid 1.x's interpolate_op.h
# rules), pad2d, crop
def interp_ref(x, oh, ow, method, align_corners, align_mode):
    n, c, ih, iw = x.shape

    def taps(i_n, o_n):
        ratio = ((i_n - 1) / (o_n - 1) if align_corners else i_n / o_n) if o_n > 1 else 0.0
        out = []
        for k in range(o_n):
            if method == "nearest":
                i = int(ratio * k + 0.5) if align_corners else int(ratio * k)
                out.append((min(i, i_n - 1), min(i, i_n - 1), 1.0, 0.0))
                continue
            src = ratio * (k + 0.5) - 0.5 if (align_mode == 0 and not align_corners) else ratio * k
            src = max(src, 0.0)
            lo = min(int(src), i_n - 1)
            hi = lo + 1 if lo + 1 < i_n else lo
            out.append((lo, hi, 1 - (src - lo), src - lo))
        return out

    th, tw = taps(ih, oh), taps(iw, ow)
    out = np.zeros((n, c, oh, ow))
    for i, (hl, hh, hwl, hwh) in enumerate(th):
        for j, (wl, wh, wwl, wwh) in enumerate(tw):
            out[:, :, i, j] = hwl * (wwl * x[:, :, hl, wl] + wwh * x[:, :, hl, wh]) + hwh * (
                wwl * x[:, :, hh, wl] + wwh * x[:, :, hh, wh]
            )
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("align_corners,align_mode", [(True, 1), (False, 1), (False, 0)])
@pytest.mark.parametrize("out_hw", [(5, 7), (2, 3)])
def test_interp(method, align_corners, align_mode, out_hw, dtype, rng):
    x = rand(rng, (2, 2, 3, 4), dtype)
    want = interp_ref(x.astype(np.float64), out_hw[0], out_hw[1], method, align_corners, align_mode)
    t = make(
        method + "_interp",
        {"X": x},
        {"Out": want.astype(dtype)},
        {
            "out_h": out_hw[0],
            "out_w": out_hw[1],
            "align_corners": align_corners,
            "align_mode": align_mode,
            "interp_method": method,
        },
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_interp_scale_and_out_size():
    x = np.arange(12, dtype="float64").reshape(1, 1, 3, 4)
    make(
        "nearest_interp", {"X": x}, {"Out": interp_ref(x, 6, 8, "nearest", True, 1)}, {"scale": 2.0}
    ).check_output()
    make(
        "bilinear_interp",
        {"X": x, "OutSize": np.array([4, 5], "int32")},
        {"Out": interp_ref(x, 4, 5, "bilinear", True, 1)},
        {"out_h": 9, "out_w": 9},
    ).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_pad2d(mode, data_format, dtype, rng):
    x = rand(rng, (2, 3, 4, 5), dtype)
    pads = [1, 2, 2, 0]  # top, bottom, left, right
    hw = ((pads[0], pads[1]), (pads[2], pads[3]))
    width = ((0, 0), (0, 0)) + hw if data_format == "NCHW" else ((0, 0),) + hw + ((0, 0),)
    kw = {"constant_values": 0.5} if mode == "constant" else {}
    want = np.pad(
        x, width, mode={"constant": "constant", "reflect": "reflect", "edge": "edge"}[mode], **kw
    )
    t = make(
        "pad2d",
        {"X": x},
        {"Out": want},
        {"paddings": pads, "mode": mode, "pad_value": 0.5, "data_format": data_format},
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_crop(dtype, rng):
    x = rand(rng, (3, 4, 5), dtype)
    t = make(
        "crop", {"X": x}, {"Out": x[1:3, 0:2, 2:5]}, {"offsets": [1, 0, 2], "shape": [2, 2, 3]}
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))
    y = np.zeros((1, 4, 2), dtype)
    make(
        "crop", {"X": x, "Y": y, "Offsets": np.array([2, 0, 1], "int32")}, {"Out": x[2:3, :, 1:3]}
    ).check_output()
    with pytest.raises(tide.TideError, match="crop.*leaves X's dim 2"):
        make(
            "crop", {"X": x}, {"Out": x}, {"offsets": [0, 0, 4], "shape": [1, 1, 2]}
        ).check_output()


def test_resize_pad2d_crop_layers(exe):
    x = tide.layers.data(name="x", shape=[2, 3, 4], dtype="float32")
    r = tide.layers.resize_bilinear(x, out_shape=[5, 6])
    n = tide.layers.resize_nearest(x, scale=2.0)
    p = tide.layers.pad2d(x, paddings=[1, 0, 0, 2], mode="edge")
    c = tide.layers.crop(x, shape=[1, 1, 2, 2], offsets=[0, 1, 1, 2])
    assert list(r.shape) == [-1, 2, 5, 6] and list(n.shape) == [-1, 2, 6, 8]
    xs = np.random.RandomState(5).rand(1, 2, 3, 4).astype("float32")
    a, b, pp, cc = exe.run(feed={"x": xs}, fetch_list=[r, n, p, c])
    np.testing.assert_allclose(
        a, interp_ref(xs.astype(np.float64), 5, 6, "bilinear", True, 1), rtol=1e-5
    )
    np.testing.assert_allclose(
        b, interp_ref(xs.astype(np.float64), 6, 8, "nearest", True, 1), rtol=1e-6
    )
    np.testing.assert_allclose(pp, np.pad(xs, ((0, 0), (0, 0), (1, 0), (0, 2)), mode="edge"))
    np.testing.assert_allclose(cc, xs[:, 1:2, 1:3, 2:4])
    with pytest.raises(ValueError, match="out_shape and scale"):
        tide.layers.resize_bilinear(x)


def test_one_hot_needs_a_positive_depth():
    with pytest.raises(tide.TideError, match="one_hot': depth must be > 0"):
        make(
            "one_hot",
            {"X": np.array([[0]], "int64")},
            {"Out": np.zeros((1, 1), "float32")},
            {"depth": 0},
        ).check_output()
