"""Ops that models built from Paddle 2.x's `paddle.nn` layers save (issue 31): lookup_table_v2
(nn.Embedding), fill_any_like (ones_like / zeros_like), tril_triu (paddle.tril / triu), expand_v2
(Tensor.expand) and rnn (nn.LSTM / nn.GRU / nn.SimpleRNN), each against a float64 numpy reference
of Paddle's rule, with gradients by central finite differences where the op trains."""

import numpy as np
import pytest
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn
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


# --- rnn (nn.LSTM / nn.GRU / nn.SimpleRNN) -----------------------------------------------------


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def rnn_reference(mode, x, states, weights, layers, dirs, hidden, lengths=None, masks=None):
    """Paddle's cells (nn.LSTMCell / GRUCell / SimpleRNNCell) one sequence and step at a time:
    each sequence runs its first `length` steps (the backward direction from its last one),
    outputs 0 after them and keeps its state; layer l > 0 reads the previous layer's output
    times masks[l - 1] (training dropout). WeightList: weight_ih, weight_hh per layer and
    direction, then the biases. Returns Out and the final h (and c)."""
    steps, batch, _ = x.shape
    cells = layers * dirs
    lstm = mode == "LSTM"
    lens = np.full(batch, steps) if lengths is None else lengths
    last = [np.zeros_like(s) for s in states]
    inp = x
    for layer in range(layers):
        if layer > 0 and masks is not None:
            inp = inp * masks[layer - 1]
        out = np.zeros((steps, batch, dirs * hidden))
        for d in range(dirs):
            cell = layer * dirs + d
            w_ih, w_hh, b_ih, b_hh = (
                weights[(2 * cells if k >= 2 else 0) + 2 * cell + k % 2] for k in range(4)
            )
            for n in range(batch):
                h, c = states[0][cell, n], (states[1][cell, n] if lstm else None)
                order = range(lens[n]) if d == 0 else reversed(range(lens[n]))
                for t in order:
                    xg, hg = w_ih @ inp[t, n] + b_ih, w_hh @ h + b_hh
                    if lstm:
                        i, f, g, o = np.split(xg + hg, 4)
                        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
                        h = sigmoid(o) * np.tanh(c)
                    elif mode == "GRU":  # the reset gate applied after the product
                        (xr, xz, xc), (hr, hz, hc) = np.split(xg, 3), np.split(hg, 3)
                        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
                        cand = np.tanh(xc + r * hc)
                        h = z * h + (1 - z) * cand
                    else:
                        h = np.tanh(xg + hg) if mode == "RNN_TANH" else np.maximum(xg + hg, 0)
                    out[t, n, d * hidden : (d + 1) * hidden] = h
                last[0][cell, n] = h
                if lstm:
                    last[1][cell, n] = c
        inp = out
    return out, last


RNN_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def rnn_case(
    mode, layers, dirs, lengths, steps=5, batch=3, inputs=3, hidden=4, dtype="float64", k=1.0
):
    """Random inputs, states and weights (uniform in [-k, k]: Paddle initialises them with
    k = 1 / sqrt(hidden)) in Paddle's WeightList order; the op's inputs, attrs, and the
    reference's outputs as OpTest wants them."""
    g = RNN_GATES[mode] * hidden
    x = rand(steps, batch, inputs)
    states = [rand(layers * dirs, batch, hidden) for _ in range(2 if mode == "LSTM" else 1)]
    weights, biases = [], []
    for layer in range(layers):
        for _ in range(dirs):
            weights += [k * rand(g, inputs if layer == 0 else dirs * hidden), k * rand(g, hidden)]
            biases += [k * rand(g), k * rand(g)]
    weights += biases
    out, last = rnn_reference(mode, x, states, weights, layers, dirs, hidden, lengths)
    cast = lambda a: a.astype(dtype)  # noqa: E731
    ins = {
        "Input": cast(x),
        "PreState": [("pre_%s" % k, cast(s)) for k, s in zip("hc", states)],
        "WeightList": [("param_%d" % i, cast(w)) for i, w in enumerate(weights)],
    }
    if lengths is not None:
        ins["SequenceLength"] = lengths
    outs = {
        "Out": cast(out),
        "State": [("last_%s" % k, cast(s)) for k, s in zip("hc", last)],
        "Reserve": None,
        "DropoutState": None,
    }
    attrs = {
        "mode": mode,
        "num_layers": layers,
        "is_bidirec": dirs == 2,
        "hidden_size": hidden,
        "input_size": inputs,
        "is_test": True,
        "dropout_prob": 0.1,
    }
    return ins, outs, attrs


RNN_MODES = ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"]
RNN_LENGTHS = {
    "none": None,
    "mixed": np.array([5, 0, 3], "int32"),  # a full, an empty and a shorter sequence
    "full": np.array([5, 5, 5], "int64"),  # Paddle takes int64 lengths too (nn.LSTM's fixtures)
    "equal": np.array([3, 3, 3], "int32"),  # every sequence shorter than T
}


@pytest.mark.parametrize("lengths", list(RNN_LENGTHS))
@pytest.mark.parametrize("layers,dirs", [(1, 1), (1, 2), (2, 2), (3, 1), (3, 2)])
@pytest.mark.parametrize("mode", RNN_MODES)
def test_rnn(mode, layers, dirs, lengths):
    """Out [T, N, D * H] and the final states against Paddle's cells run step by step."""
    ins, outs, attrs = rnn_case(mode, layers, dirs, RNN_LENGTHS[lengths])
    make("rnn", ins, outs, attrs).check_output(atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("mode", RNN_MODES)
def test_rnn_float32(mode):
    ins, outs, attrs = rnn_case(mode, 2, 2, RNN_LENGTHS["mixed"], dtype="float32")
    make("rnn", ins, outs, attrs).check_output(atol=1e-5, rtol=1e-5)


def kernels_of(t):
    """The kernels the op under test ran with (the executor's choices: "mkldnn" in oneDNN's)."""
    import tide

    main, _, feeds, outs = t._build()
    expected = t._expected_outputs()
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        exe.run(main, feed=feeds, fetch_list=[n for n in outs if expected[n][1] is not None])
    return [k for op, k in exe.last_run_info()["kernels"] if op == t.op_type]


def ran_onednn(t):
    ks = kernels_of(t)
    return bool(ks) and all("mkldnn" in k for k in ks)


onednn_only = pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)

# test_rnn's lengths for a batch of 10: oneDNN's kernel runs the rows of each length as a
# sub-batch and leaves sub-batches of fewer than 4 rows on average to the plain kernel, faster
# there (devices/mkldnn/README.md, "Speed").
ONEDNN_LENGTHS = {
    "none": None,
    "mixed": np.array([5, 0, 3, 5, 3, 5, 3, 5, 3, 0], "int32"),  # 4 full, 4 shorter, 2 empty
    "full": np.full(10, 5, "int64"),
    "equal": np.full(10, 3, "int32"),
}


@onednn_only
@pytest.mark.parametrize("lengths", list(ONEDNN_LENGTHS))
@pytest.mark.parametrize("layers,dirs", [(1, 1), (1, 2), (2, 2), (3, 1), (3, 2)])
@pytest.mark.parametrize("mode", RNN_MODES)
def test_rnn_onednn(mode, layers, dirs, lengths):
    """devices/mkldnn's kernel (use_mkldnn, float32) against the same references: oneDNN's
    lstm / lbr_gru / vanilla_rnn primitives, the rows of each length as a sub-batch of their own.
    The executor's kernel choice shows oneDNN ran, not the plain kernel after a decline.
    Tolerances as test_rnn_float32's (float32's rounding where 3 layers of RNN_RELU cancel)."""
    ins, outs, attrs = rnn_case(
        mode, layers, dirs, ONEDNN_LENGTHS[lengths], batch=10, dtype="float32"
    )
    t = make("rnn", ins, outs, dict(attrs, use_mkldnn=True))
    t.check_output(atol=1e-5, rtol=1e-5)
    assert ran_onednn(t), kernels_of(t)


@onednn_only
@pytest.mark.parametrize("mode", RNN_MODES)
def test_rnn_onednn_wider(mode):
    """Widths where oneDNN picks other weight formats and GEMMs than at hidden 4 (weights at
    Paddle's initial scale, so that RNN_RELU's values stay in float32's reach), and lengths that
    group several rows each (12, 7: five rows each, 3: four, 0: two)."""
    lengths = np.array([12, 7, 7, 0, 12, 3, 7, 12, 3, 7, 12, 3, 0, 12, 7, 3], "int64")
    ins, outs, attrs = rnn_case(
        mode, 2, 2, lengths, steps=12, batch=16, inputs=20, hidden=32, dtype="float32", k=32**-0.5
    )
    t = make("rnn", ins, outs, dict(attrs, use_mkldnn=True))
    t.check_output(atol=1e-5, rtol=1e-5)
    assert ran_onednn(t), kernels_of(t)


@onednn_only
def test_rnn_onednn_declines_to_the_plain_kernel():
    """What the oneDNN kernel does not take runs the plain kernel, with its results: float64,
    shapes the plain kernel runs faster (an LSTM of 3 rows; lengths that split 3 rows into
    sub-batches of 1), and training with dropout between layers (the plain kernel draws the masks
    the grad reads). A GRU of one row stays on oneDNN (faster there)."""
    ins, outs, attrs = rnn_case("GRU", 2, 2, RNN_LENGTHS["mixed"])
    t = make("rnn", ins, outs, dict(attrs, use_mkldnn=True))
    t.check_output(atol=1e-12, rtol=1e-10)
    assert kernels_of(t) and not ran_onednn(t), kernels_of(t)

    for mode, lengths, batch, onednn in (
        ("LSTM", None, 3, False),
        ("GRU", RNN_LENGTHS["mixed"], 3, False),
        ("GRU", None, 1, True),
    ):
        ins, outs, attrs = rnn_case(mode, 2, 2, lengths, batch=batch, dtype="float32")
        t = make("rnn", ins, outs, dict(attrs, use_mkldnn=True))
        t.check_output(atol=1e-5, rtol=1e-5)
        assert kernels_of(t) and ran_onednn(t) == onednn, (mode, kernels_of(t))

    ins, _, attrs = rnn_case("LSTM", 3, 2, None, dtype="float32")
    attrs.update(is_test=False, dropout_prob=0.4, seed=7, use_mkldnn=True)
    outs = {
        "Out": ins["Input"][:, :, :1] * 0,  # placeholders: compared with the masks' reference
        "State": [("last_%s" % k, s) for k, s in ins["PreState"]],
        "Reserve": np.zeros(1, "float32"),
    }
    t = make("rnn", ins, outs, attrs)
    got = t.forward()
    assert kernels_of(t) and not ran_onednn(t), kernels_of(t)
    want, last = rnn_reference(
        "LSTM",
        ins["Input"].astype("float64"),
        [s.astype("float64") for _, s in ins["PreState"]],
        [w.astype("float64") for _, w in ins["WeightList"]],
        3,
        2,
        4,
        masks=got["Reserve"],
    )
    np.testing.assert_allclose(got["Out"], want, rtol=1e-5, atol=1e-5)
    for a, b in zip(got["State"], last):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def rnn_program_run(ins, attrs, fetch_grads):
    """The rnn op in a program of its own (loss: the mean of Out, and of the final h), run once:
    (Out, final states, the gradients of Input and WeightList when `fetch_grads`, the rnn and
    rnn_grad kernels)."""
    import tide

    main = tide.Program()
    dtype = ins["Input"].dtype.name
    with tide.program_guard(main, tide.Program()):
        block = main.global_block()

        def var(name, arr):
            return block.create_var(name=name, shape=arr.shape, dtype=arr.dtype.name)

        x = var("x", ins["Input"])
        states = [var(n, a) for n, a in ins["PreState"]]
        weights = [var(n, a) for n, a in ins["WeightList"]]
        inputs = {"Input": x, "PreState": states, "WeightList": weights}
        if "SequenceLength" in ins:
            inputs["SequenceLength"] = var("lengths", ins["SequenceLength"])
        out = block.create_var(name="out", dtype=dtype)
        last = [block.create_var(name="last_" + k, dtype=dtype) for k in "hc"[: len(states)]]
        reserve = block.create_var(name="reserve", dtype=dtype)
        block.append_op(
            "rnn",
            inputs=inputs,
            outputs={"Out": out, "State": last, "Reserve": reserve},
            attrs=attrs,
        )
        if fetch_grads:
            loss = tide.layers.elementwise_add(tide.layers.mean(out), tide.layers.mean(last[0]))
            tide.append_backward(loss)
    feed = {"x": ins["Input"]}
    feed.update(dict(ins["PreState"]))
    feed.update(dict(ins["WeightList"]))
    if "SequenceLength" in ins:
        feed["lengths"] = ins["SequenceLength"]
    names = ["out"] + [v.name for v in last]
    if fetch_grads:
        names += ["x@GRAD"] + [n + "@GRAD" for n, _ in ins["WeightList"]]
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        got = exe.run(main, feed=feed, fetch_list=names)
    kernels = [(op, k) for op, k in exe.last_run_info()["kernels"] if op.startswith("rnn")]
    return got, kernels


@onednn_only
@pytest.mark.parametrize("mode", RNN_MODES)
def test_rnn_onednn_forward_of_a_training_program(mode):
    """Training without dropout (is_test false, dropout_prob 0): oneDNN runs the forward (Reserve
    left empty, as the plain kernel leaves it), the plain rnn_grad the backward; Out and the
    states match the reference, the gradients those of the plain kernels alone."""
    ins, outs, attrs = rnn_case(mode, 2, 2, ONEDNN_LENGTHS["mixed"], batch=10, dtype="float32")
    attrs.update(is_test=False, dropout_prob=0.0)
    plain, plain_kernels = rnn_program_run(ins, attrs, True)
    got, kernels = rnn_program_run(ins, dict(attrs, use_mkldnn=True), True)
    assert [o for o, _ in kernels] == ["rnn", "rnn_grad"], kernels
    assert "mkldnn" in kernels[0][1] and not any("mkldnn" in k for _, k in plain_kernels)
    n = len(ins["PreState"])
    np.testing.assert_allclose(got[0], outs["Out"], rtol=1e-5, atol=1e-5)
    for a, (_, b) in zip(got[1 : 1 + n], outs["State"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    for a, b in zip(got[1 + n :], plain[1 + n :]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


RNN_GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}


@pytest.mark.parametrize(
    "layers,dirs,lengths", [(1, 1, None), (2, 2, np.array([4, 0, 2], "int32"))]
)
@pytest.mark.parametrize("mode", RNN_MODES)
def test_rnn_grad(mode, layers, dirs, lengths):
    """Input's, the initial states' and every weight's gradient, from a loss over Out and the
    final states, by finite differences in float64."""
    ins, outs, attrs = rnn_case(mode, layers, dirs, lengths, steps=4, inputs=3, hidden=2)
    t = make("rnn", ins, outs, attrs)
    t.check_output(atol=1e-12, rtol=1e-10)
    t.check_grad(["Input", "PreState", "WeightList"], ["Out", "State"], **RNN_GRAD)


def test_rnn_grad_from_out_alone():
    """A loss that reads Out only: the final states' gradients are zero."""
    ins, outs, attrs = rnn_case("LSTM", 2, 2, np.array([3, 1, 0], "int32"), steps=3, hidden=2)
    make("rnn", ins, outs, attrs).check_grad(["Input", "PreState", "WeightList"], "Out", **RNN_GRAD)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_rnn_training_dropout(mode):
    """Training with dropout_prob: layer l > 0 reads the layer below's output times a mask of 0
    or 1 / (1 - p) (upscale_in_train), kept in Reserve for the grad; a fixed seed repeats it."""
    layers, dirs, hidden, p = 3, 2, 2, 0.4
    ins, _, attrs = rnn_case(mode, layers, dirs, None, steps=4, hidden=hidden)
    attrs.update(is_test=False, dropout_prob=p, seed=7)
    outs = {
        "Out": ins["Input"][:, :, :1] * 0,  # placeholders: compared with the masks' reference
        "State": [("last_%s" % k, s) for k, s in ins["PreState"]],
        "Reserve": np.zeros(1),
        "DropoutState": np.zeros(1, "uint8"),
    }
    t = make("rnn", ins, outs, attrs)
    got = t.forward()
    masks = got["Reserve"]
    assert masks.shape == (layers - 1, 4, 3, dirs * hidden)
    assert (
        set(np.unique(masks)) <= {0.0, 1 / (1 - float(np.float32(p)))}
        and 0 < (masks == 0).mean() < 1
    )
    want, last = rnn_reference(
        mode,
        ins["Input"],
        [s for _, s in ins["PreState"]],
        [w for _, w in ins["WeightList"]],
        layers,
        dirs,
        hidden,
        masks=masks,
    )
    np.testing.assert_allclose(got["Out"], want, rtol=1e-10, atol=1e-12)
    for a, b in zip(got["State"], last):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(got["DropoutState"], (masks[-1] != 0).astype("uint8"))
    np.testing.assert_array_equal(t.forward()["Reserve"], masks)  # the seed repeats the masks
    t.outputs["Out"], t.outputs["State"] = want, [("last_%s" % k, s) for k, s in zip("hc", last)]
    t.check_grad(["Input", "WeightList"], ["Out", "State"], **RNN_GRAD)


def rnn_error(mode="LSTM", edit=None, match=""):
    import tide

    ins, outs, attrs = rnn_case(mode, 2, 2, None)
    if edit:
        edit(ins, attrs)
    with pytest.raises(tide.TideError, match=match):
        make("rnn", ins, outs, attrs).check_output()


def test_rnn_refuses_a_weight_list_of_the_wrong_length():
    rnn_error(
        edit=lambda ins, _: ins.update(WeightList=ins["WeightList"][:-1]),
        match=r"rnn': WeightList has 15 tensors but LSTM with 2 layer\(s\) and 2 direction\(s\) "
        "needs 16",
    )


def test_rnn_refuses_a_weight_of_the_wrong_shape():
    def edit(ins, _):
        ins["WeightList"][6] = ("param_6", rand(16, 4))  # layer 1's backward weight_ih

    rnn_error(
        edit=edit,
        match=r"rnn': WeightList\[6\] \('param_6', weight_ih of layer 1 backward\) has dims "
        r"\[16, 4\] but must be \[16, 8\] \(LSTM: 4 gates of hidden_size 4\)",
    )


def test_rnn_refuses_states_of_the_wrong_dims_or_count():
    def edit(ins, _):
        ins["PreState"][1] = ("pre_c", rand(4, 2, 4))

    rnn_error(
        edit=edit,
        match=r"PreState\[1\] \('pre_c'\) has dims \[4, 2, 4\] but must be \[4, 3, 4\]",
    )
    rnn_error(
        edit=lambda ins, _: ins.update(PreState=ins["PreState"][:1]),
        match=r"PreState has 1 tensor\(s\) but LSTM needs 2 \(h and c\)",
    )


def test_rnn_refuses_lengths_past_the_steps():
    rnn_error(
        edit=lambda ins, _: ins.update(SequenceLength=np.array([5, 6, 1], "int32")),
        match=r"SequenceLength \('sequencelength_in'\)\[1\] = 6 is outside \[0, T\] = \[0, 5\]",
    )


# --- reduce_* with Paddle 2.x's in_dtype / out_dtype (paddle.mean over nn.LSTM's output) -------


def test_reduce_takes_paddle_dtype_attributes():
    """-1 (or X's own type) reduces as before; another type is refused, naming it."""
    import tide

    x = rand(2, 3, 4)
    for dtypes in ({"in_dtype": -1, "out_dtype": -1}, {"in_dtype": 6, "out_dtype": 6}):
        t = make("reduce_mean", {"X": x}, {"Out": x.mean(axis=1)}, dict(dim=[1], **dtypes))
        t.check_output()
        t.check_grad(["X"], "Out", **GRAD)
    with pytest.raises(
        tide.TideError, match="reduce_mean': out_dtype int64 differs from X's float64"
    ):
        make(
            "reduce_mean", {"X": x}, {"Out": x.mean(axis=1)}, {"dim": [1], "out_dtype": 3}
        ).check_output()


def test_rnn_trains_with_constant_initial_states():
    """As nn.LSTM builds it: initial states from constants (no gradient), weights trained, a loss
    over Out alone. The grad op leaves PreState's gradients out and gives the weights' gradients
    the same values as when every input takes one."""
    import tide

    ins, _, attrs = rnn_case("LSTM", 2, 2, np.array([5, 0, 3], "int64"), hidden=2)

    def grads(states_trainable):
        main = tide.Program()
        with tide.program_guard(main, tide.Program()):
            block = main.global_block()

            def var(name, arr, trainable):
                return block.create_var(
                    name=name, shape=arr.shape, dtype=arr.dtype.name, stop_gradient=not trainable
                )

            x = var("x", ins["Input"], True)
            states = [var(n, a, states_trainable) for n, a in ins["PreState"]]
            weights = [var(n, a, True) for n, a in ins["WeightList"]]
            lengths = var("lengths", ins["SequenceLength"], False)
            out = block.create_var(name="out", dtype="float64")
            last = [block.create_var(name="last_" + k, dtype="float64") for k in "hc"]
            block.append_op(
                "rnn",
                inputs={
                    "Input": x,
                    "PreState": states,
                    "WeightList": weights,
                    "SequenceLength": lengths,
                },
                outputs={"Out": out, "State": last},
                attrs=attrs,
            )
            loss = tide.layers.mean(out)
            tide.append_backward(loss)
        feed = {"x": ins["Input"], "lengths": ins["SequenceLength"]}
        feed.update(dict(ins["PreState"]))
        feed.update(dict(ins["WeightList"]))
        names = ["x@GRAD"] + [n + "@GRAD" for n, _ in ins["WeightList"]]
        if states_trainable:
            names += [n + "@GRAD" for n, _ in ins["PreState"]]
        else:
            assert not any(v.endswith("pre_h@GRAD") for v in block.vars)
        with tide.scope_guard(tide.Scope()):
            return tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=names)

    partial, full = grads(False), grads(True)
    assert len(full) == len(partial) + 2
    for a, b in zip(partial, full):
        np.testing.assert_array_equal(a, b)
    assert np.abs(partial[1]).sum() > 0
