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
    with pytest.raises(tide.TideError, match=r"Ids \('.*'\)\[1\] = 6 is out of range for W .* 6 rows"):
        make("lookup_table_v2", {"W": w, "Ids": np.array([1, 6])}, {"Out": w[[1, 1]]}).check_output()
    with pytest.raises(tide.TideError, match="must be int64 or int32, got float"):
        make("lookup_table_v2", {"W": w, "Ids": np.array([1.0])}, {"Out": w[[1]]}).check_output()
