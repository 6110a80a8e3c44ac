"""The comparisons (less_than, ..., not_equal) and the logical ops (logical_and/or/xor) broadcast
both ways, as Paddle's do (and numpy): the operand of lower rank aligned with the other's
trailing dims (at `axis` for a comparison that gives one), each pair of dims equal or one of them
1, Out of the broadcast dims. Paddle 3.x's to_static writes logical_and of a [1] condition and a
0-D one for a `break` in a loop. Checked against numpy, with the dims shape inference declares
(unknown dims too), and the errors for operands that do not broadcast. Fluid's rule (Y over X,
Out of X's dims) is test_ops_control_basic.py's."""

import numpy as np
import pytest

import tide
from tide import layers

NUM_DTYPES = ["float32", "float64", "int32", "int64"]
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

# (X dims, Y dims): numpy's broadcast gives Out's dims.
SHAPES = {
    "one_and_0d": ((1,), ()),  # to_static's `break`: the [1] condition and a 0-D flag
    "0d_and_one": ((), (1,)),
    "0d_and_0d": ((), ()),
    "0d_and_vector": ((), (3,)),
    "column_and_row": ((3, 1), (4,)),
    "row_and_column": ((4,), (3, 1)),
    "both_ways_3d": ((2, 1, 4), (3, 1)),
    "ones_crossed": ((1, 3), (2, 1)),
    "x_lower_rank": ((3,), (2, 3)),
    "y_over_x": ((2, 3, 4), (4,)),  # Fluid's rule: Out has X's dims
    "empty_and_one": ((0, 3), (1,)),
    "one_and_empty": ((1,), (0,)),
}


def small_ints(rng, shape, dtype):
    """Values from {-2..2}: ties are frequent, so == and != see both outcomes."""
    return np.asarray(rng.randint(-2, 3, shape)).astype(dtype)


def bools(rng, shape):
    return np.asarray(rng.rand(*shape) > 0.5)


def run_op(op, x, y, attrs=None):
    """The op on X and Y of exactly these dims (0-D ones too): (Out, the dims its shape
    inference declared, whether it declared a 0-D Out)."""
    prog = tide.Program()
    block = prog.global_block()
    xv = block.create_var(name="x", shape=x.shape, dtype=x.dtype.name)
    yv = block.create_var(name="y", shape=y.shape, dtype=y.dtype.name)
    out = block.create_var(name="out", dtype="bool")
    block.append_op(type=op, inputs={"X": [xv], "Y": [yv]}, outputs={"Out": [out]}, attrs=attrs)
    exe = tide.Executor(tide.CPUPlace())
    (got,) = exe.run(prog, feed={"x": x, "y": y}, fetch_list=[out])
    return got, out.shape, out.desc.zero_dim


def check(op, x, y, want, attrs=None):
    got, declared, zero_d = run_op(op, x, y, attrs)
    assert got.dtype == np.bool_ and got.shape == want.shape, (op, got.shape, want.shape)
    assert declared == want.shape and zero_d == (want.ndim == 0), (op, declared, want.shape)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", NUM_DTYPES)
@pytest.mark.parametrize("shapes", sorted(SHAPES))
@pytest.mark.parametrize("op", sorted(COMPARE))
def test_compare_broadcasts_both_ways(op, shapes, dtype, rng):
    xs, ys = SHAPES[shapes]
    x, y = small_ints(rng, xs, dtype), small_ints(rng, ys, dtype)
    check(op, x, y, COMPARE[op](x, y))


@pytest.mark.parametrize("shapes", sorted(SHAPES))
@pytest.mark.parametrize("op", sorted(LOGICAL))
def test_logical_broadcasts_both_ways(op, shapes, rng):
    xs, ys = SHAPES[shapes]
    x, y = bools(rng, xs), bools(rng, ys)
    check(op, x, y, LOGICAL[op](x, y))


def test_compare_axis_places_the_lower_rank_x(rng):
    """An explicit axis places the operand of lower rank, X as well as Y (Paddle's rule)."""
    x, y = small_ints(rng, (3,), "float32"), small_ints(rng, (2, 3, 4), "float32")
    check("less_than", x, y, np.less(x.reshape(1, 3, 1), y), {"axis": 1})
    x, y = small_ints(rng, (2, 1), "int64"), small_ints(rng, (5, 2, 3), "int64")
    check("equal", x, y, np.equal(x.reshape(1, 2, 1), y), {"axis": 1})


# (op, X dims, Y dims, attrs, the message)
BAD = [
    (
        "less_than",
        (2, 3),
        (4,),
        {},
        r"\[2, 3\] and Y \('y'\) \[4\] do not broadcast "
        r"\(trailing dims aligned; dim 1: 3 vs 4\)",
    ),
    ("equal", (2,), (3,), {}, r"\[2\] and Y \('y'\) \[3\] do not broadcast"),
    ("greater_than", (3,), (2, 3, 4), {"axis": 3}, r"axis 3 places X \[3\] outside Y \[2, 3, 4\]"),
    (
        "not_equal",
        (4,),
        (2, 3, 4),
        {"axis": 1},
        r"\[4\] and Y \('y'\) \[2, 3, 4\] do not broadcast \(aligned at axis 1; dim 1: 4 vs 3\)",
    ),
    (
        "logical_and",
        (2, 3),
        (3, 2),
        {},
        r"\[2, 3\] and Y \('y'\) \[3, 2\] do not broadcast "
        r"\(trailing dims aligned; dim 0: 2 vs 3\)",
    ),
    ("logical_or", (0,), (2,), {}, r"\[0\] and Y \('y'\) \[2\] do not broadcast"),
]


@pytest.mark.parametrize("case", range(len(BAD)), ids=[b[0] for b in BAD])
def test_operands_that_do_not_broadcast(case, rng):
    op, xs, ys, attrs, message = BAD[case]
    if op.startswith("logical"):
        x, y = bools(rng, xs), bools(rng, ys)
    else:
        x, y = small_ints(rng, xs, "float32"), small_ints(rng, ys, "float32")
    with pytest.raises(tide.TideError, match=r"op '%s': .*%s" % (op, message)):
        run_op(op, x, y, attrs)


def test_declared_dims_with_unknown_dims(exe, rng):
    """Shape inference gives Paddle's dims: an unknown dim takes the other operand's, and stays
    unknown against a 1; X's dims where Y broadcasts over X. The runs give numpy's values."""
    a = layers.data("a", shape=[-1, 1], dtype="bool", append_batch_size=False)
    b = layers.data("b", shape=[4], dtype="bool", append_batch_size=False)
    one = layers.data("one", shape=[1], dtype="bool", append_batch_size=False)
    flag = layers.data("flag", shape=[], dtype="bool", append_batch_size=False)
    x = layers.data("x", shape=[-1, 3], dtype="float32", append_batch_size=False)
    y = layers.data("y", shape=[2, 1, -1], dtype="float32", append_batch_size=False)
    outs = {
        "and": (layers.logical_and(a, b), (-1, 4)),
        "or": (layers.logical_or(b, a), (-1, 4)),
        "break": (layers.logical_and(one, flag), (1,)),
        "flag_first": (layers.logical_xor(flag, one), (1,)),
        "less": (layers.less_than(x, y), (2, -1, 3)),
    }
    for name, (v, dims) in outs.items():
        assert v.shape == dims and v.dtype == "bool", (name, v.shape)
    feed = {
        "a": bools(rng, (3, 1)),
        "b": bools(rng, (4,)),
        "one": np.array([True]),
        "flag": np.array(False),
        "x": small_ints(rng, (5, 3), "float32"),
        "y": small_ints(rng, (2, 1, 3), "float32"),
    }
    got = exe.run(feed=feed, fetch_list=[v for v, _ in outs.values()])
    want = [
        feed["a"] & feed["b"],
        feed["b"] | feed["a"],
        feed["one"] & feed["flag"],
        feed["flag"] ^ feed["one"],
        feed["x"] < feed["y"],
    ]
    for name, g, w in zip(outs, got, want):
        assert g.shape == w.shape, (name, g.shape, w.shape)
        np.testing.assert_array_equal(g, w, err_msg=name)


def test_known_dims_that_do_not_broadcast_fail_when_built():
    x = layers.data("x", shape=[-1, 3], dtype="int64", append_batch_size=False)
    y = layers.data("y", shape=[2, 4], dtype="int64", append_batch_size=False)
    with pytest.raises(
        tide.TideError,
        match=r"op 'equal': X \('x'\) \[-1, 3\] and Y \('y'\) \[2, 4\] do not broadcast "
        r"\(trailing dims aligned; dim 1: 3 vs 4\)",
    ):
        layers.equal(x, y)
