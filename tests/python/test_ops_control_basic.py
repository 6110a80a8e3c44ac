"""The ops_control pack's small ops: comparisons and logical ops against numpy (with Fluid's
elementwise broadcast; Paddle's both ways in test_compare_logical_broadcast.py), increment (in place), is_empty, fill_constant_batch_size_like and print
(its log line, its pass-through and its gradient), their layers' compile-time shapes and bool
dtypes, append_backward over bool outputs, and the errors for bad inputs."""

import re

import numpy as np
import pytest
from op_test import make

import tide
from tide import layers

NUM_DTYPES = ["float32", "float64", "int32", "int64"]
# TideDataType codes (fill_constant_batch_size_like's dtype attribute).
CODE = {"bool": 0, "int32": 2, "int64": 3, "float32": 5, "float64": 6}
COMPARE = {
    "less_than": np.less,
    "less_equal": np.less_equal,
    "greater_than": np.greater,
    "greater_equal": np.greater_equal,
    "equal": np.equal,
    "not_equal": np.not_equal,
}
LOGICAL = {
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}


def small_ints(rng, shape, dtype):
    """Values from {-2..2}: ties are frequent, so == and != see both outcomes."""
    return rng.randint(-2, 3, shape).astype(dtype)


def feed(**arrays):
    return {k: np.asarray(v) for k, v in arrays.items()}


# ---------------------------------------------------------------------------------------------
# Comparisons
@pytest.mark.parametrize("dtype", NUM_DTYPES)
@pytest.mark.parametrize("op", sorted(COMPARE))
def test_compare_same_dims(op, dtype, rng):
    x, y = small_ints(rng, (3, 4), dtype), small_ints(rng, (3, 4), dtype)
    want = COMPARE[op](x, y)
    assert want.any() and not want.all()  # the data exercises both outcomes
    make(op, {"X": x, "Y": y}, {"Out": want}).check_output()


# (X dims, Y dims, axis, Y reshaped so numpy broadcasts it the same way)
BROADCAST_FORMS = {
    "trailing": ((2, 3), (3,), -1, (1, 3)),
    "middle": ((2, 3, 4), (3,), 1, (1, 3, 1)),
    "trailing_one_dropped": ((2, 3), (3, 1), 1, (1, 3)),
    "leading": ((2, 3, 4), (2, 3), 0, (2, 3, 1)),
    "scalar": ((2, 3, 4), (1,), -1, (1, 1, 1)),
    # A size-1 dim inside Y's aligned range is repeated, as Fluid's elementwise broadcast does.
    "inner_one": ((2, 3, 4), (2, 1, 4), -1, (2, 1, 4)),
    "inner_ones": ((2, 3, 4, 5), (3, 1, 5), 1, (1, 3, 1, 5)),
}


@pytest.mark.parametrize("dtype", NUM_DTYPES)
@pytest.mark.parametrize("form", sorted(BROADCAST_FORMS))
@pytest.mark.parametrize("op", sorted(COMPARE))
def test_compare_broadcast(op, form, dtype, rng):
    xs, ys, axis, ynp = BROADCAST_FORMS[form]
    x, y = small_ints(rng, xs, dtype), small_ints(rng, ys, dtype)
    want = COMPARE[op](x, y.reshape(ynp))
    assert want.shape == x.shape
    make(op, {"X": x, "Y": y}, {"Out": want}, {"axis": axis}).check_output()


def test_compare_floats_exactly():
    x = np.array([0.1, 0.2, 0.3, np.inf, -np.inf], "float64")
    y = np.array([0.1, 0.2 + 1e-12, 0.3 - 1e-12, np.inf, 0.0], "float64")
    for op, fn in COMPARE.items():
        make(op, {"X": x, "Y": y}, {"Out": fn(x, y)}).check_output()


@pytest.mark.parametrize("op", sorted(COMPARE))
def test_compare_bool_tensors(op, rng):
    """bool X and Y, as Paddle's kernels compare them (False < True): a padding mask compared
    with False (PaddleSpeech's attention writes `mask.eq(0)`), Y broadcast both ways as Paddle's
    [B, 1, 1, T] mask against a [1] zero."""
    x = rng.rand(2, 1, 3, 4) > 0.5
    for y in (rng.rand(2, 1, 3, 4) > 0.5, np.zeros((1,), bool), rng.rand(3, 1) > 0.5):
        make(op, {"X": x, "Y": y}, {"Out": COMPARE[op](x, y)}).check_output()


def test_compare_bad_broadcast_is_an_error(rng):
    t = make(
        "less_than",
        {"X": small_ints(rng, (2, 3), "float32"), "Y": small_ints(rng, (4,), "float32")},
        {"Out": np.zeros((2, 3), bool)},
    )
    with pytest.raises(
        tide.TideError,
        match=r"op 'less_than': X \('x_in'\) \[2, 3\] and Y \('y_in'\) \[4\] do not broadcast "
        r"\(trailing dims aligned; dim 1: 3 vs 4\)",
    ):
        t.check_output()


def test_compare_integer_types_must_match(rng):
    t = make(
        "equal",
        {"X": small_ints(rng, (2, 3), "int32"), "Y": small_ints(rng, (2, 3), "int64")},
        {"Out": np.zeros((2, 3), bool)},
    )
    with pytest.raises(
        tide.TideError, match=r"op 'equal': Y \('y_in'\) is int64 but X \('x_in'\) is int32"
    ):
        t.check_output()


def test_compare_layers_run_and_give_bool_at_compile_time(exe, rng):
    x = layers.data("x", shape=[3], dtype="float32")
    y = layers.data("y", shape=[3], dtype="float32")
    b = layers.data("b", shape=[1], dtype="float32", append_batch_size=False)
    outs = {
        "less_than": layers.less_than(x, y),
        "less_equal": layers.less_equal(x, y),
        "greater_than": layers.greater_than(x, y),
        "greater_equal": layers.greater_equal(x, y),
        "equal": layers.equal(x, y),
        "not_equal": layers.not_equal(x, y),
    }
    scalar = layers.less_than(x, b, force_cpu=True)
    for v in list(outs.values()) + [scalar]:
        assert v.dtype == "bool" and v.shape == (-1, 3) and v.stop_gradient
    xv, yv = small_ints(rng, (4, 3), "float32"), small_ints(rng, (4, 3), "float32")
    names = sorted(outs)
    got = exe.run(
        feed=feed(x=xv, y=yv, b=np.array([0.5], "float32")),
        fetch_list=[outs[n] for n in names] + [scalar],
    )
    for n, g in zip(names, got):
        assert g.dtype == np.bool_, n
        np.testing.assert_array_equal(g, COMPARE[n](xv, yv), err_msg=n)
    np.testing.assert_array_equal(got[-1], xv < 0.5)


def test_compare_layer_writes_a_given_cond(exe):
    x = layers.fill_constant([1], "int64", 3)
    n = layers.fill_constant([1], "int64", 5)
    cond = layers.less_than(x, n)
    same = layers.greater_than(x, n, cond=cond)  # Fluid's loop idiom: recompute into cond
    assert same is cond
    ops = [op.type for op in tide.default_main_program().global_block().ops]
    assert ops[-2:] == ["less_than", "greater_than"]
    (got,) = exe.run(fetch_list=[cond])
    np.testing.assert_array_equal(got, [False])
    with pytest.raises(TypeError, match="must be bool"):
        layers.less_than(x, n, cond=layers.fill_constant([1], "float32", 0))


def test_variable_ordering_operators(exe, rng):
    x = layers.data("x", shape=[4], dtype="float32")
    y = layers.data("y", shape=[4], dtype="float32")
    exprs = [x < y, x <= y, x > y, x >= y, x < 0.5, 0.5 < x]  # the last is x > 0.5
    types = [v.op.type for v in exprs]
    assert types == [
        "less_than",
        "less_equal",
        "greater_than",
        "greater_equal",
        "less_than",
        "greater_than",
    ]
    assert all(v.dtype == "bool" for v in exprs)
    xv, yv = small_ints(rng, (2, 4), "float32"), small_ints(rng, (2, 4), "float32")
    got = exe.run(feed=feed(x=xv, y=yv), fetch_list=exprs)
    for g, w in zip(got, [xv < yv, xv <= yv, xv > yv, xv >= yv, xv < 0.5, xv > 0.5]):
        np.testing.assert_array_equal(g, w)
    # == keeps its identity meaning (Variables live in sets and dicts).
    assert (x == y) is False and x in {x}


# ---------------------------------------------------------------------------------------------
# Logical ops
@pytest.mark.parametrize("op", sorted(LOGICAL))
def test_logical_binary(op, rng):
    x, y = rng.rand(4, 5) > 0.5, rng.rand(4, 5) > 0.5
    make(op, {"X": x, "Y": y}, {"Out": LOGICAL[op](x, y)}).check_output()


def test_logical_not(rng):
    x = rng.rand(3, 2, 2) > 0.5
    make("logical_not", {"X": x}, {"Out": np.logical_not(x)}).check_output()


def test_logical_layers(exe, rng):
    a = layers.data("a", shape=[3], dtype="bool")
    b = layers.data("b", shape=[3], dtype="bool")
    named = layers.logical_or(a, b, name="either")
    assert named.name == "either"
    outs = [layers.logical_and(a, b), named, layers.logical_xor(a, b), layers.logical_not(a)]
    for v in outs:
        assert v.dtype == "bool" and v.shape == (-1, 3) and v.stop_gradient
    av, bv = rng.rand(2, 3) > 0.5, rng.rand(2, 3) > 0.5
    got = exe.run(feed=feed(a=av, b=bv), fetch_list=outs)
    for g, w in zip(got, [av & bv, av | bv, av ^ bv, ~av]):
        np.testing.assert_array_equal(g, w)


def test_logical_dims_must_broadcast_at_compile_time():
    a = layers.data("a", shape=[2, 3], dtype="bool", append_batch_size=False)
    b = layers.data("b", shape=[3, 2], dtype="bool", append_batch_size=False)
    with pytest.raises(
        tide.TideError,
        match=r"op 'logical_and': X \('a'\) \[2, 3\] and Y \('b'\) \[3, 2\] "
        r"do not broadcast \(trailing dims aligned; dim 0: 2 vs 3\)",
    ):
        layers.logical_and(a, b)


def test_logical_dims_must_broadcast_at_run_time(exe):
    a = layers.data("a", shape=[3], dtype="bool")
    b = layers.data("b", shape=[3], dtype="bool")
    out = layers.logical_xor(a, b)  # [-1, 3] and [-1, 3]: checked when run
    with pytest.raises(
        tide.TideError,
        match=r"op 'logical_xor': X \('a'\) \[2, 3\] and Y \('b'\) "
        r"\[4, 3\] do not broadcast \(trailing dims aligned; dim 0: 2 vs 4\)",
    ):
        exe.run(feed=feed(a=np.ones((2, 3), bool), b=np.ones((4, 3), bool)), fetch_list=[out])


def test_logical_inputs_must_be_bool():
    x = layers.data("x", shape=[3], dtype="float32")
    with pytest.raises(
        TypeError,
        match=r"logical_not: the data type of 'x' must be one of bool, "
        r"but received float32",
    ):
        layers.logical_not(x)  # the layer's check, Fluid 1.8's (issue 37)
    block = tide.default_main_program().global_block()
    out = block.create_var(name="out", dtype="bool")
    with pytest.raises(
        tide.TideError, match=r"op 'logical_not': X \('x'\) must be bool, got float32"
    ):
        block.append_op("logical_not", inputs={"X": [x]}, outputs={"Out": [out]})


# ---------------------------------------------------------------------------------------------
# increment
@pytest.mark.parametrize("step", [1.0, 2.0, -3.0])
@pytest.mark.parametrize("dtype", NUM_DTYPES)
def test_increment(dtype, step):
    x = np.array([5], dtype)
    make("increment", {"X": x}, {"Out": (x + step).astype(dtype)}, {"step": step}).check_output()


def test_increment_fractional_step():
    x = np.array([[0.25]], "float64")
    make("increment", {"X": x}, {"Out": x + 0.5}, {"step": 0.5}).check_output(rtol=0, atol=0)


def test_increment_layer_in_place_counts_across_runs(exe):
    counter = layers.create_global_var(
        shape=[1], value=0, dtype="int64", persistable=True, name="counter"
    )
    out = layers.increment(counter, value=2)
    assert out is counter
    op = tide.default_main_program().global_block().ops[-1]
    assert op.type == "increment" and op.input("X") == op.output("Out") == ["counter"]
    exe.run(tide.default_startup_program())
    got = [exe.run(fetch_list=[counter])[0] for _ in range(3)]
    assert [g.tolist() for g in got] == [[2], [4], [6]]
    assert got[0].dtype == np.int64


def test_increment_layer_not_in_place(exe):
    x = layers.fill_constant([1], "float32", 1.5)
    y = layers.increment(x, value=1.0, in_place=False)
    assert y is not x and y.dtype == "float32" and y.shape == (1,)
    xv, yv = exe.run(fetch_list=[x, y])
    np.testing.assert_array_equal(xv, [1.5])
    np.testing.assert_array_equal(yv, [2.5])


def test_increment_needs_one_element():
    x = layers.data("x", shape=[2, 3], dtype="float32", append_batch_size=False)
    with pytest.raises(
        tide.TideError,
        match=r"op 'increment': X \('x'\) must hold exactly one "
        r"element, its dims are \[2, 3\]",
    ):
        layers.increment(x)


def test_increment_needs_one_element_at_run_time(exe):
    x = layers.data("x", shape=[-1], dtype="int64", append_batch_size=False)
    y = layers.increment(x, in_place=False)
    with pytest.raises(
        tide.TideError,
        match=r"op 'increment': X \('x'\) must hold exactly one "
        r"element, its dims are \[3\]",
    ):
        exe.run(feed=feed(x=np.array([1, 2, 3], "int64")), fetch_list=[y])


# ---------------------------------------------------------------------------------------------
# is_empty
@pytest.mark.parametrize("dtype", NUM_DTYPES + ["bool"])
def test_is_empty(dtype):
    make("is_empty", {"X": np.zeros((0, 3), dtype)}, {"Out": np.array([True])}).check_output()
    make("is_empty", {"X": np.zeros((2, 3), dtype)}, {"Out": np.array([False])}).check_output()


def test_is_empty_layer(exe):
    x = layers.data("x", shape=[3], dtype="float32")
    cond = layers.is_empty(x)
    assert cond.dtype == "bool" and cond.shape == (1,) and cond.stop_gradient
    for rows, want in [(0, True), (2, False)]:
        (got,) = exe.run(feed=feed(x=np.zeros((rows, 3), "float32")), fetch_list=[cond])
        np.testing.assert_array_equal(got, [want])


# ---------------------------------------------------------------------------------------------
# fill_constant_batch_size_like
@pytest.mark.parametrize("dtype", NUM_DTYPES + ["bool"])
def test_fill_constant_batch_size_like(dtype, rng):
    inp = rng.rand(5, 3).astype("float32")
    want = np.full((5, 4), 7, dtype)
    make(
        "fill_constant_batch_size_like",
        {"Input": inp},
        {"Out": want},
        {"shape": [-1, 4], "value": 7.0, "dtype": CODE[dtype]},
    ).check_output(rtol=0, atol=0)


def test_fill_constant_batch_size_like_other_dims(rng):
    inp = rng.rand(2, 6).astype("float64")
    want = np.full((3, 4, 6), -1.25, "float32")
    make(
        "fill_constant_batch_size_like",
        {"Input": inp},
        {"Out": want},
        {
            "shape": [3, 4, -1],
            "value": -1.25,
            "dtype": CODE["float32"],
            "input_dim_idx": 1,
            "output_dim_idx": 2,
        },
    ).check_output(rtol=0, atol=0)


def test_fill_constant_batch_size_like_counts_sequences_of_a_lod_input(rng):
    # As Fluid: the batch of a LoD input is its number of sequences (2 here), not its rows (5).
    inp = (rng.rand(5, 3).astype("float32"), [[2, 3]])
    make(
        "fill_constant_batch_size_like",
        {"Input": inp},
        {"Out": np.zeros((2, 4), "int64")},
        {"shape": [-1, 4], "value": 0.0, "dtype": CODE["int64"]},
    ).check_output()


def test_fill_constant_batch_size_like_layer(exe):
    x = layers.data("x", shape=[3], dtype="float32")
    a = layers.fill_constant_batch_size_like(x, shape=[-1, 5], dtype="float32", value=1.5)
    b = layers.fill_constant_batch_size_like(
        x, shape=[2, -1, 7], dtype="int64", value=4, input_dim_idx=1, output_dim_idx=1
    )
    # At compile time the batch (-1) stays unknown; the other dim is known.
    assert a.shape == (-1, 5) and a.dtype == "float32" and a.stop_gradient
    assert b.shape == (2, 3, 7) and b.dtype == "int64"
    av, bv = exe.run(feed=feed(x=np.zeros((6, 3), "float32")), fetch_list=[a, b])
    np.testing.assert_array_equal(av, np.full((6, 5), 1.5, "float32"))
    np.testing.assert_array_equal(bv, np.full((2, 3, 7), 4, "int64"))


def test_fill_constant_batch_size_like_bad_dim_idx():
    x = layers.data("x", shape=[3], dtype="float32")
    with pytest.raises(
        tide.TideError,
        match=r"op 'fill_constant_batch_size_like': "
        r"output_dim_idx 2 is not a dim of shape \[-1, 5\]",
    ):
        layers.fill_constant_batch_size_like(x, [-1, 5], "float32", 0.0, output_dim_idx=2)
    with pytest.raises(
        tide.TideError,
        match=r"op 'fill_constant_batch_size_like': input_dim_idx 3 "
        r"is not a dim of Input \('x'\) \[-1, 3\]",
    ):
        layers.fill_constant_batch_size_like(x, [-1, 5], "float32", 0.0, input_dim_idx=3)


# ---------------------------------------------------------------------------------------------
# print: its line goes to the core's log (glog, on stderr).
def print_lines(err, message):
    return [line for line in err.splitlines() if message in line]


PRINT_VALUES = {
    "float32": (np.array([[1.5, -2, 3], [4, 5, 6]], "float32"), "1.5, -2, 3, 4, 5, 6"),
    "float64": (np.array([[0.25, 1e-3, 7], [8, 9, 10]], "float64"), "0.25, 0.001, 7, 8, 9, 10"),
    "int32": (np.array([[-1, 0, 1], [2, 3, 4]], "int32"), "-1, 0, 1, 2, 3, 4"),
    "int64": (np.array([[10, 20, 30], [40, 50, 60]], "int64"), "10, 20, 30, 40, 50, 60"),
    "bool": (
        np.array([[True, False, True], [False, False, True]]),
        "true, false, true, false, false, true",
    ),
}


@pytest.mark.parametrize("dtype", sorted(PRINT_VALUES))
def test_print_logs_and_passes_values_through(dtype, exe, capfd):
    value, text = PRINT_VALUES[dtype]
    x = layers.data("x", shape=[2, 3], dtype=dtype, append_batch_size=False)
    out = layers.Print(x, message="look here")
    assert out.dtype == dtype and out.shape == (2, 3)
    capfd.readouterr()
    (got,) = exe.run(feed=feed(x=value), fetch_list=[out])
    np.testing.assert_array_equal(got, value)
    assert got.dtype == value.dtype
    lines = print_lines(capfd.readouterr().err, "look here")
    assert len(lines) == 1, lines
    line = lines[0]
    for part in [
        "Variable: x",
        "dtype: %s" % dtype,
        "shape: [2, 3]",
        "lod: {}",
        "data: [%s]" % text,
    ]:
        assert part in line, (part, line)


def test_print_summarize_lod_and_switches(exe, capfd):
    x = layers.data("x", shape=[2], dtype="int64", lod_level=1)
    full = layers.Print(x, message="full-lod", summarize=3)
    bare = layers.Print(
        x,
        message="bare-line",
        print_tensor_name=False,
        print_tensor_type=False,
        print_tensor_shape=False,
        print_tensor_lod=False,
    )
    t = tide.LoDTensor(np.arange(6, dtype="int64").reshape(3, 2))
    t.set_recursive_sequence_lengths([[1, 2]])
    capfd.readouterr()
    got = exe.run(feed={"x": t}, fetch_list=[full, bare], return_numpy=False)
    for g in got:  # Out carries In's data and LoD
        np.testing.assert_array_equal(g.numpy(), np.arange(6).reshape(3, 2))
        assert g.recursive_sequence_lengths() == [[1, 2]]
    err = capfd.readouterr().err
    (full_line,) = print_lines(err, "full-lod")
    assert "shape: [3, 2]" in full_line and "lod: {{0, 1, 3}}" in full_line
    assert "data: [0, 1, 2, ...]" in full_line
    (bare_line,) = print_lines(err, "bare-line")
    assert "data: [0, 1, 2, 3, 4, 5]" in bare_line
    for absent in ["Variable:", "dtype:", "shape:", "lod:"]:
        assert absent not in bare_line


def test_print_first_n(exe, capfd):
    x = layers.data("first_n_x", shape=[1], dtype="float32", append_batch_size=False)
    out = layers.Print(x, first_n=2, message="only-twice")
    capfd.readouterr()
    for i in range(4):
        (got,) = exe.run(feed=feed(first_n_x=np.array([i], "float32")), fetch_list=[out])
        np.testing.assert_array_equal(got, [i])  # passed through on every run
    lines = print_lines(capfd.readouterr().err, "only-twice")
    assert len(lines) == 2 and "data: [0]" in lines[0] and "data: [1]" in lines[1], lines


def test_print_rejects_an_unknown_phase():
    x = layers.data("x", shape=[1], dtype="float32")
    with pytest.raises(ValueError, match="print_phase"):
        layers.Print(x, print_phase="sideways")
    block = tide.default_main_program().global_block()
    out = block.create_var(name="out", dtype="float32")
    with pytest.raises(tide.TideError, match="print_phase must be 'forward', 'backward' or 'both'"):
        block.append_op(
            "print", inputs={"In": x}, outputs={"Out": out}, attrs={"print_phase": "sideways"}
        )


def _square_loss_through_print(print_phase, message):
    x0 = np.array([[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]], "float32")
    x = layers.create_parameter(
        shape=[2, 3], dtype="float32", name="px", default_initializer=tide.initializer.Constant(0.0)
    )
    p = layers.Print(x, message=message, print_phase=print_phase)
    loss = layers.mean(layers.square(p))
    pairs = tide.append_backward(loss)
    assert [(a.name, g.name) for a, g in pairs] == [("px", "px@GRAD")]
    return x0, p


@pytest.mark.parametrize("phase", ["both", "forward", "backward"])
def test_print_gradient_passes_through(phase, exe, capfd):
    x0, p = _square_loss_through_print(phase, "grad-" + phase)
    block = tide.default_main_program().global_block()
    prints = [op for op in block.ops if op.type == "print"]
    assert len(prints) == 2  # the forward print and its grad op, a print of the gradient
    assert prints[1].input("In") == [p.name + "@GRAD"] and prints[1].output("Out") == ["px@GRAD"]
    assert prints[1].attr("is_forward") is False
    exe.run(tide.default_startup_program())
    tide.global_scope().var("px").get_tensor().set(x0, tide.CPUPlace(), False)
    capfd.readouterr()
    (g,) = exe.run(fetch_list=["px@GRAD"])
    np.testing.assert_allclose(g, 2 * x0 / x0.size, rtol=1e-6)  # d mean(x^2) / dx, unchanged
    lines = print_lines(capfd.readouterr().err, "grad-" + phase)
    fwd = [ln for ln in lines if "(backward)" not in ln]
    bwd = [ln for ln in lines if "(backward)" in ln]
    assert len(fwd) == (0 if phase == "backward" else 1), lines
    assert len(bwd) == (0 if phase == "forward" else 1), lines
    if bwd:
        assert "Variable: %s@GRAD (backward)" % p.name in bwd[0]
        vals = [float(v) for v in re.search(r"data: \[(.*)\]", bwd[0]).group(1).split(", ")]
        np.testing.assert_allclose(vals, (2 * x0 / x0.size).reshape(-1), rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# append_backward over comparisons: their bool outputs take no gradient and break nothing.
def test_backward_through_a_comparison_mask(exe):
    x0 = np.array([[0.5, -1.0, 2.0], [-1.5, 3.0, -0.25]], "float32")
    x = layers.create_parameter(
        shape=[2, 3], dtype="float32", name="mx", default_initializer=tide.initializer.Constant(0.0)
    )
    positive = layers.greater_than(x, layers.fill_constant([1], "float32", 0.0))
    small = layers.less_than(x, layers.fill_constant([1], "float32", 2.5))
    keep = layers.logical_and(positive, small)
    mask = layers.cast(keep, "float32")
    loss = layers.mean(layers.elementwise_mul(x, mask))  # x where 0 < x < 2.5, by a mask
    pairs = tide.append_backward(loss)
    assert [(a.name, g.name) for a, g in pairs] == [("mx", "mx@GRAD")]
    block = tide.default_main_program().global_block()
    types = [op.type for op in block.ops]
    assert not any(
        t.endswith("_grad") and t.startswith(("greater_than", "less_than", "logical_"))
        for t in types
    )
    for v in (positive, small, keep):
        assert v.name + "@GRAD" not in block.vars
    exe.run(tide.default_startup_program())
    tide.global_scope().var("mx").get_tensor().set(x0, tide.CPUPlace(), False)
    g, m = exe.run(fetch_list=["mx@GRAD", mask])
    want = ((x0 > 0) & (x0 < 2.5)).astype("float32")
    np.testing.assert_array_equal(m, want)
    np.testing.assert_allclose(g, want / x0.size, rtol=1e-6)
