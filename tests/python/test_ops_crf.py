"""Op tests of linear_chain_crf, crf_decoding and chunk_eval (ops_sequence), Fluid 1.x semantics.

References are independent of the kernels' recursions: the CRF cost and the Viterbi path by
enumerating every tag path of tiny sequences in float64 (log-partition by logsumexp over all
paths), the gradients by central finite differences, and the chunks by a per-scheme state machine
written here. Both sequence layouts are covered: a one-level LoD (with sequences of length 1 and 0)
and padded tensors with Length. Fluid's LogLikelihood output is the NEGATIVE log-likelihood (a
cost), and so is Tide's."""

import itertools

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
GRAD_TOL = {"float32": (0.02, 0.005), "float64": (1e-5, 1e-5)}
TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-10)}


def offsets(lengths):
    return [0] + list(np.cumsum(lengths).astype(int))


def path_score(x, w, path):
    """Score of one tag path: start + emissions + transitions + end (Fluid's layout of w)."""
    s = w[0, path[0]] + x[0, path[0]] + w[1, path[-1]]
    for k in range(1, len(path)):
        s += x[k, path[k]] + w[2 + path[k - 1], path[k]]
    return s


def brute(x, w, label):
    """(negative log-likelihood of label, best path) of one sequence x [L, D], all paths enumerated."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    L, D = x.shape
    paths = list(itertools.product(range(D), repeat=L))
    scores = np.array([path_score(x, w, p) for p in paths])
    m = scores.max()
    log_z = m + np.log(np.exp(scores - m).sum())
    return log_z - path_score(x, w, list(label)), list(paths[int(np.argmax(scores))])


def alpha_ref(x, w):
    """Forward vectors of one sequence, each row normalised to sum 1 (Fluid's Alpha)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    a = np.exp(w[0] + x[0])
    rows = [a / a.sum()]
    for k in range(1, len(x)):
        a = np.exp(x[k]) * (rows[-1] @ np.exp(w[2:]))
        rows.append(a / a.sum())
    return np.array(rows)


def crf_case(dtype, lengths, D=3, seed=0):
    """A LoD case: inputs and expected outputs of linear_chain_crf."""
    rng = np.random.RandomState(seed)
    N = sum(lengths)
    x = rng.uniform(-1, 1, (N, D)).astype(dtype)
    w = rng.uniform(-0.5, 0.5, (D + 2, D)).astype(dtype)
    label = rng.randint(0, D, (N, 1)).astype("int64")
    o = offsets(lengths)
    ll = np.zeros((len(lengths), 1))
    alpha = np.zeros((N, D))
    for i, n in enumerate(lengths):
        if n:
            ll[i, 0] = brute(x[o[i] : o[i + 1]], w, label[o[i] : o[i + 1], 0])[0]
            alpha[o[i] : o[i + 1]] = alpha_ref(x[o[i] : o[i + 1]], w)
    x64 = x.astype(np.float64)
    exps = np.exp(x64 - x64.max(1, keepdims=True))
    lod = [list(lengths)]
    inputs = {"Emission": (x, lod), "Transition": w, "Label": (label, lod)}
    outputs = {
        "Alpha": (alpha.astype(dtype), lod),
        "EmissionExps": (exps.astype(dtype), lod),
        "TransitionExps": np.exp(w.astype(np.float64)).astype(dtype),
        "LogLikelihood": ll.astype(dtype),
    }
    return inputs, outputs


def padded(x, label, lengths, T):
    """The LoD rows of x and label as padded [S, T, ...] tensors (padding: zeros / 0)."""
    o = offsets(lengths)
    S, D = len(lengths), x.shape[1]
    xp = np.zeros((S, T, D), x.dtype)
    lp = np.zeros((S, T), "int64")
    for i, n in enumerate(lengths):
        xp[i, :n] = x[o[i] : o[i + 1]]
        lp[i, :n] = label[o[i] : o[i + 1], 0]
    return xp, lp


LENGTHS = [1, 3, 2, 4]  # several sequences, one of length 1
LENGTHS_EMPTY = [2, 0, 3, 1]  # an empty sequence costs 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lengths", [LENGTHS, LENGTHS_EMPTY], ids=["lod", "lod_empty"])
def test_linear_chain_crf_matches_all_paths(dtype, lengths):
    ins, outs = crf_case(dtype, lengths)
    make("linear_chain_crf", ins, outs).check_output(**TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lengths", [LENGTHS, LENGTHS_EMPTY], ids=["lod", "lod_empty"])
def test_linear_chain_crf_grad(dtype, lengths):
    ins, outs = crf_case(dtype, lengths, seed=1)
    err, delta = GRAD_TOL[dtype]
    make("linear_chain_crf", ins, outs).check_grad(
        ["Emission", "Transition"],
        "LogLikelihood",
        max_relative_error=err,
        numeric_grad_delta=delta,
    )


def test_linear_chain_crf_grad_of_transition_only():
    """Emission without a gradient (e.g. from a data layer): Transition's still flows."""
    ins, outs = crf_case("float64", LENGTHS, seed=2)
    make("linear_chain_crf", ins, outs).check_grad(
        ["Transition"],
        "LogLikelihood",
        no_grad_set={"emission_in"},
        max_relative_error=1e-5,
        numeric_grad_delta=1e-5,
    )


def padded_case(dtype, lengths, T=4, seed=3):
    ins, outs = crf_case(dtype, lengths, seed=seed)
    x, lod = ins["Emission"]
    xp, lp = padded(x, ins["Label"][0], lengths, T)
    length = np.array(lengths, "int64")
    inputs = {"Emission": xp, "Transition": ins["Transition"], "Label": lp, "Length": length}
    # Alpha and EmissionExps are intermediates whose padding rows Fluid leaves unspecified.
    outputs = {
        "Alpha": None,
        "EmissionExps": None,
        "TransitionExps": outs["TransitionExps"],
        "LogLikelihood": outs["LogLikelihood"],
    }
    return inputs, outputs


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_chain_crf_padded_with_length(dtype):
    ins, outs = padded_case(dtype, LENGTHS_EMPTY)
    make("linear_chain_crf", ins, outs).check_output(**TOL[dtype])


def test_linear_chain_crf_padded_grad():
    ins, outs = padded_case("float64", [1, 3, 0, 2])
    t = make("linear_chain_crf", ins, outs)
    t.check_grad(
        ["Emission", "Transition"],
        "LogLikelihood",
        max_relative_error=1e-5,
        numeric_grad_delta=1e-5,
    )


def test_linear_chain_crf_padded_grad_is_zero_on_padding():
    """Emission@GRAD of padding steps is 0 (they do not enter the cost)."""
    ins, outs = padded_case("float64", [1, 3, 2], seed=4)
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        e = tide.layers.data(
            "e", [3, 4, 3], dtype="float64", append_batch_size=False, stop_gradient=False
        )
        lab = tide.layers.data("lab", [3, 4], dtype="int64", append_batch_size=False)
        ln = tide.layers.data("ln", [3], dtype="int64", append_batch_size=False)
        cost = tide.layers.linear_chain_crf(
            e, lab, param_attr=tide.ParamAttr(name="crfw_pad"), length=ln
        )
        loss = tide.layers.reduce_sum(cost)
        tide.append_backward(loss)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    (g,) = exe.run(
        main,
        feed={"e": ins["Emission"], "lab": ins["Label"], "ln": ins["Length"]},
        fetch_list=["e@GRAD"],
        scope=scope,
    )
    for i, n in enumerate([1, 3, 2]):
        assert np.all(g[i, n:] == 0)
        assert np.any(g[i, :n] != 0)


def log_space_nll(x, w, label):
    """The same cost by the forward algorithm in log space (float64), for sequences too long to
    enumerate."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    a = w[0] + x[0]
    for k in range(1, len(x)):
        s = a[:, None] + w[2:]
        m = s.max(0)
        a = x[k] + m + np.log(np.exp(s - m).sum(0))
    a = a + w[1]
    m = a.max()
    return m + np.log(np.exp(a - m).sum()) - path_score(x, w, list(label))


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_chain_crf_long_sequences_with_large_scores(dtype):
    """Rescaling each step keeps long sequences with large emissions finite and exact."""
    rng = np.random.RandomState(12)
    lengths, D = [300, 1, 150], 4
    x = rng.uniform(-30, 30, (sum(lengths), D)).astype(dtype)
    w = rng.uniform(-5, 5, (D + 2, D)).astype(dtype)
    label = rng.randint(0, D, (sum(lengths), 1)).astype("int64")
    o = offsets(lengths)
    ll = np.array(
        [
            [log_space_nll(x[o[i] : o[i + 1]], w, label[o[i] : o[i + 1], 0])]
            for i in range(len(lengths))
        ]
    )
    lod = [lengths]
    make(
        "linear_chain_crf",
        {"Emission": (x, lod), "Transition": w, "Label": (label, lod)},
        {
            "Alpha": None,
            "EmissionExps": None,
            "TransitionExps": None,
            "LogLikelihood": ll.astype(dtype),
        },
    ).check_output(
        rtol=1e-4 if dtype == "float32" else 1e-9, atol=1e-3 if dtype == "float32" else 1e-9
    )


# -- crf_decoding --------------------------------------------------------------------------------
def decode_case(dtype, lengths, seed=5, D=3):
    rng = np.random.RandomState(seed)
    N = sum(lengths)
    x = rng.uniform(-1, 1, (N, D)).astype(dtype)
    w = rng.uniform(-1, 1, (D + 2, D)).astype(dtype)
    o = offsets(lengths)
    path = np.zeros((N, 1), "int64")
    for i, n in enumerate(lengths):
        if n:
            path[o[i] : o[i + 1], 0] = brute(x[o[i] : o[i + 1]], w, [0] * n)[1]
    return x, w, path


@pytest.mark.parametrize("dtype", DTYPES)
def test_crf_decoding_is_the_best_path(dtype):
    x, w, path = decode_case(dtype, LENGTHS_EMPTY)
    lod = [LENGTHS_EMPTY]
    t = make("crf_decoding", {"Emission": (x, lod), "Transition": w}, {"ViterbiPath": (path, lod)})
    t.check_output()


def test_crf_decoding_with_label_marks_correct_tokens():
    """Fluid: with Label, ViterbiPath is 1 where the best path equals the label, else 0."""
    x, w, path = decode_case("float64", LENGTHS)
    rng = np.random.RandomState(6)
    label = np.where(rng.rand(*path.shape) < 0.5, path, (path + 1) % 3).astype("int64")
    lod = [LENGTHS]
    want = (label == path).astype("int64")
    make(
        "crf_decoding",
        {"Emission": (x, lod), "Transition": w, "Label": (label, lod)},
        {"ViterbiPath": (want, lod)},
    ).check_output()


@pytest.mark.parametrize("with_label", [False, True])
def test_crf_decoding_padded_with_length(with_label):
    lengths, T = [1, 3, 0, 4], 4
    x, w, path = decode_case("float32", lengths, seed=7)
    xp, pp = padded(x, path, lengths, T)
    ins = {"Emission": xp, "Transition": w, "Length": np.array(lengths, "int64")}
    want = pp
    if with_label:
        lp = pp.copy()
        lp[:, 1] = (lp[:, 1] + 1) % 3  # wrong at step 1
        ins["Label"] = lp
        mask = np.arange(T)[None, :] < np.array(lengths)[:, None]
        want = ((lp == pp) & mask).astype("int64")  # padding steps are 0
    make("crf_decoding", ins, {"ViterbiPath": want}).check_output()


# -- bad input -----------------------------------------------------------------------------------
def expect_error(op_type, inputs, outputs, *words):
    with pytest.raises(Exception) as info:
        make(op_type, inputs, outputs).check_output()
    msg = str(info.value)
    for w in (op_type,) + words:
        assert w in msg, "error %r does not mention %r" % (msg, w)


def test_linear_chain_crf_label_out_of_range():
    ins, outs = crf_case("float64", LENGTHS)
    label, lod = ins["Label"]
    label = label.copy()
    label[4, 0] = 3
    ins["Label"] = (label, lod)
    expect_error("linear_chain_crf", ins, outs, "Label", "tag 3", "[0, 3)")


def test_crf_transition_must_be_tags_plus_two_by_tags():
    ins, outs = crf_case("float64", LENGTHS)
    ins["Transition"] = np.zeros((3, 3))
    expect_error("linear_chain_crf", ins, outs, "Transition", "[5, 3]", "[3, 3]")
    x, w, path = decode_case("float64", LENGTHS)
    expect_error(
        "crf_decoding",
        {"Emission": (x, [LENGTHS]), "Transition": np.zeros((5, 2))},
        {"ViterbiPath": (path, [LENGTHS])},
        "Transition",
        "[5, 3]",
    )


def test_crf_bad_length_and_missing_lod():
    ins, outs = padded_case("float64", [1, 3, 2, 4])
    ins["Length"] = np.array([1, 5, 2, 4], "int64")
    expect_error("linear_chain_crf", ins, outs, "Length", "5", "[0, 4]")
    ins, outs = crf_case("float64", LENGTHS)
    ins["Label"] = ins["Label"][0]  # no LoD, no Length
    expect_error("linear_chain_crf", ins, outs, "Label", "no LoD")


# -- chunk_eval ----------------------------------------------------------------------------------
TAGS = {"IOB": "BI", "IOE": "IE", "IOBES": "BIES", "plain": "I"}


def ref_chunks(values, scheme, num_types):
    """{(begin, end, type)} of one sequence: a chunk starts at B or S, after an E or S, or where
    the type changes (from O too); it ends at E or S, before O, or before the next start."""
    names, K = TAGS[scheme], len(TAGS[scheme])
    chunks, cur, prev = [], None, None
    for i, v in enumerate(values):
        typ, name = v // K, names[v % K]
        if typ == num_types:  # outside
            if cur:
                chunks.append((cur[0], i - 1, cur[1]))
            cur, prev = None, None
            continue
        if cur is None or cur[1] != typ or name in "BS" or prev in ("E", "S"):
            if cur:
                chunks.append((cur[0], i - 1, cur[1]))
            cur = (i, typ)
        prev = name
    if cur:
        chunks.append((cur[0], len(values) - 1, cur[1]))
    return set(chunks)


def ref_chunk_eval(infer, label, seqs, scheme, num_types, excluded=()):
    ni = nl = nc = 0
    for b, e in seqs:
        a = {c for c in ref_chunks(list(infer[b:e]), scheme, num_types) if c[2] not in excluded}
        t = {c for c in ref_chunks(list(label[b:e]), scheme, num_types) if c[2] not in excluded}
        ni, nl, nc = ni + len(a), nl + len(t), nc + len(a & t)
    p = nc / ni if ni else 0.0
    r = nc / nl if nl else 0.0
    f1 = 2 * p * r / (p + r) if nc else 0.0
    return p, r, f1, ni, nl, nc


def chunk_outputs(p, r, f1, ni, nl, nc):
    f = lambda v: np.array([v], "float32")  # noqa: E731
    i = lambda v: np.array([v], "int64")  # noqa: E731
    return {
        "Precision": f(p),
        "Recall": f(r),
        "F1-Score": f(f1),
        "NumInferChunks": i(ni),
        "NumLabelChunks": i(nl),
        "NumCorrectChunks": i(nc),
    }


def noisy_tags(rng, n, scheme, num_types):
    """Label tags and an inference that agrees on about 70% of the steps."""
    top = num_types * len(TAGS[scheme])  # inclusive: the outside tag
    label = rng.randint(0, top + 1, n).astype("int64")
    infer = np.where(rng.rand(n) < 0.7, label, rng.randint(0, top + 1, n)).astype("int64")
    return infer, label


@pytest.mark.parametrize("scheme", ["IOB", "IOE", "IOBES", "plain"])
@pytest.mark.parametrize("excluded", [[], [1]], ids=["all", "excluded"])
def test_chunk_eval_matches_reference(scheme, excluded):
    rng = np.random.RandomState(len(scheme) + len(excluded))
    lengths = [5, 1, 0, 9, 12, 7]
    n = sum(lengths)
    infer, label = noisy_tags(rng, n, scheme, 3)
    o = offsets(lengths)
    want = ref_chunk_eval(infer, label, list(zip(o[:-1], o[1:])), scheme, 3, excluded)
    assert want[3] > 3 and want[5] > 0  # the case has chunks, some correct
    lod = [lengths]
    make(
        "chunk_eval",
        {"Inference": (infer.reshape(-1, 1), lod), "Label": (label.reshape(-1, 1), lod)},
        chunk_outputs(*want),
        {"num_chunk_types": 3, "chunk_scheme": scheme, "excluded_chunk_types": excluded},
    ).check_output()


def test_chunk_eval_hand_checked_iob():
    """B-PER I-PER O B-LOC | B-PER O I-LOC: 4 label chunks (an I after O starts a chunk)."""
    # types: PER=0, LOC=1; IOB tags: B=0, I=1; O = 2 * 2 = 4.
    label = [0, 1, 4, 2, 0, 4, 3]
    lod = [[4, 3]]

    def check(infer, want):
        make(
            "chunk_eval",
            {
                "Inference": (np.array(infer, "int64").reshape(-1, 1), lod),
                "Label": (np.array(label, "int64").reshape(-1, 1), lod),
            },
            chunk_outputs(*want),
            {"num_chunk_types": 2, "chunk_scheme": "IOB"},
        ).check_output()

    check([0, 1, 4, 3, 0, 4, 3], (1.0, 1.0, 1.0, 4, 4, 4))  # I-LOC for B-LOC after O: same chunk
    # PER split in two (B B), LOC right | PER right, LOC missed: 4 inferred, 2 correct.
    check([0, 0, 4, 2, 0, 4, 4], (0.5, 0.5, 0.5, 4, 4, 2))
    check([4, 4, 4, 4, 4, 4, 4], (0.0, 0.0, 0.0, 0, 4, 0))  # nothing inferred


def test_chunk_eval_padded_with_seq_length():
    rng = np.random.RandomState(9)
    lengths, T = [3, 6, 0, 5], 6
    infer, label = noisy_tags(rng, len(lengths) * T, "IOBES", 2)
    infer, label = infer.reshape(-1, T), label.reshape(-1, T)
    seqs = [(i * T, i * T + n) for i, n in enumerate(lengths)]
    want = ref_chunk_eval(infer.reshape(-1), label.reshape(-1), seqs, "IOBES", 2)
    make(
        "chunk_eval",
        {"Inference": infer, "Label": label, "SeqLength": np.array(lengths, "int64")},
        chunk_outputs(*want),
        {"num_chunk_types": 2, "chunk_scheme": "IOBES"},
    ).check_output()


def test_chunk_eval_bad_input():
    lod = [[2, 1]]
    good = np.array([[0], [1], [4]], "int64")
    bad = np.array([[0], [5], [4]], "int64")  # 5 > 2 types * 2 tags
    attrs = {"num_chunk_types": 2, "chunk_scheme": "IOB"}
    with pytest.raises(Exception, match=r"chunk_eval.*Label.*holds 5.*\[0, num_chunk_types"):
        make(
            "chunk_eval",
            {"Inference": (good, lod), "Label": (bad, lod)},
            chunk_outputs(0, 0, 0, 0, 0, 0),
            attrs,
        ).check_output()
    with pytest.raises(Exception, match=r"chunk_eval.*LoD"):
        make(
            "chunk_eval",
            {"Inference": (good, [[1, 2]]), "Label": (good, lod)},
            chunk_outputs(0, 0, 0, 0, 0, 0),
            attrs,
        ).check_output()
    with pytest.raises(Exception, match=r"chunk_scheme"):
        make(
            "chunk_eval",
            {"Inference": (good, lod), "Label": (good, lod)},
            chunk_outputs(0, 0, 0, 0, 0, 0),
            dict(attrs, chunk_scheme="BIO"),
        ).check_output()


# -- layers and training -------------------------------------------------------------------------
def test_layers_check_their_arguments():
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        e = tide.layers.data("e", [3], dtype="float32", lod_level=1)
        lab = tide.layers.data("lab", [1], dtype="int64", lod_level=1)
        with pytest.raises(TypeError, match="label"):
            tide.layers.linear_chain_crf(e, [1, 2])
        with pytest.raises(ValueError, match="no parameter named 'nope'"):
            tide.layers.crf_decoding(e, param_attr=tide.ParamAttr(name="nope"))
        with pytest.raises(ValueError, match="chunk_scheme"):
            tide.layers.chunk_eval(lab, lab, "BIO", 2)
        with pytest.raises(TypeError, match="num_chunk_types"):
            tide.layers.chunk_eval(lab, lab, "IOB", 2.0)


def test_crf_tagger_trains():
    """A tagger (embedding -> fc -> linear_chain_crf) on a toy task where a word's tag is its id
    mod 3, except that tag 2 never follows tag 2 (it becomes 0): the cost goes down, and
    crf_decoding with the learned transition tags held-out sequences well, as chunk_eval agrees."""
    vocab, D, rng = 12, 3, np.random.RandomState(11)
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 1
    with tide.program_guard(main, startup):
        words = tide.layers.data("words", [1], dtype="int64", lod_level=1)
        tags = tide.layers.data("tags", [1], dtype="int64", lod_level=1)
        emb = tide.layers.embedding(words, size=[vocab, 8])
        emission = tide.layers.fc(emb, D)
        cost = tide.layers.linear_chain_crf(emission, tags, param_attr=tide.ParamAttr(name="crfw"))
        loss = tide.layers.mean(cost)
        test_program = main.clone(for_test=True)
        tide.optimizer.Adam(learning_rate=0.05).minimize(loss)
    with tide.program_guard(test_program, tide.Program()):
        path = tide.layers.crf_decoding(
            test_program.global_block().var(emission.name), param_attr=tide.ParamAttr(name="crfw")
        )
        # plain scheme, 3 chunk types: runs of equal tags are the chunks.
        metrics = tide.layers.chunk_eval(
            path, test_program.global_block().var(tags.name), "plain", 3
        )

    def batch(n=8):
        lens = rng.randint(1, 7, size=n)
        ids = rng.randint(0, vocab, size=int(lens.sum()))
        t = ids % 3
        starts = set(offsets(lens)[:-1])
        for k in range(1, len(t)):
            if k not in starts and t[k] == 2 and t[k - 1] == 2:
                t[k] = 0
        mk = lambda a: tide.LoDTensor(a.astype("int64").reshape(-1, 1))  # noqa: E731
        w, g = mk(ids), mk(t)
        w.set_recursive_sequence_lengths([list(lens)])
        g.set_recursive_sequence_lengths([list(lens)])
        return {"words": w, "tags": g}, t

    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    losses = [
        float(exe.run(main, feed=batch()[0], fetch_list=[loss], scope=scope)[0].reshape(-1)[0])
        for _ in range(60)
    ]
    assert np.mean(losses[-5:]) < 0.3 * np.mean(losses[:5]), losses
    feed, t = batch(16)
    got = exe.run(test_program, feed=feed, fetch_list=[path] + list(metrics), scope=scope)
    accuracy = np.mean(got[0].reshape(-1) == t)
    assert accuracy > 0.9, accuracy
    assert float(got[3][0]) > 0.8  # F1 of the chunks
