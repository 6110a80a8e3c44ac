"""The ops_fft pack (paddle.fft / paddle.signal's ops): fft_c2c, fft_r2c and fft_c2r against
numpy.fft (fftn / ifftn / rfftn / irfftn / hfft with the same norm names; Paddle's `forward`
flag mapped onto numpy's direction), float32 and float64, ranks 1 to 4, one axis, several,
negative and non-contiguous ones, odd, even and prime lengths, onesided false, last_dim_size
given (fewer and more bins than X has) and 0, 0-size and 1-point transforms; frame and
overlap_add against numpy loops written here, with their gradients by central differences; bad
inputs' errors.

Gradients: fft_c2c_grad, fft_r2c_grad and fft_c2r_grad run alone against the adjoint of the
numpy forward (built from it one basis vector at a time: the gradient of Re<g, f(x)>, the
convention's dL/dx + i dL/dy), and through append_backward by OpTest.check_grad's central
differences, complex64 / float32 and complex128 / float64, every normalization and direction,
onesided both ways, even and odd outputs, bins cut and zero-padded, a length through Bluestein's
algorithm; frame and overlap_add of complex values; rfft -> a complex product -> irfft of a real
input trained through append_backward."""

from functools import partial

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(63)
NORMS = ["backward", "forward", "ortho"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}
COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def single(dtype):
    return np.dtype(dtype) in (np.float32, np.complex64)


def tol(dtype):
    """float32 FFTs sum n terms: a looser tolerance than float64's."""
    return {"atol": 2e-4, "rtol": 2e-4} if single(dtype) else {"atol": 1e-10, "rtol": 1e-10}


def grad_tol(dtype):
    """check_grad's tolerances. Every op here is linear: central differences are exact but for
    the loss's rounding (1e-7 in float32), which a large step keeps small."""
    if single(dtype):
        return {"max_relative_error": 1e-2, "numeric_grad_delta": 0.5}
    return {"max_relative_error": 1e-8, "numeric_grad_delta": 0.5}


def real_input(shape, dtype):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def complex_input(shape, dtype):
    """Random complex values (DC and Nyquist bins with imaginary parts too: the real inverse
    ignores them, as numpy's and Paddle's)."""
    return (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape)).astype(dtype)


def swap_norm(norm):
    """numpy's norm of the other direction: a transform Paddle runs with forward=True scaled as
    numpy scales its inverse (ortho is the same both ways)."""
    return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def check(op, x, want, attrs):
    t = make(op, {"X": x}, {"Out": want}, attrs)
    t.check_output(**tol(x.dtype))


# --- fft_c2c ---------------------------------------------------------------------------------

C2C_CASES = [
    ((7,), [0]),  # prime
    ((4, 6), [1]),
    ((4, 6), [0, 1]),
    ((3, 5, 8), [-1]),
    ((3, 5, 8), [0, 2]),  # non-contiguous
    ((2, 3, 4, 5), [1, -1, 0]),  # negative, out of order
    ((2, 11, 3), [-2]),  # prime, an inner axis
]


def c2c_reference(x, axes, norm, forward):
    return (np.fft.fftn if forward else np.fft.ifftn)(x, axes=axes, norm=norm)


@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape,axes", C2C_CASES)
def test_fft_c2c(shape, axes, dtype, norm, forward):
    x = complex_input(shape, dtype)
    want = c2c_reference(x.astype(np.complex128), axes, norm, forward).astype(dtype)
    check("fft_c2c", x, want, {"axes": axes, "normalization": norm, "forward": forward})


def test_fft_c2c_long_prime_and_power_of_two():
    for n in [1024, 257, 1000]:
        x = complex_input((2, n), "complex128")
        check("fft_c2c", x, np.fft.fft(x, axis=1), {"axes": [1], "forward": True})
        x = complex_input((n,), "complex64")
        want = np.fft.ifft(x.astype(np.complex128)).astype("complex64")
        check("fft_c2c", x, want, {"axes": [0], "forward": False})


# Lengths with a prime factor over 64 go through Bluestein's algorithm (fft_1d.h): primes, a
# composite (3 * 67), an even one (2 * 101: the real inverse's Nyquist bin) and 65537.
@pytest.mark.parametrize("n", [67, 201, 202, 1009])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_prime_factors(n, dtype):
    ctype = "complex64" if dtype == "float32" else "complex128"
    x = complex_input((3, n), ctype)
    x64 = x.astype(np.complex128)
    check("fft_c2c", x, np.fft.fft(x64, axis=1).astype(ctype), {"axes": [1]})
    want = np.fft.ifftn(x64, axes=[1, 0], norm="ortho").astype(ctype)
    check("fft_c2c", x, want, {"axes": [1, 0], "forward": False, "normalization": "ortho"})
    r = real_input((2, n), dtype)
    check("fft_r2c", r, np.fft.rfft(r.astype(np.float64)).astype(ctype), {"axes": [1]})
    want = np.fft.ifft(r.astype(np.float64)).astype(ctype)
    check("fft_r2c", r, want, {"axes": [1], "onesided": False, "forward": False})
    h = complex_input((2, n // 2 + 1), ctype)
    want = np.fft.irfft(h.astype(np.complex128), n=n).astype(dtype)
    check("fft_c2r", h, want, {"axes": [1], "forward": False, "last_dim_size": n})
    want = np.fft.hfft(h.astype(np.complex128), n=n, norm="ortho").astype(dtype)
    attrs = {"axes": [1], "normalization": "ortho", "last_dim_size": n}
    check("fft_c2r", h, want, attrs)


def test_prime_65537():
    x = complex_input((65537,), "complex128")
    check("fft_c2c", x, np.fft.fft(x), {"axes": [0]})


# --- fft_r2c ---------------------------------------------------------------------------------

R2C_CASES = [
    ((16,), [0]),
    ((15,), [0]),
    ((4, 9), [1]),
    ((4, 6), [0, 1]),
    ((4, 6), [1, 0]),  # the real axis is axis 0
    ((3, 5, 8), [-1]),
    ((3, 5, 8), [0, 2]),
    ((2, 3, 4, 13), [0, -1, 2]),
]


def r2c_reference(x, axes, norm, forward, onesided):
    # forward=False: the transform with exponent +i (paddle.fft.ihfft), numpy's ifftn.
    full = c2c_reference(x, axes, norm, forward)
    if not onesided:
        return full
    last = axes[-1] % x.ndim
    return np.take(full, range(x.shape[last] // 2 + 1), axis=last)


@pytest.mark.parametrize("onesided", [True, False])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axes", R2C_CASES)
def test_fft_r2c(shape, axes, dtype, norm, forward, onesided):
    x = real_input(shape, dtype)
    ctype = "complex64" if dtype == "float32" else "complex128"
    want = r2c_reference(x.astype(np.float64), axes, norm, forward, onesided)
    attrs = {"axes": axes, "normalization": norm, "forward": forward, "onesided": onesided}
    check("fft_r2c", x, want.astype(ctype), attrs)


def test_fft_r2c_matches_rfftn():
    x = real_input((3, 10, 7), "float64")
    check("fft_r2c", x, np.fft.rfftn(x, axes=[0, 2]), {"axes": [0, 2]})
    check("fft_r2c", x, np.fft.rfft(x, norm="ortho"), {"axes": [-1], "normalization": "ortho"})


# --- fft_c2r ---------------------------------------------------------------------------------

# (X's shape, axes, last_dim_size): 0 means 2 * (bins - 1); 9 an odd output; 7 fewer bins than
# X has (its extra ones unread), 12 more (the missing ones zero).
C2R_CASES = [
    ((9,), [0], 0),
    ((9,), [0], 17),
    ((4, 5), [1], 0),
    ((4, 5), [1], 9),
    ((4, 5), [1], 7),
    ((4, 5), [1], 12),
    ((3, 4, 5), [0, 2], 0),
    ((3, 4, 5), [2, 0], 5),  # the real axis is axis 0
    ((2, 3, 4, 7), [-3, -1], 13),
    ((2, 6, 5), [0, 1, 2], 8),
]


def c2r_reference(x, axes, n, norm, forward):
    s = [x.shape[a] for a in axes[:-1]] + [n]
    if forward:  # Paddle's forward c2r (hfft): the real inverse of the conjugate, scaled so
        return np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=swap_norm(norm))
    return np.fft.irfftn(x, s=s, axes=axes, norm=norm)


@pytest.mark.parametrize("forward", [False, True])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape,axes,last_dim_size", C2R_CASES)
def test_fft_c2r(shape, axes, last_dim_size, dtype, norm, forward):
    x = complex_input(shape, dtype)
    n = last_dim_size or 2 * (shape[axes[-1]] - 1)
    rtype = "float32" if dtype == "complex64" else "float64"
    want = c2r_reference(x.astype(np.complex128), axes, n, norm, forward).astype(rtype)
    attrs = {"axes": axes, "normalization": norm, "forward": forward}
    if last_dim_size:
        attrs["last_dim_size"] = last_dim_size
    check("fft_c2r", x, want, attrs)


def test_fft_c2r_hfft():
    # paddle.fft.hfft(x, n) is fft_c2r with forward=True: numpy's hfft.
    x = complex_input((3, 5), "complex128")
    for n, norm in [(8, "backward"), (9, "ortho"), (6, "forward")]:
        want = np.fft.hfft(x, n=n, axis=-1, norm=norm)
        check(
            "fft_c2r",
            x,
            want,
            {"axes": [1], "normalization": norm, "forward": True, "last_dim_size": n},
        )


def test_round_trips():
    x = real_input((4, 10), "float64")
    spec = np.fft.rfft(x)
    check("fft_c2r", spec, x, {"axes": [1], "forward": False, "last_dim_size": 10})
    z = complex_input((3, 4), "complex128")
    check("fft_c2c", np.fft.fft(z), z, {"axes": [1], "forward": False})


# --- gradients of the FFTs -------------------------------------------------------------------


def adjoint(f, x, g):
    """The gradient of L = Re<g, f(x)> = sum(real(conj(g) f(x))) for a linear f, from f itself
    one basis vector at a time: dL/d(real x) + i dL/d(imag x) for a complex x, dL/dx for a real
    one. It is f's adjoint applied to g, the gradient a grad op must give for Out@GRAD = g."""
    basis = np.eye(x.size).reshape((x.size,) + x.shape)
    grad = np.array([np.sum(np.real(np.conj(g) * f(e))) for e in basis])
    if np.iscomplexobj(x):
        grad = grad + 1j * np.array([np.sum(np.real(np.conj(g) * f(1j * e))) for e in basis])
    return grad.reshape(x.shape)


def check_grads(op, x, want, attrs, f):
    """The grad op alone against the adjoint of the numpy forward f (for a random Out@GRAD),
    then through append_backward by check_grad's central differences."""
    g = (complex_input if np.iscomplexobj(want) else real_input)(want.shape, want.dtype)
    wide = np.complex128 if np.iscomplexobj(x) else np.float64
    expected = adjoint(f, x.astype(wide), g.astype(np.complex128)).astype(x.dtype)
    ins = {"Out@GRAD": g} if op == "fft_c2c" else {"X": x, "Out@GRAD": g}
    scale = max(1.0, float(np.max(np.abs(expected))))
    atol = (2e-5 if single(x.dtype) else 1e-12) * scale
    make(op + "_grad", ins, {"X@GRAD": expected}, attrs).check_output(atol=atol, rtol=atol)
    t = make(op, {"X": x}, {"Out": want}, attrs)
    t.check_output(**tol(x.dtype))
    t.check_grad(["X"], "Out", **grad_tol(x.dtype))


C2C_GRAD_CASES = [((6,), [0]), ((3, 4), [1, 0]), ((2, 3, 4), [0, 2])]


@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape,axes", C2C_GRAD_CASES)
def test_fft_c2c_grad(shape, axes, dtype, norm, forward):
    x = complex_input(shape, dtype)

    def f(v):
        return c2c_reference(v, axes, norm, forward)

    attrs = {"axes": axes, "normalization": norm, "forward": forward}
    check_grads("fft_c2c", x, f(x.astype(np.complex128)).astype(dtype), attrs, f)


# Even and odd real axes, the real axis first of two, three dims with one left alone.
R2C_GRAD_CASES = [((8,), [0]), ((7,), [0]), ((5, 3), [1, 0]), ((2, 3, 4), [0, 2])]


@pytest.mark.parametrize("onesided", [True, False])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axes", R2C_GRAD_CASES)
def test_fft_r2c_grad(shape, axes, dtype, norm, forward, onesided):
    x = real_input(shape, dtype)

    def f(v):
        return r2c_reference(v, axes, norm, forward, onesided)

    want = f(x.astype(np.float64)).astype(COMPLEX_OF[dtype])
    attrs = {"axes": axes, "normalization": norm, "forward": forward, "onesided": onesided}
    check_grads("fft_r2c", x, want, attrs, f)


# (X's shape, axes, last_dim_size): n = 8 (0: 2 * (5 - 1)) reads all 5 bins; 9 (odd) all 5;
# 9 from 4 bins (more than 2 * (4 - 1): the fifth one zero); 5 from 6 bins (fewer: 3 read, 3
# never); two and three dims, the real axis first, even outputs with bins zero-padded and cut.
C2R_GRAD_CASES = [
    ((5,), [0], 0),
    ((5,), [0], 9),
    ((4,), [0], 9),
    ((6,), [0], 5),
    ((3, 4), [0, 1], 7),
    ((2, 3, 4), [2, 0], 4),
    ((3, 2, 5), [1, 2], 6),
]


@pytest.mark.parametrize("forward", [False, True])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape,axes,last_dim_size", C2R_GRAD_CASES)
def test_fft_c2r_grad(shape, axes, last_dim_size, dtype, norm, forward):
    x = complex_input(shape, dtype)
    n = last_dim_size or 2 * (shape[axes[-1]] - 1)

    def f(v):
        return c2r_reference(v, axes, n, norm, forward)

    attrs = {"axes": axes, "normalization": norm, "forward": forward, "last_dim_size": n}
    check_grads("fft_c2r", x, f(x.astype(np.complex128)).astype(REAL_OF[dtype]), attrs, f)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grads_through_bluestein(dtype):
    # 67 is prime (fft_1d.h's Bluestein path), 134 = 2 * 67 an even real inverse.
    ctype = COMPLEX_OF[dtype]
    x = complex_input((67,), ctype)
    for forward, norm in [(True, "backward"), (False, "ortho")]:
        c2c = partial(c2c_reference, axes=[0], norm=norm, forward=forward)
        attrs = {"axes": [0], "normalization": norm, "forward": forward}
        check_grads("fft_c2c", x, c2c(x.astype(np.complex128)).astype(ctype), attrs, c2c)
    r = real_input((67,), dtype)
    r2c = partial(r2c_reference, axes=[0], norm="forward", forward=True, onesided=True)
    attrs = {"axes": [0], "normalization": "forward"}
    check_grads("fft_r2c", r, r2c(r.astype(np.float64)).astype(ctype), attrs, r2c)
    for m, n, forward in [(34, 67, False), (68, 134, True)]:
        h = complex_input((m,), ctype)
        c2r = partial(c2r_reference, axes=[0], n=n, norm="backward", forward=forward)
        attrs = {"axes": [0], "forward": forward, "last_dim_size": n}
        check_grads("fft_c2r", h, c2r(h.astype(np.complex128)).astype(dtype), attrs, c2r)


def test_rfft_filter_irfft_trains_through_append_backward():
    """A real signal's rfft times a constant complex filter, back through irfft, into a real
    loss: x's gradient from append_backward (fft_c2r_grad, elementwise_mul's complex grad,
    fft_r2c_grad) against central differences of the same program, and y against numpy."""
    xv = real_input((3, 8), "float64")
    cv = complex_input((5,), "complex128")
    wv = real_input((3, 8), "float64")
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        block = main.global_block()

        def data(name, arr):
            return tide.layers.data(
                name=name, shape=list(arr.shape), dtype=arr.dtype.name, append_batch_size=False
            )

        def op(type, inp, dtype, **attrs):
            out = block.create_var(name=type + "_out", dtype=dtype)
            block.append_op(type=type, inputs={"X": [inp]}, outputs={"Out": [out]}, attrs=attrs)
            return out

        x, c, w = data("x", xv), data("c", cv), data("w", wv)
        x.stop_gradient = False
        spec = op("fft_r2c", x, "complex128", axes=[1])
        y = op("fft_c2r", tide.layers.elementwise_mul(spec, c), "float64", axes=[1], forward=False)
        loss = tide.layers.mean(tide.layers.elementwise_mul(y, w))
    forward_only = main.clone()
    tide.append_backward(loss)
    exe = tide.Executor(tide.CPUPlace())
    feed = {"x": xv, "c": cv, "w": wv}
    got_y, grad = exe.run(main, feed=feed, fetch_list=[y, "x@GRAD"])
    np.testing.assert_allclose(got_y, np.fft.irfft(np.fft.rfft(xv) * cv, n=8), atol=1e-12)

    def loss_at(v):
        return exe.run(forward_only, feed=dict(feed, x=v), fetch_list=[loss])[0].item()

    delta, numeric = 0.5, np.zeros(xv.size)  # the loss is linear in x: any step is exact
    for i in range(xv.size):
        step = np.zeros(xv.size)
        step[i] = delta
        step = step.reshape(xv.shape)
        numeric[i] = (loss_at(xv + step) - loss_at(xv - step)) / (2 * delta)
    np.testing.assert_allclose(grad, numeric.reshape(xv.shape), rtol=1e-9, atol=1e-12)


# --- sizes 0 and 1 ---------------------------------------------------------------------------


def test_zero_size():
    # An X without elements gives zeros of the output's dims (Paddle's kernels fill them).
    check("fft_c2c", np.zeros((0, 4), "complex64"), np.zeros((0, 4), "complex64"), {"axes": [1]})
    check("fft_r2c", np.zeros((3, 0), "float32"), np.zeros((3, 1), "complex64"), {"axes": [1]})
    check(
        "fft_r2c",
        np.zeros((0, 6), "float64"),
        np.zeros((0, 4), "complex128"),
        {"axes": [0, 1]},
    )
    check(
        "fft_c2r",
        np.zeros((3, 0), "complex64"),
        np.zeros((3, 4), "float32"),
        {"axes": [1], "last_dim_size": 4},
    )
    # One bin and last_dim_size 0: 2 * (1 - 1) = 0 points.
    check("fft_c2r", complex_input((2, 1), "complex64"), np.zeros((2, 0), "float32"), {"axes": [1]})


def test_zero_size_grads():
    # No output points (one bin, last_dim_size 0): X's gradient is zeros; an empty X, empty.
    x = complex_input((2, 1), "complex64")
    ins = {"X": x, "Out@GRAD": np.zeros((2, 0), "float32")}
    make("fft_c2r_grad", ins, {"X@GRAD": np.zeros_like(x)}, {"axes": [1]}).check_output()
    x = np.zeros((3, 0), "float64")
    ins = {"X": x, "Out@GRAD": np.ones((3, 1), "complex128")}
    make("fft_r2c_grad", ins, {"X@GRAD": x}, {"axes": [1]}).check_output()
    g = np.zeros((0, 4), "complex64")
    make("fft_c2c_grad", {"Out@GRAD": g}, {"X@GRAD": g}, {"axes": [1]}).check_output()


def test_one_point():
    x = complex_input((5, 1), "complex128")
    check("fft_c2c", x, x, {"axes": [1]})
    want = np.fft.ifftn(x, axes=[0, 1], norm="forward")
    check("fft_c2c", x, want, {"axes": [0, 1], "forward": False, "normalization": "forward"})
    r = real_input((1,), "float64")
    check("fft_r2c", r, r.astype("complex128"), {"axes": [0]})
    check("fft_r2c", r, r.astype("complex128"), {"axes": [0], "onesided": False})
    want = np.fft.irfft(x, n=1, axis=1)
    check("fft_c2r", x, want, {"axes": [1], "last_dim_size": 1, "forward": False})


# --- frame / overlap_add ---------------------------------------------------------------------


def frame_ref(x, length, hop, axis):
    """numpy loop: frame f, sample i = x[f * hop + i] along the signal axis."""
    seq = x.shape[axis]
    frames = 1 + (seq - length) // hop
    if axis == 0:
        out = np.zeros((frames, length) + x.shape[1:], x.dtype)
        for f in range(frames):
            for i in range(length):
                out[f, i] = x[f * hop + i]
    else:
        out = np.zeros(x.shape[:-1] + (length, frames), x.dtype)
        for f in range(frames):
            for i in range(length):
                out[..., i, f] = x[..., f * hop + i]
    return out


def overlap_add_ref(x, hop, axis):
    """numpy loop: sample f * hop + i of the signal sums frame f's sample i."""
    if axis == 0:
        frames, length = x.shape[0], x.shape[1]
        out = np.zeros(((frames - 1) * hop + length,) + x.shape[2:], x.dtype)
        for f in range(frames):
            for i in range(length):
                out[f * hop + i] += x[f, i]
    else:
        frames, length = x.shape[-1], x.shape[-2]
        out = np.zeros(x.shape[:-2] + ((frames - 1) * hop + length,), x.dtype)
        for f in range(frames):
            for i in range(length):
                out[..., f * hop + i] += x[..., i, f]
    return out


FRAME_CASES = [
    ((20,), 5, 3, -1),  # 6 frames, 20 - 18 = 2 samples unread
    ((20,), 5, 3, 0),
    ((2, 3, 16), 4, 4, -1),
    ((16, 2, 3), 6, 2, 0),
    ((3, 8), 8, 1, -1),  # one frame of the whole signal
    ((9, 2), 3, 5, 0),  # hop > frame_length: samples skipped
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", *COMPLEX_OF.values()])
@pytest.mark.parametrize("shape,length,hop,axis", FRAME_CASES)
def test_frame(shape, length, hop, axis, dtype):
    if dtype.startswith("complex"):
        x = complex_input(shape, dtype)
    else:
        x = (RNG.uniform(-5, 5, shape)).astype(dtype)
    attrs = {"frame_length": length, "hop_length": hop, "axis": axis}
    t = make("frame", {"X": x}, {"Out": frame_ref(x, length, hop, axis)}, attrs)
    t.check_output(atol=0, rtol=0)
    # The grads of the float and complex types (float32's kernel is float64's template).
    if dtype != "float32" and np.issubdtype(x.dtype, np.inexact):
        t.check_grad(["X"], "Out", **grad_tol(dtype))


OVERLAP_CASES = [
    ((5, 6), 2, -1),  # [frame_length, frames]
    ((5, 6), 5, -1),  # no overlap
    ((6, 5), 3, 0),
    ((2, 3, 4, 7), 1, -1),
    ((7, 4, 2, 3), 4, 0),
    ((3, 1), 2, -1),  # one frame
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", *COMPLEX_OF.values()])
@pytest.mark.parametrize("shape,hop,axis", OVERLAP_CASES)
def test_overlap_add(shape, hop, axis, dtype):
    if dtype.startswith("complex"):
        x = complex_input(shape, dtype)
    else:
        x = (RNG.uniform(-5, 5, shape)).astype(dtype)
    attrs = {"hop_length": hop, "axis": axis}
    t = make("overlap_add", {"X": x}, {"Out": overlap_add_ref(x, hop, axis)}, attrs)
    t.check_output(**tol("float32" if single(dtype) else "float64"))
    if dtype != "float32" and np.issubdtype(x.dtype, np.inexact):
        t.check_grad(["X"], "Out", **grad_tol(dtype))


def test_frame_then_overlap_add():
    # stft / istft's pair: frames hop_length apart added back give each sample times its count.
    x = real_input((2, 30), "float64")
    framed = frame_ref(x, 8, 4, -1)
    t = make(
        "overlap_add", {"X": framed}, {"Out": overlap_add_ref(framed, 4, -1)}, {"hop_length": 4}
    )
    t.check_output(atol=1e-12, rtol=1e-12)


# --- bad input -------------------------------------------------------------------------------


def run(op, x, attrs, out=None):
    make(op, {"X": x}, {"Out": x if out is None else out}, attrs).check_output()


def test_fft_errors():
    c = complex_input((3, 4), "complex64")
    r = real_input((3, 4), "float32")
    with pytest.raises(tide.TideError, match=r"fft_c2c.*'axes'\[1\] = 2 is out of range.*rank 2"):
        run("fft_c2c", c, {"axes": [0, 2]})
    with pytest.raises(tide.TideError, match=r"fft_c2c.*'axes'\[0\] = -3 is out of range"):
        run("fft_c2c", c, {"axes": [-3]})
    with pytest.raises(tide.TideError, match=r"fft_r2c.*'axes' repeats axis 1 \(axes\[1\] = -1\)"):
        run("fft_r2c", r, {"axes": [1, -1]}, out=c)
    with pytest.raises(tide.TideError, match=r"fft_c2c.*'axes' is empty"):
        run("fft_c2c", c, {"axes": []})
    with pytest.raises(tide.TideError, match=r"fft_c2c.*X \('x_in'\) must be complex64 or "):
        run("fft_c2c", r, {"axes": [1]})
    with pytest.raises(tide.TideError, match=r"fft_c2r.*X \('x_in'\) must be complex.*float32"):
        run("fft_c2r", r, {"axes": [1]})
    with pytest.raises(tide.TideError, match=r"fft_r2c.*X \('x_in'\) must be float32 or float64"):
        run("fft_r2c", c, {"axes": [1]})
    with pytest.raises(tide.TideError, match=r"last_dim_size' must be >= 0, got -4"):
        run("fft_c2r", c, {"axes": [1], "last_dim_size": -4}, out=r)
    with pytest.raises(tide.TideError, match=r"normalization' must be one of.*got 'none'"):
        run("fft_c2c", c, {"axes": [1], "normalization": "none"})
    with pytest.raises(tide.TideError, match=r"fft_c2r.*no elements along axis 1.*last_dim_size"):
        run("fft_c2r", np.zeros((3, 0), "complex64"), {"axes": [1]}, out=r)


def test_fft_grad_errors():
    # An Out@GRAD of other dims than the forward's Out (onesided's 3 bins; 5 points).
    r = real_input((3, 4), "float32")
    c = complex_input((3, 4), "complex64")

    def grad(op, x, dout, attrs):
        make(op, {"X": x, "Out@GRAD": dout}, {"X@GRAD": x}, attrs).check_output()

    with pytest.raises(tide.TideError, match=r"fft_r2c_grad.*Out@GRAD has dims \[3, 4\], expe"):
        grad("fft_r2c_grad", r, c, {"axes": [1]})
    with pytest.raises(tide.TideError, match=r"fft_c2r_grad.*Out@GRAD has dims \[3, 4\], expe"):
        grad("fft_c2r_grad", c, r, {"axes": [1], "last_dim_size": 5})
    with pytest.raises(tide.TideError, match=r"fft_c2c_grad.*'axes'\[0\] = 2 is out of range"):
        make("fft_c2c_grad", {"Out@GRAD": c}, {"X@GRAD": c}, {"axes": [2]}).check_output()


def test_frame_errors():
    x = real_input((2, 10), "float32")
    with pytest.raises(tide.TideError, match=r"frame.*'frame_length' = 11 is more than the 10"):
        run("frame", x, {"frame_length": 11, "hop_length": 2})
    with pytest.raises(tide.TideError, match=r"frame.*'frame_length' = 3 is more than the 2 "):
        run("frame", x, {"frame_length": 3, "hop_length": 2, "axis": 0})
    with pytest.raises(tide.TideError, match=r"frame.*'hop_length' must be > 0, got 0"):
        run("frame", x, {"frame_length": 4, "hop_length": 0})
    with pytest.raises(tide.TideError, match=r"frame.*'frame_length' must be > 0, got -1"):
        run("frame", x, {"frame_length": -1, "hop_length": 1})
    with pytest.raises(tide.TideError, match=r"frame.*'axis' must be 0 or -1, got 1"):
        run("frame", x, {"frame_length": 4, "hop_length": 2, "axis": 1})
    with pytest.raises(tide.TideError, match=r"overlap_add.*'hop_length' must be > 0, got -2"):
        run("overlap_add", x, {"hop_length": -2})
    with pytest.raises(tide.TideError, match=r"overlap_add.*'hop_length' = 3 is more than the "):
        run("overlap_add", x, {"hop_length": 3})  # frame length 2
    with pytest.raises(tide.TideError, match=r"overlap_add.*at least 2 dims"):
        run("overlap_add", real_input((10,), "float32"), {"hop_length": 1})


def test_dims_unknown_at_compile_time():
    # A batch dim of -1 stays -1; an unknown signal length gives -1 bins, points and frames;
    # at run time the kernels give the real dims.
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data(name="x", shape=[-1, -1], dtype="float64", append_batch_size=False)
        block = main.global_block()

        def op(type, inp, **attrs):  # the output's dims and data type from shape inference
            out = block.create_var(name=type + "_out")
            block.append_op(type=type, inputs={"X": [inp]}, outputs={"Out": [out]}, attrs=attrs)
            return out

        spec = op("fft_r2c", x, axes=[1])
        back = op("fft_c2r", spec, axes=[1], forward=False)
        framed = op("frame", x, frame_length=4, hop_length=2)
        summed = op("overlap_add", framed, hop_length=2)
    dtypes = [tide.core.convert_dtype(v.dtype) for v in (spec, back, framed, summed)]
    assert dtypes == ["complex128", "float64", "float64", "float64"]
    assert list(spec.shape) == [-1, -1]
    assert list(back.shape) == [-1, -1] and list(framed.shape) == [-1, 4, -1]
    assert list(summed.shape) == [-1, -1]
    xs = real_input((3, 10), "float64")
    got = tide.Executor(tide.CPUPlace()).run(
        main, feed={"x": xs}, fetch_list=[spec, back, framed, summed]
    )
    np.testing.assert_allclose(got[0], np.fft.rfft(xs), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], xs, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got[2], frame_ref(xs, 4, 2, -1))
    np.testing.assert_allclose(got[3], overlap_add_ref(frame_ref(xs, 4, 2, -1), 2, -1), 1e-12)
