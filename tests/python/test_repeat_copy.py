"""expand / expand_v2 / expand_as_v2 / tile forward by runs (ops_nn's nd_index.h RepeatCopy:
repeated and kept dims merged, the innermost run copied or filled), element for element against
numpy's broadcast_to / tile, for each way the dims can alternate: repeat_kv's expand of a KV
cache, a repeated innermost dim, leading new dims, a repeated middle between kept dims, tiles of
whole dims, dims of 1, and every type the kernels take."""

import numpy as np
import pytest
from op_test import make

RNG = np.random.RandomState(2026)


def values(shape, dtype):
    if dtype == "bool":
        return RNG.randint(0, 2, shape).astype(bool)
    if dtype in ("int32", "int64"):
        return RNG.randint(-1000, 1000, shape).astype(dtype)
    return RNG.uniform(-1, 1, shape).astype(dtype)


EXPANDS = [
    ((1, 9, 4, 1, 8), (1, 9, 4, 4, 8)),  # repeat_kv: KV heads each repeated, head dim kept
    ((2, 5, 1), (2, 5, 7)),  # the innermost dim repeated: filled
    ((1, 1, 6), (3, 4, 6)),  # new leading dims
    ((3, 1, 5), (3, 4, 5)),  # a repeated middle between kept dims
    ((1, 3, 1, 2, 1), (2, 3, 4, 2, 3)),  # alternating
    ((2, 1, 1, 3), (2, 1, 1, 3)),  # nothing repeated
    ((1, 1), (5, 6)),  # one element everywhere
    ((1,), (1,)),
]


@pytest.mark.parametrize("x_shape,out_shape", EXPANDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_expand_v2_runs(x_shape, out_shape, dtype):
    x = values(x_shape, dtype)
    want = np.broadcast_to(x, out_shape)
    make("expand_v2", {"X": x}, {"Out": want}, {"shape": list(out_shape)}).check_output(
        atol=0, rtol=0
    )


@pytest.mark.parametrize("x_shape,out_shape", EXPANDS[:6])
def test_expand_as_v2_runs(x_shape, out_shape):
    x = values(x_shape, "float32")
    want = np.broadcast_to(x, out_shape)
    make("expand_as_v2", {"X": x}, {"Out": want}, {"target_shape": list(out_shape)}).check_output(
        atol=0, rtol=0
    )


TILES = [
    ((2, 3), [2, 1]),
    ((2, 3), [1, 3]),  # the innermost dim tiled: runs of X's rows
    ((2, 1, 3), [1, 4, 2]),
    ((4, 1, 2, 5), [3, 2, 1, 2]),
    ((3,), [2, 2]),
    ((1, 1), [2, 3]),
]


@pytest.mark.parametrize("shape,times", TILES)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_tile_runs(shape, times, dtype):
    x = values(shape, dtype)
    make("tile", {"X": x}, {"Out": np.tile(x, times)}, {"repeat_times": times}).check_output(
        atol=0, rtol=0
    )


@pytest.mark.parametrize(
    "shape,times", [((2, 3), [2, 2]), ((3, 1, 2), [1, 3, 2]), ((1, 4), [5, 1])]
)
def test_expand_v1_runs(shape, times):
    """Fluid's expand: X tiled expand_times[i] times along dim i."""
    x = values(shape, "float32")
    make("expand", {"X": x}, {"Out": np.tile(x, times)}, {"expand_times": times}).check_output(
        atol=0, rtol=0
    )
