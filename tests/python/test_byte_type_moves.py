"""The ops that reshape, slice, join and gather tensors take bool, uint8 and int8 as well (Paddle's
models keep masks in bool: `mask.unsqueeze(1)`, `paddle.concat([m1, m2])`, `mask[:, 1:]`), each
against numpy on the same data."""

import numpy as np
import pytest
from op_test import make

RNG = np.random.RandomState(5)


def data(dtype):
    if dtype == "bool":
        return RNG.rand(2, 3, 4) > 0.5
    info = np.iinfo(dtype)
    return RNG.randint(info.min, info.max + 1, (2, 3, 4)).astype(dtype)


def cases(x):
    i = lambda v: np.array(v, "int64")  # noqa: E731
    return [
        (
            "concat",
            {"X": [("a", x), ("b", x[:, :1])]},
            {"Out": np.concatenate([x, x[:, :1]], 1)},
            {"axis": 1},
        ),
        (
            "split",
            {"X": x},
            {"Out": [("o0", x[:, :1]), ("o1", x[:, 1:])]},
            {"axis": 1, "sections": [1, 2]},
        ),
        ("slice", {"Input": x}, {"Out": x[:, 1:3]}, {"axes": [1], "starts": [1], "ends": [3]}),
        (
            "strided_slice",
            {"Input": x},
            {"Out": x[:, ::2]},
            {"axes": [1], "starts": [0], "ends": [3], "strides": [2]},
        ),
        ("stack", {"X": [("a", x), ("b", x)]}, {"Y": np.stack([x, x], 0)}, {"axis": 0}),
        ("unstack", {"X": x}, {"Y": [("y0", x[0]), ("y1", x[1])]}, {"axis": 0, "num": 2}),
        ("unbind", {"X": x}, {"Out": [("u%d" % k, x[:, k]) for k in range(3)]}, {"axis": 1}),
        ("unsqueeze2", {"X": x}, {"Out": x[:, None], "XShape": None}, {"axes": [1]}),
        ("squeeze2", {"X": x[:, :1]}, {"Out": x[:, 0], "XShape": None}, {"axes": [1]}),
        ("reshape2", {"X": x}, {"Out": x.reshape(6, 4), "XShape": None}, {"shape": [6, 4]}),
        (
            "flatten_contiguous_range",
            {"X": x},
            {"Out": x.reshape(2, 12), "XShape": None},
            {"start_axis": 1, "stop_axis": 2},
        ),
        ("flatten2", {"X": x}, {"Out": x.reshape(2, 12), "XShape": None}, {"axis": 1}),
        (
            "transpose2",
            {"X": x},
            {"Out": x.transpose(2, 0, 1), "XShape": None},
            {"axis": [2, 0, 1]},
        ),
        ("gather", {"X": x, "Index": i([1, 0, 1])}, {"Out": x[[1, 0, 1]]}, {}),
        ("gather_nd", {"X": x, "Index": i([[1, 2], [0, 0]])}, {"Out": x[[1, 0], [2, 0]]}, {}),
    ]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8"])
@pytest.mark.parametrize("index", range(len(cases(np.zeros((2, 3, 4))))))
def test_moves_keep_the_values(dtype, index):
    op, ins, outs, attrs = cases(data(dtype))[index]
    make(op, ins, outs, attrs).check_output(atol=0, rtol=0)
