"""Op tests of the recurrent ops of the ops_sequence pack (lstm, gru, lstm_unit, gru_unit) and
sequence_conv: outputs against numpy references that run the recurrence one sequence at a time in
float64 (independent of the kernels' SequenceToBatch layout), float32 and float64; gradients of
every input (weights, biases, initial states included) against central finite differences;
peepholes, is_reverse, origin_mode and every activation; sequences of length 1, batches where all
lengths differ and where they are equal; bad input gives an error naming the op and the variable;
and the Fluid-named layers build and run."""

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
# float32 finite differences are coarse: looser tolerance, bigger step.
GRAD_TOL = {"float32": (0.03, 0.01), "float64": (1e-4, 1e-5)}
ACTS = ["sigmoid", "tanh", "relu", "identity"]
# Lengths: all different (with a length-1 sequence), all equal, only length 1.
LENGTHS = {"different": [3, 1, 4, 2], "equal": [3, 3, 3], "ones": [1, 1]}


def weight(w):
    """Weight's input as a variable named w_in: OpTest keeps every feed named weight_* (its loss
    weights) out of the gradients."""
    return [("w_in", w)]


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def act(name, x):
    return {
        "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)),
        "tanh": np.tanh,
        "relu": lambda v: np.maximum(v, 0.0),
        "identity": lambda v: v,
    }[name](x)


def offsets(lengths):
    return [0] + list(np.cumsum(lengths).astype(int))


def steps(lengths, s, reverse):
    """The rows of sequence s in the order the recurrence visits them."""
    o = offsets(lengths)
    rows = list(range(o[s], o[s + 1]))
    return rows[::-1] if reverse else rows


def rand(rng, shape, dtype, scale=0.5):
    return rng.uniform(-scale, scale, shape).astype(dtype)


def check_lod_rejected(op_type, inputs, outputs, attrs):
    """A LoD that does not fit its tensor's rows never reaches the op: the feed rejects it."""
    with pytest.raises(Exception, match="LoD.*rows"):
        make(op_type, inputs, outputs, attrs).check_output()


def check_error(op_type, inputs, outputs, attrs, *words):
    """Running the op fails with an error that names the op and every word."""
    with pytest.raises(Exception) as info:
        make(op_type, inputs, outputs, attrs).check_output()
    msg = str(info.value)
    for w in (op_type,) + words:
        assert w in msg, "error %r does not mention %r" % (msg, w)


# ---------------------------------------------------------------------------------------------
# lstm
def lstm_ref(
    x,
    lengths,
    w,
    b,
    h0=None,
    c0=None,
    peep=True,
    reverse=False,
    gate="sigmoid",
    cell="tanh",
    cand="tanh",
):
    x, w, b = x.astype(np.float64), w.astype(np.float64), b.astype(np.float64).reshape(-1)
    d = w.shape[0]
    hidden, cellv = np.zeros((x.shape[0], d)), np.zeros((x.shape[0], d))
    wic, wfc, woc = (b[4 * d : 5 * d], b[5 * d : 6 * d], b[6 * d :]) if peep else (0, 0, 0)
    for s in range(len(lengths)):
        h = np.zeros(d) if h0 is None else h0[s].astype(np.float64)
        c = np.zeros(d) if c0 is None else c0[s].astype(np.float64)
        for t in steps(lengths, s, reverse):
            g = x[t] + b[: 4 * d] + h @ w  # columns [c~, i, f, o]
            ct = act(cand, g[:d])
            i = act(gate, g[d : 2 * d] + c * wic)
            f = act(gate, g[2 * d : 3 * d] + c * wfc)
            c = f * c + i * ct
            o = act(gate, g[3 * d :] + c * woc)
            h = o * act(cell, c)
            hidden[t], cellv[t] = h, c
    return hidden, cellv


def lstm_case(dtype, lengths, d=3, peep=True, reverse=False, init=False, acts=None, seed=0):
    rng = np.random.RandomState(seed)
    total, n = sum(lengths), len(lengths)
    x = rand(rng, (total, 4 * d), dtype)
    w = rand(rng, (d, 4 * d), dtype)
    b = rand(rng, (1, (7 if peep else 4) * d), dtype)
    gate, cell, cand = acts or ("sigmoid", "tanh", "tanh")
    inputs = {"Input": (x, [lengths]), "Weight": weight(w), "Bias": b}
    h0 = c0 = None
    if init:
        h0, c0 = rand(rng, (n, d), dtype), rand(rng, (n, d), dtype)
        inputs["H0"], inputs["C0"] = h0, c0
    hidden, cellv = lstm_ref(x, lengths, w, b, h0, c0, peep, reverse, gate, cell, cand)
    outputs = {
        "Hidden": (hidden.astype(dtype), [lengths]),
        "Cell": (cellv.astype(dtype), [lengths]),
        "BatchGate": None,
        "BatchCellPreAct": None,
    }
    attrs = {
        "use_peepholes": peep,
        "is_reverse": reverse,
        "gate_activation": gate,
        "cell_activation": cell,
        "candidate_activation": cand,
    }
    return make("lstm", inputs, outputs, attrs)


def tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-5} if dtype == "float32" else {"atol": 1e-12, "rtol": 1e-12}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("peep", [True, False])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("lengths", sorted(LENGTHS))
def test_lstm(dtype, peep, reverse, lengths):
    lstm_case(dtype, LENGTHS[lengths], peep=peep, reverse=reverse).check_output(**tol(dtype))
    lstm_case(dtype, LENGTHS[lengths], peep=peep, reverse=reverse, init=True).check_output(
        **tol(dtype)
    )


# Every activation in every slot (gate, cell, candidate).
ACT_TRIPLES = [
    ("sigmoid", "tanh", "tanh"),
    ("tanh", "relu", "identity"),
    ("relu", "identity", "sigmoid"),
    ("identity", "sigmoid", "relu"),
]


@pytest.mark.parametrize("acts", ACT_TRIPLES)
def test_lstm_activations(acts):
    lstm_case("float64", LENGTHS["different"], acts=acts, init=True).check_output(**tol("float64"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("peep", [True, False])
@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_grad(dtype, peep, reverse):
    t = lstm_case(dtype, LENGTHS["different"], d=2, peep=peep, reverse=reverse, init=True)
    t.check_grad(["Input", "Weight", "Bias", "H0", "C0"], ["Hidden", "Cell"], **grad_args(dtype))


@pytest.mark.parametrize("acts", ACT_TRIPLES[1:])
def test_lstm_grad_activations(acts):
    t = lstm_case("float64", [2, 3], d=2, acts=acts, init=True, seed=3)
    t.check_grad(
        ["Input", "Weight", "Bias", "H0", "C0"], ["Hidden", "Cell"], **grad_args("float64")
    )


@pytest.mark.parametrize("given", ["H0", "C0"])
def test_lstm_one_initial_state_and_an_empty_sequence(given):
    """Only H0 or only C0 (the other starts at zero); an empty sequence gets no rows and its
    initial state's gradient is zero."""
    lengths, d = [2, 0, 3], 2
    t = lstm_case("float64", lengths, d=d, init=True, seed=7)
    dropped = "C0" if given == "H0" else "H0"
    del t.inputs[dropped]
    x, w, b = t.inputs["Input"][0], t.inputs["Weight"][0][1], t.inputs["Bias"]
    hidden, cellv = lstm_ref(x, lengths, w, b, t.inputs.get("H0"), t.inputs.get("C0"))
    t.outputs["Hidden"], t.outputs["Cell"] = (hidden, [lengths]), (cellv, [lengths])
    t.check_output(**tol("float64"))
    t.check_grad(["Input", "Weight", "Bias", given], ["Hidden", "Cell"], **grad_args("float64"))


def test_lstm_grad_without_initial_state_equal_lengths():
    t = lstm_case("float64", LENGTHS["equal"], d=2, seed=5)
    t.check_grad(["Input", "Weight", "Bias"], ["Hidden"], **grad_args("float64"))


def test_lstm_errors():
    rng = np.random.RandomState(0)
    d, lengths = 2, [2, 3]
    x, w, b = (
        rand(rng, (5, 4 * d), "float32"),
        rand(rng, (d, 4 * d), "float32"),
        rand(rng, (1, 7 * d), "float32"),
    )
    outs = {
        "Hidden": np.zeros((5, d), "float32"),
        "Cell": None,
        "BatchGate": None,
        "BatchCellPreAct": None,
    }
    check_lod_rejected("lstm", {"Input": (x, [[2, 2]]), "Weight": weight(w), "Bias": b}, outs, {})
    check_error(
        "lstm",
        {"Input": (x, [[1, 1], [2, 3]]), "Weight": weight(w), "Bias": b},
        outs,
        {},
        "Input",
        "input_in",
        "2-level",
    )
    check_error("lstm", {"Input": x, "Weight": weight(w), "Bias": b}, outs, {}, "Input", "no LoD")
    check_error(
        "lstm",
        {"Input": (x, [lengths]), "Weight": weight(rand(rng, (d, 3 * d), "float32")), "Bias": b},
        outs,
        {},
        "Weight",
        "w_in",
    )
    check_error(
        "lstm",
        {"Input": (x, [lengths]), "Weight": weight(w), "Bias": rand(rng, (1, 4 * d), "float32")},
        outs,
        {"use_peepholes": True},
        "Bias",
        "bias_in",
        "7D",
    )
    check_error(
        "lstm",
        {
            "Input": (x, [lengths]),
            "Weight": weight(w),
            "Bias": b,
            "H0": rand(rng, (3, d), "float32"),
        },
        outs,
        {},
        "H0",
        "h0_in",
    )
    check_error(
        "lstm",
        {"Input": (x, [lengths]), "Weight": weight(w), "Bias": b},
        outs,
        {"gate_activation": "softplus"},
        "gate_activation",
    )


# ---------------------------------------------------------------------------------------------
# gru
def gru_ref(
    x, lengths, w, b=None, h0=None, reverse=False, gate="sigmoid", cand="tanh", origin=False
):
    x, w = x.astype(np.float64), w.astype(np.float64)
    d = w.shape[0]
    # Fluid's storage: W_ur [D, 2D] in the first 2D*D elements, W_c [D, D] in the rest.
    w_ur, w_c = (
        w.reshape(-1)[: 2 * d * d].reshape(d, 2 * d),
        w.reshape(-1)[2 * d * d :].reshape(d, d),
    )
    bias = np.zeros(3 * d) if b is None else b.astype(np.float64).reshape(-1)
    hidden = np.zeros((x.shape[0], d))
    for s in range(len(lengths)):
        h = np.zeros(d) if h0 is None else h0[s].astype(np.float64)
        for t in steps(lengths, s, reverse):
            g = x[t] + bias
            ur = act(gate, g[: 2 * d] + h @ w_ur)
            u, r = ur[:d], ur[d:]
            c = act(cand, g[2 * d :] + (r * h) @ w_c)
            h = u * h + (1 - u) * c if origin else (1 - u) * h + u * c
            hidden[t] = h
    return hidden


def gru_case(
    dtype,
    lengths,
    d=3,
    reverse=False,
    init=False,
    bias=True,
    origin=False,
    acts=("sigmoid", "tanh"),
    seed=0,
):
    rng = np.random.RandomState(seed)
    total, n = sum(lengths), len(lengths)
    x, w = rand(rng, (total, 3 * d), dtype), rand(rng, (d, 3 * d), dtype)
    inputs = {"Input": (x, [lengths]), "Weight": weight(w)}
    b = h0 = None
    if bias:
        b = inputs["Bias"] = rand(rng, (1, 3 * d), dtype)
    if init:
        h0 = inputs["H0"] = rand(rng, (n, d), dtype)
    hidden = gru_ref(x, lengths, w, b, h0, reverse, acts[0], acts[1], origin)
    outputs = {
        "Hidden": (hidden.astype(dtype), [lengths]),
        "BatchGate": None,
        "BatchResetHiddenPrev": None,
        "BatchHidden": None,
    }
    attrs = {
        "is_reverse": reverse,
        "gate_activation": acts[0],
        "activation": acts[1],
        "origin_mode": origin,
    }
    return make("gru", inputs, outputs, attrs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("origin", [False, True])
@pytest.mark.parametrize("lengths", sorted(LENGTHS))
def test_gru(dtype, reverse, origin, lengths):
    for init, bias in ((False, True), (True, False)):
        gru_case(
            dtype, LENGTHS[lengths], reverse=reverse, origin=origin, init=init, bias=bias
        ).check_output(**tol(dtype))


@pytest.mark.parametrize(
    "acts", [("sigmoid", "tanh"), ("tanh", "relu"), ("relu", "identity"), ("identity", "sigmoid")]
)
def test_gru_activations(acts):
    gru_case("float64", LENGTHS["different"], acts=acts, init=True).check_output(**tol("float64"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("origin", [False, True])
def test_gru_grad(dtype, reverse, origin):
    t = gru_case(dtype, LENGTHS["different"], d=2, reverse=reverse, origin=origin, init=True)
    t.check_grad(["Input", "Weight", "Bias", "H0"], ["Hidden"], **grad_args(dtype))


@pytest.mark.parametrize("acts", [("tanh", "relu"), ("relu", "identity"), ("identity", "sigmoid")])
def test_gru_grad_activations(acts):
    t = gru_case("float64", [2, 3], d=2, acts=acts, init=True, seed=4)
    t.check_grad(["Input", "Weight", "Bias", "H0"], ["Hidden"], **grad_args("float64"))


def test_gru_with_an_empty_sequence():
    t = gru_case("float64", [2, 0, 3], d=2, init=True, seed=8)
    t.check_output(**tol("float64"))
    t.check_grad(["Input", "Weight", "Bias", "H0"], ["Hidden"], **grad_args("float64"))


def test_gru_grad_without_bias_and_initial_state():
    t = gru_case("float64", LENGTHS["equal"], d=2, bias=False, seed=6)
    t.check_grad(["Input", "Weight"], ["Hidden"], **grad_args("float64"))


def test_gru_errors():
    rng = np.random.RandomState(0)
    d = 2
    x, w = rand(rng, (5, 3 * d), "float64"), rand(rng, (d, 3 * d), "float64")
    outs = {
        "Hidden": np.zeros((5, d)),
        "BatchGate": None,
        "BatchResetHiddenPrev": None,
        "BatchHidden": None,
    }
    check_lod_rejected("gru", {"Input": (x, [[4, 2]]), "Weight": weight(w)}, outs, {})
    check_error(
        "gru",
        {"Input": (x, [[1, 1], [2, 3]]), "Weight": weight(w)},
        outs,
        {},
        "Input",
        "input_in",
        "2-level",
    )
    check_error("gru", {"Input": x, "Weight": weight(w)}, outs, {}, "Input", "no LoD")
    check_error(
        "gru",
        {"Input": (x, [[2, 3]]), "Weight": weight(rand(rng, (d, 4 * d), "float64"))},
        outs,
        {},
        "Weight",
        "w_in",
    )
    check_error(
        "gru",
        {"Input": (x, [[2, 3]]), "Weight": weight(w), "Bias": rand(rng, (1, 2 * d), "float64")},
        outs,
        {},
        "Bias",
        "bias_in",
    )
    check_error(
        "gru",
        {"Input": (x, [[2, 3]]), "Weight": weight(w), "H0": rand(rng, (1, d), "float64")},
        outs,
        {},
        "H0",
        "h0_in",
    )


# ---------------------------------------------------------------------------------------------
# lstm_unit
def lstm_unit_ref(x, c_prev, forget_bias):
    x, c_prev = x.astype(np.float64), c_prev.astype(np.float64)
    d = c_prev.shape[1]
    i, f = act("sigmoid", x[:, :d]), act("sigmoid", x[:, d : 2 * d] + forget_bias)
    o, g = act("sigmoid", x[:, 2 * d : 3 * d]), np.tanh(x[:, 3 * d :])
    c = f * c_prev + i * g
    return c, o * np.tanh(c)


def lstm_unit_case(dtype, n=3, d=4, forget_bias=0.5, seed=0):
    rng = np.random.RandomState(seed)
    x, c_prev = rand(rng, (n, 4 * d), dtype, 1.0), rand(rng, (n, d), dtype, 1.0)
    c, h = lstm_unit_ref(x, c_prev, forget_bias)
    return make(
        "lstm_unit",
        {"X": x, "C_prev": c_prev},
        {"C": c.astype(dtype), "H": h.astype(dtype)},
        {"forget_bias": forget_bias},
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("forget_bias", [0.0, 1.0])
def test_lstm_unit(dtype, forget_bias):
    lstm_unit_case(dtype, forget_bias=forget_bias).check_output(**tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lstm_unit_grad(dtype):
    lstm_unit_case(dtype, n=2, d=3).check_grad(["X", "C_prev"], ["C", "H"], **grad_args(dtype))
    lstm_unit_case(dtype, n=2, d=3, seed=1).check_grad(["X", "C_prev"], ["H"], **grad_args(dtype))


def test_lstm_unit_errors():
    rng = np.random.RandomState(0)
    check_error(
        "lstm_unit",
        {"X": rand(rng, (3, 10), "float32"), "C_prev": rand(rng, (3, 2), "float32")},
        {"C": np.zeros((3, 2), "float32"), "H": None},
        {},
        "X",
        "x_in",
    )
    check_error(
        "lstm_unit",
        {"X": rand(rng, (3, 8), "float32"), "C_prev": rand(rng, (2, 2), "float32")},
        {"C": np.zeros((3, 2), "float32"), "H": None},
        {},
        "X",
        "x_in",
    )


# ---------------------------------------------------------------------------------------------
# gru_unit
ACT_CODE = {"identity": 0, "sigmoid": 1, "tanh": 2, "relu": 3}


def gru_unit_ref(x, hp, w, b, gate, cand, origin):
    x, hp, w = x.astype(np.float64), hp.astype(np.float64), w.astype(np.float64)
    d = hp.shape[1]
    w_ur, w_c = (
        w.reshape(-1)[: 2 * d * d].reshape(d, 2 * d),
        w.reshape(-1)[2 * d * d :].reshape(d, d),
    )
    g = x + (0 if b is None else b.astype(np.float64))
    ur = act(gate, g[:, : 2 * d] + hp @ w_ur)
    u, r = ur[:, :d], ur[:, d:]
    rhp = r * hp
    c = act(cand, g[:, 2 * d :] + rhp @ w_c)
    h = u * hp + (1 - u) * c if origin else (1 - u) * hp + u * c
    return np.concatenate([u, r, c], axis=1), rhp, h


def gru_unit_case(dtype, n=3, d=3, bias=True, origin=False, acts=("sigmoid", "tanh"), seed=0):
    rng = np.random.RandomState(seed)
    x, hp, w = rand(rng, (n, 3 * d), dtype), rand(rng, (n, d), dtype), rand(rng, (d, 3 * d), dtype)
    inputs = {"Input": x, "HiddenPrev": hp, "Weight": weight(w)}
    b = None
    if bias:
        b = inputs["Bias"] = rand(rng, (1, 3 * d), dtype)
    gate, rhp, h = gru_unit_ref(x, hp, w, b, acts[0], acts[1], origin)
    outputs = {
        "Gate": gate.astype(dtype),
        "ResetHiddenPrev": rhp.astype(dtype),
        "Hidden": h.astype(dtype),
    }
    attrs = {
        "gate_activation": ACT_CODE[acts[0]],
        "activation": ACT_CODE[acts[1]],
        "origin_mode": origin,
    }
    return make("gru_unit", inputs, outputs, attrs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("origin", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_unit(dtype, origin, bias):
    gru_unit_case(dtype, origin=origin, bias=bias).check_output(**tol(dtype))


@pytest.mark.parametrize("acts", [("tanh", "relu"), ("relu", "identity"), ("identity", "sigmoid")])
def test_gru_unit_activations(acts):
    gru_unit_case("float64", acts=acts).check_output(**tol("float64"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("origin", [False, True])
def test_gru_unit_grad(dtype, origin):
    t = gru_unit_case(dtype, n=2, d=2, origin=origin)
    t.check_grad(["Input", "HiddenPrev", "Weight", "Bias"], ["Hidden"], **grad_args(dtype))


def test_gru_unit_errors():
    rng = np.random.RandomState(0)
    outs = {"Gate": None, "ResetHiddenPrev": None, "Hidden": np.zeros((2, 2))}
    hp, w = rand(rng, (2, 2), "float64"), rand(rng, (2, 6), "float64")
    check_error(
        "gru_unit",
        {"Input": rand(rng, (2, 5), "float64"), "HiddenPrev": hp, "Weight": weight(w)},
        outs,
        {},
        "Input",
        "input_in",
    )
    check_error(
        "gru_unit",
        {
            "Input": rand(rng, (2, 6), "float64"),
            "HiddenPrev": hp,
            "Weight": weight(rand(rng, (3, 6), "float64")),
        },
        outs,
        {},
        "Weight",
        "w_in",
    )
    check_error(
        "gru_unit",
        {"Input": rand(rng, (2, 6), "float64"), "HiddenPrev": hp, "Weight": weight(w)},
        outs,
        {"activation": 7},
        "activation",
    )


# ---------------------------------------------------------------------------------------------
# sequence_conv
def seq_conv_ref(x, lengths, filt, start, length, pad=None):
    """Fluid's test_seq_conv formulation: per context slot j, a shifted block copy of each
    sequence with the positions outside it from the padding rows (or zero)."""
    x = x.astype(np.float64)
    m = x.shape[1]
    up = max(0, -start)
    col = np.zeros((x.shape[0], length * m))
    o = offsets(lengths)
    for i in range(len(lengths)):
        for j in range(length):
            in_begin, in_end = o[i] + start + j, o[i + 1] + start + j
            out_begin, out_end = o[i], o[i + 1]
            if in_begin < o[i]:
                n = min(o[i] - in_begin, o[i + 1] - o[i])
                if pad is not None:
                    col[o[i] : o[i] + n, j * m : (j + 1) * m] = pad[j : j + n]
                out_begin, in_begin = o[i] + n, o[i]
            if in_end > o[i + 1]:
                n = min(in_end - o[i + 1], o[i + 1] - o[i])
                if pad is not None:
                    col[o[i + 1] - n : o[i + 1], j * m : (j + 1) * m] = pad[
                        up + start + j - n : up + start + j
                    ]
                in_end, out_end = o[i + 1], o[i + 1] - n
            if in_end > in_begin:
                col[out_begin:out_end, j * m : (j + 1) * m] += x[in_begin:in_end]
    return col @ filt.astype(np.float64)


def seq_conv_case(dtype, lengths, start=-1, length=3, trainable=False, m=2, n=3, seed=0):
    rng = np.random.RandomState(seed)
    x, filt = rand(rng, (sum(lengths), m), dtype, 1.0), rand(rng, (length * m, n), dtype, 1.0)
    inputs = {"X": (x, [lengths]), "Filter": filt}
    pad = None
    if trainable:
        pad = inputs["PaddingData"] = rand(
            rng, (max(0, -start) + max(0, start + length - 1), m), dtype, 1.0
        )
    out = seq_conv_ref(x, lengths, filt, start, length, pad)
    attrs = {
        "contextStart": start,
        "contextLength": length,
        "contextStride": 1,
        "paddingTrainable": trainable,
    }
    return make("sequence_conv", inputs, {"Out": (out.astype(dtype), [lengths])}, attrs)


CONV_WINDOWS = [(-1, 3), (0, 3), (-3, 2), (1, 2), (-2, 5)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("window", CONV_WINDOWS)
@pytest.mark.parametrize("trainable", [False, True])
@pytest.mark.parametrize("lengths", sorted(LENGTHS))
def test_sequence_conv(dtype, window, trainable, lengths):
    seq_conv_case(dtype, LENGTHS[lengths], window[0], window[1], trainable).check_output(
        **tol(dtype)
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("window", [(-1, 3), (-2, 5), (1, 2)])
def test_sequence_conv_grad(dtype, window):
    t = seq_conv_case(dtype, [3, 1, 2], window[0], window[1], trainable=True)
    t.check_grad(["X", "Filter", "PaddingData"], ["Out"], **grad_args(dtype))
    t = seq_conv_case(dtype, [3, 1, 2], window[0], window[1], trainable=False, seed=2)
    t.check_grad(["X", "Filter"], ["Out"], **grad_args(dtype))


def test_sequence_conv_errors():
    rng = np.random.RandomState(0)
    x = rand(rng, (5, 2), "float32")
    out = {"Out": np.zeros((5, 3), "float32")}
    attrs = {"contextStart": -1, "contextLength": 3}
    check_lod_rejected(
        "sequence_conv", {"X": (x, [[2, 2]]), "Filter": rand(rng, (6, 3), "float32")}, out, attrs
    )
    check_error(
        "sequence_conv",
        {"X": (x, [[1, 1], [2, 3]]), "Filter": rand(rng, (6, 3), "float32")},
        out,
        attrs,
        "X",
        "x_in",
        "2-level",
    )
    check_error(
        "sequence_conv", {"X": x, "Filter": rand(rng, (6, 3), "float32")}, out, attrs, "X", "no LoD"
    )
    check_error(
        "sequence_conv",
        {"X": (x, [[2, 3]]), "Filter": rand(rng, (4, 3), "float32")},
        out,
        attrs,
        "Filter",
        "filter_in",
    )
    check_error(
        "sequence_conv",
        {"X": (x, [[2, 3]]), "Filter": rand(rng, (6, 3), "float32")},
        out,
        dict(attrs, paddingTrainable=True),
        "PaddingData",
    )
    check_error(
        "sequence_conv",
        {
            "X": (x, [[2, 3]]),
            "Filter": rand(rng, (6, 3), "float32"),
            "PaddingData": rand(rng, (3, 2), "float32"),
        },
        out,
        dict(attrs, paddingTrainable=True),
        "PaddingData",
        "paddingdata_in",
    )
    check_error(
        "sequence_conv",
        {"X": (x, [[2, 3]]), "Filter": rand(rng, (6, 3), "float32")},
        out,
        dict(attrs, contextStride=2),
        "contextStride",
    )


# ---------------------------------------------------------------------------------------------
# layers
def run(main, startup, feed, fetch):
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        exe.run(startup)
        return exe.run(main, feed=feed, fetch_list=fetch, return_numpy=False)


def lod_tensor(arr, lengths):
    t = tide.LoDTensor(arr)
    t.set_recursive_sequence_lengths([lengths])
    return t


def test_layers_build_run_and_train():
    """dynamic_lstm, dynamic_gru, sequence_conv, lstm_unit and gru_unit with Fluid's arguments:
    shapes and LoD of their outputs, and a few SGD steps lower the loss through all of them."""
    lengths, d = [3, 1, 4], 4
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (sum(lengths), 5)).astype("float32")
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 1
    with tide.program_guard(main, startup), tide.unique_name.guard():
        xv = tide.layers.data(name="x", shape=[5], dtype="float32", lod_level=1)
        conv = tide.layers.sequence_conv(xv, num_filters=6, filter_size=3, act="tanh")
        proj = tide.layers.fc(input=conv, size=4 * d)
        hidden, cell = tide.layers.dynamic_lstm(proj, size=4 * d, use_peepholes=True)
        gru_in = tide.layers.fc(input=hidden, size=3 * d)
        gru = tide.layers.dynamic_gru(gru_in, size=d, is_reverse=True)
        last = tide.layers.sequence_last_step(gru)
        first = tide.layers.sequence_first_step(cell)
        h, c = tide.layers.lstm_unit(last, last, first, forget_bias=1.0)
        h2, _, _ = tide.layers.gru_unit(tide.layers.fc(input=h, size=3 * d), c, size=3 * d)
        loss = tide.layers.mean(tide.layers.square(h2 - 0.5))
        tide.optimizer.SGD(learning_rate=0.5).minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        exe.run(startup)
        losses = []
        for _ in range(20):
            out = exe.run(
                main,
                feed={"x": lod_tensor(x, lengths)},
                fetch_list=[loss, hidden, gru, h2],
                return_numpy=False,
            )
            losses.append(float(out[0].numpy().reshape(-1)[0]))
        assert out[1].numpy().shape == (sum(lengths), d) and out[
            1
        ].recursive_sequence_lengths() == [lengths]
        assert out[2].numpy().shape == (sum(lengths), d) and out[
            2
        ].recursive_sequence_lengths() == [lengths]
        assert out[3].numpy().shape == (len(lengths), d)
    assert losses[-1] < 0.5 * losses[0], losses


def test_layer_argument_errors():
    with tide.program_guard(tide.Program(), tide.Program()):
        xv = tide.layers.data(name="x", shape=[8], dtype="float32", lod_level=1)
        with pytest.raises(ValueError, match="dynamic_lstm"):
            tide.layers.dynamic_lstm(xv, size=6)
        with pytest.raises(ValueError, match="gate_activation"):
            tide.layers.dynamic_lstm(xv, size=8, gate_activation="softplus")
        with pytest.raises(ValueError, match="candidate_activation"):
            tide.layers.dynamic_gru(xv, size=2, candidate_activation="elu")
        with pytest.raises(TypeError, match="sequence_conv"):
            tide.layers.sequence_conv("x", num_filters=2)


def test_dynamic_lstm_dtype_other_than_its_input_is_refused_when_built():
    """dynamic_lstm's weights take `dtype` (Fluid's default float32): a float64 input with it ran
    forward and then failed in sgd (a float64 gradient of a float32 bias)."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data(name="x", shape=[8], dtype="float64", lod_level=1)
        with pytest.raises(ValueError, match="dtype='float64'"):
            tide.layers.dynamic_lstm(x, 8)
        h, c = tide.layers.dynamic_lstm(x, 8, dtype="float64")
        assert h.dtype == c.dtype == "float64"
