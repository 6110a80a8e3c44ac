"""Fluid 1.x semantics an audit found missing (issue 14): attribute conversions as Fluid's
attribute checker makes them; lrn, bilinear_interp / nearest_interp and group_norm in NHWC (lrn on
oneDNN too); maxout's axis; uniform_random / gaussian_random's ShapeTensor and ShapeTensorList;
top_k's K input; cast to and from float16. Outputs against numpy, gradients against central finite
differences, float32 and float64.

Where Tide differs from Fluid 1.x: an int given for a bool attribute is true when non-zero (Fluid's
C++ cast), and so are the elements of an int list given for a bools attribute (Fluid has no such
conversion); a float given for an int, long or bool attribute is refused (Fluid truncates it).
gaussian_random takes ShapeTensor / ShapeTensorList too (Paddle 2.0 added them; Fluid 1.x's did
not). A K tensor of top_k must hold one value in [1, last dim of X]. cast to float16 rounds to
nearest even (float64 through float32, so twice); float16 to an integer type saturates as float
does."""

import numpy as np
import pytest
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn
from op_test import make
from test_ops_nn import distinct, lrn_ref
from test_ops_tensor import interp_ref

import tide

DTYPES = ["float32", "float64"]
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}
DTYPE_CODE = {
    "bool": 0,
    "int32": 2,
    "int64": 3,
    "float16": 4,
    "float32": 5,
    "float64": 6,
    "uint8": 20,
}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def nchw_to_nhwc(x):
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


# ---------------------------------------------------------------------------------------------
# Attribute conversions through block.append_op
def append_scale(attrs):
    block = tide.default_main_program().global_block()
    x = block.create_var(name="x", shape=[3], dtype="float32")
    out = block.create_var(name="out", dtype="float32")
    return block.append_op("scale", inputs={"X": x}, outputs={"Out": out}, attrs=attrs)


def run_scale(exe, x):
    (out,) = exe.run(tide.default_main_program(), feed={"x": x}, fetch_list=["out"])
    return out


def test_long_for_a_float_attribute(exe):
    """Python makes a long of any int beyond int32; a float attribute takes it, as Fluid's does."""
    op = append_scale({"scale": 2**40, "bias": -(2**33)})
    assert op.attr("scale") == float(2**40) and op.attr("bias") == -float(2**33)
    x = np.array([1.0, -0.5, 0.25], "float32")
    np.testing.assert_array_equal(run_scale(exe, x), x * np.float32(2**40) - np.float32(2**33))


@pytest.mark.parametrize("given,want", [(0, False), (1, True), (-3, True), (2**40, True)])
def test_int_for_a_bool_attribute(given, want, exe):
    """Fluid casts an int to bool as C++ does: any non-zero value is true (a long too)."""
    op = append_scale({"scale": 2.0, "bias": 1.0, "bias_after_scale": given})
    assert op.attr("bias_after_scale") is want
    x = np.array([1.0, 2.0, -1.0], "float32")
    np.testing.assert_array_equal(run_scale(exe, x), x * 2 + 1 if want else (x + 1) * 2)


def test_int_lists_for_float_lists():
    block = tide.default_main_program().global_block()
    x = block.create_var(name="x", shape=[1, 2, 3, 3], dtype="float32")
    w = block.create_var(name="w", shape=[2, 2, 1, 1], dtype="float32")
    out = block.create_var(name="out", dtype="float32")
    for given in ([2**40, -3], [4, 5]):  # longs, ints
        op = block.append_op(
            "conv2d",
            inputs={"Input": x, "Filter": w},
            outputs={"Output": out},
            attrs={"Scale_weights": given},
        )
        assert op.attr("Scale_weights") == [float(v) for v in given]


@pytest.mark.parametrize(
    "attrs,message",
    [
        (
            {"scale": 2.0, "bias_after_scale": 0.5},
            "attribute 'bias_after_scale' must be bool, got float64 0.5",
        ),
        ({"scale": "2"}, "attribute 'scale' must be float, got string"),
    ],
)
def test_refused_conversions_name_the_op_and_attribute(attrs, message):
    with pytest.raises(tide.TideError, match="op 'scale' " + message):
        append_scale(attrs)


def test_float_for_an_int_attribute_is_refused():
    block = tide.default_main_program().global_block()
    x = block.create_var(name="x", shape=[2, 3], dtype="float32")
    outs = {
        "Out": block.create_var(name="o", dtype="float32"),
        "Indices": block.create_var(name="i", dtype="int64"),
    }
    with pytest.raises(
        tide.TideError, match="op 'top_k' attribute 'k' must be int, got float64 1.5"
    ):
        block.append_op("top_k", inputs={"X": x}, outputs=outs, attrs={"k": 1.5})
    with pytest.raises(tide.TideError, match="attribute 'k' must be int, got long 1099511627776"):
        block.append_op("top_k", inputs={"X": x}, outputs=outs, attrs={"k": 2**40})


# ---------------------------------------------------------------------------------------------
# lrn in NHWC, plain and oneDNN
LRN_CASES = [(5, 2.0, 0.1, 0.75), (3, 1.0, 0.5, 0.5), (1, 1.5, 0.3, 1.0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k,alpha,beta", LRN_CASES)
def test_lrn_nhwc(n, k, alpha, beta, dtype, rng):
    x = rand(rng, (2, 5, 3, 2), dtype, -2, 2)  # NCHW values, fed as NHWC
    out, mid = lrn_ref(x.astype(np.float64), n, np.float32(k), np.float32(alpha), np.float32(beta))
    t = make(
        "lrn",
        {"X": nchw_to_nhwc(x)},
        {"Out": nchw_to_nhwc(out).astype(dtype), "MidOut": nchw_to_nhwc(mid).astype(dtype)},
        {"n": n, "k": k, "alpha": alpha, "beta": beta, "data_format": "NHWC"},
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_lrn_refuses_other_layouts():
    x = np.ones((1, 2, 2, 2), "float32")
    with pytest.raises(
        tide.TideError,
        match="op 'lrn' attribute 'data_format'.* must be one of "
        "\\{NCHW, NHWC, AnyLayout\\}, got 'NCDHW'",
    ):
        make("lrn", {"X": x}, {"Out": x, "MidOut": None}, {"data_format": "NCDHW"}).check_output()


@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_lrn_onednn_layouts_match_numpy(data_format, fresh_programs, exe, rng):
    """use_mkldnn on lrn runs the oneDNN kernel (nhwc tag for NHWC); Out and MidOut match the
    float64 reference, and the plain lrn_grad on its MidOut gives the finite-difference grads'
    closed form (dOut = w / numel)."""
    main, _ = fresh_programs
    n, k, alpha, beta = 5, 2.0, 0.1, 0.75
    x_nchw = rand(rng, (2, 8, 3, 4), "float32", -2, 2)
    x_in = nchw_to_nhwc(x_nchw) if data_format == "NHWC" else x_nchw
    block = main.global_block()
    x = tide.layers.data(name="x", shape=list(x_in.shape), dtype="float32", append_batch_size=False)
    x.stop_gradient = False
    out = block.create_var(name="out", dtype="float32")
    mid = block.create_var(name="mid", dtype="float32")
    block.append_op(
        "lrn",
        inputs={"X": x},
        outputs={"Out": out, "MidOut": mid},
        attrs={
            "n": n,
            "k": k,
            "alpha": alpha,
            "beta": beta,
            "data_format": data_format,
            "use_mkldnn": True,
        },
    )
    w = tide.layers.data(name="w", shape=list(x_in.shape), dtype="float32", append_batch_size=False)
    tide.append_backward(tide.layers.mean(tide.layers.elementwise_mul(out, w)))
    wv = rand(rng, x_in.shape, "float32")
    got_out, got_mid, dx = exe.run(
        main, feed={"x": x_in, "w": wv}, fetch_list=["out", "mid", "x@GRAD"]
    )
    ks = [kern for op, kern in exe.last_run_info()["kernels"] if op == "lrn"]
    assert ks and all("mkldnn" in kern for kern in ks), ks
    want_out, want_mid = lrn_ref(
        x_nchw.astype(np.float64), n, np.float32(k), np.float32(alpha), np.float32(beta)
    )
    layout = nchw_to_nhwc if data_format == "NHWC" else (lambda a: a)
    np.testing.assert_allclose(got_out, layout(want_out), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_mid, layout(want_mid), rtol=1e-5, atol=1e-6)
    # lrn_grad's closed form in float64 on the NCHW values.
    g = (wv if data_format == "NCHW" else wv.transpose(0, 3, 1, 2)).astype(np.float64) / wv.size
    xd = x_nchw.astype(np.float64)
    c, half = xd.shape[1], (n - 1) // 2
    s = np.pad(g * want_out / want_mid, ((0, 0), (half, half), (0, 0), (0, 0)))
    window = sum(s[:, i : i + c] for i in range(n))
    want_dx = g * want_mid**-beta - 2 * np.float32(alpha) * beta * xd * window
    np.testing.assert_allclose(dx, layout(want_dx), rtol=1e-4, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# bilinear_interp / nearest_interp and group_norm in NHWC
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("align_corners,align_mode", [(True, 1), (False, 0)])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_interp_layouts(method, align_corners, align_mode, layout, dtype, rng):
    x = rand(rng, (2, 3, 3, 4), dtype)  # NCHW values
    want = interp_ref(x.astype(np.float64), 5, 3, method, align_corners, align_mode)
    to = nchw_to_nhwc if layout == "NHWC" else np.ascontiguousarray
    t = make(
        method + "_interp",
        {"X": to(x)},
        {"Out": to(want).astype(dtype)},
        {
            "out_h": 5,
            "out_w": 3,
            "align_corners": align_corners,
            "align_mode": align_mode,
            "interp_method": method,
            "data_layout": layout,
        },
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_interp_nhwc_scale_and_out_size():
    x = np.arange(24, dtype="float64").reshape(1, 2, 3, 4)
    make(
        "nearest_interp",
        {"X": nchw_to_nhwc(x)},
        {"Out": nchw_to_nhwc(interp_ref(x, 6, 8, "nearest", True, 1))},
        {"scale": 2.0, "data_layout": "NHWC"},
    ).check_output()
    make(
        "bilinear_interp",
        {"X": nchw_to_nhwc(x), "OutSize": np.array([4, 5], "int32")},
        {"Out": nchw_to_nhwc(interp_ref(x, 4, 5, "bilinear", True, 1))},
        {"out_h": 9, "out_w": 9, "data_layout": "NHWC"},
    ).check_output()


def test_interp_nhwc_compile_time_shape():
    block = tide.default_main_program().global_block()
    x = block.create_var(name="x", shape=[2, 6, 7, 3], dtype="float32")
    out = block.create_var(name="out", dtype="float32")
    block.append_op(
        "bilinear_interp",
        inputs={"X": x},
        outputs={"Out": out},
        attrs={"out_h": 4, "out_w": 5, "data_layout": "NHWC"},
    )
    assert tuple(out.shape) == (2, 4, 5, 3)


@pytest.mark.parametrize(
    "op,attr", [("bilinear_interp", "data_layout"), ("group_norm", "data_layout")]
)
def test_other_layouts_are_refused(op, attr):
    x = np.ones((1, 2, 2, 2), "float32")
    outs = {"Out": x} if op.endswith("interp") else {"Y": x, "Mean": None, "Variance": None}
    attrs = {attr: "NDHWC", "out_h": 2, "out_w": 2} if op.endswith("interp") else {attr: "NDHWC"}
    with pytest.raises(
        tide.TideError,
        match="op '%s' attribute '%s'.* must be one of \\{NCHW, NHWC\\}, got 'NDHWC'" % (op, attr),
    ):
        make(op, {"X": x}, outs, attrs).check_output()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("groups", [1, 2, 4])
@pytest.mark.parametrize("shape", [(2, 3, 2, 4), (3, 5, 4), (2, 4)])  # [N, ..., C]
def test_group_norm_nhwc(groups, shape, dtype, rng):
    x = rand(rng, shape, dtype)
    c = shape[-1]
    scale, bias = rand(rng, (c,), dtype, 0.5, 1.5), rand(rng, (c,), dtype)
    xd = np.moveaxis(x.astype(np.float64), -1, 1)  # channels second
    xg = xd.reshape(shape[0], groups, -1)
    m, v = xg.mean(axis=2, keepdims=True), xg.var(axis=2, keepdims=True)
    yd = ((xg - m) / np.sqrt(v + 1e-5)).reshape(xd.shape)
    affine_shape = (1, c) + (1,) * (len(shape) - 2)
    y = np.moveaxis(yd * scale.reshape(affine_shape) + bias.reshape(affine_shape), 1, -1)
    t = make(
        "group_norm",
        {"X": x, "Scale": scale, "Bias": bias},
        {
            "Y": y.astype(dtype),
            "Mean": m.reshape(shape[0], groups).astype(dtype),
            "Variance": v.reshape(shape[0], groups).astype(dtype),
        },
        {"groups": groups, "epsilon": 1e-5, "data_layout": "NHWC"},
    )
    t.check_output(atol=1e-5, rtol=1e-4)
    t.check_grad(["X", "Scale", "Bias"], "Y", **grad_args(dtype))


def test_group_norm_nhwc_groups_divide_the_last_dim():
    x = np.ones((2, 4, 6), "float32")  # C = 6 last, 4 second
    with pytest.raises(
        tide.TideError, match="group_norm.*groups \\(4\\) must divide the channels \\(6\\)"
    ):
        make(
            "group_norm",
            {"X": x},
            {"Y": x, "Mean": None, "Variance": None},
            {"groups": 4, "data_layout": "NHWC"},
        ).check_output()


# ---------------------------------------------------------------------------------------------
# maxout's axis
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [1, 3, -1])
@pytest.mark.parametrize("groups", [2, 3])
def test_maxout_axis(axis, groups, dtype, rng):
    x = (rng.permutation(2 * 6 * 2 * 3) / 10.0).astype(dtype).reshape(2, 6, 2, 3)  # NCHW
    want = x.reshape(2, 6 // groups, groups, 2, 3).max(axis=2)
    if axis != 1:
        x, want = nchw_to_nhwc(x), nchw_to_nhwc(want)
    t = make("maxout", {"X": x}, {"Out": want}, {"groups": groups, "axis": axis})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_maxout_grad_goes_to_the_first_max():
    x = np.array([3.0, 3.0, 2.0, 2.0]).reshape(1, 1, 1, 4)  # NHWC, C = 4: ties in both groups
    t = make(
        "maxout",
        {"X": x},
        {"Out": np.array([3.0, 2.0]).reshape(1, 1, 1, 2)},
        {"groups": 2, "axis": 3},
    )
    t.check_output()
    main, _, feeds, _ = t._build(stop_gradient_inputs=False)
    block = main.global_block()
    dout = block.create_var(name="dout", shape=[1, 1, 1, 2], dtype="float64")
    dx = block.create_var(name="dx", dtype="float64")
    block.append_op(
        "maxout_grad",
        inputs={"X": "x_in", "Out": "out_out", "Out@GRAD": dout},
        outputs={"X@GRAD": dx},
        attrs={"groups": 2, "axis": 3},
    )
    feeds["dout"] = tide.LoDTensor(np.array([5.0, 7.0]).reshape(1, 1, 1, 2))
    (got,) = tide.Executor(tide.CPUPlace()).run(main, feed=feeds, fetch_list=["dx"])
    np.testing.assert_array_equal(got.reshape(4), [5.0, 0.0, 7.0, 0.0])


@pytest.mark.parametrize("axis", [0, 2, -2])
def test_maxout_refuses_other_axes(axis):
    x = np.ones((1, 4, 2, 2), "float32")
    with pytest.raises(
        tide.TideError,
        match="op 'maxout': attribute 'axis' must be 1 \\(NCHW\\), "
        "3 or -1 \\(NHWC\\), got %d" % axis,
    ):
        make("maxout", {"X": x}, {"Out": x}, {"groups": 2, "axis": axis}).check_output()
    with pytest.raises(tide.TideError, match="groups \\(3\\) must be positive and divide"):
        make("maxout", {"X": x}, {"Out": x}, {"groups": 3, "axis": 1}).check_output()


# ---------------------------------------------------------------------------------------------
# uniform_random / gaussian_random: ShapeTensor over ShapeTensorList over shape
RANDOM_OPS = [
    ("uniform_random", {"min": -2.0, "max": 3.0}),
    ("gaussian_random", {"mean": 1.0, "std": 0.5}),
]


def random_op(op, attrs, inputs, dtype, want_shape, extra=None):
    return make(
        op,
        inputs,
        {"Out": np.zeros(want_shape, dtype)},
        dict(attrs, dtype=DTYPE_CODE[dtype], seed=11, **(extra or {})),
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,attrs", RANDOM_OPS)
@pytest.mark.parametrize("source", ["ShapeTensor", "ShapeTensorList", "both", "attribute"])
def test_random_shape_inputs(op, attrs, source, dtype):
    inputs, extra = {}, {"shape": [7, 7]}  # the attribute loses to either tensor
    if source in ("ShapeTensor", "both"):
        inputs["ShapeTensor"] = np.array([30, 40], "int64")
    if source in ("ShapeTensorList", "both"):
        inputs["ShapeTensorList"] = [
            ("d0", np.array([5], "int32")),
            ("d1", np.array([8], "int64")),
            ("d2", np.array([6], "int32")),
        ]
    want_shape = {
        "ShapeTensor": (30, 40),
        "both": (30, 40),
        "ShapeTensorList": (5, 8, 6),
        "attribute": (7, 7),
    }[source]
    t = random_op(op, attrs, inputs, dtype, want_shape, extra)
    out = t.forward()["Out"]
    assert out.shape == want_shape and out.dtype == dtype
    np.testing.assert_array_equal(out, t.forward()["Out"])  # seeded: the same numbers each run
    if op == "uniform_random":
        assert out.min() >= -2.0 and out.max() < 3.0
        assert abs(out.mean() - 0.5) < 0.5  # 1.44 / sqrt(n) standard errors at most
    else:
        assert abs(out.mean() - 1.0) < 0.2 and abs(out.std() - 0.5) < 0.2


@pytest.mark.parametrize("op,attrs", RANDOM_OPS)
def test_random_shape_tensor_compile_time_dims(op, attrs):
    block = tide.default_main_program().global_block()
    shape = block.create_var(name="shape", shape=[3], dtype="int32")
    dims = [block.create_var(name="d%d" % i, shape=[1], dtype="int64") for i in range(2)]
    for inputs, want in (
        ({"ShapeTensor": shape}, (-1, -1, -1)),
        ({"ShapeTensorList": dims}, (-1, -1)),
    ):
        out = block.create_var(name=tide.unique_name.generate("out"), dtype="float32")
        block.append_op(op, inputs=inputs, outputs={"Out": out}, attrs=dict(attrs, shape=[4]))
        assert tuple(out.shape) == want


@pytest.mark.parametrize("op,attrs", RANDOM_OPS)
def test_random_shape_errors(op, attrs):
    with pytest.raises(
        tide.TideError, match="op '%s': ShapeTensor \\[2, -3\\] has a negative dim" % op
    ):
        random_op(
            op, attrs, {"ShapeTensor": np.array([2, -3], "int32")}, "float32", (2, 3)
        ).forward()
    with pytest.raises(
        tide.TideError,
        match="op '%s': ShapeTensorList\\[0\\] \\('d0'\\) must hold one value, got 2" % op,
    ):
        random_op(
            op, attrs, {"ShapeTensorList": [("d0", np.array([2, 3], "int32"))]}, "float32", (2, 3)
        ).forward()
    with pytest.raises(
        tide.TideError,
        match="ShapeTensor \\('shapetensor_in'\\) must be int32 or int64, got float32",
    ):
        random_op(
            op, attrs, {"ShapeTensor": np.array([2, 3], "float32")}, "float32", (2, 3)
        ).forward()


# ---------------------------------------------------------------------------------------------
# top_k's K input
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k_dtype", ["int32", "int64"])
@pytest.mark.parametrize("shape,k", [((3, 6), 2), ((2, 3, 5), 5), ((4,), 1)])
def test_top_k_k_tensor(shape, k, k_dtype, dtype, rng):
    x = distinct(rng, shape, dtype)
    idx = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    t = make(
        "top_k",
        {"X": x, "K": np.array([k], k_dtype)},
        {"Out": np.take_along_axis(x, idx, axis=-1), "Indices": idx.astype("int64")},
        {"k": 1},
    )  # K wins over the attribute
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_top_k_k_tensor_compile_time_dims():
    block = tide.default_main_program().global_block()
    x = block.create_var(name="x", shape=[4, 9], dtype="float32")
    k = block.create_var(name="k", shape=[1], dtype="int32")
    out = block.create_var(name="out", dtype="float32")
    idx = block.create_var(name="idx", dtype="int64")
    block.append_op(
        "top_k", inputs={"X": x, "K": k}, outputs={"Out": out, "Indices": idx}, attrs={"k": 3}
    )
    assert tuple(out.shape) == (4, -1) and tuple(idx.shape) == (4, -1)


@pytest.mark.parametrize(
    "k,message",
    [
        (np.array([0], "int32"), "k = 0 must be in \\[1, the last dim of X \\[2, 3\\]\\]"),
        (np.array([4], "int64"), "k = 4 must be in \\[1, the last dim of X \\[2, 3\\]\\]"),
        (np.array([1, 2], "int32"), "K\\[0\\] \\('k_in'\\) must hold one value, got 2"),
        (np.array([1.0], "float32"), "K \\('k_in'\\) must be int32 or int64, got float32"),
    ],
)
def test_top_k_k_tensor_errors(k, message):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    with pytest.raises(tide.TideError, match="op 'top_k': " + message):
        make("top_k", {"X": x, "K": k}, {"Out": x, "Indices": x.astype("int64")}).forward()


# ---------------------------------------------------------------------------------------------
# cast to and from float16
HALF_SOURCES = {
    "float32": [-70000.0, -2.75, -0.5, 0.0, 0.1, 1.5, 65504.0, 1e-8, np.inf, -np.inf, np.nan],
    "float64": [-2.75, -0.5, 0.0, 0.1, 1.5, 2049.0, 65519.0, 65520.0, 1e-8, np.inf, np.nan],
    "int32": [-70000, -3, 0, 1, 2049, 65504, 100000],
    "int64": [-(2**40), -3, 0, 1, 2049, 65504],
    "bool": [True, False, True],
    "uint8": [0, 1, 200, 255],
}


@pytest.mark.parametrize("src", sorted(HALF_SOURCES))
def test_cast_to_float16(src):
    x = np.array(HALF_SOURCES[src], dtype=src)
    with np.errstate(over="ignore"):
        want = x.astype("float16")  # round to nearest even; beyond 65504 -> inf
    got = make(
        "cast",
        {"X": x},
        {"Out": want},
        {"in_dtype": DTYPE_CODE[src], "out_dtype": DTYPE_CODE["float16"]},
    ).forward()["Out"]
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "dst", ["float32", "float64", "int32", "int64", "bool", "uint8", "float16"]
)
def test_cast_from_float16(dst):
    x = np.array(
        [-65504.0, -300.5, -2.75, -0.5, 0.0, 0.1, 1.5, 255.9, 65504.0, np.inf, -np.inf, np.nan],
        "float32",
    ).astype("float16")
    x64 = x.astype(np.float64)
    if dst in ("float32", "float64", "float16", "bool"):
        want = x.astype(dst)  # exact; bool: non-zero (NaN too) is true
    else:  # truncate toward 0, saturate at the limits (+-inf too), NaN -> 0 (the float rule)
        info = np.iinfo(dst)
        want = np.array(
            [
                0
                if np.isnan(v)
                else info.min
                if v <= info.min
                else info.max
                if v >= info.max
                else int(v)
                for v in x64
            ],
            dst,
        )
    t = make(
        "cast",
        {"X": x},
        {"Out": want},
        {"in_dtype": DTYPE_CODE["float16"], "out_dtype": DTYPE_CODE[dst]},
    )
    got = t.forward()["Out"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_cast_float16_round_trip_grad(rng):
    """float32 -> float16 -> float32: the grad casts Out@GRAD back to float32."""
    x = rand(rng, (3, 4), "float32")
    block = tide.default_main_program().global_block()
    xv = block.create_var(name="x", shape=[3, 4], dtype="float32", stop_gradient=False)
    half = block.create_var(name="half", dtype="float16")
    back = block.create_var(name="back", dtype="float32")
    block.append_op(
        "cast",
        inputs={"X": xv},
        outputs={"Out": half},
        attrs={"in_dtype": DTYPE_CODE["float32"], "out_dtype": DTYPE_CODE["float16"]},
    )
    block.append_op(
        "cast",
        inputs={"X": half},
        outputs={"Out": back},
        attrs={"in_dtype": DTYPE_CODE["float16"], "out_dtype": DTYPE_CODE["float32"]},
    )
    tide.append_backward(tide.layers.reduce_sum(back))
    exe = tide.Executor(tide.CPUPlace())
    got, dx = exe.run(tide.default_main_program(), feed={"x": x}, fetch_list=["back", "x@GRAD"])
    np.testing.assert_array_equal(got, x.astype("float16").astype("float32"))
    np.testing.assert_array_equal(dx, np.ones_like(x))
