"""Fluid's fluid.metrics: metrics accumulated in Python over the values a program fetches,
batch after batch (Fluid 1.x's API and semantics)::

    acc = tide.metrics.Accuracy()
    for data in reader():
        loss, batch_acc = exe.run(main, feed=..., fetch_list=[avg_cost, accuracy])
        acc.update(value=batch_acc, weight=len(data))
    print(acc.eval())

Every metric has update(...), eval() and reset(); reset() zeroes the public state (attributes
not starting with "_"), get_config() returns it.
"""

import copy

import numpy as np

__all__ = [
    "MetricBase",
    "CompositeMetric",
    "Precision",
    "Recall",
    "Accuracy",
    "ChunkEvaluator",
    "EditDistance",
    "Auc",
]


def _is_numpy_(var):
    return isinstance(var, (np.ndarray, np.generic))


def _is_number_(var):
    return (
        isinstance(var, (int, float, np.integer, np.floating)) and not isinstance(var, bool)
    ) or (isinstance(var, np.ndarray) and var.shape == (1,))


def _is_number_or_matrix_(var):
    return _is_number_(var) or isinstance(var, np.ndarray)


class MetricBase:
    """The base of the metrics: a name, public state attributes, update / eval / reset."""

    def __init__(self, name):
        self._name = str(name) if name is not None else self.__class__.__name__

    def __str__(self):
        return self._name

    def _states(self):
        return {attr: value for attr, value in self.__dict__.items() if not attr.startswith("_")}

    def reset(self):
        """Zeroes the state: ints to 0, floats to 0.0, arrays to zeros, anything else to None."""
        for attr, value in self._states().items():
            if isinstance(value, int):
                setattr(self, attr, 0)
            elif isinstance(value, float):
                setattr(self, attr, 0.0)
            elif isinstance(value, (np.ndarray, np.generic)):
                setattr(self, attr, np.zeros_like(value))
            else:
                setattr(self, attr, None)

    def get_config(self):
        """{"name": ..., "states": a copy of the state}."""
        return {"name": self._name, "states": copy.deepcopy(self._states())}

    def update(self, preds, labels):
        raise NotImplementedError("%s does not implement update()" % self.__class__.__name__)

    def eval(self):
        raise NotImplementedError("%s does not implement eval()" % self.__class__.__name__)


class CompositeMetric(MetricBase):
    """Several metrics updated with the same (preds, labels); eval() returns their values in
    order."""

    def __init__(self, name=None):
        super().__init__(name)
        self._metrics = []

    def add_metric(self, metric):
        if not isinstance(metric, MetricBase):
            raise ValueError(
                "CompositeMetric: a sub-metric must derive from MetricBase, got %r" % (metric,)
            )
        self._metrics.append(metric)

    def reset(self):
        for m in self._metrics:
            m.reset()

    def update(self, preds, labels):
        for m in self._metrics:
            m.update(preds, labels)

    def eval(self):
        return [m.eval() for m in self._metrics]


def _binary(preds, labels):
    """(predicted classes: preds rounded, labels), both flat, of a binary classifier's batch."""
    if not _is_numpy_(preds):
        raise ValueError("The 'preds' must be a numpy ndarray.")
    if not _is_numpy_(labels):
        raise ValueError("The 'labels' must be a numpy ndarray.")
    return np.rint(preds).astype("int32").reshape(-1), np.asarray(labels).reshape(-1)


class Precision(MetricBase):
    """Binary precision, tp / (tp + fp): preds are probabilities of class 1 (rounded), labels
    0 or 1."""

    def __init__(self, name=None):
        super().__init__(name)
        self.tp = 0  # true positives
        self.fp = 0  # false positives

    def update(self, preds, labels):
        preds, labels = _binary(preds, labels)
        positive = preds == 1
        self.tp += int(np.sum(positive & (labels == 1)))
        self.fp += int(np.sum(positive & (labels != 1)))

    def eval(self):
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0


class Recall(MetricBase):
    """Binary recall, tp / (tp + fn): preds are probabilities of class 1 (rounded), labels 0
    or 1."""

    def __init__(self, name=None):
        super().__init__(name)
        self.tp = 0  # true positives
        self.fn = 0  # false negatives

    def update(self, preds, labels):
        preds, labels = _binary(preds, labels)
        real = labels == 1
        self.tp += int(np.sum(real & (preds == 1)))
        self.fn += int(np.sum(real & (preds != 1)))

    def eval(self):
        recall = self.tp + self.fn
        return float(self.tp) / recall if recall != 0 else 0.0


class Accuracy(MetricBase):
    """The weighted mean of batch accuracies: update(value=layers.accuracy's value, weight=the
    batch size)."""

    def __init__(self, name=None):
        super().__init__(name)
        self.value = 0.0
        self.weight = 0.0

    def update(self, value, weight):
        if not _is_number_or_matrix_(value):
            raise ValueError("The 'value' must be a number(int, float) or a numpy ndarray.")
        if not _is_number_(weight):
            raise ValueError("The 'weight' must be a number(int, float).")
        if weight < 0:
            raise ValueError("The 'weight' can not be negative")
        self.value += value * weight
        self.weight += weight

    def eval(self):
        if self.weight == 0:
            raise ValueError(
                "There is no data in Accuracy Metrics. Please check layers.accuracy "
                "output has added to Accuracy."
            )
        return self.value / self.weight


class ChunkEvaluator(MetricBase):
    """Chunk precision, recall and F1 over layers.chunk_eval's counts, summed batch by batch."""

    def __init__(self, name=None):
        super().__init__(name)
        self.num_infer_chunks = 0
        self.num_label_chunks = 0
        self.num_correct_chunks = 0

    def update(self, num_infer_chunks, num_label_chunks, num_correct_chunks):
        for arg, value in (
            ("num_infer_chunks", num_infer_chunks),
            ("num_label_chunks", num_label_chunks),
            ("num_correct_chunks", num_correct_chunks),
        ):
            if not _is_number_or_matrix_(value):
                raise ValueError("The '%s' must be a number(int) or a numpy ndarray." % arg)
        self.num_infer_chunks += num_infer_chunks
        self.num_label_chunks += num_label_chunks
        self.num_correct_chunks += num_correct_chunks

    def eval(self):
        """(precision, recall, f1)."""
        infer, label, correct = (
            float(np.sum(v))
            for v in (self.num_infer_chunks, self.num_label_chunks, self.num_correct_chunks)
        )
        precision = correct / infer if infer else 0.0
        recall = correct / label if label else 0.0
        f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
        return precision, recall, f1


class EditDistance(MetricBase):
    """The average edit distance per sequence and the share of sequences in error, over
    layers.edit_distance's (distances, sequence count), batch by batch."""

    def __init__(self, name=None):
        super().__init__(name)
        self.total_distance = 0.0
        self.seq_num = 0
        self.instance_error = 0

    def update(self, distances, seq_num):
        if not _is_numpy_(distances):
            raise ValueError("The 'distances' must be a numpy ndarray.")
        if not _is_number_(seq_num):
            raise ValueError("The 'seq_num' must be a number(int, float).")
        seq_num = int(np.sum(seq_num))
        seq_right_count = int(np.sum(distances == 0))
        self.seq_num += seq_num
        self.instance_error += seq_num - seq_right_count
        self.total_distance += float(np.sum(distances))

    def eval(self):
        """(average distance, instance error rate)."""
        if self.seq_num == 0:
            raise ValueError(
                "There is no data in EditDistance Metric. Please check "
                "layers.edit_distance output has been added to EditDistance."
            )
        return self.total_distance / self.seq_num, self.instance_error / float(self.seq_num)


class Auc(MetricBase):
    """Area under the ROC curve, from predictions bucketed into num_thresholds + 1 bins:
    update(preds [N, 2] (class probabilities; column 1 is the positive class), labels [N] or
    [N, 1] of 0 / 1). Only the ROC curve is computed, as in Fluid."""

    def __init__(self, name=None, curve="ROC", num_thresholds=4095):
        super().__init__(name=name)
        self._curve = curve
        self._num_thresholds = int(num_thresholds)
        self._stat_pos = np.zeros(self._num_thresholds + 1)
        self._stat_neg = np.zeros(self._num_thresholds + 1)

    def reset(self):
        self._stat_pos[:] = 0
        self._stat_neg[:] = 0

    def update(self, preds, labels):
        if not _is_numpy_(labels):
            raise ValueError("The 'labels' must be a numpy ndarray.")
        if not _is_numpy_(preds):
            raise ValueError("The 'predictions' must be a numpy ndarray.")
        value = np.asarray(preds)[:, 1]
        if np.any(value < 0) or np.any(value > 1):
            raise ValueError("Auc: the predicted probabilities must be in [0, 1]")
        bins = (value * self._num_thresholds).astype("int64")
        positive = np.asarray(labels).reshape(-1).astype(bool)
        self._stat_pos += np.bincount(bins[positive], minlength=self._num_thresholds + 1)
        self._stat_neg += np.bincount(bins[~positive], minlength=self._num_thresholds + 1)

    @staticmethod
    def trapezoid_area(x1, x2, y1, y2):
        return abs(x1 - x2) * (y1 + y2) / 2.0

    def eval(self):
        tot_pos = tot_neg = auc = 0.0
        for idx in range(self._num_thresholds, -1, -1):  # from the highest threshold down
            tot_pos_prev, tot_neg_prev = tot_pos, tot_neg
            tot_pos += self._stat_pos[idx]
            tot_neg += self._stat_neg[idx]
            auc += self.trapezoid_area(tot_neg, tot_neg_prev, tot_pos, tot_pos_prev)
        return auc / tot_pos / tot_neg if tot_pos > 0.0 and tot_neg > 0.0 else 0.0
