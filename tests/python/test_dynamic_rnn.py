"""DynamicRNN and its ops (ops_control: lod_rank_table, max_sequence_len, lod_tensor_to_array,
array_to_lod_tensor, shrink_rnn_memory, reorder_lod_tensor_by_rank): each op against numpy,
DynamicRNN against the same recurrence run one sequence at a time in numpy, gradients by finite
differences, a training run, bad input."""

import numpy as np
import pytest
from float64_grad import central_diff

import tide
from tide import layers

LENS = [3, 1, 4, 2, 4]  # sequence 2 and 4 tie: the rank table keeps their order


def _lod(arr, lens):
    t = tide.LoDTensor(np.ascontiguousarray(arr))
    t.set_recursive_sequence_lengths([list(lens)])
    return t


def _rank(lens):
    """Fluid's rank table: (index, length), longest first, ties in index order."""
    return sorted(enumerate(lens), key=lambda p: -p[1])


def _seqs(x, lens):
    offs = np.cumsum([0] + list(lens))
    return [x[offs[i] : offs[i + 1]] for i in range(len(lens))]


# -- the ops ------------------------------------------------------------------------------------
def test_rank_table_max_len_and_reorder(exe, rng):
    x = layers.data(name="x", shape=[2], dtype="float32", lod_level=1)
    rows = layers.data(name="rows", shape=[3], dtype="float32")  # one row per sequence
    table = layers.lod_rank_table(x)
    max_len = layers.max_sequence_len(table)
    by_seq = layers.reorder_lod_tensor_by_rank(x, table)
    by_row = layers.reorder_lod_tensor_by_rank(rows, table)
    xs = rng.rand(sum(LENS), 2).astype("float32")
    rs = rng.rand(len(LENS), 3).astype("float32")
    got_len, got_seq, got_row = exe.run(
        feed={"x": _lod(xs, LENS), "rows": rs},
        fetch_list=[max_len, by_seq, by_row],
        return_numpy=False,
    )
    order = [i for i, _ in _rank(LENS)]
    assert np.array(got_len).tolist() == [4]
    np.testing.assert_array_equal(
        np.array(got_seq), np.concatenate([_seqs(xs, LENS)[i] for i in order])
    )
    assert got_seq.recursive_sequence_lengths() == [[LENS[i] for i in order]]
    np.testing.assert_array_equal(np.array(got_row), rs[order])


def test_rank_table_of_a_two_level_lod_ranks_the_chosen_level(exe):
    x = layers.data(name="x", shape=[1], dtype="float32", lod_level=2)
    table = layers.lod_rank_table(x, level=1)
    arr = layers.lod_tensor_to_array(x, table)
    back = layers.array_to_lod_tensor(arr, table)
    t = tide.LoDTensor(np.arange(9, dtype="float32").reshape(9, 1))
    t.set_recursive_sequence_lengths([[2, 1], [2, 3, 4]])
    got, n = exe.run(
        feed={"x": t}, fetch_list=[back, layers.max_sequence_len(table)], return_numpy=False
    )
    # The round trip gives x back, its coarse level included.
    np.testing.assert_array_equal(np.array(got), np.arange(9).reshape(9, 1))
    assert got.recursive_sequence_lengths() == [[2, 1], [2, 3, 4]]
    assert np.array(n).tolist() == [4]


def test_lod_tensor_to_array_splits_by_step(exe, rng):
    x = layers.data(name="x", shape=[2], dtype="float64", lod_level=1)
    table = layers.lod_rank_table(x)
    arr = layers.lod_tensor_to_array(x, table)
    steps = [
        layers.array_read(arr, layers.fill_constant([1], "int64", t)) for t in range(max(LENS))
    ]
    xs = rng.rand(sum(LENS), 2)
    got = exe.run(feed={"x": _lod(xs, LENS)}, fetch_list=steps + [layers.array_length(arr)])
    seqs = _seqs(xs, LENS)
    for t in range(max(LENS)):
        want = np.stack([seqs[i][t] for i, n in _rank(LENS) if n > t])
        np.testing.assert_array_equal(got[t], want)
    assert got[-1].tolist() == [max(LENS)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_array_round_trip_and_its_gradient(exe, rng, dtype):
    x = layers.data(name="x", shape=[3], dtype=dtype, lod_level=1, stop_gradient=False)
    table = layers.lod_rank_table(x)
    back = layers.array_to_lod_tensor(layers.lod_tensor_to_array(x, table), table)
    w = layers.data(name="w", shape=[3], dtype=dtype)
    loss = layers.mean(layers.elementwise_mul(layers.elementwise_mul(back, back), w))
    tide.append_backward(loss, parameter_list=["x"])
    xs = rng.uniform(-1, 1, (sum(LENS), 3)).astype(dtype)
    ws = rng.uniform(0.5, 1.5, (sum(LENS), 3)).astype(dtype)
    got, gx = exe.run(
        feed={"x": _lod(xs, LENS), "w": ws}, fetch_list=[back, "x@GRAD"], return_numpy=False
    )
    np.testing.assert_array_equal(np.array(got), xs)
    assert got.recursive_sequence_lengths() == [LENS]
    np.testing.assert_allclose(np.array(gx), 2 * xs * ws / xs.size, rtol=1e-5)


def test_shrink_memory_keeps_the_running_sequences(exe, rng):
    x = layers.data(name="x", shape=[1], dtype="float32", lod_level=1)
    mem = layers.data(name="mem", shape=[2], dtype="float32", stop_gradient=False)
    table = layers.lod_rank_table(x)
    outs = [
        layers.shrink_memory(mem, layers.fill_constant([1], "int64", t), table) for t in range(4)
    ]
    ms = rng.rand(len(LENS), 2).astype("float32")
    got = exe.run(
        feed={"x": _lod(np.zeros((sum(LENS), 1), "float32"), LENS), "mem": ms}, fetch_list=outs
    )
    for t in range(4):
        keep = sum(1 for n in LENS if n > t)
        np.testing.assert_array_equal(got[t], ms[:keep])


def test_shrink_memory_grad_pads_the_ended_rows_with_zeros(exe, rng):
    x = layers.data(name="x", shape=[1], dtype="float64", lod_level=1)
    mem = layers.data(name="mem", shape=[2], dtype="float64", stop_gradient=False)
    table = layers.lod_rank_table(x)
    out = layers.shrink_memory(mem, layers.fill_constant([1], "int64", 2), table)  # 3 of 5 run
    loss = layers.mean(layers.elementwise_mul(out, out))
    tide.append_backward(loss, parameter_list=["mem"])
    ms = rng.rand(len(LENS), 2)
    (got,) = exe.run(
        feed={"x": _lod(np.zeros((sum(LENS), 1)), LENS), "mem": ms}, fetch_list=["mem@GRAD"]
    )
    scale = 1.0 / 6  # mean over out's 3 x 2 elements
    want = np.zeros_like(ms)
    want[:3] = 2 * ms[:3] * scale
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_reorder_grad_puts_rows_back(exe, rng):
    x = layers.data(name="x", shape=[2], dtype="float64", lod_level=1, stop_gradient=False)
    table = layers.lod_rank_table(x)
    out = layers.reorder_lod_tensor_by_rank(x, table)
    w = layers.data(name="w", shape=[2], dtype="float64")
    loss = layers.mean(layers.elementwise_mul(out, w))
    tide.append_backward(loss, parameter_list=["x"])
    xs = rng.rand(sum(LENS), 2)
    ws = rng.rand(sum(LENS), 2)
    (got,) = exe.run(feed={"x": _lod(xs, LENS), "w": ws}, fetch_list=["x@GRAD"])
    # d mean(out * w) / dx: w's rows in the rank order, sent back to x's order.
    order = [i for i, _ in _rank(LENS)]
    w_seqs, at = {}, 0
    for i in order:
        w_seqs[i] = ws[at : at + LENS[i]]
        at += LENS[i]
    want = np.concatenate([w_seqs[i] for i in range(len(LENS))]) / ws.size
    np.testing.assert_allclose(got, want, rtol=1e-12)


# -- DynamicRNN ---------------------------------------------------------------------------------
H, D = 3, 2


def _rnn_net(dtype, mode, with_static=False):
    """h_t = tanh(x_t Wx + h_{t-1} Wh [+ s Ws] + b) with the memory made as `mode` says;
    returns (x, hidden, extra inputs)."""
    x = layers.data(name="x", shape=[D], dtype=dtype, lod_level=1, stop_gradient=False)
    extra = {}
    if mode in ("init", "reorder"):
        extra["h0"] = layers.data(name="h0", shape=[H], dtype=dtype, stop_gradient=False)
    if with_static:
        extra["s"] = layers.data(name="s", shape=[H], dtype=dtype, stop_gradient=False)
    drnn = layers.DynamicRNN()
    with drnn.block():
        word = drnn.step_input(x)
        if mode == "shape":
            prev = drnn.memory(shape=[H], value=0.5, dtype=dtype)
        else:
            prev = drnn.memory(init=extra["h0"], need_reorder=(mode == "reorder"))
        ins, attrs = [word, prev], [tide.ParamAttr(name="wx"), tide.ParamAttr(name="wh")]
        if with_static:
            ins.append(drnn.static_input(extra["s"]))
            attrs.append(tide.ParamAttr(name="ws"))
        h = layers.fc(
            input=ins, size=H, act="tanh", param_attr=attrs, bias_attr=tide.ParamAttr(name="b")
        )
        drnn.update_memory(prev, h)
        drnn.output(h)
    return x, drnn(), extra


def _numpy_rnn(xs, lens, params, h0=None, s=None, mode="shape", value=0.5):
    """Each sequence on its own, in input order."""
    order = [i for i, _ in _rank(lens)]
    outs = []
    for i, seq in enumerate(_seqs(xs, lens)):
        if mode == "shape":
            h = np.full(H, value)
        elif mode == "init":  # init is in the rank table's order
            h = h0[order.index(i)]
        else:
            h = h0[i]
        rows = []
        for x_t in seq:
            pre = x_t @ params["wx"] + h @ params["wh"] + params["b"]
            if s is not None:
                pre = pre + s[i] @ params["ws"]
            h = np.tanh(pre)
            rows.append(h)
        outs.append(np.array(rows).reshape(-1, H))
    return np.concatenate(outs)


def _params(names):
    scope = tide.global_scope()
    return {n: np.array(scope.find_var(n).get_tensor()).astype(np.float64) for n in names}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["shape", "init", "reorder"])
def test_dynamic_rnn_matches_numpy_per_sequence(exe, rng, dtype, mode, fresh_programs):
    x, hidden, extra = _rnn_net(dtype, mode)
    exe.run(fresh_programs[1])
    xs = rng.uniform(-1, 1, (sum(LENS), D)).astype(dtype)
    feed = {"x": _lod(xs, LENS)}
    h0 = rng.uniform(-1, 1, (len(LENS), H)).astype(dtype)
    if extra:
        feed["h0"] = h0
    (got,) = exe.run(feed=feed, fetch_list=[hidden], return_numpy=False)
    params = _params(["wx", "wh", "b"])
    params["b"] = params["b"].reshape(-1)
    want = _numpy_rnn(xs.astype(np.float64), LENS, params, h0=h0.astype(np.float64), mode=mode)
    np.testing.assert_allclose(
        np.array(got), want, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6
    )
    assert got.recursive_sequence_lengths() == [LENS]


def test_dynamic_rnn_with_a_static_input(exe, rng, fresh_programs):
    x, hidden, extra = _rnn_net("float64", "shape", with_static=True)
    exe.run(fresh_programs[1])
    xs = rng.uniform(-1, 1, (sum(LENS), D))
    ss = rng.uniform(-1, 1, (len(LENS), H))
    (got,) = exe.run(feed={"x": _lod(xs, LENS), "s": ss}, fetch_list=[hidden])
    params = _params(["wx", "wh", "b", "ws"])
    params["b"] = params["b"].reshape(-1)
    np.testing.assert_allclose(got, _numpy_rnn(xs, LENS, params, s=ss), rtol=1e-12)


@pytest.mark.parametrize("wrt", ["x", "h0", "s", "wh"])
def test_dynamic_rnn_gradients_match_finite_differences(exe, rng, fresh_programs, wrt):
    main, startup = fresh_programs
    mode = "reorder" if wrt == "h0" else "shape"
    x, hidden, extra = _rnn_net("float64", mode, with_static=(wrt == "s"))
    w = layers.data(name="w", shape=[H], dtype="float64")
    last = layers.sequence_pool(hidden, "last")
    loss = layers.elementwise_add(
        layers.mean(layers.elementwise_mul(hidden, w)),
        layers.mean(layers.elementwise_mul(last, last)),
    )
    forward_only = main.clone()
    tide.append_backward(loss)
    exe.run(startup)
    feeds = {
        "x": rng.uniform(-1, 1, (sum(LENS), D)),
        "w": rng.uniform(0.5, 1.5, (sum(LENS), H)),
        "h0": rng.uniform(-1, 1, (len(LENS), H)),
        "s": rng.uniform(-1, 1, (len(LENS), H)),
    }

    def feed_with(name, value):
        f = {
            k: (_lod(v, LENS) if k == "x" else v)
            for k, v in feeds.items()
            if k in ("x", "w") or k in extra
        }
        if name in f:
            f[name] = _lod(value, LENS) if name == "x" else value
        return f

    def loss_at(value):
        if wrt == "wh":
            tide.global_scope().find_var("wh").get_tensor().set(
                np.asarray(value), tide.CPUPlace(), False
            )
        out = exe.run(forward_only, feed=feed_with(wrt, value), fetch_list=[loss])[0]
        return float(np.asarray(out).ravel()[0])

    base = _params(["wh"])["wh"] if wrt == "wh" else feeds[wrt]
    got = np.array(exe.run(main, feed=feed_with(wrt, base), fetch_list=[wrt + "@GRAD"])[0])
    want = central_diff(loss_at, base, 1e-6)
    if wrt == "wh":
        tide.global_scope().find_var("wh").get_tensor().set(
            np.asarray(base), tide.CPUPlace(), False
        )
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_dynamic_rnn_trains(exe, rng, fresh_programs):
    # Learn the sum of each sequence's inputs with a small RNN: the loss on a held-out batch drops.
    main, startup = fresh_programs
    x = layers.data(name="x", shape=[1], dtype="float32", lod_level=1)
    y = layers.data(name="y", shape=[1], dtype="float32")
    drnn = layers.DynamicRNN()
    with drnn.block():
        word = drnn.step_input(x)
        prev = drnn.memory(shape=[8], value=0.0)
        h = layers.fc(input=[word, prev], size=8, act="tanh")
        drnn.update_memory(prev, h)
        drnn.output(h)
    pred = layers.fc(input=layers.sequence_pool(drnn(), "last"), size=1)
    loss = layers.mean(layers.square_error_cost(pred, y))
    evaluate = main.clone()
    tide.optimizer.Adam(learning_rate=0.02).minimize(loss)
    exe.run(startup)

    def batch(n):
        lens = rng.randint(1, 7, size=n).tolist()
        xs = rng.uniform(-1, 1, (sum(lens), 1)).astype("float32")
        ys = np.array([[s.sum()] for s in _seqs(xs, lens)], "float32")
        return {"x": _lod(xs, lens), "y": ys}

    held_out = batch(64)

    def held_out_loss():
        return float(np.asarray(exe.run(evaluate, feed=held_out, fetch_list=[loss])[0]).ravel()[0])

    before = held_out_loss()
    for _ in range(200):
        exe.run(main, feed=batch(16), fetch_list=[loss])
    after = held_out_loss()
    assert after < 0.2 * before, (before, after)


# -- bad input ----------------------------------------------------------------------------------
def test_rank_table_of_a_tensor_without_lod_names_the_op_and_variable(exe):
    x = layers.data(name="plain", shape=[2], dtype="float32")
    layers.lod_rank_table(x)
    with pytest.raises(tide.InvalidArgumentError, match=r"lod_rank_table.*'plain'.*has no LoD"):
        exe.run(feed={"plain": np.zeros((3, 2), "float32")})


def test_rank_table_level_out_of_range(exe):
    x = layers.data(name="x", shape=[2], dtype="float32", lod_level=1)
    layers.lod_rank_table(x, level=1)
    with pytest.raises(
        tide.InvalidArgumentError, match=r"lod_rank_table.*level 1 is out of range.*'x'"
    ):
        exe.run(feed={"x": _lod(np.zeros((3, 2), "float32"), [1, 2])})


def test_sequences_not_matching_the_rank_table(exe):
    x = layers.data(name="x", shape=[2], dtype="float32", lod_level=1)
    other = layers.data(name="other", shape=[2], dtype="float32", lod_level=1)
    table = layers.lod_rank_table(x)
    layers.lod_tensor_to_array(other, table)
    with pytest.raises(
        tide.InvalidArgumentError,
        match=r"lod_tensor_to_array.*'other'.*2 sequence\(s\).*the rank table has 3",
    ):
        exe.run(
            feed={
                "x": _lod(np.zeros((6, 2), "float32"), [1, 2, 3]),
                "other": _lod(np.zeros((6, 2), "float32"), [3, 3]),
            }
        )


def test_reorder_rows_not_matching_the_rank_table(exe):
    x = layers.data(name="x", shape=[2], dtype="float32", lod_level=1)
    rows = layers.data(name="rows", shape=[2], dtype="float32")
    layers.reorder_lod_tensor_by_rank(rows, layers.lod_rank_table(x))
    with pytest.raises(
        tide.InvalidArgumentError,
        match=r"reorder_lod_tensor_by_rank.*'rows'.*4 row\(s\).*the rank table has 3",
    ):
        exe.run(
            feed={
                "x": _lod(np.zeros((6, 2), "float32"), [1, 2, 3]),
                "rows": np.zeros((4, 2), "float32"),
            }
        )


def test_dynamic_rnn_api_misuse():
    x = layers.data(name="x", shape=[2], dtype="float32", lod_level=1)
    drnn = layers.DynamicRNN()
    with pytest.raises(ValueError, match="inside"):
        drnn.step_input(x)
    with pytest.raises(ValueError, match="step_input"):
        with drnn.block():
            drnn.memory(shape=[3])
    with pytest.raises(ValueError, match="after its block"):
        layers.DynamicRNN()()


def test_gradient_through_an_array_a_loop_reads_and_writes(exe):
    # arr[i + 1] = 2 arr[i]: the loop carries the array's gradient back (it used to refuse).
    x = layers.data(name="x", shape=[2], dtype="float64", stop_gradient=False)
    zero = layers.fill_constant([1], "int64", 0)
    arr = layers.array_write(layers.scale(x, 1.0), zero)
    i = layers.fill_constant([1], "int64", 0)
    n = layers.fill_constant([1], "int64", 3)
    cond = layers.less_than(i, n)
    loop = layers.While(cond)
    with loop.block():
        v = layers.array_read(arr, i)
        layers.increment(i, in_place=True)
        layers.array_write(layers.scale(v, 2.0), i, array=arr)
        layers.less_than(i, n, cond=cond)
    tide.append_backward(layers.mean(layers.array_read(arr, n)), parameter_list=["x"])
    (got,) = exe.run(feed={"x": np.ones((1, 2))}, fetch_list=["x@GRAD"])
    np.testing.assert_allclose(got, [[4.0, 4.0]])  # d mean(8 x) / dx over 2 elements


@pytest.mark.parametrize("lens", [[0], [0, 0], [2, 0, 1]])
def test_dynamic_rnn_memory_by_shape_with_only_empty_sequences(exe, rng, fresh_programs, lens):
    """A batch whose sequences are all empty runs no step; memory(shape=...) must not read step
    0's input (there is none) to size its initial value."""
    main, startup = fresh_programs
    x, hidden, _ = _rnn_net("float64", "shape")
    last = layers.sequence_last_step(hidden)
    loss = layers.reduce_sum(last)
    tide.backward.append_backward(loss)
    exe.run(startup)
    xs = rng.uniform(-1, 1, (sum(lens), D))
    got, got_loss = exe.run(
        main, feed={"x": _lod(xs, lens)}, fetch_list=[hidden, loss], return_numpy=False
    )
    assert got.recursive_sequence_lengths() == [lens]
    if sum(lens):
        params = _params(["wx", "wh", "b"])
        params["b"] = params["b"].reshape(-1)
        np.testing.assert_allclose(np.array(got), _numpy_rnn(xs, lens, params), rtol=1e-12)
    else:
        assert np.array(got).size == 0
        assert float(np.array(got_loss).sum()) == 0.0


def test_dynamic_rnn_memory_init_from_the_step_block_names_the_mistake():
    x = layers.data(name="x", shape=[2], dtype="float32", lod_level=1)
    drnn = layers.DynamicRNN()
    with pytest.raises(ValueError, match="outside"):
        with drnn.block():
            word = drnn.step_input(x)
            drnn.memory(init=layers.fc(word, 3))
