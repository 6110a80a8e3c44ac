"""fluid.evaluator (metrics the program accumulates over a pass) and fluid.metrics (metrics
accumulated in Python over fetched values), Fluid 1.x's APIs (issue 37, item 2), each checked
against sklearn or numpy on random data, batch after batch."""

import numpy as np
import pytest
from sklearn import metrics as skm

import tide
from tide import layers


def _classifier(classes=5, features=6):
    x = layers.data(name="x", shape=[features])
    label = layers.data(name="label", shape=[1], dtype="int64")
    predict = layers.fc(input=x, size=classes, act="softmax")
    return x, label, predict


# ---------------------------------------------------------------------------------------------
# tide.evaluator
@pytest.mark.parametrize("k", [1, 2])
def test_evaluator_accuracy_over_passes(exe, rng, k):
    _, _, predict = _classifier()
    label = tide.default_main_program().global_block().var("label")
    accuracy = tide.evaluator.Accuracy(input=predict, label=label, k=k)
    exe.run(tide.default_startup_program())
    for _ in range(2):  # two passes: reset() starts each one from zero
        accuracy.reset(exe)
        probs, labels = [], []
        for batch in (7, 13, 4):
            xs = rng.uniform(-1, 1, (batch, 6)).astype("float32")
            ys = rng.randint(0, 5, (batch, 1)).astype("int64")
            p, batch_acc = exe.run(
                feed={"x": xs, "label": ys}, fetch_list=[predict] + accuracy.metrics
            )
            want = skm.top_k_accuracy_score(ys[:, 0], p, k=k, labels=range(5))
            np.testing.assert_allclose(batch_acc, [want], rtol=1e-6)
            probs.append(p)
            labels.append(ys[:, 0])
        pass_acc = accuracy.eval(exe)
        want = skm.top_k_accuracy_score(
            np.concatenate(labels), np.concatenate(probs), k=k, labels=range(5)
        )
        np.testing.assert_allclose(pass_acc, [want], rtol=1e-6)
        assert pass_acc.dtype == np.float32


def test_evaluator_accuracy_needs_a_batch_and_the_global_block(exe):
    _, label, predict = _classifier()
    accuracy = tide.evaluator.Accuracy(input=predict, label=label)
    exe.run(tide.default_startup_program())
    with pytest.raises(ValueError, match="no batch ran"):
        accuracy.eval(exe)
    cond = layers.fill_constant([1], "bool", True)
    block = layers.ConditionalBlock([cond], is_scalar_condition=True)
    with pytest.raises(ValueError, match="global block"):
        with block.block():
            tide.evaluator.Accuracy(input=predict, label=label)


def _iob_chunks(tags, num_types):
    """(begin, end, type) of each chunk of IOB tags (type * 2 + 0 for B, + 1 for I; O is
    num_types * 2): a chunk starts at a B, or at an I of another type than the token before."""
    chunks, current = [], None
    for i, t in enumerate(list(tags) + [num_types * 2]):
        kind, typ = (None, None) if t == num_types * 2 else (t % 2, t // 2)
        if current and (kind != 1 or typ != current[2]):
            chunks.append((current[0], i - 1, current[2]))
            current = None
        if kind is not None and current is None:
            current = (i, None, typ)
    return set(chunks)


def test_evaluator_chunk_evaluator(exe, rng):
    num_types = 3
    infer = layers.data(name="infer", shape=[1], dtype="int64", lod_level=1)
    label = layers.data(name="lab", shape=[1], dtype="int64", lod_level=1)
    chunk = tide.evaluator.ChunkEvaluator(
        input=infer, label=label, chunk_scheme="IOB", num_chunk_types=num_types
    )
    exe.run(tide.default_startup_program())
    chunk.reset(exe)
    counts = np.zeros(3)
    for _ in range(3):
        lens = rng.randint(1, 9, 4)
        feeds = {}
        seqs = {}
        for name in ("infer", "lab"):
            values = rng.randint(0, num_types * 2 + 1, (lens.sum(), 1)).astype("int64")
            t = tide.LoDTensor(values)
            t.set_recursive_sequence_lengths([list(lens)])
            feeds[name] = t
            seqs[name] = np.split(values[:, 0], np.cumsum(lens)[:-1])
        batch = np.zeros(3)
        for a, b in zip(seqs["infer"], seqs["lab"]):
            ca, cb = _iob_chunks(a, num_types), _iob_chunks(b, num_types)
            batch += [len(ca), len(cb), len(ca & cb)]
        p, r, f1 = exe.run(feed=feeds, fetch_list=chunk.metrics)
        want_p = batch[2] / batch[0] if batch[0] else 0.0
        want_r = batch[2] / batch[1] if batch[1] else 0.0
        np.testing.assert_allclose([p[0], r[0]], [want_p, want_r], rtol=1e-6)
        counts += batch
    precision, recall, f1 = chunk.eval(exe)
    want_p, want_r = counts[2] / counts[0], counts[2] / counts[1]
    np.testing.assert_allclose(precision, [want_p], rtol=1e-6)
    np.testing.assert_allclose(recall, [want_r], rtol=1e-6)
    np.testing.assert_allclose(f1, [2 * want_p * want_r / (want_p + want_r)], rtol=1e-6)


def test_evaluator_edit_distance(exe, rng):
    hyps = layers.data(name="hyps", shape=[1], dtype="int64", lod_level=1)
    refs = layers.data(name="refs", shape=[1], dtype="int64", lod_level=1)
    distances, seq_num = layers.edit_distance(hyps, refs)  # normalized, as the evaluator's
    evaluator = tide.evaluator.EditDistance(input=hyps, label=refs)
    exe.run(tide.default_startup_program())
    evaluator.reset(exe)
    all_distances = []
    for _ in range(3):
        feeds = {}
        for name in ("hyps", "refs"):
            lens = [3, 1, 4, 2, 5]
            t = tide.LoDTensor(rng.randint(0, 3, (sum(lens), 1)).astype("int64"))
            t.set_recursive_sequence_lengths([lens])
            feeds[name] = t
        d, n, total, errors = exe.run(
            feed=feeds, fetch_list=[distances, seq_num] + evaluator.metrics
        )
        assert n.tolist() == [5]
        np.testing.assert_allclose(total, [d.sum()], rtol=1e-6)
        assert errors.tolist() == [int(np.sum(d != 0))]
        all_distances.append(d[:, 0])
    all_distances = np.concatenate(all_distances)
    avg_distance, avg_error = evaluator.eval(exe)
    np.testing.assert_allclose(avg_distance, [all_distances.mean()], rtol=1e-5)
    np.testing.assert_allclose(avg_error, [np.mean(all_distances != 0)], rtol=1e-6)


def test_the_seeds_evaluator_loop(exe, rng):
    # Fluid's developer guide's "如何使用 evaluator": accuracy.metrics fetched with the loss, eval per pass.
    # (The developer guide's accuracy.reset() takes the executor in every Fluid release: reset(exe).)
    x, label, predict = _classifier()
    avg_cost = layers.mean(layers.cross_entropy(input=predict, label=label))
    tide.optimizer.SGD(learning_rate=0.1).minimize(avg_cost)
    accuracy = tide.evaluator.Accuracy(input=predict, label=label)
    feeder = tide.DataFeeder(feed_list=[x, label], place=tide.CPUPlace())
    exe.run(tide.default_startup_program())
    data = [(rng.uniform(-1, 1, 6).astype("float32"), [int(rng.randint(0, 5))]) for _ in range(40)]

    def train_reader():
        for i in range(0, len(data), 8):
            yield data[i : i + 8]

    for _pass_id in range(2):
        accuracy.reset(exe)
        correct = 0.0
        for batch in train_reader():
            loss, acc = exe.run(
                tide.default_main_program(),
                feed=feeder.feed(batch),
                fetch_list=[avg_cost] + accuracy.metrics,
            )
            correct += float(acc[0]) * len(batch)
        pass_acc = accuracy.eval(exe)
        np.testing.assert_allclose(pass_acc, [correct / len(data)], rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# tide.metrics
def _batches(rng, n=4):
    for _ in range(n):
        size = rng.randint(5, 30)
        yield rng.uniform(0, 1, size), rng.randint(0, 2, size)


def test_metrics_precision_recall_and_composite(rng):
    precision, recall = tide.metrics.Precision(), tide.metrics.Recall()
    both = tide.metrics.CompositeMetric()
    both.add_metric(tide.metrics.Precision())
    both.add_metric(tide.metrics.Recall())
    preds, labels = [], []
    for p, y in _batches(rng):
        precision.update(p.reshape(-1, 1), y.reshape(-1, 1))
        recall.update(p, y)
        both.update(p, y)
        preds.append(p)
        labels.append(y)
    pred, label = np.rint(np.concatenate(preds)), np.concatenate(labels)
    assert precision.eval() == pytest.approx(skm.precision_score(label, pred))
    assert recall.eval() == pytest.approx(skm.recall_score(label, pred))
    assert both.eval() == pytest.approx([precision.eval(), recall.eval()])
    assert precision.get_config() == {
        "name": "Precision",
        "states": {"tp": precision.tp, "fp": precision.fp},
    }
    precision.reset()
    both.reset()
    assert (precision.tp, precision.fp) == (0, 0) and precision.eval() == 0.0
    assert both.eval() == [0.0, 0.0]
    with pytest.raises(ValueError, match="numpy"):
        precision.update([1], np.array([1]))
    with pytest.raises(ValueError, match="MetricBase"):
        both.add_metric("recall")


def test_metrics_accuracy_is_the_weighted_mean(rng):
    acc = tide.metrics.Accuracy("acc")
    assert str(acc) == "acc"
    with pytest.raises(ValueError, match="no data"):
        acc.eval()
    preds, labels = [], []
    for p, y in _batches(rng):
        hit = np.rint(p) == y
        acc.update(value=np.array([hit.mean()]), weight=len(y))
        preds.append(np.rint(p))
        labels.append(y)
    np.testing.assert_allclose(
        acc.eval(), [skm.accuracy_score(np.concatenate(labels), np.concatenate(preds))]
    )
    with pytest.raises(ValueError, match="negative"):
        acc.update(value=0.5, weight=-1)
    acc.reset()
    assert acc.value == 0.0 and acc.weight == 0.0


def test_metrics_auc_matches_sklearn(rng):
    thresholds = 4095
    auc = tide.metrics.Auc("auc", num_thresholds=thresholds)
    scores, labels = [], []
    for _ in range(4):
        # Scores in the middle of a bucket: bucketing loses nothing, ties are kept as ties.
        s = (rng.randint(0, thresholds, 50) + 0.5) / thresholds
        y = (rng.uniform(0, 1, 50) < s).astype("int64")  # informative, not perfect
        auc.update(np.stack([1 - s, s], axis=1), y.reshape(-1, 1))
        scores.append(s)
        labels.append(y)
    assert auc.eval() == pytest.approx(
        skm.roc_auc_score(np.concatenate(labels), np.concatenate(scores)), rel=1e-9
    )
    auc.reset()
    assert auc.eval() == 0.0


def test_metrics_chunk_evaluator_and_edit_distance(rng):
    chunk = tide.metrics.ChunkEvaluator()
    counts = rng.randint(1, 20, (5, 3))
    counts[:, 2] = np.minimum(counts[:, 2], counts[:, :2].min(axis=1))
    for infer, label, correct in counts:
        chunk.update(np.array([infer]), np.array([label]), np.array([correct]))
    infer, label, correct = counts.sum(axis=0)
    p, r, f1 = chunk.eval()
    assert (p, r) == pytest.approx((correct / infer, correct / label))
    assert f1 == pytest.approx(
        skm.f1_score(
            [1] * correct + [1] * (label - correct) + [0] * (infer - correct),
            [1] * correct + [0] * (label - correct) + [1] * (infer - correct),
        )
    )

    ed = tide.metrics.EditDistance("ed")
    all_d = []
    for _ in range(3):
        d = rng.randint(0, 3, (6, 1)).astype("float32") / 2
        ed.update(d, 6)
        all_d.append(d)
    all_d = np.concatenate(all_d)
    avg, err = ed.eval()
    assert avg == pytest.approx(all_d.mean()) and err == pytest.approx(np.mean(all_d != 0))
    with pytest.raises(ValueError, match="seq_num"):
        ed.update(all_d, "6")
