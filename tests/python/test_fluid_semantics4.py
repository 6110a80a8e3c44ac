"""Fluid 1.x op semantics of issue 37 (part): cross_entropy's output dims for a label without the
last dim, uniform_random's diagonal and SelectedRows outputs (fill_constant's too), pow's
FactorTensor, assign of numpy arrays and LoDTensors (assign_value), sum skipping empty
SelectedRows, and the layers' argument checks (Fluid's exception classes)."""

import numpy as np
import pytest

import tide
from tide import layers


def _softmax(rng, shape):
    e = np.exp(rng.uniform(-1, 1, shape))
    return e / e.sum(-1, keepdims=True)


# ------------------------------------------------------------------------------------------------
# cross_entropy / cross_entropy2: Y has Label's dims (Fluid's InferShape), the last 1 only where
# Label has X's rank.
@pytest.mark.parametrize("label_shape,want", [([5], [5]), ([5, 1], [5, 1])])
def test_cross_entropy_output_has_the_label_dims(exe, rng, label_shape, want):
    x = layers.data(name="x", shape=[5, 4], dtype="float64", append_batch_size=False)
    label = layers.data(name="label", shape=label_shape, dtype="int64", append_batch_size=False)
    y = layers.cross_entropy(x, label)
    assert list(y.shape) == want
    xs = _softmax(rng, (5, 4))
    ls = np.array([0, 3, 1, 2, 3], "int64").reshape(label_shape)
    (got,) = exe.run(feed={"x": xs, "label": ls}, fetch_list=[y])
    assert list(got.shape) == want
    np.testing.assert_allclose(got.ravel(), -np.log(xs[np.arange(5), ls.ravel()]), rtol=1e-12)


def test_cross_entropy_soft_label_keeps_a_last_dim_of_1(exe, rng):
    x = layers.data(name="x", shape=[4], dtype="float64")
    label = layers.data(name="label", shape=[4], dtype="float64")
    y = layers.cross_entropy(x, label, soft_label=True)
    assert list(y.shape) == [-1, 1]
    xs, ls = _softmax(rng, (3, 4)), _softmax(rng, (3, 4))
    (got,) = exe.run(feed={"x": xs, "label": ls}, fetch_list=[y])
    np.testing.assert_allclose(got, -(ls * np.log(xs)).sum(-1, keepdims=True), rtol=1e-12)


def test_cross_entropy_gradient_with_a_label_without_the_last_dim(exe, rng):
    x = layers.data(
        name="x", shape=[3, 4], dtype="float64", append_batch_size=False, stop_gradient=False
    )
    label = layers.data(name="label", shape=[3], dtype="int64", append_batch_size=False)
    loss = layers.mean(layers.cross_entropy(x, label))
    tide.append_backward(loss, parameter_list=["x"])
    xs, ls = _softmax(rng, (3, 4)), np.array([2, 0, 3], "int64")
    (got,) = exe.run(feed={"x": xs, "label": ls}, fetch_list=["x@GRAD"])
    want = np.zeros((3, 4))
    want[np.arange(3), ls] = -1.0 / (3 * xs[np.arange(3), ls])
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# uniform_random's diagonal; uniform_random and fill_constant into a SelectedRows.
def test_uniform_initializer_sets_the_diagonal(exe):
    w = layers.create_parameter(
        [4, 5],
        "float32",
        name="w",
        default_initializer=tide.initializer.Uniform(
            -0.5, 0.5, seed=3, diag_num=3, diag_step=5, diag_val=7.0
        ),
    )
    exe.run(tide.default_startup_program())
    (got,) = exe.run(fetch_list=[w])
    flat = got.ravel()
    diag = [0, 6, 12]  # k * (diag_step + 1)
    np.testing.assert_array_equal(flat[diag], [7.0, 7.0, 7.0])
    rest = np.delete(flat, diag)
    assert ((rest >= -0.5) & (rest < 0.5)).all()


def test_uniform_random_diagonal_past_the_end_is_an_error(exe):
    block = tide.default_main_program().global_block()
    out = block.create_var(name="u", shape=[2, 2], dtype="float32")
    block.append_op(
        "uniform_random",
        outputs={"Out": out},
        attrs={"shape": [2, 2], "diag_num": 3, "diag_step": 1},
    )
    with pytest.raises(
        tide.InvalidArgumentError,
        match=r"uniform_random.*diag_num 3 with diag_step 1 puts a diagonal element "
        r"at 4, past Out's 4 elements",
    ):
        exe.run(fetch_list=[out])


@pytest.mark.parametrize(
    "op,attrs",
    [("uniform_random", {"min": 2.0, "max": 3.0, "seed": 1}), ("fill_constant", {"value": 2.5})],
)
def test_filling_a_selected_rows_fills_its_value_and_keeps_its_rows(op, attrs):
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        block = main.global_block()
        out = block.create_var(
            name="sr", type="SELECTED_ROWS", shape=[3, 4], dtype="float32", persistable=True
        )
        block.append_op(op, outputs={"Out": out}, attrs=dict(attrs, shape=[3, 4], dtype=5))
    scope = tide.Scope()
    sr = scope.var("sr").get_selected_rows()
    sr.set_rows([4, 0, 7])
    sr.set_height(10)
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    sr = scope.find_var("sr").get_selected_rows()
    value = np.array(sr.get_tensor())
    # The rows stay; the height is shape[0], as Fluid's shape inference sets a SelectedRows'.
    assert value.shape == (3, 4) and list(sr.rows()) == [4, 0, 7] and sr.height() == 3
    if op == "fill_constant":
        np.testing.assert_array_equal(value, np.full((3, 4), 2.5, "float32"))
    else:
        assert ((value >= 2.0) & (value < 3.0)).all()


# ------------------------------------------------------------------------------------------------
# pow with a Variable exponent (FactorTensor).
def test_pow_with_a_variable_factor(exe, rng):
    x = layers.data(
        name="x", shape=[2, 3], dtype="float64", append_batch_size=False, stop_gradient=False
    )
    f = layers.data(name="f", shape=[1], dtype="float32", append_batch_size=False)
    y = layers.pow(x, factor=f)
    loss = layers.mean(y)
    tide.append_backward(loss, parameter_list=["x"])
    pow_op = [op for op in tide.default_main_program().global_block().ops if op.type == "pow"][0]
    assert pow_op.input("FactorTensor") == ["f"]
    xs = rng.uniform(0.5, 2, (2, 3))
    for factor in (2.5, -1.0):
        got, grad = exe.run(
            feed={"x": xs, "f": np.array([factor], "float32")}, fetch_list=[y, "x@GRAD"]
        )
        np.testing.assert_allclose(got, xs**factor, rtol=1e-12)
        eps = 1e-6
        want = ((xs + eps) ** factor - (xs - eps) ** factor) / (2 * eps) / xs.size
        np.testing.assert_allclose(grad, want, rtol=1e-6)


def test_pow_factor_checks():
    x = layers.data(name="x", shape=[3], dtype="float32")
    with pytest.raises(TypeError, match=r"pow: the data type of 'factor' must be one of float32"):
        layers.pow(x, factor=layers.fill_constant([1], "float64", 2.0))
    with pytest.raises(TypeError, match=r"pow: the type of 'factor' must be"):
        layers.pow(x, factor="2")
    assert layers.pow(x, 3).dtype == "float32"  # a number stays the attribute


# ------------------------------------------------------------------------------------------------
# assign of values: assign_value.
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "bool"])
def test_assign_a_numpy_array(exe, rng, dtype):
    values = rng.uniform(-50, 50, (2, 3)) if dtype != "bool" else rng.uniform(-1, 1, (2, 3)) > 0
    values = values.astype(dtype)
    out = layers.assign(values)
    assert out.dtype == dtype and list(out.shape) == [2, 3]
    assert tide.default_main_program().global_block().ops[-1].type == "assign_value"
    (got,) = exe.run(fetch_list=[out])
    assert got.dtype == values.dtype
    np.testing.assert_array_equal(got, values)


def test_assign_a_lod_tensor(exe):
    t = tide.LoDTensor()
    t.set(np.arange(6, dtype="int64").reshape(3, 2), tide.CPUPlace())
    (got,) = exe.run(fetch_list=[layers.assign(t)])
    np.testing.assert_array_equal(got, np.arange(6).reshape(3, 2))
    t.set_recursive_sequence_lengths([[1, 2]])
    with pytest.raises(ValueError, match=r"assign: a LoDTensor with LoD"):
        layers.assign(t)


def test_assign_refuses_what_fluid_refuses():
    # float64 arrays are Paddle 2's addition (assign_value's fp64_values); Fluid 1.8 refused them.
    with pytest.raises(
        TypeError,
        match=r"assign: a numpy array's data type must be one of "
        r"float32, float64, int32, int64, bool, but received float16",
    ):
        layers.assign(np.zeros(3, "float16"))
    with pytest.raises(TypeError, match=r"assign: the type of 'input' must be"):
        layers.assign([1.0, 2.0])


def test_assign_value_with_too_few_values_names_the_op(exe):
    block = tide.default_main_program().global_block()
    out = block.create_var(name="v", dtype="float32")
    block.append_op(
        "assign_value",
        outputs={"Out": out},
        attrs={"shape": [2, 2], "dtype": 5, "fp32_values": [1.0, 2.0, 3.0]},
    )
    with pytest.raises(
        tide.InvalidArgumentError,
        match=r"assign_value.*fp32_values holds 3 values, shape \[2, 2\] needs 4",
    ):
        exe.run(fetch_list=[out])


# ------------------------------------------------------------------------------------------------
# sum: a SelectedRows that lists no rows adds nothing and is not checked (Fluid skips it).
def _run_sum(parts, dense=None):
    """sum over SelectedRows parts [(rows, values, height) or None: an empty one with nothing
    set] (and a dense input); returns Out's scope variable."""
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        block = main.global_block()
        ins = [
            block.create_var(
                name="x%d" % i,
                type="SELECTED_ROWS",
                shape=[10, 4],
                dtype="float64",
                persistable=True,
            )
            for i in range(len(parts))
        ]
        if dense is not None:
            ins.append(
                block.create_var(
                    name="d", shape=list(dense.shape), dtype="float64", persistable=True
                )
            )
        out = block.create_var(
            name="out",
            type="LOD_TENSOR" if dense is not None else "SELECTED_ROWS",
            shape=[10, 4],
            dtype="float64",
            persistable=True,
        )
        block.append_op("sum", inputs={"X": ins}, outputs={"Out": out})
    scope = tide.Scope()
    for i, part in enumerate(parts):
        sr = scope.var("x%d" % i).get_selected_rows()
        if part is not None:
            rows, values, height = part
            sr.set_rows(rows)
            sr.set_height(height)
            sr.get_tensor().set(values, tide.CPUPlace())
    if dense is not None:
        scope.var("d").get_tensor().set(dense, tide.CPUPlace())
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    return scope.find_var("out")


@pytest.mark.parametrize("empty_first", [False, True])
def test_sum_skips_an_empty_selected_rows(rng, empty_first):
    values = rng.uniform(-1, 1, (3, 4))
    parts = [([5, 2, 5], values, 10), None]
    if empty_first:
        parts.reverse()
    sr = _run_sum(parts).get_selected_rows()
    assert list(sr.rows()) == [2, 5] and sr.height() == 10
    np.testing.assert_allclose(np.array(sr.get_tensor()), [values[1], values[0] + values[2]])


def test_sum_of_dense_and_an_empty_selected_rows(rng):
    dense = rng.uniform(-1, 1, (6, 4))
    got = np.array(_run_sum([None], dense=dense).get_tensor())
    np.testing.assert_allclose(got, dense)


# ------------------------------------------------------------------------------------------------
# The layers' argument checks: Fluid 1.8's check_type / check_variable_and_dtype, and its
# exception classes (docs/layers.md lists what is checked).
def _int_var():
    return layers.data(name="i", shape=[3], dtype="int64")


def _float_var(name="f"):
    return layers.data(name=name, shape=[3, 8, 8], dtype="float32")


@pytest.mark.parametrize(
    "call,match",
    [
        (
            lambda: layers.mean(_int_var()),
            r"mean: the data type of 'x' must be one of float16, float32, float64",
        ),
        (lambda: layers.mean([1.0]), r"mean: the type of 'x' must be a Variable"),
        (lambda: layers.relu(_int_var()), r"relu: the data type of 'x'"),
        (lambda: layers.exp(np.ones(3)), r"exp: the type of 'x' must be a Variable"),
        (
            lambda: layers.elementwise_add(_float_var(), np.ones(3)),
            r"elementwise_add: the type of 'y'",
        ),
        (
            lambda: layers.elementwise_mul(layers.data("b", [3], "bool"), _float_var()),
            r"elementwise_mul: the data type of 'x'",
        ),
        (lambda: layers.sums([_float_var(), 1.0]), r"sums: the type of 'input' must be a Variable"),
        (lambda: layers.sums("x"), r"sums: the type of 'input' must be"),
        (lambda: layers.fc(_int_var(), 2), r"fc: the data type of 'input'"),
        (lambda: layers.fc("x", 2), r"fc: the type of 'input' must be"),
        (
            lambda: layers.square_error_cost(_float_var(), _int_var()),
            r"square_error_cost: the data type of 'label'",
        ),
        (
            lambda: layers.less_than(_float_var(), 1.0),
            r"less_than: the type of 'y' must be a Variable",
        ),
        (
            lambda: layers.logical_and(_float_var("a"), _float_var("b")),
            r"logical_and: the data type of 'x' must be one of bool",
        ),
        (
            lambda: layers.pool2d(_float_var(), 2, use_cudnn=1),
            r"pool2d: use_cudnn must be True or False",
        ),
    ],
)
def test_layers_raise_type_errors_as_fluid(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_conv2d_use_cudnn_not_a_bool_is_a_value_error_as_in_fluid():
    with pytest.raises(
        ValueError, match=r"conv2d: use_cudnn must be True or False, but received 'yes'"
    ):
        layers.conv2d(_float_var(), 2, 3, use_cudnn="yes")
