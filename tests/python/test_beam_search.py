"""beam_search and beam_search_decode (ops_sequence) against a numpy beam search with Fluid's
rules: one step (accumulated scores or pre_score + log(p), given ids or column ids, ended beams
stay ended, finished sources pruned, beam size 1), a whole decoder in a While loop decoded back
to sentences, bad input."""

import numpy as np
import pytest

import tide
from tide import layers

END = 1


def _lod(arr, lens):
    t = tide.LoDTensor(np.ascontiguousarray(arr))
    t.set_recursive_sequence_lengths(lens)
    return t


def _np_step(pre_ids, pre_scores, ids, scores, prefixes_per_source, beam, end_id, accumulated):
    """One step by the rules, written as a sort: per source, the (prefix, candidate) pairs by
    score (a tie to the later prefix), the best `beam` kept; ended prefixes offer only end_id
    with their score; a source whose kept pairs all extend ended prefixes with end_id is dropped.
    Returns (ids, scores, parents, items per prefix)."""
    rows = len(pre_ids)
    kept = [[] for _ in range(rows)]
    start = 0
    for n in prefixes_per_source:
        cands = []
        for off in range(start, start + n):
            if pre_ids[off] == end_id:
                cands.append((pre_scores[off], off, end_id))
                continue
            for d in range(scores.shape[1]):
                s = scores[off, d] if accumulated else pre_scores[off] + np.log(scores[off, d])
                cands.append((s, off, ids[off, d] if ids is not None else d))
        best = sorted(cands, key=lambda c: (-c[0], -c[1]))[:beam]
        if not all(i == end_id and pre_ids[o] == end_id for _, o, i in best):
            for s, o, i in best:
                kept[o].append((i, s))
        start += n
    out_ids = [i for k in kept for i, _ in k]
    out_scores = [s for k in kept for _, s in k]
    parents = [o for o, k in enumerate(kept) for _ in k]
    return out_ids, out_scores, parents, [len(k) for k in kept]


def _run_step(exe, pre_ids, pre_scores, ids, scores, lens, beam, accumulated, dtype):
    pi = layers.data(name="pre_ids", shape=[1], dtype="int64", lod_level=2)
    ps = layers.data(name="pre_scores", shape=[1], dtype=dtype, lod_level=2)
    k = scores.shape[1]
    sc = layers.data(name="scores", shape=[k], dtype=dtype, lod_level=2)
    feed = {
        "pre_ids": _lod(pre_ids.reshape(-1, 1), lens),
        "pre_scores": _lod(pre_scores.reshape(-1, 1), lens),
        "scores": _lod(scores, lens),
    }
    idv = None
    if ids is not None:
        idv = layers.data(name="ids", shape=[k], dtype="int64", lod_level=2)
        feed["ids"] = _lod(ids, lens)
    sel_ids, sel_scores, parent = layers.beam_search(
        pi,
        ps,
        idv,
        sc,
        beam_size=beam,
        end_id=END,
        is_accumulated=accumulated,
        return_parent_idx=True,
    )
    return exe.run(feed=feed, fetch_list=[sel_ids, sel_scores, parent], return_numpy=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("accumulated", [True, False])
@pytest.mark.parametrize("with_ids", [True, False])
@pytest.mark.parametrize("beam", [1, 2, 3])
def test_one_step_matches_numpy(exe, rng, dtype, accumulated, with_ids, beam):
    prefixes = [2, 3, 1]  # per source
    rows, k = sum(prefixes), 4
    pre_ids = np.array([4, END, 5, 6, END, 7], "int64")
    pre_scores = rng.uniform(-3, 0, rows).astype(dtype)
    scores = (
        rng.uniform(-3, 0, (rows, k)) if accumulated else rng.uniform(0.05, 1, (rows, k))
    ).astype(dtype)
    ids = rng.randint(2, 20, (rows, k)).astype("int64") if with_ids else None
    lens = [prefixes, [1] * rows]
    got_ids, got_scores, got_parent = _run_step(
        exe, pre_ids, pre_scores, ids, scores, lens, beam, accumulated, dtype
    )
    want_ids, want_scores, want_parent, per_prefix = _np_step(
        pre_ids, pre_scores, ids, scores, prefixes, beam, END, accumulated
    )
    assert np.array(got_ids).ravel().tolist() == want_ids
    np.testing.assert_allclose(np.array(got_scores).ravel(), want_scores, rtol=1e-6)
    assert np.array(got_parent).tolist() == want_parent
    assert got_ids.recursive_sequence_lengths() == [prefixes, per_prefix]


def test_ended_beams_stay_ended_and_finished_sources_are_pruned(exe, rng):
    # Source 0: both prefixes ended -> dropped. Source 1: one ended prefix with the best score
    # keeps offering END with its score; the other prefix extends.
    pre_ids = np.array([END, END, END, 3], "int64")
    pre_scores = np.array([-0.1, -0.2, -0.05, -1.0])
    scores = np.array([[-5.0, -6.0], [-5.0, -6.0], [-9.0, -9.0], [-1.5, -2.5]])
    got_ids, got_scores, got_parent = _run_step(
        exe, pre_ids, pre_scores, None, scores, [[2, 2], [1, 1, 1, 1]], 2, True, "float64"
    )
    assert np.array(got_ids).ravel().tolist() == [END, 0]
    np.testing.assert_allclose(np.array(got_scores).ravel(), [-0.05, -1.5])
    assert np.array(got_parent).tolist() == [2, 3]
    assert got_ids.recursive_sequence_lengths() == [[2, 2], [0, 0, 1, 1]]


def _decoder(v, beam, max_len, dtype="float64"):
    """A decoder loop whose next-token distribution is row pre_id of a fixed table."""
    init_ids = layers.data(name="init_ids", shape=[1], dtype="int64", lod_level=2)
    init_scores = layers.data(name="init_scores", shape=[1], dtype=dtype, lod_level=2)
    counter = layers.fill_constant([1], "int64", 0)
    limit = layers.fill_constant([1], "int64", max_len)
    ids_array = layers.array_write(init_ids, counter)
    scores_array = layers.array_write(init_scores, counter)
    cond = layers.less_than(counter, limit)
    loop = layers.While(cond, is_test=True)
    with loop.block():
        pre_ids = layers.array_read(ids_array, counter)
        pre_scores = layers.array_read(scores_array, counter)
        probs = layers.embedding(
            pre_ids, size=[v, v], param_attr=tide.ParamAttr(name="table"), dtype=dtype
        )
        sel_ids, sel_scores = layers.beam_search(
            pre_ids, pre_scores, None, probs, beam_size=beam, end_id=END, is_accumulated=False
        )
        layers.increment(counter, in_place=True)
        layers.array_write(sel_ids, counter, array=ids_array)
        layers.array_write(sel_scores, counter, array=scores_array)
        going = layers.logical_not(layers.is_empty(sel_ids))
        layers.logical_and(layers.less_than(counter, limit), going, out=cond)
    return layers.beam_search_decode(ids_array, scores_array, beam_size=beam, end_id=END)


def _np_decode(table, starts, beam, max_len):
    """Each source's sentences (ids, scores), best first, by keeping whole hypotheses."""
    result = []
    for start in starts:
        live = [([start], [0.0])]  # (ids, scores) of the beams selected at the last step
        for _ in range(max_len):
            cands = []
            for order, (ids, scs) in enumerate(live):
                if ids[-1] == END:
                    cands.append((scs[-1], order, ids + [END], scs + [scs[-1]]))
                    continue
                for d in range(table.shape[1]):
                    s = scs[-1] + np.log(table[ids[-1], d])
                    cands.append((s, order, ids + [d], scs + [s]))
            best = sorted(cands, key=lambda c: (-c[0], -c[1]))[:beam]
            if all(c[2][-1] == END and c[2][-2] == END for c in best):
                break  # finished: the sentences are the live beams
            # The next step's prefixes come in prefix order, each prefix's items best first.
            best.sort(key=lambda c: c[1])
            live = [(c[2], c[3]) for c in best]
        sentences = []
        for ids, scs in live:
            while len(ids) > 2 and ids[-1] == END and ids[-2] == END:  # one END closes a sentence
                ids, scs = ids[:-1], scs[:-1]
            sentences.append((ids, scs))
        sentences.sort(key=lambda s: -s[1][-1])
        result.append(sentences)
    return result


@pytest.mark.parametrize("beam", [1, 3])
def test_decoder_in_a_while_loop_matches_numpy(exe, rng, fresh_programs, beam):
    v, max_len = 6, 5
    sent_ids, sent_scores = _decoder(v, beam, max_len)
    exe.run(fresh_programs[1])
    logits = rng.uniform(-2, 2, (v, v))
    logits[:, END] += 0.5
    table = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    tide.global_scope().find_var("table").get_tensor().set(table, tide.CPUPlace(), False)
    starts = [0, 2, 3, 5]
    n = len(starts)
    got_ids, got_scores = exe.run(
        feed={
            "init_ids": _lod(np.array(starts, "int64").reshape(-1, 1), [[1] * n, [1] * n]),
            "init_scores": _lod(np.zeros((n, 1)), [[1] * n, [1] * n]),
        },
        fetch_list=[sent_ids, sent_scores],
        return_numpy=False,
    )
    want = _np_decode(table, starts, beam, max_len)
    per_source, lengths = got_ids.recursive_sequence_lengths()
    assert per_source == [len(s) for s in want]
    assert lengths == [len(ids) for s in want for ids, _ in s]
    assert np.array(got_ids).ravel().tolist() == [i for s in want for ids, _ in s for i in ids]
    np.testing.assert_allclose(
        np.array(got_scores).ravel(), [x for s in want for _, scs in s for x in scs], rtol=1e-9
    )


def test_beam_size_zero_is_an_error_naming_the_op():
    pi = layers.data(name="pre_ids", shape=[1], dtype="int64", lod_level=2)
    ps = layers.data(name="pre_scores", shape=[1], dtype="float32", lod_level=2)
    sc = layers.data(name="scores", shape=[3], dtype="float32", lod_level=2)
    with pytest.raises(Exception, match=r"beam_search.*beam_size.*> 0"):
        layers.beam_search(pi, ps, None, sc, beam_size=0, end_id=END)


def test_scores_without_a_two_level_lod(exe):
    pi = layers.data(name="pre_ids", shape=[1], dtype="int64")
    ps = layers.data(name="pre_scores", shape=[1], dtype="float32")
    sc = layers.data(name="scores", shape=[3], dtype="float32")
    out, _ = layers.beam_search(pi, ps, None, sc, beam_size=2, end_id=END)
    with pytest.raises(
        tide.InvalidArgumentError, match=r"beam_search.*pre_ids \('pre_ids'.*0-level LoD.*2 levels"
    ):
        exe.run(
            feed={
                "pre_ids": np.zeros((2, 1), "int64"),
                "pre_scores": np.zeros((2, 1), "float32"),
                "scores": np.ones((2, 3), "float32"),
            },
            fetch_list=[out],
        )


def test_scores_rows_not_matching_pre_ids(exe):
    pi = layers.data(name="pre_ids", shape=[1], dtype="int64", lod_level=2)
    ps = layers.data(name="pre_scores", shape=[1], dtype="float32", lod_level=2)
    sc = layers.data(name="scores", shape=[3], dtype="float32", lod_level=2)
    out, _ = layers.beam_search(pi, ps, None, sc, beam_size=2, end_id=END)
    with pytest.raises(
        tide.InvalidArgumentError,
        match=r"beam_search.*one element per row of scores \('scores', 3 rows",
    ):
        exe.run(
            feed={
                "pre_ids": _lod(np.zeros((2, 1), "int64"), [[2], [1, 1]]),
                "pre_scores": _lod(np.zeros((2, 1), "float32"), [[2], [1, 1]]),
                "scores": _lod(np.ones((3, 3), "float32"), [[2], [1, 2]]),
            },
            fetch_list=[out],
        )


def test_decode_of_an_empty_array(exe):
    ids = layers.create_array("int64")
    scores = layers.create_array("float32")
    out, _ = layers.beam_search_decode(ids, scores, beam_size=2, end_id=END)
    with pytest.raises(tide.InvalidArgumentError, match=r"beam_search_decode.*Ids array.*is empty"):
        exe.run(fetch_list=[out])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_step_through_op_test(dtype):
    # The same rules through the shared OpTest harness (outputs and their LoD).
    from op_test import make

    rng = np.random.RandomState(3)
    prefixes = [1, 2]
    pre_ids = np.array([[5], [END], [6]], "int64")
    pre_scores = rng.uniform(-2, 0, (3, 1)).astype(dtype)
    scores = rng.uniform(-4, -0.1, (3, 3)).astype(dtype)
    ids = rng.randint(2, 9, (3, 3)).astype("int64")
    want_ids, want_scores, want_parent, per_prefix = _np_step(
        pre_ids.ravel(), pre_scores.ravel(), ids, scores, prefixes, 2, END, True
    )
    lens = [prefixes, [1, 1, 1]]
    lod = [prefixes, per_prefix]
    make(
        "beam_search",
        inputs={
            "pre_ids": (pre_ids, lens),
            "pre_scores": (pre_scores, lens),
            "ids": (ids, lens),
            "scores": (scores, lens),
        },
        outputs={
            "selected_ids": (np.array(want_ids, "int64").reshape(-1, 1), lod),
            "selected_scores": (np.array(want_scores, dtype).reshape(-1, 1), lod),
            "parent_idx": np.array(want_parent, "int32"),
        },
        attrs={"beam_size": 2, "end_id": END, "level": 0, "is_accumulated": True},
    ).check_output()
