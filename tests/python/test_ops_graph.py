"""The ops_graph pack (paddle.geometric's message passing): segment_pool, send_u_recv,
send_ue_recv and send_uv, each against a numpy float64 reference written here (rows reduced by
SUM / MEAN / MAX / MIN, empty rows 0; feature dims broadcast numpy-style after the first);
gradients by central differences (float64, no ties in MAX / MIN); int32 and int64 indices, int
features in the forward ops; bad inputs' errors."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(71)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]
REDUCES = ["SUM", "MEAN", "MAX", "MIN"]


def tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-5} if dtype == "float32" else {"atol": 1e-12, "rtol": 1e-12}


def reduce_rows(msgs, dst, rows, reduce):
    """Row r: the reduction of the messages msgs[e] with dst[e] == r (0 where none); counts."""
    out = np.zeros((rows,) + msgs.shape[1:], dtype=np.float64)
    count = np.zeros(rows, dtype=np.int32)
    for r in range(rows):
        sel = msgs[dst == r].astype(np.float64)
        count[r] = len(sel)
        if len(sel):
            out[r] = {"SUM": np.sum, "MEAN": np.mean, "MAX": np.max, "MIN": np.min}[reduce](
                sel, axis=0
            )
    return out, count


def features_aligned(a, b):
    """a [E, ...] and b [E, ...] with 1s after the first dim of the one of lower rank, so numpy
    broadcasts their feature dims with the trailing dims aligned."""
    r = max(a.ndim, b.ndim)
    a = a.reshape(a.shape[:1] + (1,) * (r - a.ndim) + a.shape[1:])
    b = b.reshape(b.shape[:1] + (1,) * (r - b.ndim) + b.shape[1:])
    return a, b


def message(a, b, op):
    a, b = features_aligned(a.astype(np.float64), b.astype(np.float64))
    return a * b if op == "MUL" else a + b


def edges(n_src, n_dst, e, itype="int64"):
    """e distinct (src, dst) pairs: a repeated edge would carry a repeated message, a tie for
    MAX / MIN, whose gradient (Paddle's: every tie gets it) finite differences do not give."""
    pairs = RNG.choice(n_src * n_dst, e, replace=False)
    return (pairs // n_dst).astype(itype), (pairs % n_dst).astype(itype)


# --- segment_pool ----------------------------------------------------------------------------


@pytest.mark.parametrize("pooltype", REDUCES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,ids",
    [
        ((5, 3), [0, 0, 1, 2, 2]),
        ((6, 2, 3), [0, 2, 2, 2, 5, 5]),  # segments 1, 3, 4 empty: 0
        ((4,), [1, 1, 1, 3]),  # 1-D X, segment 0 empty
    ],
)
def test_segment_pool(shape, ids, pooltype, dtype):
    x = RNG.uniform(-2, 2, shape).astype(dtype)
    for itype in ["int32", "int64"]:
        seg = np.array(ids, dtype=itype)
        want, count = reduce_rows(x, seg, seg[-1] + 1, pooltype)
        t = make(
            "segment_pool",
            {"X": x, "SegmentIds": seg},
            {"Out": want.astype(dtype), "SummedIds": count.reshape(-1, 1).astype(dtype)},
            {"pooltype": pooltype},
        )
        t.check_output(**tol(dtype))
        if dtype == "float64":
            t.check_grad(["X"], "Out", **GRAD)


@pytest.mark.parametrize("pooltype", REDUCES)
def test_segment_pool_int_features(pooltype):
    x = RNG.randint(-50, 50, (7, 3)).astype("int64")
    seg = np.array([0, 0, 0, 2, 2, 3, 3], "int32")
    want, _ = reduce_rows(x, seg, 4, pooltype)
    if pooltype == "MEAN":  # integer division of the sum, truncated as C++'s
        s, c = reduce_rows(x, seg, 4, "SUM")
        want = np.where(c[:, None] > 0, np.trunc(s / np.maximum(c, 1)[:, None]), 0)
    make(
        "segment_pool",
        {"X": x, "SegmentIds": seg},
        {"Out": want.astype("int64"), "SummedIds": None},
        {"pooltype": pooltype},
    ).check_output()


def test_segment_pool_max_ties_grad():
    # Every row equal to its segment's maximum gets the gradient (Paddle's rule).
    x = np.array([[1.0, 5.0], [3.0, 5.0], [3.0, 2.0]])
    seg = np.array([0, 0, 0], "int64")
    with tide.program_guard(tide.Program(), tide.Program()):
        xv = tide.layers.data(
            name="x", shape=[3, 2], dtype="float64", append_batch_size=False, stop_gradient=False
        )
        sv = tide.layers.data(name="s", shape=[3], dtype="int64", append_batch_size=False)
        block = tide.default_main_program().global_block()
        out = block.create_var(name="out", dtype="float64")
        summed = block.create_var(name="summed", dtype="float64")
        block.append_op(
            type="segment_pool",
            inputs={"X": [xv], "SegmentIds": [sv]},
            outputs={"Out": [out], "SummedIds": [summed]},
            attrs={"pooltype": "MAX"},
        )
        tide.append_backward(tide.layers.reduce_sum(out), parameter_list=["x"])
        o, dx = tide.Executor(tide.CPUPlace()).run(
            feed={"x": x, "s": seg}, fetch_list=[out, "x@GRAD"]
        )
    np.testing.assert_array_equal(o, [[3.0, 5.0]])
    np.testing.assert_array_equal(dx, [[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])


def test_segment_pool_errors():
    x = np.zeros((4, 2))

    def run(ids, **attrs):
        make(
            "segment_pool",
            {"X": x, "SegmentIds": ids},
            {"Out": x, "SummedIds": None},
            attrs,
        ).check_output()

    with pytest.raises(
        tide.TideError, match=r"segment_pool.*SegmentIds.*must be sorted.*\[1\] = 2"
    ):
        run(np.array([0, 2, 1, 3], "int64"))
    with pytest.raises(tide.TideError, match=r"segment_pool.*SegmentIds.*\[0\] = -1 is negative"):
        run(np.array([-1, 0, 0, 1], "int32"))
    with pytest.raises(tide.TideError, match=r"segment_pool.*SegmentIds.*one id per row of X"):
        run(np.array([0, 0, 1], "int64"))
    with pytest.raises(tide.TideError, match=r"segment_pool.*SegmentIds.*must be int32 or int64"):
        run(np.array([0, 0, 1, 1], "float32"))
    with pytest.raises(tide.TideError, match=r"pooltype.*AVG"):
        run(np.array([0, 0, 1, 1], "int64"), pooltype="AVG")


# --- send_u_recv ---------------------------------------------------------------------------


@pytest.mark.parametrize("reduce_op", REDUCES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,e", [((5, 3), 8), ((4, 2, 3), 6), ((6,), 4)])
def test_send_u_recv(shape, e, reduce_op, dtype):
    x = RNG.uniform(-2, 2, shape).astype(dtype)
    n = shape[0]
    for itype, out_size, as_input in [
        ("int64", 0, False),
        ("int32", n + 2, False),
        ("int64", n - 1, True),
    ]:
        src, dst = edges(n, out_size if out_size > 0 else n, e, itype)
        rows = out_size if out_size > 0 else n
        want, count = reduce_rows(x[src], dst, rows, reduce_op)
        inputs = {"X": x, "Src_index": src, "Dst_index": dst}
        attrs = {"reduce_op": reduce_op}
        if as_input:
            inputs["Out_size"] = np.array([out_size], itype)
            attrs["out_size"] = [100]  # the input wins
        else:
            attrs["out_size"] = [out_size]
        t = make("send_u_recv", inputs, {"Out": want.astype(dtype), "Dst_count": count}, attrs)
        t.check_output(**tol(dtype))
        if dtype == "float64":
            t.check_grad(["X"], "Out", **GRAD)


def test_send_u_recv_paddle_example():
    # paddle.geometric.send_u_recv's documented example.
    x = np.array([[0, 2, 3], [1, 4, 5], [2, 6, 7]], "float32")
    idx = np.array([[0, 1], [1, 2], [2, 1], [0, 0]], "int32")
    t = make(
        "send_u_recv",
        {"X": x, "Src_index": idx[:, 0].copy(), "Dst_index": idx[:, 1].copy()},
        {"Out": np.array([[0, 2, 3], [2, 8, 10], [1, 4, 5]], "float32"), "Dst_count": None},
        {"reduce_op": "SUM"},
    )
    t.check_output()


@pytest.mark.parametrize("reduce_op", REDUCES)
def test_send_u_recv_int_features(reduce_op):
    x = RNG.randint(-20, 20, (5, 2)).astype("int32")
    src, dst = edges(5, 5, 7, "int64")
    want, count = reduce_rows(x[src], dst, 5, reduce_op)
    if reduce_op == "MEAN":
        s, _ = reduce_rows(x[src], dst, 5, "SUM")
        want = np.where(count[:, None] > 0, np.trunc(s / np.maximum(count, 1)[:, None]), 0)
    make(
        "send_u_recv",
        {"X": x, "Src_index": src, "Dst_index": dst},
        {"Out": want.astype("int32"), "Dst_count": count},
        {"reduce_op": reduce_op},
    ).check_output()


def test_send_u_recv_errors():
    x = np.zeros((4, 2))

    def run(src, dst, **attrs):
        make(
            "send_u_recv",
            {"X": x, "Src_index": src, "Dst_index": dst},
            {"Out": x, "Dst_count": None},
            attrs,
        ).check_output()

    i = np.array
    with pytest.raises(
        tide.TideError, match=r"send_u_recv.*Src_index.*\[1\] = 4 is out of range \[0, 4\)"
    ):
        run(i([0, 4], "int64"), i([0, 1], "int64"))
    with pytest.raises(
        tide.TideError, match=r"send_u_recv.*Dst_index.*\[0\] = 2 is out of range \[0, 2\)"
    ):
        run(i([0, 1], "int64"), i([2, 1], "int64"), out_size=[2])
    with pytest.raises(tide.TideError, match=r"send_u_recv.*Dst_index.*\[1\] = -1 is out of range"):
        run(i([0, 1], "int32"), i([0, -1], "int32"))
    with pytest.raises(tide.TideError, match=r"send_u_recv.*Src_index.*has 3 edges but Dst_index"):
        run(i([0, 1, 2], "int64"), i([0, 1], "int64"))
    with pytest.raises(tide.TideError, match=r"send_u_recv.*Src_index.*must be int32 or int64"):
        run(i([0, 1], "float32"), i([0, 1], "int64"))
    with pytest.raises(tide.TideError, match=r"send_u_recv.*Dst_index.*must be 1-D"):
        run(i([0, 1], "int64"), i([[0, 1]], "int64"))
    with pytest.raises(tide.TideError, match=r"reduce_op.*AVG"):
        run(i([0, 1], "int64"), i([0, 1], "int64"), reduce_op="AVG")


# --- send_ue_recv --------------------------------------------------------------------------


@pytest.mark.parametrize("message_op", ["ADD", "MUL"])
@pytest.mark.parametrize("reduce_op", REDUCES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "xshape,yshape",
    [
        ((5, 3), (7, 3)),
        ((5, 3), (7, 1)),  # Y's features repeated
        ((4, 1, 3), (6, 2, 1)),  # both broadcast: [2, 3]
        ((4, 2, 3), (6, 3)),  # Y of lower rank, trailing dims aligned
        ((4, 3), (6, 2, 3)),  # X of lower rank
    ],
)
def test_send_ue_recv(xshape, yshape, reduce_op, message_op, dtype):
    x = RNG.uniform(0.5, 2, xshape) * RNG.choice([-1, 1], xshape)
    y = RNG.uniform(0.5, 2, yshape) * RNG.choice([-1, 1], yshape)
    x, y = x.astype(dtype), y.astype(dtype)
    n, e = xshape[0], yshape[0]
    for itype, out_size in [("int64", 0), ("int32", n + 1)]:
        rows = out_size if out_size > 0 else n
        src, dst = edges(n, rows, e, itype)
        want, count = reduce_rows(message(x[src], y, message_op), dst, rows, reduce_op)
        t = make(
            "send_ue_recv",
            {"X": x, "Y": y, "Src_index": src, "Dst_index": dst},
            {"Out": want.astype(dtype), "Dst_count": count},
            {"message_op": message_op, "reduce_op": reduce_op, "out_size": [out_size]},
        )
        t.check_output(**tol(dtype))
        if dtype == "float64":
            t.check_grad(["X", "Y"], "Out", **GRAD)


def test_send_ue_recv_out_size_input():
    x, y = RNG.uniform(-1, 1, (4, 3)), RNG.uniform(-1, 1, (5, 3))
    src, dst = edges(4, 2, 5, "int32")
    want, count = reduce_rows(message(x[src], y, "MUL"), dst, 2, "MEAN")
    t = make(
        "send_ue_recv",
        {"X": x, "Y": y, "Src_index": src, "Dst_index": dst, "Out_size": np.array([2], "int32")},
        {"Out": want, "Dst_count": count},
        {"message_op": "MUL", "reduce_op": "MEAN"},
    )
    t.check_output(**tol("float64"))
    t.check_grad(["X", "Y"], "Out", **GRAD)


def test_send_ue_recv_errors():
    x = np.zeros((4, 3))
    src = np.array([0, 1, 2], "int64")

    def run(y, s=src, d=src, **attrs):
        make(
            "send_ue_recv",
            {"X": x, "Y": y, "Src_index": s, "Dst_index": d},
            {"Out": x, "Dst_count": None},
            attrs,
        ).check_output()

    with pytest.raises(
        tide.TideError, match=r"send_ue_recv.*Y .*\[2, 3\] must have one row per edge"
    ):
        run(np.zeros((2, 3)))
    with pytest.raises(
        tide.TideError, match=r"send_ue_recv.*feature dims of X \[4, 3\] and Y \[3, 2\] do not"
    ):
        run(np.zeros((3, 2)))
    with pytest.raises(tide.TideError, match=r"send_ue_recv.*Src_index.*\[2\] = 9 is out of range"):
        run(np.zeros((3, 3)), s=np.array([0, 1, 9], "int64"))
    with pytest.raises(tide.TideError, match=r"message_op.*SUB"):
        run(np.zeros((3, 3)), message_op="SUB")


# --- send_uv -------------------------------------------------------------------------------


@pytest.mark.parametrize("message_op", ["ADD", "MUL"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "xshape,yshape",
    [((5, 3), (4, 3)), ((5, 1, 3), (4, 2, 1)), ((5, 2, 3), (4, 3)), ((5,), (4,))],
)
def test_send_uv(xshape, yshape, message_op, dtype):
    x, y = RNG.uniform(-2, 2, xshape).astype(dtype), RNG.uniform(-2, 2, yshape).astype(dtype)
    for itype in ["int32", "int64"]:
        src, dst = edges(xshape[0], yshape[0], 7, itype)
        want = message(x[src], y[dst], message_op)
        t = make(
            "send_uv",
            {"X": x, "Y": y, "Src_index": src, "Dst_index": dst},
            {"Out": want.astype(dtype)},
            {"message_op": message_op},
        )
        t.check_output(**tol(dtype))
        if dtype == "float64":
            t.check_grad(["X", "Y"], "Out", **GRAD)


def test_send_uv_int_features():
    x, y = RNG.randint(-9, 9, (3, 2)).astype("int64"), RNG.randint(-9, 9, (4, 2)).astype("int64")
    src, dst = edges(3, 4, 5)
    make(
        "send_uv",
        {"X": x, "Y": y, "Src_index": src, "Dst_index": dst},
        {"Out": x[src] * y[dst]},
        {"message_op": "MUL"},
    ).check_output()


def test_send_uv_errors():
    x, y = np.zeros((3, 2)), np.zeros((4, 2))

    def run(s, d, yy=y):
        make(
            "send_uv",
            {"X": x, "Y": yy, "Src_index": s, "Dst_index": d},
            {"Out": np.zeros((len(s), 2))},
        ).check_output()

    i = np.array
    with pytest.raises(
        tide.TideError, match=r"send_uv.*Dst_index.*\[1\] = 4 is out of range \[0, 4\)"
    ):
        run(i([0, 1], "int64"), i([0, 4], "int64"))
    with pytest.raises(
        tide.TideError, match=r"send_uv.*Src_index.*\[0\] = 3 is out of range \[0, 3\)"
    ):
        run(i([3, 1], "int64"), i([0, 1], "int64"))
    with pytest.raises(tide.TideError, match=r"send_uv.*feature dims of X \[3, 2\] and Y \[4, 3\]"):
        run(i([0, 1], "int64"), i([0, 1], "int64"), np.zeros((4, 3)))
    with pytest.raises(tide.TideError, match=r"send_uv.*Src_index.*has 2 edges but Dst_index.*3"):
        run(i([0, 1], "int64"), i([0, 1, 2], "int64"))


# --- graph_reindex -------------------------------------------------------------------------


def reindex(x, neighbors, count):
    """Paddle's renumbering: X's positions (a repeated node: its last), then new neighbours."""
    ids = {int(v): i for i, v in enumerate(x)}
    nodes = [int(v) for v in x]
    src = []
    for v in neighbors:
        if int(v) not in ids:
            ids[int(v)] = len(nodes)
            nodes.append(int(v))
        src.append(ids[int(v)])
    dst = [ids[int(v)] for v, c in zip(x, count) for _ in range(c)]
    return np.array(src), np.array(dst), np.array(nodes)


@pytest.mark.parametrize("itype", ["int32", "int64"])
@pytest.mark.parametrize(
    "x,neighbors,count",
    [
        ([0, 1, 2], [8, 9, 0, 4, 7, 6, 7, 9], [2, 3, 3]),  # Paddle's documented example
        ([5, 1, 5], [8, 5, 0, 1, 7, 6, 1, 9], [2, 3, 3]),  # a repeated centre node
        ([3, 4], [], [0, 0]),  # no neighbours
        ([7], [7, 7, 2], [3]),
    ],
)
def test_graph_reindex(x, neighbors, count, itype):
    x, nb = np.array(x, itype), np.array(neighbors, itype)
    src, dst, nodes = reindex(x, nb, count)
    make(
        "graph_reindex",
        {"X": x, "Neighbors": nb, "Count": np.array(count, "int32")},
        {
            "Reindex_Src": src.astype(itype),
            "Reindex_Dst": dst.astype(itype),
            "Out_Nodes": nodes.astype(itype),
        },
    ).check_output()


def test_graph_reindex_errors():
    x, nb = np.array([0, 1], "int64"), np.array([4, 5, 6], "int64")

    def run(count, neighbors=nb):
        make(
            "graph_reindex",
            {"X": x, "Neighbors": neighbors, "Count": np.array(count, "int32")},
            {"Reindex_Src": nb, "Reindex_Dst": nb, "Out_Nodes": nb},
        ).check_output()

    with pytest.raises(tide.TideError, match=r"graph_reindex.*Count.*adds up to 2 but Neighbors"):
        run([1, 1])
    with pytest.raises(tide.TideError, match=r"graph_reindex.*Count.*\[0\] = -1 is negative"):
        run([-1, 4])
    with pytest.raises(tide.TideError, match=r"graph_reindex.*Count.*has 3 values but X"):
        run([1, 1, 1])
    with pytest.raises(tide.TideError, match=r"graph_reindex.*Neighbors.*must have X's type"):
        run([1, 2], nb.astype("int32"))
