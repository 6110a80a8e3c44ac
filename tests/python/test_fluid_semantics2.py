"""Fluid 1.x semantics, second round (issue 14): expand's ExpandTimes / expand_times_tensor;
merge_selected_rows and get_tensor_from_selected_rows, and GradientClipByGlobalNorm over sparse
(SelectedRows) gradients; fill_constant of bool; the interps' SizeTensor and Scale in Fluid 1.8's
order (the oneDNN kernels too); cross_entropy keeping a NaN. Outputs against numpy, gradients
against central finite differences, float32 and float64.

Where Tide differs from Fluid 1.x: ExpandTimes, expand_times_tensor and the interps' SizeTensor /
OutSize take int64 as well as int32, and Scale float64 as well as float32. get_tensor_from_
selected_rows' Out has -1 rows before it runs (Fluid copies X's dims, the height). Global-norm
clipping scales a sparse gradient with scale (ScaleTensor) where Fluid uses elementwise_mul: the
values are the same, its rows stay as listed (unmerged), as in Fluid. A NaN fill value makes a bool
fill_constant true (Fluid's static_cast, any non-zero value is true)."""

import numpy as np
import pytest
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn
from op_test import make
from test_fluid_semantics import DTYPE_CODE, DTYPES, grad_args, rand
from test_mkldnn_ops import check_grads, onednn
from test_mkldnn_ops import run as run_onednn
from test_ops_selected_rows import TOL, merged, run_op
from test_ops_tensor import interp_ref

import tide
from tide import layers
from tide.clip import GradientClipByGlobalNorm, GradientClipByNorm, append_gradient_clip_ops


def out_shape_of(op, inputs, attrs):
    """Out's build-time dims of `op` appended with variables of the given dims."""
    block = tide.default_main_program().global_block()
    ins = {}
    for param, value in inputs.items():
        make_var = lambda shape, dtype, param=param: block.create_var(  # noqa: E731
            name=tide.unique_name.generate(param), shape=shape, dtype=dtype
        )
        ins[param] = (
            [make_var(s, d) for s, d in value] if isinstance(value, list) else make_var(*value)
        )
    out = block.create_var(name=tide.unique_name.generate("out"), dtype="float32")
    block.append_op(op, inputs=ins, outputs={"Out": out}, attrs=attrs)
    return tuple(out.shape)


# ---------------------------------------------------------------------------------------------
# expand: ExpandTimes over expand_times_tensor over expand_times
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("source", ["ExpandTimes", "expand_times_tensor", "both", "attribute"])
def test_expand_times_tensors(source, dtype, rng):
    x = rand(rng, (2, 3, 1), dtype)
    inputs = {"X": x}
    if source in ("ExpandTimes", "both"):
        inputs["ExpandTimes"] = np.array([2, 1, 4], "int32")
    if source in ("expand_times_tensor", "both"):
        inputs["expand_times_tensor"] = [
            ("t0", np.array([3], "int32")),
            ("t1", np.array([2], "int64")),
            ("t2", np.array([1], "int32")),
        ]
    reps = {
        "ExpandTimes": (2, 1, 4),
        "both": (2, 1, 4),
        "expand_times_tensor": (3, 2, 1),
        "attribute": (1, 2, 2),
    }[source]
    # The attribute loses to the tensors. With the list alone it holds what Fluid's layer puts
    # there (the ints, -1 for a Variable): Out's build-time dims.
    times = [3, -1, 1] if source == "expand_times_tensor" else [1, 2, 2]
    t = make("expand", inputs, {"Out": np.tile(x, reps)}, {"expand_times": times})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_expand_compile_time_dims():
    x = ([2, 3], "float32")
    assert out_shape_of("expand", {"X": x}, {"expand_times": [2, 3]}) == (4, 9)
    assert out_shape_of("expand", {"X": x, "ExpandTimes": ([2], "int32")}, {}) == (-1, -1)
    # Fluid's layer puts -1 in the attribute where a Variable stands; the ints stay known.
    lst = [([1], "int32"), ([1], "int32")]
    assert out_shape_of(
        "expand", {"X": x, "expand_times_tensor": lst}, {"expand_times": [-1, 3]}
    ) == (-1, 9)
    assert out_shape_of("expand", {"X": x, "expand_times_tensor": lst}, {}) == (-1, -1)
    with pytest.raises(
        tide.TideError,
        match="op 'expand': expand_times_tensor has 1 tensors but X \\[2, 3\\] has rank 2",
    ):
        out_shape_of("expand", {"X": x, "expand_times_tensor": lst[:1]}, {})


@pytest.mark.parametrize(
    "inputs,message",
    [
        (
            {"ExpandTimes": np.array([2, 0], "int32")},
            "ExpandTimes \\[2, 0\\] holds 0; each repeat must be >= 1",
        ),
        (
            {"ExpandTimes": np.array([2, 1, 1], "int32")},
            "expand_times has 3 values but X \\[2, 3\\] has rank 2",
        ),
        (
            {"ExpandTimes": np.array([2, 1], "float32")},
            "ExpandTimes \\('expandtimes_in'\\) must be int32 or int64, got float32",
        ),
        (
            {
                "expand_times_tensor": [
                    ("a", np.array([2], "int32")),
                    ("b", np.array([-1], "int64")),
                ]
            },
            "expand_times_tensor \\[2, -1\\] holds -1",
        ),
        (
            {
                "expand_times_tensor": [
                    ("a", np.array([2, 2], "int32")),
                    ("b", np.array([1], "int32")),
                ]
            },
            "expand_times_tensor\\[0\\] \\('a'\\) must hold one value, got 2",
        ),
    ],
)
def test_expand_times_tensor_errors(inputs, message):
    x = np.ones((2, 3), "float32")
    with pytest.raises(tide.TideError, match="op 'expand': " + message):
        make("expand", dict(inputs, X=x), {"Out": x}).forward()


# ---------------------------------------------------------------------------------------------
# merge_selected_rows, get_tensor_from_selected_rows
@pytest.mark.parametrize("dtype", DTYPES)
def test_merge_selected_rows(dtype, rng):
    parts = [([7, 1, 7, 0, 7], rand(rng, (5, 4), dtype))]
    rows, values, height = run_op("merge_selected_rows", {"X": parts}, dtype=dtype)
    want_rows, want = merged(parts, 4)
    assert rows == want_rows == [0, 1, 7] and height == 10
    np.testing.assert_allclose(values, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_get_tensor_from_selected_rows_is_the_value_as_listed(dtype, rng):
    x = rand(rng, (4, 3), dtype)
    got = run_op(
        "get_tensor_from_selected_rows",
        {"X": [([5, 2, 5, 9], x)]},
        dtype=dtype,
        width=3,
        out_type="LOD_TENSOR",
    )
    np.testing.assert_array_equal(got, x)  # duplicates kept: no merge


def test_selected_rows_ops_refuse_a_dense_x():
    for op in ("merge_selected_rows", "get_tensor_from_selected_rows"):
        block = tide.default_main_program().global_block()
        x = block.create_var(name=tide.unique_name.generate("x"), shape=[3, 2], dtype="float32")
        out = block.create_var(name=tide.unique_name.generate("out"), dtype="float32")
        with pytest.raises(
            tide.TideError, match="op '%s': X must be a SelectedRows variable, got a LoDTensor" % op
        ):
            block.append_op(op, inputs={"X": x}, outputs={"Out": out})


# ---------------------------------------------------------------------------------------------
# GradientClipByGlobalNorm over dense and sparse gradients
def run_global_norm_clip(dtype, clip_norm, dense, sparse_rows, sparse_values, height=8):
    """Clips [(p0, dense grad), (p1, SelectedRows grad)]; returns the clipped dense grad and the
    clipped sparse grad's (rows, values)."""
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        p0 = b.create_var(name="p0", shape=dense.shape, dtype=dtype, persistable=True)
        p1 = b.create_var(
            name="p1", shape=[height, sparse_values.shape[1]], dtype=dtype, persistable=True
        )
        g0 = b.create_var(name="g0", shape=dense.shape, dtype=dtype, persistable=True)
        g1 = b.create_var(
            name="g1", shape=p1.shape, dtype=dtype, type="SELECTED_ROWS", persistable=True
        )
        (_, c0), (_, c1) = append_gradient_clip_ops(
            [(p0, g0), (p1, g1)], GradientClipByGlobalNorm(clip_norm)
        )
        assert c1.type == "SELECTED_ROWS"
        for c in (c0, c1):
            c.persistable = True
    scope = tide.Scope()
    scope.var("g0").get_tensor().set(dense, tide.CPUPlace(), False)
    sr = scope.var("g1").get_selected_rows()
    sr.set_rows(list(sparse_rows))
    sr.set_height(height)
    sr.get_tensor().set(sparse_values, tide.CPUPlace(), False)
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    out = scope.find_var(c1.name).get_selected_rows()
    return (
        np.array(scope.find_var(c0.name).get_tensor()),
        list(out.rows()),
        np.array(out.get_tensor()),
        out.height(),
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("clip_norm", [0.5, 100.0], ids=["clipped", "unclipped"])
def test_global_norm_clip_of_dense_and_sparse_grads(dtype, clip_norm, rng):
    dense = rand(rng, (3, 4), dtype)
    rows = [6, 1, 6, 6, 3]  # row 6 listed three times: merged, its values add first
    values = rand(rng, (5, 2), dtype)
    got_dense, got_rows, got_values, height = run_global_norm_clip(
        dtype, clip_norm, dense, rows, values
    )
    _, m = merged([(rows, values)], 2)
    norm = np.sqrt((dense.astype(np.float64) ** 2).sum() + (m**2).sum())
    scale = clip_norm / max(norm, clip_norm)
    np.testing.assert_allclose(got_dense, dense * scale, **TOL[dtype])
    assert got_rows == rows and height == 8  # scaled as listed, as Fluid
    np.testing.assert_allclose(got_values, values.astype(np.float64) * scale, **TOL[dtype])
    if clip_norm < 1:  # the merged gradients' global norm is now clip_norm
        merged_after = merged([(got_rows, got_values)], 2)[1]
        after = np.sqrt((got_dense.astype(np.float64) ** 2).sum() + (merged_after**2).sum())
        np.testing.assert_allclose(after, clip_norm, rtol=1e-5)


def _embedding_step(is_sparse, clip):
    """One SGD step of an embedding looked up with repeated ids, clipped; the table after it."""
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 7  # the same initial table for both
    with tide.program_guard(main, startup), tide.unique_name.guard():
        ids = layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
        emb = layers.embedding(
            ids, size=[6, 3], is_sparse=is_sparse, param_attr=tide.ParamAttr(name="table")
        )
        hidden = layers.fc(emb, size=2, param_attr=tide.ParamAttr(name="fc_w"))
        loss = layers.reduce_sum(layers.square(hidden))
        tide.optimizer.SGD(learning_rate=0.5, grad_clip=clip).minimize(loss)
    if is_sparse and isinstance(clip, GradientClipByGlobalNorm):  # Fluid's ops for its norm
        types = [op.type for op in main.global_block().ops]
        assert "merge_selected_rows" in types and "get_tensor_from_selected_rows" in types
    ids_t = tide.LoDTensor(np.array([[4], [1], [4], [4], [0]], "int64"))
    ids_t.set_recursive_sequence_lengths([[2, 3]])
    scope = tide.Scope()
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(scope):
        exe.run(startup)
        before = np.array(scope.find_var("table").get_tensor())
        exe.run(main, feed={"ids": ids_t})
        return before, np.array(scope.find_var("table").get_tensor())


@pytest.mark.parametrize(
    "clip", [GradientClipByGlobalNorm(0.1), GradientClipByNorm(0.1)], ids=["global_norm", "norm"]
)
def test_sparse_embedding_clips_as_its_dense_twin(clip):
    """The same step with is_sparse=True (a SelectedRows gradient with repeated rows) and False
    (a dense gradient): clipping makes the same update."""
    dense_before, dense_after = _embedding_step(False, clip)
    sparse_before, sparse_after = _embedding_step(True, clip)
    np.testing.assert_array_equal(dense_before, sparse_before)
    assert not np.allclose(dense_after, dense_before)
    np.testing.assert_allclose(sparse_after, dense_after, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# fill_constant of bool
@pytest.mark.parametrize("value", [0.0, 1.0, -2.5, 0.25, float("nan")])
@pytest.mark.parametrize("source", ["attribute", "ShapeTensor", "ShapeTensorList"])
def test_fill_constant_bool(value, source):
    inputs, attrs = {}, {"shape": [2, 3], "dtype": DTYPE_CODE["bool"], "value": value}
    shape = (2, 3)
    if source == "ShapeTensor":
        inputs["ShapeTensor"], shape = np.array([4, 1, 2], "int64"), (4, 1, 2)
    elif source == "ShapeTensorList":
        inputs["ShapeTensorList"], shape = [("d0", np.array([5], "int32"))], (5,)
    # Fluid's static_cast<bool>: any value but 0 (NaN too) is true.
    make("fill_constant", inputs, {"Out": np.full(shape, value != 0)}, attrs).check_output()


@pytest.mark.parametrize(
    "str_value,want", [("1.0", True), ("0.0", False), ("-3", True), ("0", False)]
)
def test_fill_constant_bool_str_value(str_value, want):
    """Fluid 1.8's fill_constant layer writes str(float(value)) for a bool: read as a double."""
    make(
        "fill_constant",
        {},
        {"Out": np.full((3,), want)},
        {"shape": [3], "dtype": DTYPE_CODE["bool"], "str_value": str_value},
    ).check_output()
    with pytest.raises(tide.TideError, match="str_value 'x1' is not a number of bool"):
        make(
            "fill_constant",
            {},
            {"Out": np.full((3,), want)},
            {"shape": [3], "dtype": DTYPE_CODE["bool"], "str_value": "x1"},
        ).forward()


@pytest.mark.parametrize("value", [True, False])
def test_fill_constant_layer_bool(value, exe):
    out = layers.fill_constant([2, layers.fill_constant([1], "int32", 3)], "bool", value)
    (got,) = exe.run(fetch_list=[out])
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, np.full((2, 3), value))


# ---------------------------------------------------------------------------------------------
# The interps: SizeTensor over OutSize over Scale over scale over out_h / out_w
INTERP_SOURCES = {  # X 3 x 4; out_h / out_w 2 x 9; what wins, and Out's (h, w)
    # out_h / out_w as Fluid's layer leaves them beside a SizeTensor of Variables (-1 each)
    "SizeTensor": (
        {"SizeTensor": 1, "OutSize": 1, "Scale": 1},
        {"scale": 2.0, "out_h": -1, "out_w": -1},
        (5, 6),
    ),
    "OutSize": ({"OutSize": 1, "Scale": 1}, {"scale": 2.0}, (4, 7)),
    "Scale": ({"Scale": 1}, {"scale": 2.0}, (4, 6)),
    "Scale<=0": ({"Scale": -1}, {"scale": 2.0}, (2, 9)),  # Fluid: then out_h / out_w
    "scale": ({}, {"scale": 0.5}, (1, 2)),
    "out_h/out_w": ({}, {}, (2, 9)),
}


def interp_inputs(x, given, scale_dtype="float32"):
    inputs = {"X": x}
    if "SizeTensor" in given:
        inputs["SizeTensor"] = [("h", np.array([5], "int32")), ("w", np.array([6], "int64"))]
    if "OutSize" in given:
        inputs["OutSize"] = np.array([4, 7], "int32")
    if "Scale" in given:
        inputs["Scale"] = np.array([1.5 * given["Scale"]], scale_dtype)
    return inputs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("source", sorted(INTERP_SOURCES))
def test_interp_size_inputs(source, method, dtype, rng):
    given, attrs, (oh, ow) = INTERP_SOURCES[source]
    x = rand(rng, (2, 2, 3, 4), dtype)
    want = interp_ref(x.astype(np.float64), oh, ow, method, False, 0)
    t = make(
        method + "_interp",
        interp_inputs(x, given, dtype),
        {"Out": want.astype(dtype)},
        dict(
            {
                "out_h": 2,
                "out_w": 9,
                "align_corners": False,
                "align_mode": 0,
                "interp_method": method,
            },
            **attrs,
        ),
    )
    t.check_output(rtol=1e-5, atol=1e-6)
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_interp_scale_tensor_nhwc(rng):
    x = rand(rng, (1, 2, 3, 4), "float64")
    want = interp_ref(x, 6, 8, "nearest", True, 1)
    make(
        "nearest_interp",
        {"X": x.transpose(0, 2, 3, 1), "Scale": np.array([2.0], "float32")},
        {"Out": want.transpose(0, 2, 3, 1)},
        {"data_layout": "NHWC"},
    ).check_output()


def test_interp_size_inputs_compile_time_dims():
    x = ([2, 3, 6, 7], "float32")
    size = [([1], "int32"), ([1], "int32")]
    attrs = {"out_h": -1, "out_w": 5}  # Fluid's layer: -1 where a Variable stands
    assert out_shape_of("bilinear_interp", {"X": x, "SizeTensor": size}, attrs) == (2, 3, -1, 5)
    assert out_shape_of(
        "bilinear_interp", {"X": x, "Scale": ([1], "float32")}, {"out_h": 4, "out_w": 5}
    ) == (2, 3, -1, -1)
    assert out_shape_of("nearest_interp", {"X": x}, {"scale": 2.0}) == (2, 3, 12, 14)
    with pytest.raises(
        tide.TideError,
        match="op 'bilinear_interp': SizeTensor must be 2 one-element tensors \\(h, w\\), got 1",
    ):
        out_shape_of("bilinear_interp", {"X": x, "SizeTensor": size[:1]}, attrs)


@pytest.mark.parametrize(
    "inputs,message",
    [
        (
            {"SizeTensor": [("h", np.array([0], "int32")), ("w", np.array([3], "int32"))]},
            "the output size must be positive \\(from SizeTensor\\), got 0 x 3",
        ),
        (
            {"SizeTensor": [("h", np.array([2, 2], "int32")), ("w", np.array([3], "int32"))]},
            "SizeTensor\\[0\\] \\('h'\\) must hold one value, got 2",
        ),
        (
            {"Scale": np.array([0.1], "float32")},
            "the output size must be positive \\(from Scale\\), got 0 x 0",
        ),
        (
            {"Scale": np.array([2.0, 3.0], "float32")},
            "Scale \\('scale_in'\\) must hold one value, got 2",
        ),
        (
            {"Scale": np.array([2], "int32")},
            "Scale \\('scale_in'\\) must be float32 or float64, got int32",
        ),
        (
            {"OutSize": np.array([2, 3, 4], "int32")},
            "OutSize must hold 2 values \\(h, w\\), got \\[2, 3, 4\\]",
        ),
    ],
)
def test_interp_size_input_errors(inputs, message):
    x = np.ones((1, 1, 3, 3), "float32")
    with pytest.raises(tide.TideError, match="op 'bilinear_interp': " + message):
        make("bilinear_interp", dict(inputs, X=x), {"Out": x}).forward()


# ---------------------------------------------------------------------------------------------
# cross_entropy keeps a NaN probability NaN (the CUDA kernel once made it finite)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("soft", [False, True])
def test_cross_entropy_keeps_nan(soft, dtype, rng):
    x = rand(rng, (3, 4), dtype, 0.1, 1.0)
    x[1, 2] = np.nan
    label = rand(rng, (3, 4), dtype, 0, 1) if soft else np.array([[1], [2], [0]], "int64")
    main = tide.default_main_program()
    xv = layers.data(
        name="x", shape=[3, 4], dtype=dtype, append_batch_size=False, stop_gradient=False
    )
    lv = layers.data(
        name="label", shape=list(label.shape), dtype=label.dtype.name, append_batch_size=False
    )
    y = layers.cross_entropy(xv, lv, soft_label=soft)
    tide.append_backward(layers.reduce_sum(y))
    got_y, got_dx = tide.Executor(tide.CPUPlace()).run(
        main, feed={"x": x, "label": label}, fetch_list=[y, "x@GRAD"]
    )
    assert np.isnan(got_y[1, 0]) and np.isfinite(got_y[[0, 2]]).all()
    assert np.isnan(got_dx[1, 2])
    x64 = x.astype(np.float64)
    want = -(label * np.log(x64)).sum(1) if soft else -np.log(x64[np.arange(3), label[:, 0]])
    np.testing.assert_allclose(got_y[[0, 2], 0], want[[0, 2]], rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# The oneDNN interp kernels read Out's size by the same rule
@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
@pytest.mark.parametrize("op", ["bilinear_interp", "nearest_interp"])
@pytest.mark.parametrize("size_from", ["Scale", "OutSize"])
def test_onednn_interp_takes_scale_and_out_size(op, size_from, rng):
    inputs = {"X": rng.uniform(-1, 1, (1, 8, 16, 16)).astype("float32")}
    if size_from == "Scale":
        inputs["Scale"] = np.array([2.0], "float32")
    else:
        inputs["OutSize"] = np.array([32, 32], "int32")
    attrs = {"out_h": 8, "out_w": 8, "scale": 0.5, "align_corners": False, "align_mode": 0}
    outs, grads, w, kernels = run_onednn(op, inputs, attrs, (1, 8, 32, 32), ("X",))
    assert onednn(kernels, op), kernels  # 8192 outputs, an integer upscale: oneDNN's rule
    method = op.split("_")[0]

    def f(X, **_):
        return interp_ref(X, 32, 32, method, False, 0)

    np.testing.assert_allclose(outs["Out"], f(inputs["X"].astype(np.float64)), rtol=1e-5, atol=1e-5)
    check_grads(f, {"X": inputs["X"]}, grads, w, rng)
