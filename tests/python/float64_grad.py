"""Central-difference gradients of a float64 numpy reference, for checking a kernel's analytic
gradients (float32 included) against something independent of Tide's kernels."""

import numpy as np


def numeric_grad(f, inputs, param, w, idx=None, delta=1e-6):
    """d sum(w * f(**inputs)) / d inputs[param] in float64 at the flat indices `idx` (all when
    None). `inputs` are cast to float64 first; returns the values at `idx`."""
    base = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in inputs.items()}
    w = np.asarray(w, dtype=np.float64)
    flat = base[param].reshape(-1)
    grads = []
    for i in range(flat.size) if idx is None else idx:
        old = flat[i]
        flat[i] = old + delta
        hi = np.sum(w * f(**base))
        flat[i] = old - delta
        lo = np.sum(w * f(**base))
        flat[i] = old
        grads.append((hi - lo) / (2 * delta))
    return np.array(grads)


def central_diff(f, x, eps=1e-6):
    """d f(x) / d x by central differences, element by element (f: array -> scalar)."""
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        g[idx] = (f(hi) - f(lo)) / (2 * eps)
    return g


def central_diff_of(f, inputs, name, eps=1e-6):
    """d f(**inputs) / d inputs[name] by central differences, the inputs in float64."""
    base = {k: np.array(v, dtype=np.float64) for k, v in inputs.items()}
    return central_diff(lambda v: f(**{**base, name: v}), base[name], eps)
