"""Ops that models built from Paddle 2.x's `paddle.nn` layers save (issue 31): lookup_table_v2
(nn.Embedding), fill_any_like (ones_like / zeros_like), tril_triu (paddle.tril / triu), expand_v2
(Tensor.expand) and rnn (nn.LSTM / nn.GRU / nn.SimpleRNN), each against a float64 numpy reference
of Paddle's rule, with gradients by central finite differences where the op trains."""

import numpy as np
import pytest
from op_test import make

RNG = np.random.RandomState(31)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64


def rand(*shape):
    return RNG.uniform(-1, 1, shape)


# --- lookup_table_v2 ---------------------------------------------------------------------------


@pytest.mark.parametrize("ids_dtype", ["int64", "int32"])
@pytest.mark.parametrize("ids_shape", [(5,), (2, 3), (2, 3, 1)])
@pytest.mark.parametrize("padding_idx", [-1, 2])
def test_lookup_table_v2(ids_shape, ids_dtype, padding_idx):
    """Out is Ids' dims plus [D]: a trailing 1 stays (lookup_table drops it); int32 ids too."""
    w = rand(6, 4)
    ids = RNG.randint(0, 6, ids_shape).astype(ids_dtype)
    ids.reshape(-1)[:3] = [2, 4, 2]  # repeats, and the padding row when there is one
    want = w[ids.astype("int64")]
    if padding_idx >= 0:
        want[ids == padding_idx] = 0
    assert want.shape == ids_shape + (4,)
    t = make("lookup_table_v2", {"W": w, "Ids": ids}, {"Out": want}, {"padding_idx": padding_idx})
    t.check_output(rtol=0, atol=0)
    t.check_grad(["W"], "Out", **GRAD)  # rows summed per id, none for the padding row


def test_lookup_table_v2_refuses_out_of_range_and_float_ids():
    import tide

    w = rand(6, 4)
    with pytest.raises(
        tide.TideError, match=r"Ids \('.*'\)\[1\] = 6 is out of range for W .* 6 rows"
    ):
        make(
            "lookup_table_v2", {"W": w, "Ids": np.array([1, 6])}, {"Out": w[[1, 1]]}
        ).check_output()
    with pytest.raises(tide.TideError, match="must be int64 or int32, got float"):
        make("lookup_table_v2", {"W": w, "Ids": np.array([1.0])}, {"Out": w[[1]]}).check_output()


# --- fill_any_like -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype,value,want_dtype",
    [
        (-1, 1.0, "float64"),
        (3, 1.0, "int64"),
        (2, 7.0, "int32"),
        (5, -2.5, "float32"),
        (0, 1.0, "bool"),
    ],
)
def test_fill_any_like(dtype, value, want_dtype):
    """Out has X's dims, `value` of `dtype` (-1: X's, here float64); ones_like of int64 ids is
    dtype 3."""
    x = rand(2, 3)
    want = np.full((2, 3), value).astype(want_dtype)
    make("fill_any_like", {"X": x}, {"Out": want}, {"value": value, "dtype": dtype}).check_output(
        atol=0, rtol=0
    )


def test_fill_any_like_refuses_a_value_its_type_cannot_hold():
    import tide

    with pytest.raises(tide.TideError, match=r"fill_any_like.*value 3e\+09 does not fit int32"):
        make(
            "fill_any_like",
            {"X": rand(2)},
            {"Out": np.zeros(2, "int32")},
            {"value": 3e9, "dtype": 2},
        ).check_output()


# --- tril_triu ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4), (5, 3)])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("diagonal", [0, 1, -2])
def test_tril_triu(shape, lower, diagonal):
    """numpy's tril / triu of the last two dims, each matrix of the batch alike."""
    x = rand(*shape)
    want = np.tril(x, diagonal) if lower else np.triu(x, diagonal)
    t = make("tril_triu", {"X": x}, {"Out": want}, {"lower": lower, "diagonal": diagonal})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)


def test_tril_triu_ints_and_rank():
    import tide

    x = RNG.randint(-5, 5, (3, 3)).astype("int64")
    make(
        "tril_triu", {"X": x}, {"Out": np.triu(x, 1)}, {"lower": False, "diagonal": 1}
    ).check_output()
    with pytest.raises(tide.TideError, match="tril_triu.*X must have rank >= 2"):
        make("tril_triu", {"X": rand(4)}, {"Out": rand(4)}, {"lower": True}).check_output()


# --- expand_v2 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x_shape,shape",
    [
        ((1, 1, 4), [3, -1, -1]),  # ViT's class token to the batch
        ((3, 1), [2, 3, 5]),  # a new leading dim, a 1 repeated
        ((2, 3), [2, 3]),  # nothing to do
        ((4,), [2, 3, -1]),
    ],
)
def test_expand_v2(x_shape, shape):
    """numpy.broadcast_to, -1 keeping X's dim; the gradient sums the repeats."""
    x = rand(*x_shape)
    target = [
        x_shape[i - (len(shape) - len(x_shape))] if s == -1 else s for i, s in enumerate(shape)
    ]
    want = np.broadcast_to(x, target)
    t = make("expand_v2", {"X": x}, {"Out": want}, {"shape": shape})
    t.check_output(atol=0, rtol=0)
    t.check_grad(["X"], "Out", **GRAD)


def test_expand_v2_shape_from_tensors():
    """Shape (1-D) over expand_shapes_tensor over the attribute, as paddle.expand writes them (-2
    in the attribute where a tensor gives the dim)."""
    x = rand(1, 1, 4)
    want = np.broadcast_to(x, (3, 2, 4))
    make(
        "expand_v2",
        {"X": x, "Shape": np.array([3, 2, 4], "int32")},
        {"Out": want},
        {"shape": [9, 9, 9]},
    ).check_output()
    parts = [
        ("s0", np.array([3], "int64")),
        ("s1", np.array([2], "int32")),
        ("s2", np.array([-1], "int32")),
    ]
    t = make(
        "expand_v2", {"X": x, "expand_shapes_tensor": parts}, {"Out": want}, {"shape": [-2, -2, -1]}
    )
    t.check_output()
    t.check_grad(["X"], "Out", **GRAD)


def test_expand_v2_refuses_a_dim_that_is_not_1():
    import tide

    with pytest.raises(
        tide.TideError, match=r"expand_v2.*X \[2, 3\] cannot expand to \[2, 4\]: dim 1 is 3"
    ):
        make("expand_v2", {"X": rand(2, 3)}, {"Out": rand(2, 4)}, {"shape": [2, 4]}).check_output()
