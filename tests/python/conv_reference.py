"""A float64 numpy reference of the NCHW convolution the conv tests compare against."""

import numpy as np


def conv_ref(x, w, strides, pads, dils, groups):
    """Cross-correlation of NCHW x by [M, C/groups, kh, kw] w in float64: strides (h, w), zero
    pads (top, bottom, left, right), dilations (h, w), channel groups."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    oh = (h + pads[0] + pads[1] - (dils[0] * (kh - 1) + 1)) // strides[0] + 1
    ow = (wd + pads[2] + pads[3] - (dils[1] * (kw - 1) + 1)) // strides[1] + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                y0, x0 = i * dils[0], j * dils[1]
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    y0 : y0 + strides[0] * (oh - 1) + 1 : strides[0],
                    x0 : x0 + strides[1] * (ow - 1) + 1 : strides[1],
                ]
                out[:, g * mg : (g + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", patch, w[g * mg : (g + 1) * mg, :, i, j]
                )
    return out
