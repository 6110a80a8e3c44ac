"""The ops_fft pack (paddle.fft / paddle.signal's ops): fft_c2c, fft_r2c and fft_c2r against
numpy.fft (fftn / ifftn / rfftn / irfftn / hfft with the same norm names; Paddle's `forward`
flag mapped onto numpy's direction), float32 and float64, ranks 1 to 4, one axis, several,
negative and non-contiguous ones, odd, even and prime lengths, onesided false, last_dim_size
given (fewer and more bins than X has) and 0, 0-size and 1-point transforms; frame and
overlap_add against numpy loops written here, with their gradients by central differences; bad
inputs' errors."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(63)
NORMS = ["backward", "forward", "ortho"]
GRAD = {"max_relative_error": 1e-6, "numeric_grad_delta": 1e-6}  # float64, linear ops


def tol(dtype):
    """float32 FFTs sum n terms: a looser tolerance than float64's."""
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return {"atol": 2e-4, "rtol": 2e-4} if single else {"atol": 1e-10, "rtol": 1e-10}


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


@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape,axes", C2C_CASES)
def test_fft_c2c(shape, axes, dtype, norm, forward):
    x = complex_input(shape, dtype)
    ref = np.fft.fftn if forward else np.fft.ifftn
    want = ref(x.astype(np.complex128), axes=axes, norm=norm).astype(dtype)
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


@pytest.mark.parametrize("onesided", [True, False])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axes", R2C_CASES)
def test_fft_r2c(shape, axes, dtype, norm, forward, onesided):
    x = real_input(shape, dtype)
    ctype = "complex64" if dtype == "float32" else "complex128"
    # forward=False: the transform with exponent +i (paddle.fft.ihfft), numpy's ifftn.
    full = (np.fft.fftn if forward else np.fft.ifftn)(x.astype(np.float64), axes=axes, norm=norm)
    want = full
    if onesided:
        last = axes[-1] % len(shape)
        want = np.take(full, range(shape[last] // 2 + 1), axis=last)
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


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "complex64"])
@pytest.mark.parametrize("shape,length,hop,axis", FRAME_CASES)
def test_frame(shape, length, hop, axis, dtype):
    if dtype.startswith("complex"):
        x = complex_input(shape, dtype)
    else:
        x = (RNG.uniform(-5, 5, shape)).astype(dtype)
    attrs = {"frame_length": length, "hop_length": hop, "axis": axis}
    t = make("frame", {"X": x}, {"Out": frame_ref(x, length, hop, axis)}, attrs)
    t.check_output(atol=0, rtol=0)
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


OVERLAP_CASES = [
    ((5, 6), 2, -1),  # [frame_length, frames]
    ((5, 6), 5, -1),  # no overlap
    ((6, 5), 3, 0),
    ((2, 3, 4, 7), 1, -1),
    ((7, 4, 2, 3), 4, 0),
    ((3, 1), 2, -1),  # one frame
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex128"])
@pytest.mark.parametrize("shape,hop,axis", OVERLAP_CASES)
def test_overlap_add(shape, hop, axis, dtype):
    if dtype.startswith("complex"):
        x = complex_input(shape, dtype)
    else:
        x = (RNG.uniform(-5, 5, shape)).astype(dtype)
    attrs = {"hop_length": hop, "axis": axis}
    t = make("overlap_add", {"X": x}, {"Out": overlap_add_ref(x, hop, axis)}, attrs)
    t.check_output(**tol("float32" if dtype == "float32" else "float64"))
    if dtype == "float64":
        t.check_grad(["X"], "Out", **GRAD)


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
