"""tide.fft: numpy.fft's and paddle.fft's discrete Fourier transforms of program variables.

    x = tide.layers.data(name="x", shape=[8, 16], dtype="float32", append_batch_size=False)
    spectrum = tide.fft.rfft2(x)                    # complex64 [8, 9]
    y = tide.fft.irfft2(spectrum, s=[8, 16])        # float32 [8, 16]

Each function appends ops to the default main program, as tide.layers do, and returns the output
Variable. The transforms are the ops_fft pack's fft_c2c, fft_r2c and fft_c2r, mapped as Paddle's
Python maps them:

- fft, ifft, fft2, ifft2, fftn, ifftn: complex x by fft_c2c; a real x by fft_r2c with every bin
  (onesided=False), so no complex copy of x is made.
- rfft, rfft2, rfftn (forward) and ihfft, ihfft2, ihfftn (inverse, conjugated): real x by
  fft_r2c, the last axis' n//2 + 1 bins.
- irfft, irfft2, irfftn (inverse) and hfft, hfft2, hfftn (forward of the conjugate): complex x
  (a real one is cast to complex first) by fft_c2r, a real output of n points along the last
  axis, 2 * (m - 1) for m bins by default; only the first n//2 + 1 bins are read.

`n` (1-D) or `s` (n-D) crops x (a slice op) or zero-pads it at the end (a pad op) along each
transformed axis first, as numpy; for the c2r transforms the last axis' size is the output's. A
dim not known at build time (-1) is padded by the size and then sliced to it, which crops or pads
when the program runs. `norm` is "backward" (the inverse scaled by 1/n), "forward" (the forward by
1/n) or "ortho" (both by 1/sqrt(n)), n the product of the transformed sizes. float32 and
complex64 inputs give complex64 (float32 from the c2r transforms), float64 and complex128 inputs
complex128 (float64).

Unlike numpy and Paddle, an integer x is refused (cast it first), and so are repeated axes (numpy
transforms such an axis twice). fftfreq / rfftfreq are constants in the program (assign_value);
fftshift / ifftshift are roll ops. Gradients flow through the transforms and shifts (the FFT ops'
grads are the adjoint transforms), so a real parameter can be trained through its spectrum.
"""

import numpy as np

from .core import complex_dtype, real_dtype
from .framework import Variable
from .layer_helper import LayerHelper
from .layers import nn
from .layers.checks import COMPLEX, check_dtype, check_type, check_variable_and_dtype, is_int

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "hfft2",
    "ihfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_REAL = ("float32", "float64")  # the FFT kernels' real types
_NORMS = ("backward", "forward", "ortho")


# --- argument checks -------------------------------------------------------------------------


def _check_x(fn, x, kinds):
    check_variable_and_dtype(x, "x", kinds, "tide.fft." + fn)


def _check_norm(fn, norm):
    if not isinstance(norm, str) or norm not in _NORMS:
        raise ValueError(
            "tide.fft.%s: norm must be 'backward', 'forward' or 'ortho', got %r" % (fn, norm)
        )


def _size(fn, value, arg):
    """A transform size (n, s[i]): an int >= 1."""
    if not is_int(value):
        raise TypeError("tide.fft.%s: %s must be an int, got %r" % (fn, arg, value))
    if value < 1:
        raise ValueError("tide.fft.%s: %s must be >= 1, got %d" % (fn, arg, value))
    return int(value)


def _axis(fn, x, axis, arg):
    """`axis` in [-rank, rank) of x, as a non-negative axis."""
    rank = len(x.shape)
    if not is_int(axis):
        raise TypeError("tide.fft.%s: %s must be an int, got %r" % (fn, arg, axis))
    if not -rank <= axis < rank:
        raise ValueError(
            "tide.fft.%s: %s = %d is out of range for x of rank %d (shape %s): it must be in "
            "[%d, %d)" % (fn, arg, axis, rank, list(x.shape), -rank, rank)
        )
    return int(axis) % rank


def _axes(fn, x, axes):
    """A list or tuple of distinct axes of x, normalised; at least one."""
    check_type(axes, "axes", (list, tuple), "tide.fft." + fn)
    out = [_axis(fn, x, a, "axes[%d]" % i) for i, a in enumerate(axes)]
    if not out:
        raise ValueError(
            "tide.fft.%s: no axis to transform (axes is empty, or x of shape %s is 0-D)"
            % (fn, list(x.shape))
        )
    for i, a in enumerate(out):
        if a in out[:i]:
            raise ValueError("tide.fft.%s: axes %s repeats axis %d" % (fn, list(axes), a))
    return out


def _one_axis(fn, x, n, axis):
    """The 1-D transforms' axes and sizes lists."""
    return [_axis(fn, x, axis, "axis")], [None if n is None else _size(fn, n, "n")]


def _nd_axes(fn, x, s, axes):
    """numpy's n-D arguments: the axes (every one of x's, or its last len(s) when only s is given)
    and their sizes (None: x's own)."""
    sizes = None
    if s is not None:
        check_type(s, "s", (list, tuple), "tide.fft." + fn)
        sizes = [_size(fn, v, "s[%d]" % i) for i, v in enumerate(s)]
    rank = len(x.shape)
    if axes is None:
        if sizes is not None and len(sizes) > rank:
            raise ValueError(
                "tide.fft.%s: s %s has %d sizes, more than x's rank %d (shape %s)"
                % (fn, list(s), len(sizes), rank, list(x.shape))
            )
        axes = list(range(rank - len(sizes), rank)) if sizes is not None else list(range(rank))
    axes = _axes(fn, x, axes)
    if sizes is None:
        return axes, [None] * len(axes)
    if len(sizes) != len(axes):
        raise ValueError(
            "tide.fft.%s: s %s and axes %s must have one length" % (fn, list(s), list(axes))
        )
    return axes, sizes


def _two_axes(fn, x, s, axes):
    """fft2's family: s and axes of two entries (axes (-2, -1) by default)."""
    for arg, value in (("s", s), ("axes", axes)):
        if isinstance(value, (list, tuple)) and len(value) != 2:
            raise ValueError("tide.fft.%s: %s must have 2 entries, got %s" % (fn, arg, list(value)))
    return _nd_axes(fn, x, s, axes)


# --- building the ops ------------------------------------------------------------------------


def _slice(x, cuts):
    """x[:n] along each (axis, n) of cuts."""
    if not cuts:
        return x
    return nn.slice(x, [a for a, _ in cuts], [0] * len(cuts), [n for _, n in cuts])


def _pad(x, grows):
    """x with `p` zeros appended along each (axis, p) of grows."""
    if not grows:
        return x
    paddings = [0] * (2 * len(x.shape))
    for a, p in grows:
        paddings[2 * a + 1] = p
    return nn.pad(x, paddings)


def _resize(x, axes, sizes):
    """x cropped or zero-padded at the end to sizes[i] along axes[i] (None: left as it is). A dim
    unknown at build time is padded by the size and sliced to it: a crop or a pad at run time."""
    dims = x.shape
    todo = [(a, n) for a, n in zip(axes, sizes) if n is not None and dims[a] != n]
    x = _slice(x, [(a, n) for a, n in todo if dims[a] > n])
    x = _pad(x, [(a, n - dims[a]) if dims[a] >= 0 else (a, n) for a, n in todo if dims[a] < n])
    unknown = [(a, n) for a, n in todo if dims[a] < 0]
    x = _slice(x, unknown)
    if unknown:  # slice's inference cannot know the size of an unknown dim it cut
        shape = list(x.shape)
        for a, n in unknown:
            shape[a] = n
        x.desc.shape = shape
    return x


def _fft_op(op_type, x, axes, norm, forward, out_dtype, name, **attrs):
    helper = LayerHelper(op_type, name=name)
    out = helper.create_variable_for_type_inference(out_dtype)
    attrs.update(axes=list(axes), normalization=norm, forward=forward)
    helper.append_op(op_type, inputs={"X": x}, outputs={"Out": out}, attrs=attrs)
    return out


def _c2c(fn, x, axes, sizes, norm, forward, name):
    """fft / ifft / fftn / ifftn: fft_c2c, or for a real x fft_r2c with every bin (Paddle's)."""
    _check_norm(fn, norm)
    x = _resize(x, axes, sizes)
    if x.dtype in _REAL:
        out_dtype = complex_dtype(x.dtype)
        return _fft_op("fft_r2c", x, axes, norm, forward, out_dtype, name, onesided=False)
    return _fft_op("fft_c2c", x, axes, norm, forward, x.dtype, name)


def _r2c(fn, x, axes, sizes, norm, forward, name):
    """rfft* (forward) and ihfft* (inverse: the conjugate): real x, n//2 + 1 bins on the last axis."""
    _check_norm(fn, norm)
    x = _resize(x, axes, sizes)
    out_dtype = complex_dtype(x.dtype)
    return _fft_op("fft_r2c", x, axes, norm, forward, out_dtype, name, onesided=True)


def _c2r(fn, x, axes, sizes, norm, forward, name):
    """irfft* (inverse) and hfft* (forward of the conjugate): a real output of sizes[-1] points
    (2 * (m - 1) for m bins when None) along the last axis; the op reads that axis' first
    n//2 + 1 bins itself (zeros past x's), so only the other axes are resized."""
    _check_norm(fn, norm)
    if x.dtype in _REAL:
        x = nn.cast(x, complex_dtype(x.dtype))
    last, n = axes[-1], sizes[-1]
    if n is None:
        m = x.shape[last]
        if 0 <= m <= 1:
            raise ValueError(
                "tide.fft.%s: x (shape %s) has %d bin(s) along axis %d, which gives "
                "2 * (m - 1) = %d output points; give the output size (n or s)"
                % (fn, list(x.shape), m, last, 2 * (m - 1))
            )
        n = 0  # the op's default: 2 * (m - 1), also when m is known only at run time
    x = _resize(x, axes[:-1], sizes[:-1])
    out_dtype = real_dtype(x.dtype)
    return _fft_op("fft_c2r", x, axes, norm, forward, out_dtype, name, last_dim_size=n)


_ANY = _REAL + COMPLEX


# --- 1-D transforms --------------------------------------------------------------------------


def fft(x, n=None, axis=-1, norm="backward", name=None):
    """The 1-D discrete Fourier transform along `axis` (numpy.fft.fft, paddle.fft.fft).

    Args:
        x (Variable): float32, float64, complex64 or complex128.
        n (int): the transform's length: x cropped or zero-padded to it along axis; None: x's.
        axis (int): the axis transformed (negative: from the end).
        norm (str): "backward" (unscaled; ifft scales by 1/n), "forward" (1/n) or "ortho"
            (1/sqrt(n)).
        name (str): the output's name prefix, or None.

    Returns:
        Variable: complex64 (of float32 / complex64) or complex128, n points along axis.
    """
    _check_x("fft", x, _ANY)
    axes, sizes = _one_axis("fft", x, n, axis)
    return _c2c("fft", x, axes, sizes, norm, True, name)


def ifft(x, n=None, axis=-1, norm="backward", name=None):
    """The 1-D inverse discrete Fourier transform along `axis` (numpy.fft.ifft): ifft(fft(x)) == x.

    Args:
        x (Variable): float32, float64, complex64 or complex128.
        n (int): the transform's length: x cropped or zero-padded to it along axis; None: x's.
        axis (int): the axis transformed (negative: from the end).
        norm (str): "backward" (scaled by 1/n), "forward" (unscaled) or "ortho" (1/sqrt(n)).
        name (str): the output's name prefix, or None.

    Returns:
        Variable: complex64 (of float32 / complex64) or complex128, n points along axis.
    """
    _check_x("ifft", x, _ANY)
    axes, sizes = _one_axis("ifft", x, n, axis)
    return _c2c("ifft", x, axes, sizes, norm, False, name)


def rfft(x, n=None, axis=-1, norm="backward", name=None):
    """The 1-D discrete Fourier transform of real x along `axis`, its n//2 + 1 non-negative
    frequency bins (numpy.fft.rfft).

    Args:
        x (Variable): float32 or float64.
        n (int): the transform's length: x cropped or zero-padded to it along axis; None: x's.
        axis (int): the axis transformed (negative: from the end).
        norm (str): "backward" (unscaled), "forward" (1/n) or "ortho" (1/sqrt(n)).
        name (str): the output's name prefix, or None.

    Returns:
        Variable: complex64 / complex128, n//2 + 1 bins along axis.
    """
    _check_x("rfft", x, _REAL)
    axes, sizes = _one_axis("rfft", x, n, axis)
    return _r2c("rfft", x, axes, sizes, norm, True, name)


def irfft(x, n=None, axis=-1, norm="backward", name=None):
    """The inverse of rfft: the real signal of n points whose spectrum's non-negative frequencies
    are x along `axis` (numpy.fft.irfft). The imaginary parts of the zero (and, n even, the
    Nyquist) bin are ignored.

    Args:
        x (Variable): complex64 or complex128 (float32 / float64: cast to complex).
        n (int): the output's length along axis; the first n//2 + 1 bins are read (zeros past
            x's). None: 2 * (m - 1) for x's m bins.
        axis (int): the axis transformed (negative: from the end).
        norm (str): "backward" (scaled by 1/n), "forward" (unscaled) or "ortho" (1/sqrt(n)).
        name (str): the output's name prefix, or None.

    Returns:
        Variable: float32 / float64, n points along axis.
    """
    _check_x("irfft", x, _ANY)
    axes, sizes = _one_axis("irfft", x, n, axis)
    return _c2r("irfft", x, axes, sizes, norm, False, name)


def hfft(x, n=None, axis=-1, norm="backward", name=None):
    """The FFT of a signal with Hermitian symmetry whose first half is x, a real spectrum of n
    points (numpy.fft.hfft: irfft of conj(x) scaled as a forward transform).

    Args:
        x (Variable): complex64 or complex128 (float32 / float64: cast to complex).
        n (int): the output's length along axis; the first n//2 + 1 points of x are read (zeros
            past x's). None: 2 * (m - 1) for x's m points.
        axis (int): the axis transformed (negative: from the end).
        norm (str): "backward" (unscaled), "forward" (1/n) or "ortho" (1/sqrt(n)).
        name (str): the output's name prefix, or None.

    Returns:
        Variable: float32 / float64, n points along axis.
    """
    _check_x("hfft", x, _ANY)
    axes, sizes = _one_axis("hfft", x, n, axis)
    return _c2r("hfft", x, axes, sizes, norm, True, name)


def ihfft(x, n=None, axis=-1, norm="backward", name=None):
    """The inverse of hfft: the n//2 + 1 first bins of the inverse FFT of real x along `axis`
    (numpy.fft.ihfft: conj(rfft(x)) / n).

    Args:
        x (Variable): float32 or float64.
        n (int): the transform's length: x cropped or zero-padded to it along axis; None: x's.
        axis (int): the axis transformed (negative: from the end).
        norm (str): "backward" (scaled by 1/n), "forward" (unscaled) or "ortho" (1/sqrt(n)).
        name (str): the output's name prefix, or None.

    Returns:
        Variable: complex64 / complex128, n//2 + 1 bins along axis.
    """
    _check_x("ihfft", x, _REAL)
    axes, sizes = _one_axis("ihfft", x, n, axis)
    return _r2c("ihfft", x, axes, sizes, norm, False, name)


# --- n-D transforms --------------------------------------------------------------------------

_ND_ARGS = """

    Args:
        x (Variable): %s.
        s (list): the sizes along axes: x cropped or zero-padded to them%s. None: x's%s.
        axes (list): the axes transformed (negative: from the end; distinct). None: %s.
        norm (str): "backward", "forward" or "ortho" (as the 1-D transform's), n the product
            of the transformed sizes.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: %s.
"""

_ND_DOCS = {
    "c2c": (
        "float32, float64, complex64 or complex128",
        "",
        "",
        "complex64 (of float32 / complex64) or complex128, the sizes s along axes",
    ),
    "r2c": (
        "float32 or float64",
        "",
        "",
        "complex64 / complex128, the sizes s along axes but s[-1]//2 + 1 bins along the last",
    ),
    "c2r": (
        "complex64 or complex128 (float32 / float64: cast to complex)",
        "; s[-1] is the output's size along the last axis, whose first s[-1]//2 + 1 bins are read",
        " (2 * (m - 1) along the last axis, of m bins)",
        "float32 / float64, the sizes s along axes",
    ),
}


def _nd_doc(summary, kind, axes_default):
    x, s_note, s_default, returns = _ND_DOCS[kind]
    return summary + _ND_ARGS % (x, s_note, s_default, axes_default, returns)


_ALL_AXES = "every axis, or the last len(s) when s is given"
_LAST_TWO = "(-2, -1)"


def fftn(x, s=None, axes=None, norm="backward", name=None):
    _check_x("fftn", x, _ANY)
    axes, sizes = _nd_axes("fftn", x, s, axes)
    return _c2c("fftn", x, axes, sizes, norm, True, name)


def ifftn(x, s=None, axes=None, norm="backward", name=None):
    _check_x("ifftn", x, _ANY)
    axes, sizes = _nd_axes("ifftn", x, s, axes)
    return _c2c("ifftn", x, axes, sizes, norm, False, name)


def rfftn(x, s=None, axes=None, norm="backward", name=None):
    _check_x("rfftn", x, _REAL)
    axes, sizes = _nd_axes("rfftn", x, s, axes)
    return _r2c("rfftn", x, axes, sizes, norm, True, name)


def irfftn(x, s=None, axes=None, norm="backward", name=None):
    _check_x("irfftn", x, _ANY)
    axes, sizes = _nd_axes("irfftn", x, s, axes)
    return _c2r("irfftn", x, axes, sizes, norm, False, name)


def hfftn(x, s=None, axes=None, norm="backward", name=None):
    _check_x("hfftn", x, _ANY)
    axes, sizes = _nd_axes("hfftn", x, s, axes)
    return _c2r("hfftn", x, axes, sizes, norm, True, name)


def ihfftn(x, s=None, axes=None, norm="backward", name=None):
    _check_x("ihfftn", x, _REAL)
    axes, sizes = _nd_axes("ihfftn", x, s, axes)
    return _r2c("ihfftn", x, axes, sizes, norm, False, name)


def fft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    _check_x("fft2", x, _ANY)
    axes, sizes = _two_axes("fft2", x, s, axes)
    return _c2c("fft2", x, axes, sizes, norm, True, name)


def ifft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    _check_x("ifft2", x, _ANY)
    axes, sizes = _two_axes("ifft2", x, s, axes)
    return _c2c("ifft2", x, axes, sizes, norm, False, name)


def rfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    _check_x("rfft2", x, _REAL)
    axes, sizes = _two_axes("rfft2", x, s, axes)
    return _r2c("rfft2", x, axes, sizes, norm, True, name)


def irfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    _check_x("irfft2", x, _ANY)
    axes, sizes = _two_axes("irfft2", x, s, axes)
    return _c2r("irfft2", x, axes, sizes, norm, False, name)


def hfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    _check_x("hfft2", x, _ANY)
    axes, sizes = _two_axes("hfft2", x, s, axes)
    return _c2r("hfft2", x, axes, sizes, norm, True, name)


def ihfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    _check_x("ihfft2", x, _REAL)
    axes, sizes = _two_axes("ihfft2", x, s, axes)
    return _r2c("ihfft2", x, axes, sizes, norm, False, name)


fftn.__doc__ = _nd_doc("The n-D discrete Fourier transform (numpy.fft.fftn).", "c2c", _ALL_AXES)
ifftn.__doc__ = _nd_doc("The n-D inverse of fftn (numpy.fft.ifftn).", "c2c", _ALL_AXES)
rfftn.__doc__ = _nd_doc(
    "The n-D discrete Fourier transform of real x (numpy.fft.rfftn): the real transform along "
    "the last of axes, then complex ones along the others.",
    "r2c",
    _ALL_AXES,
)
irfftn.__doc__ = _nd_doc(
    "The n-D inverse of rfftn (numpy.fft.irfftn): complex inverse transforms along all axes but "
    "the last, then the real inverse along the last.",
    "c2r",
    _ALL_AXES,
)
hfftn.__doc__ = _nd_doc(
    "paddle.fft.hfftn: irfftn of conj(x), scaled as a forward transform.", "c2r", _ALL_AXES
)
ihfftn.__doc__ = _nd_doc(
    "paddle.fft.ihfftn: conj(rfftn(x)), scaled as an inverse transform.", "r2c", _ALL_AXES
)
fft2.__doc__ = _nd_doc("The 2-D discrete Fourier transform (numpy.fft.fft2).", "c2c", _LAST_TWO)
ifft2.__doc__ = _nd_doc("The 2-D inverse of fft2 (numpy.fft.ifft2).", "c2c", _LAST_TWO)
rfft2.__doc__ = _nd_doc(
    "The 2-D discrete Fourier transform of real x (numpy.fft.rfft2).", "r2c", _LAST_TWO
)
irfft2.__doc__ = _nd_doc("The 2-D inverse of rfft2 (numpy.fft.irfft2).", "c2r", _LAST_TWO)
hfft2.__doc__ = _nd_doc("paddle.fft.hfft2: hfftn over two axes.", "c2r", _LAST_TWO)
ihfft2.__doc__ = _nd_doc("paddle.fft.ihfft2: ihfftn over two axes.", "r2c", _LAST_TWO)


# --- frequencies and shifts ------------------------------------------------------------------


def _frequencies(fn, values_of, n, d, dtype, name):
    n = _size(fn, n, "n")
    check_type(d, "d", (int, float, np.floating), "tide.fft." + fn)
    if d == 0:
        raise ValueError("tide.fft.%s: the sample spacing d must not be 0" % fn)
    dtype = "float32" if dtype is None else dtype
    check_dtype(dtype, "dtype", _REAL, "tide.fft." + fn)
    values = values_of(n, d).astype(dtype)
    out = LayerHelper(fn, name=name).create_variable_for_type_inference(values.dtype.name)
    return nn.assign(values, output=out)


def fftfreq(n, d=1.0, dtype=None, name=None):
    """The sample frequencies of an n-point FFT, in cycles per unit of the sample spacing d
    (numpy.fft.fftfreq): [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n), a constant in the
    program.

    Args:
        n (int): the number of points.
        d (float): the sample spacing (not 0).
        dtype (str): float32 (None) or float64.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: [n] of dtype.
    """
    return _frequencies("fftfreq", np.fft.fftfreq, n, d, dtype, name)


def rfftfreq(n, d=1.0, dtype=None, name=None):
    """The sample frequencies of rfft's n//2 + 1 bins (numpy.fft.rfftfreq):
    [0, 1, ..., n//2] / (d * n), a constant in the program.

    Args:
        n (int): the number of points.
        d (float): the sample spacing (not 0).
        dtype (str): float32 (None) or float64.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: [n//2 + 1] of dtype.
    """
    return _frequencies("rfftfreq", np.fft.rfftfreq, n, d, dtype, name)


def _run_time_shifts(x, axes, inverse):
    """The shifts dims // 2 (ifftshift: (dims + 1) // 2) of x's axes, computed when the program
    runs: for dims unknown at build time."""
    dims = nn.cast(nn.shape(x), "int64")
    picked = nn.gather(dims, nn.assign(np.array(axes, dtype="int64")))
    if inverse:
        picked = nn.scale(picked, bias=1.0)
    two = nn.fill_constant([1], "int64", 2)
    return nn.elementwise_floordiv(picked, two)


def _shift(fn, x, axes, inverse, name):
    check_type(x, "x", Variable, "tide.fft." + fn)
    if axes is None:
        axes = list(range(len(x.shape)))
    elif is_int(axes):
        axes = [axes]
    if isinstance(axes, (list, tuple)) and not axes:
        return nn.assign(x)  # nothing to shift (a 0-D x): numpy's copy
    axes = _axes(fn, x, axes)
    helper = LayerHelper(fn, name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    attrs, inputs = {"axis": axes}, {"X": x}
    dims = [x.shape[a] for a in axes]
    if all(d >= 0 for d in dims):
        attrs["shifts"] = [-(d // 2) if inverse else d // 2 for d in dims]
    else:
        inputs["ShiftsTensor"] = _run_time_shifts(x, axes, inverse)
    helper.append_op("roll", inputs=inputs, outputs={"Out": out}, attrs=attrs)
    return out


def fftshift(x, axes=None, name=None):
    """x with the zero-frequency bin moved to the middle (numpy.fft.fftshift): a roll by
    dim // 2 along each of axes.

    Args:
        x (Variable): any data type roll takes (the float, integer and complex types, bool).
        axes (int|list): the axes shifted (negative: from the end; distinct). None: every axis.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape and data type.
    """
    return _shift("fftshift", x, axes, False, name)


def ifftshift(x, axes=None, name=None):
    """The inverse of fftshift (numpy.fft.ifftshift): a roll by -(dim // 2) along each of axes;
    the same as fftshift for even dims.

    Args:
        x (Variable): any data type roll takes (the float, integer and complex types, bool).
        axes (int|list): the axes shifted (negative: from the end; distinct). None: every axis.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape and data type.
    """
    return _shift("ifftshift", x, axes, True, name)
