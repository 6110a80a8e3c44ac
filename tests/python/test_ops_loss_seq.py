"""Paddle's probability losses and sequence decoding (lossseq): bce_loss, log_loss, nll_loss
(ops_nn) and warpctc, viterbi_decode, gather_tree (ops_sequence); against numpy float64
references (CTC and Viterbi by enumerating every path), gradients by central differences, and
the errors of bad inputs."""

import itertools

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(62)
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64
DTYPES = ["float32", "float64"]


def tol(dtype):
    return {"atol": 1e-5, "rtol": 1e-5} if dtype == "float32" else {"atol": 1e-12, "rtol": 1e-11}


# --- bce_loss ------------------------------------------------------------------------------


def bce(x, label):
    with np.errstate(divide="ignore"):
        return -(
            label * np.maximum(np.log(x), -100) + (1 - label) * np.maximum(np.log(1 - x), -100)
        )


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (7,)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_bce_loss(shape, dtype):
    x = RNG.uniform(0.05, 0.95, shape).astype(dtype)
    label = RNG.uniform(0, 1, shape).astype(dtype)
    want = bce(x.astype("float64"), label.astype("float64"))
    t = make("bce_loss", {"X": x, "Label": label}, {"Out": want.astype(dtype)})
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


def test_bce_loss_clamps_log_at_0_and_1():
    x = np.array([0.0, 1.0, 0.0, 1.0, 0.5])
    label = np.array([1.0, 0.0, 0.0, 1.0, 0.3])
    want = bce(x, label)  # 100 where the true log is -inf, 0 where the term vanishes
    assert want[0] == 100 and want[1] == 100
    make("bce_loss", {"X": x, "Label": label}, {"Out": want}).check_output(atol=1e-12)


def test_bce_loss_errors():
    x = np.full((2, 3), 0.5)
    with pytest.raises(tide.TideError, match=r"bce_loss.*X .*in \[0, 1\].*element 4 is 1\.5"):
        bad = x.copy()
        bad[1, 1] = 1.5
        make("bce_loss", {"X": bad, "Label": x}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match=r"bce_loss.*X .*in \[0, 1\].*is -0\.1"):
        make("bce_loss", {"X": x - 0.6, "Label": x}, {"Out": x}).check_output()
    with pytest.raises(tide.TideError, match=r"bce_loss.*Label .*must have X's dims \[2, 3\]"):
        make("bce_loss", {"X": x, "Label": x[:, :2]}, {"Out": x}).check_output()


# --- log_loss ------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [1e-4, 0.05])
@pytest.mark.parametrize("dtype", DTYPES)
def test_log_loss(epsilon, dtype):
    p = RNG.uniform(0.05, 0.95, (6, 1)).astype(dtype)
    label = (RNG.uniform(0, 1, (6, 1)) > 0.5).astype(dtype)
    label[0] = 0.3  # soft labels are allowed
    e = float(np.float32(epsilon))  # a float32 attribute
    p64, l64 = p.astype("float64"), label.astype("float64")
    want = -l64 * np.log(p64 + e) - (1 - l64) * np.log(1 - p64 + e)
    t = make(
        "log_loss",
        {"Predicted": p, "Labels": label},
        {"Loss": want.astype(dtype)},
        {"epsilon": epsilon},
    )
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["Predicted"], "Loss", **GRAD)


def test_log_loss_errors():
    p = np.full((4, 2), 0.5)
    with pytest.raises(tide.TideError, match=r"log_loss.*Predicted .*must be \[N, 1\].*\[4, 2\]"):
        make("log_loss", {"Predicted": p, "Labels": p}, {"Loss": p}).check_output()
    with pytest.raises(tide.TideError, match=r"log_loss.*Labels .*must have Predicted's dims"):
        make("log_loss", {"Predicted": p[:, :1], "Labels": p[:3, :1]}, {"Loss": p}).check_output()


# --- nll_loss ------------------------------------------------------------------------------


def nll(x, label, weight, ignore_index, reduction):
    """x [N, C, ...], label [N, ...]: numpy float64."""
    c = x.shape[1]
    w = np.ones(c) if weight is None else weight
    keep = label != ignore_index
    safe = np.where(keep, label, 0)
    picked = np.take_along_axis(x, np.expand_dims(safe, 1), axis=1).squeeze(1)
    wl = np.where(keep, w[safe], 0.0)
    out = -picked * wl
    total = wl.sum()
    if reduction == "none":
        return out, 0.0
    s = out.sum()
    if reduction == "mean" and total != 0:
        s /= total
    return np.asarray(s), total


@pytest.mark.parametrize(
    "shape", [(5, 4), (3, 4, 2), (2, 3, 2, 3), (2, 3, 2, 2, 2)], ids=["2d", "3d", "4d", "5d"]
)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_nll_loss(shape, reduction, weighted, dtype):
    x = RNG.uniform(-3, 0, shape).astype(dtype)
    lshape = (shape[0],) + shape[2:]
    label = RNG.randint(0, shape[1], lshape).astype("int64")
    ignore = 1
    label.reshape(-1)[0] = ignore  # one ignored label
    weight = RNG.uniform(0.5, 2, shape[1]).astype(dtype) if weighted else None
    out, total = nll(
        x.astype("float64"),
        label,
        None if weight is None else weight.astype("float64"),
        ignore,
        reduction,
    )
    ins = {"X": x, "Label": label}
    if weighted:
        ins["Weight"] = weight
    attrs = {"ignore_index": ignore, "reduction": reduction}
    outs = {"Out": out.astype(dtype), "Total_weight": np.asarray(total, dtype)}
    t = make("nll_loss", ins, outs, attrs)
    t.check_output(**tol(dtype))
    if dtype == "float64" and len(shape) <= 4:
        t.check_grad(["X"], "Out", **GRAD)


def test_nll_loss_all_ignored_is_zero():
    x = RNG.uniform(-3, 0, (3, 4))
    label = np.full(3, -100, "int64")
    outs = {"Out": np.asarray(0.0), "Total_weight": np.asarray(0.0)}
    make("nll_loss", {"X": x, "Label": label}, outs).check_output(atol=0)


def test_nll_loss_errors():
    x = np.zeros((3, 4))
    outs = {"Out": np.asarray(0.0), "Total_weight": np.asarray(0.0)}
    with pytest.raises(
        tide.TideError, match=r"nll_loss.*Label .*element 1 is 4, outside .*\[0, 4\)"
    ):
        make("nll_loss", {"X": x, "Label": np.array([0, 4, 1])}, outs).check_output()
    with pytest.raises(tide.TideError, match=r"nll_loss.*Label .*must have X's dims \[3, 4\]"):
        make("nll_loss", {"X": x, "Label": np.array([0, 1])}, outs).check_output()
    with pytest.raises(tide.TideError, match=r"nll_loss.*Label .*must be int64, got int32"):
        make("nll_loss", {"X": x, "Label": np.array([0, 1, 2], "int32")}, outs).check_output()
    with pytest.raises(tide.TideError, match=r"nll_loss.*Weight .*must be \[C\] = \[4\]"):
        ins = {"X": x, "Label": np.array([0, 1, 2]), "Weight": np.ones(3)}
        make("nll_loss", ins, outs).check_output()
    with pytest.raises(tide.TideError, match=r"nll_loss.*'reduction' must be .*got 'avg'"):
        make(
            "nll_loss", {"X": x, "Label": np.array([0, 1, 2])}, outs, {"reduction": "avg"}
        ).check_output()
    with pytest.raises(tide.TideError, match=r"nll_loss.*X .*must be \[N, C\]"):
        make("nll_loss", {"X": np.zeros(3), "Label": np.array([0, 1, 2])}, outs).check_output()


# --- warpctc -------------------------------------------------------------------------------


def collapse(path, blank):
    out = []
    for i, c in enumerate(path):
        if c != blank and (i == 0 or c != path[i - 1]):
            out.append(c)
    return out


def ctc_brute(logits, label, blank):
    """-log p(label) and d/d logits by summing over every path (logits [T, C], float64)."""
    t_len, c = logits.shape
    e = np.exp(logits - logits.max(1, keepdims=True))
    y = e / e.sum(1, keepdims=True)
    p = 0.0
    occ = np.zeros((t_len, c))
    for path in itertools.product(range(c), repeat=t_len):
        if collapse(path, blank) != list(label):
            continue
        pp = np.prod(y[np.arange(t_len), path])
        p += pp
        occ[np.arange(t_len), path] += pp
    if p == 0:
        return 0.0, np.zeros((t_len, c))  # warp-ctc's 0 for an infeasible label
    return -np.log(p), y - occ / p


def ctc_case(t_max, lens, label_lens, c, blank, dtype, repeats=False):
    b = len(lens)
    logits = RNG.uniform(-2, 2, (t_max, b, c)).astype(dtype)
    others = [k for k in range(c) if k != blank]
    l_max = max(max(label_lens), 1)
    labels = np.zeros((b, l_max), "int32")
    for i, n in enumerate(label_lens):
        labels[i, :n] = RNG.choice(others, n)
        if repeats and n >= 2:
            labels[i, 1] = labels[i, 0]
    loss = np.zeros((b, 1))
    grad = np.zeros((t_max, b, c))
    for i in range(b):
        li, gi = ctc_brute(
            logits[: lens[i], i].astype("float64"), labels[i, : label_lens[i]], blank
        )
        loss[i, 0] = li
        grad[: lens[i], i] = gi
    return logits, labels, loss, grad


@pytest.mark.parametrize(
    "lens,label_lens,c,blank,repeats",
    [
        ([5, 4], [2, 3], 3, 0, False),
        ([5, 5, 3], [2, 0, 1], 4, 2, False),  # an empty label, blank in the middle
        ([5, 4], [3, 2], 3, 2, True),  # repeated labels need a blank between them
        ([3, 5], [3, 1], 3, 0, True),  # 3 labels with a repeat in 3 steps: infeasible, loss 0
        ([1, 3], [1, 1], 3, 1, False),
    ],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_warpctc_padded(lens, label_lens, c, blank, repeats, dtype):
    logits, labels, loss, grad = ctc_case(5, lens, label_lens, c, blank, dtype, repeats)
    ins = {
        "Logits": logits,
        "Label": labels,
        "LogitsLength": np.array(lens, "int64"),
        "LabelLength": np.array(label_lens, "int64"),
    }
    outs = {"Loss": loss.astype(dtype), "WarpCTCGrad": grad.astype(dtype)}
    t = make("warpctc", ins, outs, {"blank": blank})
    t.check_output(**({"atol": 1e-5, "rtol": 1e-5} if dtype == "float32" else tol(dtype)))
    if dtype == "float64":
        t.check_grad(["Logits"], "Loss", **GRAD)


@pytest.mark.parametrize("dtype", DTYPES)
def test_warpctc_lod(dtype):
    lens, label_lens, c, blank = [3, 5, 4], [1, 2, 2], 4, 3
    logits, labels, loss, grad = ctc_case(5, lens, label_lens, c, blank, dtype)
    rows = np.concatenate([logits[:n, i] for i, n in enumerate(lens)])
    flat = np.concatenate([labels[i, :n] for i, n in enumerate(label_lens)]).reshape(-1, 1)
    ins = {"Logits": (rows, [lens]), "Label": (flat, [label_lens])}
    outs = {"Loss": loss.astype(dtype), "WarpCTCGrad": grad.astype(dtype)}
    t = make("warpctc", ins, outs, {"blank": blank})
    t.check_output(**tol(dtype))
    if dtype == "float64":
        t.check_grad(["Logits"], "Loss", **GRAD)


@pytest.mark.parametrize("lod", [False, True])
def test_warpctc_norm_by_times_scales_the_gradient(lod):
    lens, label_lens = [4, 2], [2, 1]
    logits, labels, _, grad = ctc_case(4, lens, label_lens, 3, 0, "float64")
    if lod:
        rows = np.concatenate([logits[:n, i] for i, n in enumerate(lens)])
        flat = np.concatenate([labels[i, :n] for i, n in enumerate(label_lens)]).reshape(-1, 1)
        ins = {"Logits": (rows, [lens]), "Label": (flat, [label_lens])}
        want = np.concatenate([grad[:n, i] / n for i, n in enumerate(lens)])
    else:
        ins = {
            "Logits": logits,
            "Label": labels,
            "LogitsLength": np.array(lens, "int64"),
            "LabelLength": np.array(label_lens, "int64"),
        }
        want = grad / np.array(lens, "float64")[None, :, None]
    outs = {"Loss": np.zeros((2, 1)), "WarpCTCGrad": np.zeros((4, 2, 3))}
    t = make("warpctc", ins, outs, {"norm_by_times": True})
    main, startup, feeds, out_vars = t._build(stop_gradient_inputs=False)
    with tide.program_guard(main, startup):
        total = tide.layers.reduce_sum(out_vars["loss_out"])
        tide.append_backward(total)
    exe = tide.Executor(tide.CPUPlace())
    (g,) = exe.run(main, feed=feeds, fetch_list=["logits_in@GRAD"])
    np.testing.assert_allclose(np.asarray(g), want, atol=1e-12)


def test_warpctc_errors():
    logits = np.zeros((4, 2, 3))
    labels = np.array([[1, 2], [1, 0]], "int32")
    outs = {"Loss": np.zeros((2, 1)), "WarpCTCGrad": logits}

    def run(ins, attrs=None):
        full = {
            "Logits": logits,
            "Label": labels,
            "LogitsLength": np.array([4, 3]),
            "LabelLength": np.array([2, 1]),
        }
        full.update(ins)
        make(
            "warpctc", {k: v for k, v in full.items() if v is not None}, outs, attrs
        ).check_output()

    with pytest.raises(tide.TideError, match=r"warpctc.*'blank' = 3 must be a class"):
        run({}, {"blank": 3})
    with pytest.raises(tide.TideError, match=r"warpctc.*Label .*label 1 of sequence 0 is 5"):
        run({"Label": np.array([[1, 5], [1, 0]], "int32")})
    with pytest.raises(
        tide.TideError, match=r"warpctc.*LogitsLength .*\[1\] = 5 is outside \[0, 4\]"
    ):
        run({"LogitsLength": np.array([4, 5])})
    with pytest.raises(
        tide.TideError, match=r"warpctc.*LabelLength .*\[0\] = 3 is outside \[0, 2\]"
    ):
        run({"LabelLength": np.array([3, 1])})
    with pytest.raises(tide.TideError, match=r"warpctc.*give both LogitsLength and LabelLength"):
        run({"LabelLength": None})
    with pytest.raises(tide.TideError, match=r"warpctc.*Label .*must be padded \[B, Lmax\]"):
        run({"Label": np.array([1, 2], "int32")})
    with pytest.raises(tide.TideError, match=r"warpctc.*Logits .*has no LoD"):
        make(
            "warpctc",
            {"Logits": np.zeros((4, 3)), "Label": (np.ones((2, 1), "int32"), [[2]])},
            outs,
        ).check_output()


# --- viterbi_decode ------------------------------------------------------------------------


def viterbi_brute(e, trans, length, bos_eos):
    """The best path of e[:length] ([T, N]) by scoring every path."""
    n = e.shape[1]
    best, best_path = -np.inf, None
    for path in itertools.product(range(n), repeat=length):
        s = sum(e[t, k] for t, k in enumerate(path))
        s += sum(trans[path[t - 1], path[t]] for t in range(1, length))
        if bos_eos:
            s += trans[n - 1, path[0]] + trans[n - 2, path[-1]]
        if s > best:
            best, best_path = s, path
    return best, best_path


@pytest.mark.parametrize("bos_eos", [False, True])
@pytest.mark.parametrize("lengths", [[4, 3], [1, 4, 2], [3]])
@pytest.mark.parametrize("dtype", DTYPES)
def test_viterbi_decode(bos_eos, lengths, dtype):
    b, t_len, n = len(lengths), 4, 4
    e = RNG.uniform(-1, 1, (b, t_len, n)).astype(dtype)
    trans = RNG.uniform(-1, 1, (n, n)).astype(dtype)
    max_len = max(lengths)
    scores = np.zeros(b)
    path = np.zeros((b, max_len), "int64")
    for i, l in enumerate(lengths):
        scores[i], p = viterbi_brute(e[i].astype("float64"), trans.astype("float64"), l, bos_eos)
        path[i, :l] = p
    ins = {"Input": e, "Transition": trans, "Length": np.array(lengths, "int64")}
    outs = {"Scores": scores.astype(dtype), "Path": path}
    make("viterbi_decode", ins, outs, {"include_bos_eos_tag": bos_eos}).check_output(**tol(dtype))


@pytest.mark.parametrize("bos_eos", [False, True])
def test_viterbi_decode_empty_sequence_keeps_the_first_step(bos_eos):
    # Paddle 3.3.1: a length 0 scores the first step (with the start tag) and has an all-0 path.
    e, trans = RNG.uniform(-1, 1, (2, 3, 4)), RNG.uniform(-1, 1, (4, 4))
    s0, p0 = viterbi_brute(e[0], trans, 2, bos_eos)
    s1 = np.max(e[1, 0] + (trans[3] if bos_eos else 0.0))
    ins = {"Input": e, "Transition": trans, "Length": np.array([2, 0], "int64")}
    outs = {"Scores": np.array([s0, s1]), "Path": np.array([p0, [0, 0]], "int64")}
    make("viterbi_decode", ins, outs, {"include_bos_eos_tag": bos_eos}).check_output(atol=1e-12)


def test_viterbi_decode_errors():
    e, trans = np.zeros((2, 3, 4)), np.zeros((4, 4))
    outs = {"Scores": np.zeros(2), "Path": np.zeros((2, 3), "int64")}

    def run(ins, attrs=None):
        full = {"Input": e, "Transition": trans, "Length": np.array([3, 2])}
        full.update(ins)
        make("viterbi_decode", full, outs, attrs).check_output()

    with pytest.raises(tide.TideError, match=r"viterbi_decode.*Length .*\[1\] = 4 is outside"):
        run({"Length": np.array([3, 4])})
    with pytest.raises(tide.TideError, match=r"viterbi_decode.*Transition .*must be \[N, N\]"):
        run({"Transition": np.zeros((3, 4))})
    with pytest.raises(tide.TideError, match=r"viterbi_decode.*Input .*must be \[B, T, N\]"):
        run({"Input": np.zeros((2, 3))})
    with pytest.raises(tide.TideError, match=r"viterbi_decode.*Length .*must be \[B\]"):
        run({"Length": np.array([3, 2, 1])})
    with pytest.raises(tide.TideError, match=r"viterbi_decode.*include_bos_eos_tag needs N >= 2"):
        run({"Input": np.zeros((2, 3, 1)), "Transition": np.zeros((1, 1))})


# --- gather_tree ---------------------------------------------------------------------------


def gather_tree_ref(ids, parents):
    t_len, b, k = ids.shape
    out = np.zeros_like(ids)
    for i in range(b):
        for j in range(k):
            beam = j
            for t in range(t_len - 1, -1, -1):
                out[t, i, j] = ids[t, i, beam]
                beam = parents[t, i, beam]
    return out


@pytest.mark.parametrize("shape", [(4, 2, 3), (1, 3, 2), (6, 1, 4)])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_gather_tree(shape, dtype):
    ids = RNG.randint(0, 20, shape).astype(dtype)
    parents = RNG.randint(0, shape[2], shape).astype(dtype)
    want = gather_tree_ref(ids, parents)
    make("gather_tree", {"Ids": ids, "Parents": parents}, {"Out": want}).check_output()


def test_gather_tree_errors():
    ids = np.zeros((3, 2, 2), "int64")
    with pytest.raises(
        tide.TideError, match=r"gather_tree.*Parents .*\[2, 1, 0\] = 2 is not a beam"
    ):
        parents = np.zeros_like(ids)
        parents[2, 1, 0] = 2
        make("gather_tree", {"Ids": ids, "Parents": parents}, {"Out": ids}).check_output()
    with pytest.raises(tide.TideError, match=r"gather_tree.*Parents .*must have Ids' dims"):
        make("gather_tree", {"Ids": ids, "Parents": ids[:2]}, {"Out": ids}).check_output()
    with pytest.raises(tide.TideError, match=r"gather_tree.*Parents .*must be int64 as Ids is"):
        make(
            "gather_tree", {"Ids": ids, "Parents": ids.astype("int32")}, {"Out": ids}
        ).check_output()
