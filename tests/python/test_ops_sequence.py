"""Op tests of the ops_sequence pack: each op's outputs against a numpy reference written here
(a loop over the sequences), float32 and float64, one- and two-level LoD where the op supports
it, empty sequences where Fluid allows them; every differentiable op's gradient against central
finite differences; bad input (the error names the op); and a bag-of-words classifier whose loss
goes down. LoDs are given as recursive sequence lengths, as OpTest feeds them."""

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
# float32 finite differences are coarse: looser tolerance, bigger step.
GRAD_TOL = {"float32": (0.02, 0.01), "float64": (1e-5, 1e-5)}


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def rand(rng, shape, dtype):
    return rng.uniform(-1.0, 1.0, shape).astype(dtype)


def distinct(rng, shape, dtype, step=0.05):
    """Values at least `step` apart (no near-ties for max under finite differences)."""
    n = int(np.prod(shape))
    return ((rng.permutation(n) - n / 2) * step).reshape(shape).astype(dtype)


def offsets(lengths):
    return [0] + list(np.cumsum(lengths).astype(int))


def seqs(x, lengths):
    """The sequences of x (one LoD level, as lengths)."""
    o = offsets(lengths)
    return [x[o[i] : o[i + 1]] for i in range(len(lengths))]


def check_error(op_type, inputs, outputs, attrs, *words):
    """Running the op fails with an error that names the op and every word."""
    with pytest.raises(Exception) as info:
        make(op_type, inputs, outputs, attrs).check_output()
    msg = str(info.value)
    for w in (op_type,) + words:
        assert w in msg, "error %r does not mention %r" % (msg, w)


# One-level LoDs (with an empty sequence) and two-level LoDs, as recursive lengths.
LOD1 = [[2, 0, 3, 1]]
LOD2 = [[2, 1], [2, 0, 3]]


# ---------------------------------------------------------------------------------------------
# sequence_pool
def pool_ref(x, lengths, pooltype, pad_value=0.0):
    out = np.zeros((len(lengths),) + x.shape[1:], dtype=x.dtype)
    idx = np.full(out.shape, -1, dtype=np.int32)
    start = 0
    for i, n in enumerate(lengths):
        s = x[start : start + n]
        if n == 0:
            out[i] = pad_value
        elif pooltype == "SUM":
            out[i] = s.sum(0)
        elif pooltype == "AVERAGE":
            out[i] = s.mean(0)
        elif pooltype == "SQRT":
            out[i] = s.sum(0) / np.sqrt(n)
        elif pooltype == "MAX":
            out[i] = s.max(0)
            idx[i] = s.argmax(0) + start
        elif pooltype == "LAST":
            out[i] = s[-1]
        elif pooltype == "FIRST":
            out[i] = s[0]
        start += n
    return out, idx


POOLS = ["SUM", "AVERAGE", "SQRT", "MAX", "LAST", "FIRST"]


def pool_case(dtype, pooltype, lod, pad_value=0.0, shape_tail=(3,)):
    rng = np.random.RandomState(1)
    rows = sum(lod[-1])
    x = distinct(rng, (rows,) + shape_tail, dtype)
    out, idx = pool_ref(x, lod[-1], pooltype, pad_value)
    outputs = {
        "Out": (out, lod[:-1]) if len(lod) > 1 else out,
        "MaxIndex": idx if pooltype == "MAX" else None,
    }
    return make(
        "sequence_pool", {"X": (x, lod)}, outputs, {"pooltype": pooltype, "pad_value": pad_value}
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pooltype", POOLS)
@pytest.mark.parametrize("lod", [LOD1, LOD2], ids=["lod1", "lod2"])
def test_sequence_pool(dtype, pooltype, lod):
    pool_case(dtype, pooltype, lod).check_output()


@pytest.mark.parametrize("pooltype", POOLS)
def test_sequence_pool_pad_value_and_rank3(pooltype):
    t = pool_case("float64", pooltype, LOD1, pad_value=2.5, shape_tail=(2, 2))
    got = t.check_output()
    assert np.all(got[0].numpy()[1] == 2.5)  # the empty sequence


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pooltype", POOLS)
@pytest.mark.parametrize("lod", [LOD1, LOD2], ids=["lod1", "lod2"])
def test_sequence_pool_grad(dtype, pooltype, lod):
    pool_case(dtype, pooltype, lod).check_grad(["X"], "Out", **grad_args(dtype))


def test_sequence_pool_errors():
    x = np.ones((4, 2), "float32")
    check_error("sequence_pool", {"X": x}, {"Out": x}, {"pooltype": "SUM"}, "no LoD")
    check_error(
        "sequence_pool",
        {"X": (x, [[1], [2], [1, 3]])},
        {"Out": x},
        {"pooltype": "SUM"},
        "at most 2",
    )
    check_error("sequence_pool", {"X": (x, [[4]])}, {"Out": x}, {"pooltype": "MEDIAN"}, "pooltype")


# ---------------------------------------------------------------------------------------------
# sequence_softmax
def softmax_ref(x, lengths):
    out = np.zeros_like(x)
    start = 0
    for n in lengths:
        s = x[start : start + n]
        if n:
            e = np.exp(s - s.max())
            out[start : start + n] = e / e.sum()
        start += n
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lod", [LOD1, LOD2], ids=["lod1", "lod2"])
@pytest.mark.parametrize("flat", [False, True], ids=["Nx1", "N"])
def test_sequence_softmax(dtype, lod, flat):
    rng = np.random.RandomState(2)
    rows = sum(lod[-1])
    x = rand(rng, (rows,) if flat else (rows, 1), dtype)
    t = make("sequence_softmax", {"X": (x, lod)}, {"Out": (softmax_ref(x, lod[-1]), lod)})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_sequence_softmax_errors():
    x = np.ones((4, 2), "float32")
    check_error("sequence_softmax", {"X": (x, [[4]])}, {"Out": x}, {}, "[N, 1]")
    y = np.ones((4, 1), "float32")
    check_error("sequence_softmax", {"X": y}, {"Out": y}, {}, "no LoD")


# ---------------------------------------------------------------------------------------------
# sequence_expand
def expand_ref(x, x_lens, ref_lens):
    """X's sequences (rows when x_lens is None) each repeated ref_lens[i] times."""
    pieces = seqs(x, x_lens) if x_lens is not None else [x[i : i + 1] for i in range(len(x))]
    out, out_lens = [], []
    for p, r in zip(pieces, ref_lens):
        for _ in range(r):
            out.append(p)
            out_lens.append(len(p))
    out = np.concatenate(out) if out else np.zeros((0,) + x.shape[1:], x.dtype)
    return out, out_lens


EXPAND_CASES = {  # x rows, x lod, y lod, ref_level
    "x_lod_ref0": (4, [[2, 2]], [[2, 2], [3, 3, 1, 1]], 0),
    "x_lod_ref_last": (3, [[1, 2]], [[1, 1], [2, 3]], -1),
    "x_lod_empty": (4, [[1, 0, 3]], [[2, 1, 0]], -1),
    "x_rows": (3, None, [[2, 0, 3]], -1),
    "x_rows_2level_ref1": (3, None, [[1, 2], [1, 3, 2]], 1),
}


def expand_case(dtype, name):
    rows, x_lod, y_lod, ref = EXPAND_CASES[name]
    rng = np.random.RandomState(3)
    x = rand(rng, (rows, 2), dtype)
    y = rand(rng, (sum(y_lod[-1]), 1), dtype)
    ref_lens = y_lod[ref]
    out, out_lens = expand_ref(x, x_lod[0] if x_lod else None, ref_lens)
    return make(
        "sequence_expand",
        {"X": (x, x_lod) if x_lod else x, "Y": (y, y_lod)},
        {"Out": (out, [out_lens]) if x_lod else out},
        {"ref_level": ref},
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(EXPAND_CASES))
def test_sequence_expand(dtype, name):
    t = expand_case(dtype, name)
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_sequence_expand_errors():
    x = np.ones((3, 2), "float32")
    y = np.ones((4, 1), "float32")
    check_error(
        "sequence_expand",
        {"X": (x, [[1, 2]]), "Y": (y, [[1, 1, 2]])},
        {"Out": x},
        {},
        "X",
        "sequences",
    )
    check_error("sequence_expand", {"X": x, "Y": (y, [[2, 2]])}, {"Out": x}, {}, "rows")
    check_error("sequence_expand", {"X": x, "Y": y}, {"Out": x}, {}, "Y", "no LoD")
    check_error(
        "sequence_expand",
        {"X": x, "Y": (y, [[1, 1, 2]])},
        {"Out": x},
        {"ref_level": 3},
        "ref_level",
    )


# ---------------------------------------------------------------------------------------------
# sequence_expand_as
@pytest.mark.parametrize("dtype", DTYPES)
def test_sequence_expand_as(dtype):
    rng = np.random.RandomState(4)
    x = rand(rng, (4, 3), dtype)
    lens = [2, 0, 3, 1]
    y = rand(rng, (sum(lens), 1), dtype)
    out = np.repeat(x, lens, axis=0)
    t = make("sequence_expand_as", {"X": x, "Y": (y, [lens])}, {"Out": (out, [lens])})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_sequence_expand_as_errors():
    x = np.ones((3, 2), "float32")
    y = np.ones((4, 1), "float32")
    check_error(
        "sequence_expand_as", {"X": x, "Y": (y, [[2, 2]])}, {"Out": x}, {}, "3 rows", "2 sequences"
    )
    check_error(
        "sequence_expand_as", {"X": x, "Y": (y, [[1, 2], [1, 1, 2]])}, {"Out": x}, {}, "at most 1"
    )


# ---------------------------------------------------------------------------------------------
# sequence_concat
@pytest.mark.parametrize("dtype", DTYPES)
def test_sequence_concat(dtype):
    rng = np.random.RandomState(5)
    lens = [[2, 0, 1], [1, 2, 0], [0, 1, 1]]
    xs = [rand(rng, (sum(l), 2), dtype) for l in lens]
    out, out_lens = [], []
    for i in range(3):
        parts = [seqs(x, l[0:3])[i] for x, l in zip(xs, lens)]
        out.extend(parts)
        out_lens.append(sum(len(p) for p in parts))
    out = np.concatenate(out)
    t = make(
        "sequence_concat",
        {"X": [("x%d" % i, (x, [l])) for i, (x, l) in enumerate(zip(xs, lens))]},
        {"Out": (out, [out_lens])},
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_sequence_concat_errors():
    a = np.ones((3, 2), "float32")
    b = np.ones((3, 3), "float32")
    check_error(
        "sequence_concat",
        {"X": [("a", (a, [[1, 2]])), ("b", (a, [[1, 1, 1]]))]},
        {"Out": a},
        {},
        "sequences",
    )
    check_error(
        "sequence_concat",
        {"X": [("a", (a, [[1, 2]])), ("b", (b, [[1, 2]]))]},
        {"Out": a},
        {},
        "row width",
    )
    check_error(
        "sequence_concat", {"X": [("a", (a, [[1, 2]])), ("b", a)]}, {"Out": a}, {}, "no LoD"
    )


# ---------------------------------------------------------------------------------------------
# sequence_reshape
def reshape_ref(x, lens, new_dim):
    d = x.shape[1]
    return x.reshape(-1, new_dim), [n * d // new_dim for n in lens]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("new_dim", [2, 8, 4])
def test_sequence_reshape(dtype, new_dim):
    rng = np.random.RandomState(6)
    lens = [2, 0, 4]
    x = rand(rng, (6, 4), dtype)
    out, out_lens = reshape_ref(x, lens, new_dim)
    t = make(
        "sequence_reshape", {"X": (x, [lens])}, {"Out": (out, [out_lens])}, {"new_dim": new_dim}
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_sequence_reshape_errors():
    x = np.ones((6, 4), "float32")
    check_error(
        "sequence_reshape",
        {"X": (x, [[1, 5]])},
        {"Out": x},
        {"new_dim": 8},
        "sequence 0",
        "does not divide",
    )
    check_error("sequence_reshape", {"X": x}, {"Out": x}, {"new_dim": 2}, "no LoD")


# ---------------------------------------------------------------------------------------------
# sequence_slice
@pytest.mark.parametrize("dtype", DTYPES)
def test_sequence_slice(dtype):
    rng = np.random.RandomState(7)
    lens = [3, 0, 4, 2]
    x = rand(rng, (sum(lens), 2), dtype)
    off = np.array([[1], [0], [2], [0]], "int64")
    ln = np.array([[2], [0], [1], [2]], "int64")
    parts = [s[o : o + l] for s, o, l in zip(seqs(x, lens), off[:, 0], ln[:, 0])]
    out = np.concatenate(parts)
    t = make(
        "sequence_slice",
        {"X": (x, [lens]), "Offset": off, "Length": ln},
        {"Out": (out, [list(ln[:, 0])])},
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_sequence_slice_errors():
    x = np.ones((5, 2), "float32")
    one = np.array([[1], [1]], "int64")
    check_error(
        "sequence_slice",
        {
            "X": (x, [[2, 3]]),
            "Offset": np.array([[1], [2]], "int64"),
            "Length": np.array([[1], [2]], "int64"),
        },
        {"Out": x},
        {},
        "exceeds the length 3 of sequence 1",
    )
    check_error(
        "sequence_slice",
        {"X": (x, [[2, 3]]), "Offset": np.array([[-1], [0]], "int64"), "Length": one},
        {"Out": x},
        {},
        "Offset[0]",
    )
    check_error(
        "sequence_slice",
        {"X": (x, [[5]]), "Offset": one, "Length": one},
        {"Out": x},
        {},
        "one value per sequence",
    )


# ---------------------------------------------------------------------------------------------
# sequence_pad, sequence_unpad
def pad_ref(x, lens, pad, padded_length):
    pl = max(lens) if padded_length == -1 else padded_length
    step = x.shape[1:]
    out = np.empty((len(lens), pl) + step, x.dtype)
    out[...] = pad.reshape(step) if pad.size > 1 else pad.reshape(())
    for i, s in enumerate(seqs(x, lens)):
        out[i, : len(s)] = s
    return out, np.array(lens, "int64")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padded_length", [-1, 6])
@pytest.mark.parametrize("pad_row", [False, True], ids=["pad1", "padrow"])
def test_sequence_pad(dtype, padded_length, pad_row):
    rng = np.random.RandomState(8)
    lens = [2, 0, 4, 1]
    x = rand(rng, (sum(lens), 3), dtype)
    pad = np.array([7.0, 8.0, 9.0] if pad_row else [7.0], dtype)
    out, length = pad_ref(x, lens, pad, padded_length)
    t = make(
        "sequence_pad",
        {"X": (x, [lens]), "PadValue": pad},
        {"Out": out, "Length": length},
        {"padded_length": padded_length},
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tail", [(2,), ()], ids=["rank3", "rank2"])
def test_sequence_unpad(dtype, tail):
    rng = np.random.RandomState(9)
    lens = [2, 0, 4]
    x = rand(rng, (3, 4) + tail, dtype)
    out = np.concatenate([x[i, :n] for i, n in enumerate(lens)])
    if not tail:
        out = out.reshape(-1, 1)
    t = make("sequence_unpad", {"X": x, "Length": np.array(lens, "int64")}, {"Out": (out, [lens])})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


def test_sequence_pad_unpad_round_trip():
    rng = np.random.RandomState(10)
    lens = [3, 1, 0, 2]
    x = rand(rng, (sum(lens), 2), "float32")
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        xv = tide.layers.data("x", [2], dtype="float32", lod_level=1)
        padded, length = tide.layers.sequence_pad(xv, 0.0, maxlen=5)
        back = tide.layers.sequence_unpad(padded, length)
    assert back.lod_level == 1 and padded.lod_level == 0
    t = tide.LoDTensor(x)
    t.set_recursive_sequence_lengths([lens])
    p, l, b = tide.Executor(tide.CPUPlace()).run(
        main,
        feed={"x": t},
        fetch_list=[padded, length, back],
        return_numpy=False,
        scope=tide.Scope(),
    )
    assert p.numpy().shape == (4, 5, 2)
    np.testing.assert_array_equal(l.numpy(), lens)
    np.testing.assert_array_equal(b.numpy(), x)
    assert b.recursive_sequence_lengths() == [lens]


def test_sequence_pad_unpad_errors():
    x = np.ones((5, 2), "float32")
    pad = np.zeros([1], "float32")
    check_error(
        "sequence_pad",
        {"X": (x, [[2, 3]]), "PadValue": pad},
        {"Out": x, "Length": np.zeros(2, "int64")},
        {"padded_length": 2},
        "padded_length 2",
        "longest sequence (3)",
    )
    check_error(
        "sequence_pad",
        {"X": (x, [[2, 3]]), "PadValue": np.zeros([3], "float32")},
        {"Out": x, "Length": np.zeros(2, "int64")},
        {},
        "PadValue",
    )
    check_error(
        "sequence_pad",
        {"X": x, "PadValue": pad},
        {"Out": x, "Length": np.zeros(2, "int64")},
        {},
        "no LoD",
    )
    p = np.ones((2, 3, 2), "float32")
    check_error(
        "sequence_unpad",
        {"X": p, "Length": np.array([1, 4], "int64")},
        {"Out": x},
        {},
        "Length[1] = 4",
    )
    check_error(
        "sequence_unpad",
        {"X": p, "Length": np.array([1, 1, 1], "int64")},
        {"Out": x},
        {},
        "one length per row",
    )


# ---------------------------------------------------------------------------------------------
# sequence_mask
@pytest.mark.parametrize("maxlen", [-1, 6])
@pytest.mark.parametrize("out_dtype", ["int64", "int32", "float32", "float64", "bool"])
@pytest.mark.parametrize("shape", [(4,), (2, 3)])
def test_sequence_mask(maxlen, out_dtype, shape):
    rng = np.random.RandomState(11)
    x = rng.randint(0, 5, size=shape).astype("int64")
    x.reshape(-1)[0] = 0
    m = x.max() if maxlen == -1 else maxlen
    y = (np.arange(m) < x[..., None]).astype(out_dtype)
    make(
        "sequence_mask",
        {"X": x},
        {"Y": y},
        {"maxlen": maxlen, "out_dtype": int(tide.core.dtype_code(out_dtype))},
    ).check_output()


def test_sequence_mask_layer_and_errors():
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data("len", [3], dtype="int64", append_batch_size=False)
        y = tide.layers.sequence_mask(x, dtype="float32")
    got = tide.Executor(tide.CPUPlace()).run(
        main, feed={"len": np.array([1, 3, 0], "int64")}, fetch_list=[y], scope=tide.Scope()
    )[0]
    np.testing.assert_array_equal(got, [[1, 0, 0], [1, 1, 1], [0, 0, 0]])
    assert got.dtype == np.float32
    check_error(
        "sequence_mask",
        {"X": np.array([2, -1], "int64")},
        {"Y": np.zeros((2, 2), "int64")},
        {},
        "X",
        "-1",
    )


# ---------------------------------------------------------------------------------------------
# sequence_reverse
def reverse_ref(x, lens):
    return np.concatenate([s[::-1] for s in seqs(x, lens)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lod", [LOD1, LOD2], ids=["lod1", "lod2"])
def test_sequence_reverse(dtype, lod):
    rng = np.random.RandomState(12)
    x = rand(rng, (sum(lod[-1]), 2, 2), dtype)
    t = make("sequence_reverse", {"X": (x, lod)}, {"Y": (reverse_ref(x, lod[-1]), lod)})
    t.check_output()
    t.check_grad(["X"], "Y", **grad_args(dtype))


def test_sequence_reverse_errors():
    x = np.ones((3, 2), "float32")
    check_error("sequence_reverse", {"X": x}, {"Y": x}, {}, "no LoD")


# ---------------------------------------------------------------------------------------------
# lod_reset
@pytest.mark.parametrize("dtype", DTYPES)
def test_lod_reset_target_lod(dtype):
    rng = np.random.RandomState(13)
    x = rand(rng, (6, 2), dtype)
    t = make(
        "lod_reset", {"X": (x, [[3, 3]])}, {"Out": (x, [[1, 0, 5]])}, {"target_lod": [0, 1, 1, 6]}
    )
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lod_reset_from_y_lod(dtype):
    rng = np.random.RandomState(14)
    x = rand(rng, (5, 2), dtype)
    y_lod = [[2, 1], [2, 0, 3]]  # two levels, taken whole
    y = rand(rng, (5, 1), dtype)
    t = make("lod_reset", {"X": x, "Y": (y, y_lod)}, {"Out": (x, y_lod)})
    t.check_output()
    t.check_grad(["X"], "Out", **grad_args(dtype))


@pytest.mark.parametrize("ydtype", ["int32", "int64"])
def test_lod_reset_from_y_data(ydtype):
    x = np.arange(10, dtype="float32").reshape(5, 2)
    make(
        "lod_reset",
        {"X": (x, [[5]]), "Y": np.array([0, 2, 2, 5], ydtype)},
        {"Out": (x, [[2, 0, 3]])},
    ).check_output()


def test_lod_reset_layer_and_errors():
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data("x", [2], dtype="float32")
        out = tide.layers.lod_reset(x, target_lod=[0, 2, 3])
        pooled = tide.layers.sequence_pool(out, "sum")
    assert out.lod_level == 1 and pooled.lod_level == 0
    got = tide.Executor(tide.CPUPlace()).run(
        main, feed={"x": np.ones((3, 2), "float32")}, fetch_list=[pooled], scope=tide.Scope()
    )[0]
    np.testing.assert_array_equal(got, [[2, 2], [1, 1]])
    with pytest.raises(ValueError):
        with tide.program_guard(tide.Program(), tide.Program()):
            tide.layers.lod_reset(tide.layers.data("x", [2]))
    x = np.ones((3, 2), "float32")
    # The LoD does not match X's rows (ends at 4, X has 3).
    check_error("lod_reset", {"X": x}, {"Out": x}, {"target_lod": [0, 1, 4]}, "ends at 4", "3 rows")
    check_error("lod_reset", {"X": x}, {"Out": x}, {"target_lod": [0, 2, 1, 3]}, "decreases")
    check_error(
        "lod_reset", {"X": x, "Y": np.array([0.0, 3.0], "float32")}, {"Out": x}, {}, "int32"
    )


# ---------------------------------------------------------------------------------------------
# edit_distance and sequence_erase (edit_distance's ignored_tokens)
def levenshtein_ref(a, b):
    """The edit distance by the full dynamic-programming table."""
    d = np.zeros((len(a) + 1, len(b) + 1), dtype=np.int64)
    d[:, 0], d[0, :] = np.arange(len(a) + 1), np.arange(len(b) + 1)
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i, j] = min(
                d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + (a[i - 1] != b[j - 1])
            )
    return int(d[-1, -1])


@pytest.mark.parametrize("normalized", [False, True])
def test_edit_distance(normalized):
    rng = np.random.RandomState(16)
    hyp_lens, ref_lens = [3, 0, 5, 4, 1], [2, 3, 5, 1, 4]
    hyps = rng.randint(0, 4, (sum(hyp_lens), 1)).astype("int64")
    refs = rng.randint(0, 4, (sum(ref_lens), 1)).astype("int64")
    dist = np.array(
        [
            [levenshtein_ref(h[:, 0], r[:, 0]) / (len(r) if normalized else 1.0)]
            for h, r in zip(seqs(hyps, hyp_lens), seqs(refs, ref_lens))
        ],
        "float32",
    )
    make(
        "edit_distance",
        {"Hyps": (hyps, [hyp_lens]), "Refs": (refs, [ref_lens])},
        {"Out": dist, "SequenceNum": np.array([5], "int64")},
        {"normalized": normalized},
    ).check_output()


def test_edit_distance_padded_with_lengths():
    rng = np.random.RandomState(17)
    hyps, refs = (
        rng.randint(0, 3, (3, 6)).astype("int64"),
        rng.randint(0, 3, (3, 5)).astype("int64"),
    )
    hl, rl = np.array([6, 2, 0], "int64"), np.array([5, 5, 3], "int64")
    dist = np.array(
        [[levenshtein_ref(hyps[i, : hl[i]], refs[i, : rl[i]])] for i in range(3)], "float32"
    )
    make(
        "edit_distance",
        {"Hyps": hyps, "Refs": refs, "HypsLength": hl, "RefsLength": rl},
        {"Out": dist, "SequenceNum": np.array([3], "int64")},
        {"normalized": False},
    ).check_output()


def test_edit_distance_errors():
    one = np.array([[1]], "int64")
    check_error(
        "edit_distance",
        {"Hyps": (one, [[1]]), "Refs": (np.zeros((0, 1), "int64"), [[0]])},
        {"Out": np.zeros((1, 1), "float32"), "SequenceNum": np.array([1], "int64")},
        {"normalized": True},
        "Refs",
        "empty",
    )
    check_error(
        "edit_distance",
        {"Hyps": (one, [[1]]), "Refs": (np.ones((2, 1), "int64"), [[1, 1]])},
        {"Out": np.zeros((1, 1), "float32"), "SequenceNum": np.array([1], "int64")},
        {},
        "1 sequences",
        "2",
    )


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_sequence_erase(dtype):
    x = np.array([[2], [0], [5], [1], [0], [0], [2], [7]], dtype)
    lens = [3, 3, 0, 2]
    tokens = [0, 2]
    kept = [s[~np.isin(s[:, 0], tokens)] for s in seqs(x, lens)]
    make(
        "sequence_erase",
        {"X": (x, [lens])},
        {"Out": (np.concatenate(kept), [[len(k) for k in kept]])},
        {"tokens": tokens},
    ).check_output()


def test_edit_distance_layer_ignores_tokens():
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        h = tide.layers.data("h", [1], dtype="int64", lod_level=1)
        r = tide.layers.data("r", [1], dtype="int64", lod_level=1)
        dist, num = tide.layers.edit_distance(h, r, normalized=False, ignored_tokens=[0])
    hyps, refs = (
        tide.LoDTensor(np.array([[1], [0], [2], [3]], "int64")),
        tide.LoDTensor(np.array([[0], [1], [2], [0], [4]], "int64")),
    )
    hyps.set_recursive_sequence_lengths([[3, 1]])
    refs.set_recursive_sequence_lengths([[3, 2]])
    got_dist, got_num = tide.Executor(tide.CPUPlace()).run(
        main, feed={"h": hyps, "r": refs}, fetch_list=[dist, num], scope=tide.Scope()
    )
    # [1, 2] vs [1, 2]: 0; [3] vs [4]: 1 (the zeros erased from both)
    np.testing.assert_array_equal(got_dist, [[0.0], [1.0]])
    assert got_num.tolist() == [2]


# ---------------------------------------------------------------------------------------------
# Layers: lod levels at compile time, and a 2-level pool through the layer.
def test_layers_lod_levels():
    with tide.program_guard(tide.Program(), tide.Program()):
        x2 = tide.layers.data("x2", [3], lod_level=2)
        x1 = tide.layers.data("x1", [4], lod_level=1)
        assert tide.layers.sequence_pool(x2, "max").lod_level == 1
        assert tide.layers.sequence_first_step(x1).lod_level == 0
        assert tide.layers.sequence_last_step(x1).shape == (-1, 4)
        assert tide.layers.sequence_reverse(x2).lod_level == 2
        assert tide.layers.sequence_softmax(tide.layers.data("s", [1], lod_level=1)).lod_level == 1
        assert tide.layers.sequence_expand(x1, x2).lod_level == 1
        assert tide.layers.sequence_concat([x1, x1]).lod_level == 1
        assert tide.layers.sequence_reshape(x1, 2).shape == (-1, 2)
        assert tide.layers.sequence_expand_as(tide.layers.data("r", [4]), x1).lod_level == 1
        with pytest.raises(ValueError):
            tide.layers.sequence_pool(x1, "median")


# ---------------------------------------------------------------------------------------------
# End to end: a bag-of-words classifier (embedding -> sequence_pool -> fc -> softmax CE) whose
# loss goes down under SGD.
@pytest.mark.parametrize("pool", ["sum", "average"])
def test_bag_of_words_classifier_trains(pool):
    vocab, rng = 20, np.random.RandomState(15)
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 1
    with tide.program_guard(main, startup):
        words = tide.layers.data("words", [1], dtype="int64", lod_level=1)
        label = tide.layers.data("label", [1], dtype="int64")
        emb = tide.layers.embedding(words, size=[vocab, 8])
        bow = tide.layers.sequence_pool(emb, pool)
        logits = tide.layers.fc(bow, 2)
        loss = tide.layers.mean(tide.layers.softmax_with_cross_entropy(logits, label))
        tide.optimizer.SGD(learning_rate=0.5).minimize(loss)

    def batch():
        lens = rng.randint(1, 6, size=8)
        labels = rng.randint(0, 2, size=8)
        ids = (
            np.concatenate(
                [rng.randint(0, vocab // 2, n) + (vocab // 2) * c for n, c in zip(lens, labels)]
            )
            .astype("int64")
            .reshape(-1, 1)
        )
        t = tide.LoDTensor(ids)
        t.set_recursive_sequence_lengths([list(lens)])
        return {"words": t, "label": labels.astype("int64").reshape(-1, 1)}

    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    losses = [
        float(exe.run(main, feed=batch(), fetch_list=[loss], scope=scope)[0].reshape(-1)[0])
        for _ in range(40)
    ]
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5]), losses


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_sequence_enumerate(exe, dtype):
    """Fluid's sequence_enumerate: each id with the win_size - 1 that follow it in its sequence,
    pad_value past the end (an empty sequence in the batch too); Out keeps the LoD."""
    ids = np.array([[1], [2], [3], [4], [5], [6]], dtype)
    lengths = [3, 0, 2, 1]
    x = tide.layers.data(name="x", shape=[1], dtype=dtype, lod_level=1)
    out = tide.layers.sequence_enumerate(x, win_size=3, pad_value=-1)
    (got,) = exe.run(
        feed={"x": tide.create_lod_tensor(ids, [lengths])}, fetch_list=[out], return_numpy=False
    )
    want, start = [], 0
    for n in lengths:
        seq = ids[start : start + n, 0].tolist()
        want += [[seq[i + k] if i + k < n else -1 for k in range(3)] for i in range(n)]
        start += n
    np.testing.assert_array_equal(np.array(got), np.array(want, dtype))
    assert got.recursive_sequence_lengths() == [lengths]
    with pytest.raises(tide.TideError, match="win_size.*must be > 1"):
        tide.layers.sequence_enumerate(x, win_size=1)
