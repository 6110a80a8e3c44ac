"""Activation ranges for post-training quantization: each value's largest abs(x) over the calibration
batches ("abs_max"), or a threshold from its histogram of abs(x) ("hist": the hist_percent quantile,
Paddle's; "KL": the threshold whose quantized histogram is closest to the original by
Kullback-Leibler divergence, TensorRT's and Paddle's method)."""

import numpy as np

ALGOS = ("abs_max", "hist", "KL")
BINS = 2048  # the histograms' bins over [0, abs_max], as Paddle's


class Ranges:
    """Running statistics of named values over the calibration batches."""

    def __init__(self, names):
        self.names = list(names)
        self.abs_max = dict.fromkeys(self.names, 0.0)
        self.min = dict.fromkeys(self.names, np.inf)
        self.hist = {}

    def observe_max(self, values):
        """First pass: values is {name: array}."""
        for n, v in values.items():
            v = np.asarray(v, np.float32)
            if v.size:
                self.abs_max[n] = max(self.abs_max[n], float(np.abs(v).max()))
                self.min[n] = min(self.min[n], float(v.min()))

    def observe_hist(self, values):
        """Second pass (the histogram methods): abs(x) counted in BINS bins up to the first pass's
        abs_max."""
        for n, v in values.items():
            top = self.abs_max[n]
            if top <= 0:
                continue
            h, _ = np.histogram(np.abs(np.asarray(v, np.float32)), bins=BINS, range=(0.0, top))
            self.hist[n] = self.hist.get(n, 0) + h

    def threshold(self, name, algo, unsigned, hist_percent):
        """The abs(x) mapped to the top level of `name`'s int8 type."""
        top = self.abs_max[name]
        if algo == "abs_max" or name not in self.hist:
            return top
        hist = self.hist[name].astype(np.float64)
        width = top / BINS
        if algo == "hist":
            cdf = np.cumsum(hist) / hist.sum()
            return float(min(np.searchsorted(cdf, hist_percent) + 1, BINS) * width)
        return (kl_threshold_bin(hist, 256 if unsigned else 128) + 0.5) * width


def kl_threshold_bin(hist, levels, step=4):
    """The bin whose end, as the top level, quantizes `hist` with the least KL divergence
    (candidates every `step` bins over the upper half of the range, as Paddle's KL: below it, a
    histogram dominated by its zeros, a relu's, would have most values clipped)."""
    n = len(hist)
    if hist[levels:].sum() == 0:
        return int(np.nonzero(hist)[0].max()) if hist.any() else n - 1
    best, best_kl = n - 1, np.inf
    for i in range(max(levels, n // 2), n + 1, step):
        p = hist[:i].copy()
        p[-1] += hist[i:].sum()  # the clipped tail piles up in the last bin
        src = hist[:i]
        group = (np.arange(i) * levels) // i
        merged = np.bincount(group, weights=src, minlength=levels)
        used = np.bincount(group, weights=(src > 0).astype(np.float64), minlength=levels)
        q = np.where(src > 0, merged[group] / np.maximum(used[group], 1), 0.0)
        ps, qs = p.sum(), q.sum()
        if ps == 0 or qs == 0:
            continue
        p, q = p / ps, q / qs
        mask = p > 0
        kl = float(np.sum(p[mask] * np.log(p[mask] / np.maximum(q[mask], 1e-12))))
        if kl < best_kl:
            best, best_kl = i - 1, kl
    return best
