"""Fluid 1.8's layer arguments (issue 14): each tensor-valued argument (a shape, axis, count or
bound given as an int Variable, or as a list mixing ints and one-element int Variables) computes
what the int form computes (numpy references), with gradients against central finite
differences (float32 and float64); the data_format keywords of lrn and the resize layers; the
padding forms and data_format checks of conv2d and pool2d, and conv2d's depthwise_conv2d;
Fluid's TypeErrors naming the layer and the argument; cross_entropy2 for hard labels.

Where Tide differs from Fluid 1.8 (docs/layers.md, "Where Tide differs"): the errors name the layer first
("concat: the type of 'input' must be list, tuple or a Variable, but received str ('a')");
Fluid's asserts on reshape's and split's ints are ValueErrors; an int64 shape tensor is read as
it is (Fluid casts it to int32 first); reshape ignores `inplace` (Out is always a new
variable)."""

import numpy as np
import pytest
from test_ops_nn import conv2d_ref, lrn_ref, pool2d_ref
from test_ops_tensor import interp_ref

import tide
from tide import layers

DTYPES = ["float32", "float64"]
# float32 finite differences are coarse: looser tolerance, bigger step.
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}


def data(name, shape, dtype="float32"):
    return layers.data(name=name, shape=list(shape), dtype=dtype, append_batch_size=False)


def run(exe, fetch, feed=None):
    exe.run(tide.default_startup_program())
    return exe.run(feed=feed or {}, fetch_list=fetch)


def op_of(var):
    """The op of the default main program that writes var."""
    return next(
        op
        for op in tide.default_main_program().global_block().ops
        if var.name in op.output_arg_names
    )


def check_grad(exe, build, x, feed=None):
    """d sum(w * build(x)) / dx from append_backward against central differences of the same
    forward program (w random, of the output's shape). build appends to the default main
    program: feed holds what its earlier ops need."""
    dtype = x.dtype.name
    err, delta = GRAD_TOL[dtype]
    main = tide.default_main_program()
    xv = layers.data(
        name="gx", shape=list(x.shape), dtype=dtype, append_batch_size=False, stop_gradient=False
    )
    out = build(xv)
    feed = dict(feed or {}, gx=x)
    exe.run(tide.default_startup_program())
    (out_np,) = exe.run(main, feed=feed, fetch_list=[out])
    w = np.random.RandomState(3).uniform(0.5, 1.5, out_np.shape).astype(dtype)
    wv = data("gw", w.shape, dtype)
    loss = layers.reduce_sum(layers.elementwise_mul(out, wv))
    forward = main.clone()
    tide.append_backward(loss)
    feed["gw"] = w
    (analytic,) = exe.run(main, feed=feed, fetch_list=["gx@GRAD"])
    numeric = np.zeros(x.size)
    for i in range(x.size):
        values = []
        for sign in (1, -1):
            xp = x.copy().reshape(-1)
            xp[i] += sign * delta
            values.append(
                exe.run(forward, feed=dict(feed, gx=xp.reshape(x.shape)), fetch_list=[loss])[
                    0
                ].item()
            )
        numeric[i] = (values[0] - values[1]) / (2 * delta)
    np.testing.assert_allclose(analytic.reshape(-1), numeric, rtol=err, atol=err * 1e-2)


def rand(rng, shape, dtype):
    return rng.uniform(-1, 1, shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# B1: tensor-valued arguments
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_fill_constant_shape_as_a_variable_or_a_mixed_list(exe, dtype):
    s32, s64, d = data("s32", [2], "int32"), data("s64", [2], "int64"), data("d", [1], "int64")
    value = 7
    outs = [
        layers.fill_constant([2, 3], dtype, value),
        layers.fill_constant(s32, dtype, value),
        layers.fill_constant(s64, dtype, value),
        layers.fill_constant([d, 3], dtype, value),
    ]
    assert op_of(outs[1]).input("ShapeTensor")
    assert op_of(outs[3]).input("ShapeTensorList") and op_of(outs[3]).attr("shape") == [-1, 3]
    got = run(
        exe,
        outs,
        {
            "s32": np.array([2, 3], "int32"),
            "s64": np.array([2, 3], "int64"),
            "d": np.array([2], "int64"),
        },
    )
    for g in got:
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(g, np.full((2, 3), value, dtype))


def test_fill_constant_int64_value_is_exact(exe):
    big = 2**53 + 1  # not a float32 (nor a float64)
    (got,) = run(exe, [layers.fill_constant([2], "int64", big)])
    np.testing.assert_array_equal(got, [big, big])


def test_uniform_random_shape_as_a_variable_or_a_mixed_list(exe):
    s, d = data("s", [2], "int32"), data("d", [1], "int64")
    outs = [
        layers.uniform_random([3, 4], min=-2.0, max=3.0, seed=11),
        layers.uniform_random(s, min=-2.0, max=3.0, seed=11),
        layers.uniform_random([d, 4], min=-2.0, max=3.0, seed=11),
    ]
    got = run(exe, outs, {"s": np.array([3, 4], "int32"), "d": np.array([3], "int64")})
    assert got[0].shape == (3, 4) and got[0].min() >= -2.0 and got[0].max() < 3.0
    assert np.unique(got[0]).size == 12
    for g in got[1:]:  # the same seed draws the same numbers, whatever form the shape took
        np.testing.assert_array_equal(g, got[0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_shape_forms_compute_as_the_int_form(exe, rng, dtype):
    x_np = rand(rng, (2, 3, 4), dtype)
    x, s, d, act = (
        data("x", x_np.shape, dtype),
        data("s", [2], "int32"),
        data("d", [1], "int64"),
        data("act", [2], "int32"),
    )
    outs = [
        layers.reshape(x, [4, 6]),
        layers.reshape(x, s),
        layers.reshape(x, [d, -1]),
        layers.reshape(x, [0, 12], actual_shape=act),
    ]
    for o in outs:  # Fluid 1.6+: reshape2, whose grad reads XShape
        assert op_of(o).type == "reshape2" and op_of(o).output("XShape")
    assert op_of(outs[1]).input("Shape") and op_of(outs[2]).input("ShapeTensor")
    got = run(
        exe,
        outs,
        {
            "x": x_np,
            "s": np.array([4, 6], "int32"),
            "d": np.array([4], "int64"),
            "act": np.array([6, 4], "int32"),
        },
    )
    for g, shape in zip(got, [(4, 6), (4, 6), (4, 6), (6, 4)]):
        np.testing.assert_array_equal(g, x_np.reshape(shape))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", ["ints", "variable", "mixed"])
def test_reshape2_gradient(exe, rng, dtype, form):
    s, d = data("s", [2], "int64"), data("d", [1], "int32")
    shape = {"ints": [4, -1], "variable": s, "mixed": [d, 0, 2]}[form]
    check_grad(
        exe,
        lambda x: layers.reshape(x, shape),
        rand(rng, (4, 3, 2), dtype),
        {"s": np.array([4, 6], "int64"), "d": np.array([4], "int32")},
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis_dtype", ["int32", "int64"])
def test_concat_axis_as_a_variable(exe, rng, dtype, axis_dtype):
    a_np, b_np = rand(rng, (2, 3), dtype), rand(rng, (2, 2), dtype)
    a, b, axis = (
        data("a", a_np.shape, dtype),
        data("b", b_np.shape, dtype),
        data("ax", [1], axis_dtype),
    )
    out = layers.concat([a, b], axis=axis)
    assert op_of(out).input("AxisTensor")
    (got,) = run(exe, [out], {"a": a_np, "b": b_np, "ax": np.array([1], axis_dtype)})
    np.testing.assert_array_equal(got, np.concatenate([a_np, b_np], axis=1))
    check_grad(
        exe,
        lambda x: layers.concat([x, layers.scale(x, 2.0)], axis=axis),
        a_np,
        {"a": a_np, "b": b_np, "ax": np.array([-1], axis_dtype)},
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_dim_and_sections_as_variables(exe, rng, dtype):
    x_np = rand(rng, (4, 6), dtype)
    x, dim, sec = data("x", x_np.shape, dtype), data("dim", [1], "int32"), data("sec", [1], "int64")
    equal = layers.split(x, 3, dim=dim)
    sized = layers.split(x, [2, sec, -1], dim=1)
    assert op_of(equal[0]).input("AxisTensor")
    assert op_of(sized[0]).input("SectionsTensorList")
    assert op_of(sized[0]).attr("sections") == [2, -1, -1]
    feed = {"x": x_np, "dim": np.array([1], "int32"), "sec": np.array([3], "int64")}
    got = run(exe, equal + sized, feed)
    want = np.split(x_np, 3, axis=1) + np.split(x_np, [2, 5], axis=1)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)

    def build(x):
        a, b, c = layers.split(x, [1, sec, -1], dim=dim)
        return layers.concat([layers.scale(c, 3.0), a, layers.scale(b, 2.0)], axis=1)

    check_grad(exe, build, rand(rng, (3, 5), dtype), feed)


@pytest.mark.parametrize("k_dtype", ["int32", "int64"])
def test_topk_k_as_a_variable(exe, rng, k_dtype):
    x_np = (rng.permutation(15) * 0.1).reshape(3, 5).astype("float32")
    x, k = data("x", x_np.shape), data("k", [1], k_dtype)
    values, indices = layers.topk(x, k)
    assert op_of(values).input("K")
    got_v, got_i = run(exe, [values, indices], {"x": x_np, "k": np.array([2], k_dtype)})
    want_i = np.argsort(-x_np, axis=1)[:, :2]
    np.testing.assert_array_equal(got_i, want_i)
    np.testing.assert_array_equal(got_v, np.take_along_axis(x_np, want_i, axis=1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_slice_bounds_as_variables(exe, rng, dtype):
    x_np = rand(rng, (4, 3, 5), dtype)
    x, starts, end = (
        data("x", x_np.shape, dtype),
        data("st", [2], "int32"),
        data("en", [1], "int64"),
    )
    out = layers.slice(x, axes=[0, 2], starts=starts, ends=[3, end])
    assert op_of(out).input("StartsTensor") and op_of(out).input("EndsTensorList")
    feed = {"x": x_np, "st": np.array([1, -3], "int32"), "en": np.array([100], "int64")}
    (got,) = run(exe, [out], feed)
    np.testing.assert_array_equal(got, x_np[1:3, :, -3:])
    check_grad(
        exe,
        lambda v: layers.slice(v, axes=[0, 2], starts=starts, ends=[3, end]),
        rand(rng, (4, 2, 5), dtype),
        feed,
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_unsqueeze_axes_as_variables(exe, rng, dtype):
    x_np = rand(rng, (3, 4), dtype)
    x, axes, a = data("x", x_np.shape, dtype), data("axes", [2], "int64"), data("a", [1], "int32")
    outs = [layers.unsqueeze(x, [0, 3]), layers.unsqueeze(x, axes), layers.unsqueeze(x, [0, a])]
    feed = {"x": x_np, "axes": np.array([0, 3], "int64"), "a": np.array([3], "int32")}
    for g in run(exe, outs, feed):
        np.testing.assert_array_equal(g, x_np.reshape(1, 3, 4, 1))
    check_grad(exe, lambda v: layers.unsqueeze(v, [0, a]), x_np, feed)


@pytest.mark.parametrize("dtype", DTYPES)
def test_expand_times_as_variables(exe, rng, dtype):
    x_np = rand(rng, (2, 3), dtype)
    x, times, t = data("x", x_np.shape, dtype), data("times", [2], "int32"), data("t", [1], "int64")
    outs = [layers.expand(x, times), layers.expand(x, [2, t])]
    assert op_of(outs[0]).input("ExpandTimes") and op_of(outs[1]).input("expand_times_tensor")
    assert outs[0].shape == (-1, -1) and outs[1].shape == (4, -1)  # -1: known when it runs
    feed = {"x": x_np, "times": np.array([2, 3], "int32"), "t": np.array([3], "int64")}
    for g in run(exe, outs, feed):
        np.testing.assert_array_equal(g, np.tile(x_np, (2, 3)))
    check_grad(
        exe,
        lambda v: layers.elementwise_add(layers.expand(v, [2, t]), layers.expand(v, times)),
        x_np,
        feed,
    )


def test_tensor_arguments_must_be_int_variables():
    x = data("x", [2, 3])
    f = data("f", [2], "float32")
    with pytest.raises(
        TypeError, match="fill_constant: the data type of 'shape' must be one of int32, int64"
    ):
        layers.fill_constant(f, "float32", 1.0)
    with pytest.raises(TypeError, match=r"reshape: the data type of 'shape\[1\]'"):
        layers.reshape(x, [3, data("g", [1], "float64")])
    with pytest.raises(TypeError, match="concat: the data type of 'axis'"):
        layers.concat([x, x], axis=data("fa", [1], "float32"))
    with pytest.raises(TypeError, match="topk: the data type of 'k'"):
        layers.topk(x, data("fk", [1], "float32"))


# ---------------------------------------------------------------------------------------------
# B2: data_format of lrn and the resize layers
def nhwc(a):
    return a.transpose(0, 2, 3, 1)


def nchw(a):
    return a.transpose(0, 3, 1, 2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_lrn_data_format(exe, rng, dtype, data_format):
    x_np = rng.uniform(-2, 2, (2, 5, 3, 2)).astype(dtype)
    want, _ = lrn_ref(
        x_np.astype(np.float64), 3, np.float32(1.5), np.float32(0.2), np.float32(0.75)
    )
    feed_x = x_np if data_format == "NCHW" else nhwc(x_np)
    x = data("x", feed_x.shape, dtype)
    out = layers.lrn(x, n=3, k=1.5, alpha=0.2, beta=0.75, data_format=data_format)
    assert op_of(out).attr("data_format") == data_format
    (got,) = run(exe, [out], {"x": feed_x})
    np.testing.assert_allclose(
        got if data_format == "NCHW" else nchw(got), want, rtol=1e-5, atol=1e-6
    )
    check_grad(
        exe,
        lambda v: layers.lrn(v, n=3, k=1.5, alpha=0.2, beta=0.75, data_format=data_format),
        feed_x,
        {"x": feed_x},
    )


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize(
    "layer,method",
    [("resize_bilinear", "bilinear"), ("resize_nearest", "nearest"), ("image_resize", "bilinear")],
)
def test_resize_data_format(exe, rng, layer, method, data_format):
    x_np = rand(rng, (2, 3, 3, 4), "float64")
    want = interp_ref(x_np, 5, 7, method, True, 1)
    feed_x = x_np if data_format == "NCHW" else nhwc(x_np)
    x = data("x", feed_x.shape, "float64")
    out = getattr(layers, layer)(x, out_shape=[5, 7], data_format=data_format)
    assert op_of(out).attr("data_layout") == data_format
    (got,) = run(exe, [out], {"x": feed_x})
    np.testing.assert_allclose(got if data_format == "NCHW" else nchw(got), want, rtol=1e-10)
    check_grad(
        exe,
        lambda v: getattr(layers, layer)(v, out_shape=[5, 7], data_format=data_format),
        feed_x,
        {"x": feed_x},
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda x: layers.lrn(x, data_format="NCWH"),
        lambda x: layers.resize_bilinear(x, out_shape=[2, 2], data_format="nchw"),
        lambda x: layers.resize_nearest(x, scale=2.0, data_format="CHW"),
        lambda x: layers.image_resize(x, out_shape=[2, 2], data_format="NDHWC"),
        lambda x: layers.pool2d(x, pool_size=2, data_format="HWCN"),
        lambda x: layers.conv2d(x, 2, 3, data_format="NCDHW"),
    ],
)
def test_data_format_must_be_nchw_or_nhwc(call):
    with pytest.raises(ValueError, match="data_format must be 'NCHW' or 'NHWC'"):
        call(data("x", [1, 2, 4, 4]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "layer,method",
    [("resize_bilinear", "bilinear"), ("resize_nearest", "nearest"), ("image_resize", "bilinear")],
)
def test_resize_sizes_as_variables(exe, rng, layer, method, dtype):
    """out_shape as a list holding Variables (the op's SizeTensor), as a Variable (OutSize), and
    scale as a Variable (Scale), as Fluid 1.8's layers take them."""
    x_np = rand(rng, (2, 3, 3, 4), dtype)
    x = data("x", x_np.shape, dtype)
    h, size, scale = data("h", [1], "int32"), data("size", [2], "int32"), data("s", [1], "float32")
    resize = getattr(layers, layer)
    outs = [resize(x, out_shape=[h, 7]), resize(x, out_shape=size), resize(x, scale=scale)]
    sizes = [op_of(o).input("SizeTensor") for o in outs]
    assert len(sizes[0]) == 2 and op_of(outs[0]).attr("out_h") == -1 == outs[0].shape[2]
    assert op_of(outs[0]).attr("out_w") == 7 == outs[0].shape[3]
    assert op_of(outs[1]).input("OutSize") and op_of(outs[2]).input("Scale")
    feed = {
        "x": x_np,
        "h": np.array([5], "int32"),
        "size": np.array([2, 6], "int32"),
        "s": np.array([1.5], "float32"),
    }
    got = run(exe, outs, feed)
    for g, (oh, ow) in zip(got, [(5, 7), (2, 6), (4, 6)]):
        np.testing.assert_allclose(
            g, interp_ref(x_np.astype(np.float64), oh, ow, method, True, 1), rtol=1e-5, atol=1e-6
        )
    # The gradient through all three, their sizes fed equal (4 x 6).
    feed.update(h=np.array([4], "int32"), size=np.array([4, 6], "int32"))
    check_grad(
        exe,
        lambda v: layers.elementwise_add(
            layers.elementwise_add(resize(v, out_shape=[h, 6]), resize(v, out_shape=size)),
            resize(v, scale=scale),
        ),
        x_np,
        feed,
    )


def test_resize_variable_argument_errors():
    x = data("x", [1, 2, 4, 4])
    with pytest.raises(
        TypeError, match="resize_bilinear: the data type of 'scale' must be one of float32, float64"
    ):
        layers.resize_bilinear(x, scale=data("s", [1], "int32"))
    with pytest.raises(TypeError, match="resize_nearest: the data type of 'out_shape\\[1\\]'"):
        layers.resize_nearest(x, out_shape=[2, data("w", [1], "float32")])
    with pytest.raises(ValueError, match="image_resize: each int of out_shape must be > 0"):
        layers.image_resize(x, out_shape=[0, data("w2", [1], "int32")])
    with pytest.raises(ValueError, match="resize_bilinear: out_shape needs \\(out_h, out_w\\)"):
        layers.resize_bilinear(x, out_shape=[data("h", [1], "int32")])


def test_resize_argument_errors():
    x = data("x", [1, 2, 4, 4])
    with pytest.raises(
        TypeError, match="resize_bilinear: the type of 'align_corners' must be bool"
    ):
        layers.resize_bilinear(x, out_shape=[2, 2], align_corners=1)
    with pytest.raises(ValueError, match="resize_bilinear: align_mode must be 0 or 1"):
        layers.resize_bilinear(x, out_shape=[2, 2], align_mode=2)
    with pytest.raises(ValueError, match="resize_nearest: scale must be > 0"):
        layers.resize_nearest(x, scale=-1.0)
    with pytest.raises(ValueError, match="image_resize: resample must be"):
        layers.image_resize(x, out_shape=[2, 2], resample="CUBIC")


# ---------------------------------------------------------------------------------------------
# B3: padding forms, conv2d's depthwise_conv2d
def conv_weights(exe, out, feed):
    """out and the conv's filter, from one run."""
    w = op_of(out).input("Filter")[0]
    return run(exe, [out, w], feed)


PADS = [1, 2, 0, 1]  # top, bottom, left, right


def nested_padding_case(rng, data_format):
    """An NCHW input, its variable in data_format, and PADS as Fluid's per-dim pairs."""
    x_np = rand(rng, (1, 2, 5, 6), "float64")
    feed_x = x_np if data_format == "NCHW" else nhwc(x_np)
    nested = (
        [[0, 0], [0, 0], PADS[:2], PADS[2:]]
        if data_format == "NCHW"
        else [[0, 0], PADS[:2], PADS[2:], [0, 0]]
    )
    return x_np, feed_x, nested, data("x", feed_x.shape, "float64")


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_conv2d_nested_padding(exe, rng, data_format):
    x_np, feed_x, nested, x = nested_padding_case(rng, data_format)
    out = layers.conv2d(x, 3, 3, padding=nested, bias_attr=False, data_format=data_format)
    assert op_of(out).attr("paddings") == PADS
    got, w = conv_weights(exe, out, {"x": feed_x})
    padded = np.pad(x_np, ((0, 0), (0, 0), PADS[:2], PADS[2:]))
    want = conv2d_ref(padded, w, [1, 1], [0, 0], [1, 1], 1)
    np.testing.assert_allclose(got if data_format == "NCHW" else nchw(got), want, rtol=1e-10)


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_pool2d_nested_padding(exe, rng, data_format):
    x_np, feed_x, nested, x = nested_padding_case(rng, data_format)
    outs = [
        layers.pool2d(x, 3, "max", 2, nested, data_format=data_format),
        layers.pool2d(x, 3, "avg", 2, PADS, data_format=data_format),
    ]
    got = run(exe, outs, {"x": feed_x})
    for g, ptype in zip(got, ["max", "avg"]):
        want = pool2d_ref(x_np, [3, 3], [2, 2], PADS, ptype)
        np.testing.assert_allclose(g if data_format == "NCHW" else nchw(g), want, rtol=1e-10)


def test_nested_padding_errors():
    x = data("x", [1, 2, 5, 5])
    with pytest.raises(ValueError, match="conv2d: padding .* pads the batch or channel dim"):
        layers.conv2d(x, 2, 3, padding=[[0, 0], [1, 1], [1, 1], [1, 1]])
    with pytest.raises(ValueError, match="pool2d: padding .* pads the batch or channel dim"):
        layers.pool2d(x, 2, pool_padding=[[0, 0], [1, 1], [1, 1], [0, 0]])  # NHWC order in NCHW
    with pytest.raises(TypeError, match="conv2d: padding must be"):
        layers.conv2d(x, 2, 3, padding=[[0, 0], [0, 0], [1, 1]])
    with pytest.raises(ValueError, match="pool2d: ceil_mode must be False"):
        layers.pool2d(x, 2, pool_padding="VALID", ceil_mode=True)
    with pytest.raises(ValueError, match="pool2d: pool_size is needed"):
        layers.pool2d(x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_emits_depthwise_conv2d_as_fluid_does(exe, rng, dtype):
    x_np = rand(rng, (2, 3, 5, 5), dtype)
    x = data("x", x_np.shape, dtype)
    depthwise = layers.conv2d(x, 6, 3, padding=1, groups=3, use_cudnn=False, bias_attr=False)
    cudnn = layers.conv2d(x, 6, 3, padding=1, groups=3, bias_attr=False)
    grouped = layers.conv2d(x, 4, 3, groups=1, use_cudnn=False, bias_attr=False)
    assert [op_of(v).type for v in (depthwise, cudnn, grouped)] == [
        "depthwise_conv2d",
        "conv2d",
        "conv2d",
    ]
    got, w = conv_weights(exe, depthwise, {"x": x_np})
    want = conv2d_ref(x_np.astype(np.float64), w.astype(np.float64), [1, 1], [1, 1], [1, 1], 3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    check_grad(
        exe,
        lambda v: layers.conv2d(v, 3, 2, groups=3, use_cudnn=False, bias_attr=False),
        rand(rng, (1, 3, 3, 3), dtype),
        {"x": x_np},
    )


# ---------------------------------------------------------------------------------------------
# B4: Fluid's TypeErrors naming the layer and the argument
BAD_TYPES = [  # layer, argument, call(x, ids)
    ("concat", "input", lambda x, ids: layers.concat("a")),
    ("concat", r"input\[1\]", lambda x, ids: layers.concat([x, 3])),
    ("concat", "axis", lambda x, ids: layers.concat([x, x], axis=1.5)),
    ("split", "input", lambda x, ids: layers.split(np.ones(3), 3)),
    ("split", "num_or_sections", lambda x, ids: layers.split(x, 2.0)),
    ("split", "dim", lambda x, ids: layers.split(x, 2, dim="1")),
    ("split", r"num_or_sections\[1\]", lambda x, ids: layers.split(x, [1, 1.5], dim=1)),
    ("reshape", "x", lambda x, ids: layers.reshape([1, 2], [2])),
    ("reshape", "shape", lambda x, ids: layers.reshape(x, "2,3")),
    ("reshape", r"shape\[0\]", lambda x, ids: layers.reshape(x, [2.0, -1])),
    ("reshape", "actual_shape", lambda x, ids: layers.reshape(x, [2, -1], actual_shape=[2, 48])),
    ("fill_constant", "shape", lambda x, ids: layers.fill_constant(3, "float32", 1.0)),
    (
        "fill_constant",
        r"shape\[1\]",
        lambda x, ids: layers.fill_constant([2, None], "float32", 1.0),
    ),
    ("fill_constant", "out", lambda x, ids: layers.fill_constant([2], "float32", 1.0, out="o")),
    ("uniform_random", "shape", lambda x, ids: layers.uniform_random("3")),
    ("topk", "input", lambda x, ids: layers.topk([3, 1], 1)),
    ("topk", "k", lambda x, ids: layers.topk(x, 1.0)),
    ("lrn", "input", lambda x, ids: layers.lrn(np.ones((1, 3, 2, 2)))),
    ("matmul", "x", lambda x, ids: layers.matmul(1, x)),
    ("matmul", "y", lambda x, ids: layers.matmul(x, "y")),
    ("mul", "x", lambda x, ids: layers.mul(None, x)),
    ("mul", "y", lambda x, ids: layers.mul(x, [1.0])),
    ("cross_entropy", "input", lambda x, ids: layers.cross_entropy(np.ones((2, 3)), ids)),
    ("cross_entropy", "label", lambda x, ids: layers.cross_entropy(x, [1, 0])),
    ("softmax", "input", lambda x, ids: layers.softmax("x")),
    ("scale", "x", lambda x, ids: layers.scale(2.0, 3.0)),
    ("cast", "x", lambda x, ids: layers.cast(np.ones(2), "int32")),
    ("transpose", "x", lambda x, ids: layers.transpose(np.ones((2, 2)), [1, 0])),
    ("transpose", "perm", lambda x, ids: layers.transpose(x, "0123")),
    ("dropout", "x", lambda x, ids: layers.dropout(np.ones(2), 0.5)),
    ("embedding", "input", lambda x, ids: layers.embedding([[1]], size=[4, 2])),
    ("batch_norm", "input", lambda x, ids: layers.batch_norm(np.ones((2, 3)))),
    ("conv2d", "input", lambda x, ids: layers.conv2d("img", 2, 3)),
    ("pool2d", "input", lambda x, ids: layers.pool2d("img", 2)),
    ("resize_bilinear", "input", lambda x, ids: layers.resize_bilinear("img", out_shape=[2, 2])),
    ("slice", r"starts\[0\]", lambda x, ids: layers.slice(x, axes=[1], starts=[0.5], ends=[2])),
    ("unsqueeze", "axes", lambda x, ids: layers.unsqueeze(x, "0")),
]


@pytest.mark.parametrize("layer,arg,call", BAD_TYPES, ids=["%s-%s" % c[:2] for c in BAD_TYPES])
def test_bad_argument_type_is_a_type_error_naming_it(layer, arg, call):
    x, ids = data("x", [2, 3, 4, 4]), data("ids", [2, 1], "int64")
    with pytest.raises(TypeError, match=r"^%s: the type of '%s' must be " % (layer, arg)):
        call(x, ids)


@pytest.mark.parametrize(
    "layer,arg,call",
    [
        ("concat", r"input\[1\]", lambda x, i: layers.concat([x, data("u", [2, 4], "uint8")])),
        ("embedding", "input", lambda x, i: layers.embedding(x, size=[4, 2])),
        ("embedding", "dtype", lambda x, i: layers.embedding(i, size=[4, 2], dtype="int32")),
        ("matmul", "y", lambda x, i: layers.matmul(x, i)),
        ("softmax", "input", lambda x, i: layers.softmax(i)),
        ("cast", "dtype", lambda x, i: layers.cast(x, "uint16")),
        ("fill_constant", "dtype", lambda x, i: layers.fill_constant([1], "uint8", 1)),
        ("uniform_random", "dtype", lambda x, i: layers.uniform_random([2], dtype="int64")),
        ("fill_constant", "out", lambda x, i: layers.fill_constant([2], "float32", 1.0, out=i)),
    ],
)
def test_bad_data_type_is_a_type_error_naming_it(layer, arg, call):
    x, ids = data("x", [2, 4]), data("ids", [2, 1], "int64")
    with pytest.raises(
        TypeError, match=r"^%s: the data type of '%s' must be one of " % (layer, arg)
    ):
        call(x, ids)


def test_concat_inputs_of_different_types():
    with pytest.raises(TypeError, match="concat: all of 'input' must have one data type"):
        layers.concat([data("a", [2], "float32"), data("b", [2], "float64")])


def test_bad_values_are_value_errors():
    x = data("x", [2, 3, 4])
    for call, match in [
        (lambda: layers.reshape(x, [-1, -1]), "reshape: only one dim of 'shape' may be -1"),
        (lambda: layers.reshape(x, [2, 3, 4, 0]), r"reshape: shape\[3\] = 0 copies x's dim 3"),
        (lambda: layers.reshape(x, [2, -3]), r"reshape: shape\[1\] = -3"),
        (lambda: layers.split(x, 1), "split: 'num_or_sections' as an int must be > 1"),
        (lambda: layers.split(x, 2, dim=1), "split: input's dim 1 .3. is not divisible by"),
        (lambda: layers.split(x, [1, 1, 1, 1], dim=1), "split: 4 sections for input's dim 1"),
        (
            lambda: layers.split(x, [-1, -1], dim=2),
            "split: only one of 'num_or_sections' may be -1",
        ),
        (
            lambda: layers.fill_constant([], "float32", 0.0),
            "fill_constant: 'shape' must not be empty",
        ),
        (lambda: layers.transpose(x, [0, 1]), "transpose: 'perm' is a permutation of x's 3 dims"),
        (lambda: layers.transpose(x, [0, 1, 1]), "transpose: 'perm' .* is not a permutation"),
        (lambda: layers.topk(x, 0), "topk: 'k' must be >= 1"),
        (lambda: layers.expand(x, [1, 0, 2]), "expand: each int of 'expand_times' must be > 0"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()


# ---------------------------------------------------------------------------------------------
# B5: cross_entropy emits cross_entropy2 for hard labels
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_hard_labels_emit_cross_entropy2(exe, rng, dtype):
    p_np = rng.uniform(0.1, 1.0, (4, 5)).astype(dtype)
    p_np /= p_np.sum(axis=1, keepdims=True)
    label_np = np.array([[0], [3], [-100], [4]], "int64")
    p, label = data("p", p_np.shape, dtype), data("label", [4, 1], "int64")
    hard = layers.cross_entropy(p, label)
    soft = layers.cross_entropy(p, p, soft_label=True)
    assert op_of(hard).type == "cross_entropy2" and op_of(soft).type == "cross_entropy"
    got_hard, got_soft = run(exe, [hard, soft], {"p": p_np, "label": label_np})
    want = np.array(
        [[-np.log(p_np[i, l])] if l >= 0 else [0.0] for i, l in enumerate(label_np[:, 0])]
    )
    np.testing.assert_allclose(got_hard, want, rtol=1e-5)
    np.testing.assert_allclose(
        got_soft, -(p_np * np.log(p_np)).sum(axis=1, keepdims=True), rtol=1e-5
    )
    check_grad(exe, lambda v: layers.cross_entropy(v, label), p_np, {"p": p_np, "label": label_np})


def test_clip_takes_fluids_positional_min_and_max(exe):
    """Fluid 1.8's clip(x, min, max) with numbers: the generated layer gives a number for an input
    that an attribute of its name also holds (clip's Min / min) to the attribute."""
    x = layers.data(name="x", shape=[4], dtype="float32")
    y = layers.clip(x, -1.0, 1.0)
    z = layers.clip(x, min=-0.5, max=0.5)
    xs = np.array([[-3.0, -0.7, 0.2, 4.0]], "float32")
    got_y, got_z = exe.run(feed={"x": xs}, fetch_list=[y, z])
    np.testing.assert_array_equal(got_y, np.clip(xs, -1.0, 1.0))
    np.testing.assert_array_equal(got_z, np.clip(xs, -0.5, 0.5))
    with pytest.raises(TypeError, match="multiple values for 'min'"):
        layers.clip(x, -1.0, 1.0, min=0.0)
