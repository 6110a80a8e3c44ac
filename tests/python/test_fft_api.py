"""tide.fft (numpy.fft's / paddle.fft's functions on program variables) and the complex layers
(tide.layers.complex, real, imag, as_complex, as_real, conj, angle).

Every transform against numpy.fft on random float32 / float64 / complex64 / complex128 inputs:
several ranks, n / s cropping and zero-padding the input, each norm, negative and out-of-order
axes; the output's shape declared at build time and its data type; dims unknown at build time
(cropped or padded when the program runs); paddle.fft's hfft2 / hfftn / ihfft2 / ihfftn against
their numpy compositions; fftfreq / rfftfreq, fftshift / ifftshift (shifts known at build time
and computed at run time); the complex layers against numpy; bad input's errors, naming the
argument. Gradients through the API: a real parameter -> rfft2 -> times a complex constant ->
irfft2 -> mean of squares, and one through fft with padding and fftshift to real / imag, each
against central differences of a numpy float64 forward of the same function."""

import numpy as np
import pytest

import tide
from tide import layers

RNG = np.random.RandomState(71)
NORMS = ["backward", "forward", "ortho"]
COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def tol(dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return {"atol": 2e-4, "rtol": 2e-4} if single else {"atol": 1e-10, "rtol": 1e-10}


def rand(shape, dtype):
    if np.dtype(dtype).kind == "c":
        return (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape)).astype(dtype)
    return RNG.uniform(-1, 1, shape).astype(dtype)


def data(x, name="x", shape=None):
    return layers.data(
        name=name,
        shape=list(x.shape) if shape is None else shape,
        dtype=str(x.dtype),
        append_batch_size=False,
    )


def run(fetch, feed):
    exe = tide.Executor(tide.CPUPlace())
    return exe.run(tide.default_main_program(), feed=feed, fetch_list=fetch)


def result_dtype(fn, x_dtype):
    """numpy's output type, kept in single precision for single-precision input."""
    x = np.dtype(x_dtype)
    single = x in (np.float32, np.complex64)
    real_out = fn.startswith("irfft") or fn.startswith("hfft")
    if real_out:
        return np.float32 if single else np.float64
    return np.complex64 if single else np.complex128


def check(fn, x, want, **kwargs):
    """tide.fft.<fn>(x, **kwargs) built, its declared shape and type, then run against want."""
    xv = data(x)
    out = getattr(tide.fft, fn)(xv, **kwargs)
    want = want.astype(result_dtype(fn, x.dtype))
    assert tuple(out.shape) == want.shape, (fn, kwargs, out.shape, want.shape)
    assert out.dtype == want.dtype.name, (fn, out.dtype, want.dtype)
    (got,) = run([out], {"x": x})
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **tol(x.dtype))


def swap_norm(norm):
    return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


# --- 1-D transforms --------------------------------------------------------------------------

# (shape, n, axis): n None, cropping and padding; odd, even and prime lengths; negative axes.
CASES_1D = [
    ((8,), None, -1),
    ((7,), None, 0),
    ((5, 6), 4, 0),
    ((5, 6), 9, -1),
    ((3, 4, 5), 7, 1),
    ((3, 4, 5), None, -2),
    ((2, 3, 6), 2, -1),
]
INPUTS_1D = {
    "fft": ["float32", "float64", "complex64", "complex128"],
    "ifft": ["float32", "float64", "complex64", "complex128"],
    "rfft": ["float32", "float64"],
    "ihfft": ["float32", "float64"],
    "irfft": ["complex64", "complex128", "float64"],
    "hfft": ["complex64", "complex128", "float32"],
}


def numpy_1d(fn, x, n, axis, norm):
    if fn in ("irfft", "hfft") and np.dtype(x.dtype).kind == "f":
        x = x.astype(COMPLEX_OF[str(x.dtype)])
    return getattr(np.fft, fn)(x, n=n, axis=axis, norm=norm)


@pytest.mark.parametrize("fn", sorted(INPUTS_1D))
@pytest.mark.parametrize("norm", NORMS)
def test_1d_transforms_against_numpy(fn, norm):
    for dtype in INPUTS_1D[fn]:
        for shape, n, axis in CASES_1D:
            with tide.program_guard(tide.Program(), tide.Program()):
                x = rand(shape, dtype)
                check(fn, x, numpy_1d(fn, x, n, axis, norm), n=n, axis=axis, norm=norm)


def test_default_arguments_and_the_ops_used():
    x = rand((4, 6), "float64")
    xv = data(x)
    outs = [tide.fft.fft(xv), tide.fft.rfft(xv), tide.fft.irfft(tide.fft.rfft(xv))]
    types = [op.type for op in tide.default_main_program().global_block().ops]
    # a real x's fft is fft_r2c with every bin (no complex copy), irfft is fft_c2r
    assert types == ["fft_r2c", "fft_r2c", "fft_r2c", "fft_c2r"], types
    got = run(outs, {"x": x})
    np.testing.assert_allclose(got[0], np.fft.fft(x), **tol("float64"))
    np.testing.assert_allclose(got[1], np.fft.rfft(x), **tol("float64"))
    np.testing.assert_allclose(got[2], x, **tol("float64"))


def test_irfft_and_hfft_odd_outputs_and_bins_past_n():
    """n odd; x with more bins than n//2 + 1 (those are not read) and with fewer (zeros)."""
    x = rand((3, 9), "complex128")
    for fn in ("irfft", "hfft"):
        for n in (5, 7, 16, 17):
            with tide.program_guard(tide.Program(), tide.Program()):
                check(fn, x, getattr(np.fft, fn)(x, n=n), n=n)


# --- n-D transforms --------------------------------------------------------------------------

# (shape, s, axes): defaults, s alone (the last len(s) axes), cropping and padding, negative and
# out-of-order axes, axes that skip one.
CASES_ND = [
    ((4, 6), None, None),
    ((3, 4, 6), [5, 4], None),
    ((3, 4, 6), None, [0, -1]),
    ((3, 4, 6), [2, 8], [-1, 0]),
    ((2, 3, 4, 5), [3, 3, 6], [1, 2, 3]),
    ((2, 5, 3), [4, 2, 3], [2, 0, 1]),
]
CASES_2D = [c for c in CASES_ND if (c[2] is not None and len(c[2]) == 2) or c[2] is None]
INPUTS_ND = {
    "fftn": ["float32", "complex64", "float64", "complex128"],
    "ifftn": ["float64", "complex64", "complex128"],
    "rfftn": ["float32", "float64"],
    "irfftn": ["complex64", "complex128"],
    "hfftn": ["complex64", "complex128"],
    "ihfftn": ["float32", "float64"],
}


def numpy_nd(fn, x, s, axes, norm):
    """numpy's n-D transform; paddle.fft's hfftn / ihfftn through their definitions."""
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    if fn == "hfftn":
        return np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=swap_norm(norm))
    if fn == "ihfftn":
        return np.conj(np.fft.rfftn(x, s=s, axes=axes, norm=swap_norm(norm)))
    return getattr(np.fft, fn)(x, s=s, axes=axes, norm=norm)


@pytest.mark.parametrize("fn", sorted(INPUTS_ND))
@pytest.mark.parametrize("norm", NORMS)
def test_nd_transforms_against_numpy(fn, norm):
    for dtype in INPUTS_ND[fn]:
        for shape, s, axes in CASES_ND:
            with tide.program_guard(tide.Program(), tide.Program()):
                x = rand(shape, dtype)
                check(fn, x, numpy_nd(fn, x, s, axes, norm), s=s, axes=axes, norm=norm)


@pytest.mark.parametrize("fn", ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"])
@pytest.mark.parametrize("norm", NORMS)
def test_2d_transforms_against_numpy(fn, norm):
    dtypes = INPUTS_ND[fn.replace("2", "n")]
    for dtype in dtypes[:1] + dtypes[-1:]:
        for shape, s, axes in CASES_2D + [((3, 4, 6), [5, 3], None)]:
            kwargs = {"s": s, "norm": norm}
            if axes is not None:
                kwargs["axes"] = axes
            with tide.program_guard(tide.Program(), tide.Program()):
                x = rand(shape, dtype)
                want = numpy_nd(fn.replace("2", "n"), x, s, axes or [-2, -1], norm)
                check(fn, x, want, **kwargs)


def test_round_trips():
    x = rand((4, 5, 6), "float64")
    xv = data(x)
    outs = [
        tide.fft.ifftn(tide.fft.fftn(xv)),
        tide.fft.irfftn(tide.fft.rfftn(xv), s=[4, 5, 6]),
        tide.fft.irfft2(tide.fft.rfft2(xv, norm="ortho"), s=[5, 6], norm="ortho"),
        tide.fft.hfft(tide.fft.ihfft(xv), n=6),
    ]
    got = run(outs, {"x": x})
    np.testing.assert_allclose(got[0], x.astype("complex128"), atol=1e-12)
    for g in got[1:]:
        np.testing.assert_allclose(g, x, atol=1e-12)


# --- dims unknown at build time --------------------------------------------------------------


def test_unknown_dims_are_cropped_or_padded_when_run():
    """A -1 dim with n / s: padded by n and sliced to n, declared n at build time."""
    xv = layers.data(name="x", shape=[-1, 6], dtype="float64", append_batch_size=False)
    a = tide.fft.fft(xv, n=4, axis=0)
    b = tide.fft.rfftn(xv, s=[5, 4], axes=[0, 1])
    c = tide.fft.irfft(tide.fft.rfft(xv), axis=-1)  # bins known: 4 -> 6 points
    d = tide.fft.fft(xv)  # the last axis, unknown batch: shape (-1, 6)
    assert a.shape == (4, 6) and b.shape == (5, 3) and c.shape == (-1, 6), (a.shape, b.shape)
    assert d.shape == (-1, 6)
    for rows in (2, 4, 7):
        x = rand((rows, 6), "float64")
        got = run([a, b, c, d], {"x": x})
        np.testing.assert_allclose(got[0], np.fft.fft(x, n=4, axis=0), atol=1e-12)
        np.testing.assert_allclose(got[1], np.fft.rfftn(x, s=[5, 4], axes=[0, 1]), atol=1e-12)
        np.testing.assert_allclose(got[2], x, atol=1e-12)
        np.testing.assert_allclose(got[3], np.fft.fft(x), atol=1e-12)


def test_irfft_of_bins_unknown_at_build_time():
    xv = layers.data(name="x", shape=[3, -1], dtype="complex128", append_batch_size=False)
    out = tide.fft.irfft(xv)
    assert out.shape == (3, -1) and out.dtype == "float64"
    x = rand((3, 5), "complex128")
    (got,) = run([out], {"x": x})
    np.testing.assert_allclose(got, np.fft.irfft(x), atol=1e-12)


# --- frequencies and shifts ------------------------------------------------------------------


def test_fftfreq_and_rfftfreq():
    cases = [(1, 1.0), (4, 1.0), (5, 0.3), (8, 2)]
    outs, wants = [], []
    for dtype in ("float32", "float64", None):
        for n, d in cases:
            for fn in ("fftfreq", "rfftfreq"):
                outs.append(getattr(tide.fft, fn)(n, d, dtype=dtype))
                wants.append(getattr(np.fft, fn)(n, d).astype(dtype or "float32"))
                assert outs[-1].shape == wants[-1].shape and outs[-1].dtype == wants[-1].dtype
    for got, want in zip(run(outs, {}), wants):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


SHIFT_CASES = [((5,), None), ((4, 6), None), ((3, 4, 5), 1), ((3, 4, 5), [-1, 0]), ((3, 5), (0,))]


@pytest.mark.parametrize("dtype", ["float32", "complex128", "int64"])
def test_fftshift_and_ifftshift(dtype):
    for shape, axes in SHIFT_CASES:
        with tide.program_guard(tide.Program(), tide.Program()):
            x = (
                (rand(shape, "float64") * 100).astype(dtype)
                if dtype == "int64"
                else rand(shape, dtype)
            )
            xv = data(x)
            outs = [tide.fft.fftshift(xv, axes), tide.fft.ifftshift(xv, axes)]
            assert all(o.shape == x.shape and o.dtype == dtype for o in outs)
            got = run(outs, {"x": x})
            np.testing.assert_array_equal(got[0], np.fft.fftshift(x, axes))
            np.testing.assert_array_equal(got[1], np.fft.ifftshift(x, axes))
            np.testing.assert_array_equal(
                run([tide.fft.ifftshift(tide.fft.fftshift(xv, axes), axes)], {"x": x})[0], x
            )


def test_fftshift_of_dims_unknown_at_build_time():
    """The shifts computed when the program runs (shape -> gather -> // 2)."""
    xv = layers.data(name="x", shape=[-1, 4, -1], dtype="float32", append_batch_size=False)
    outs = [tide.fft.fftshift(xv), tide.fft.ifftshift(xv, axes=[0, -1]), tide.fft.fftshift(xv, 1)]
    ops = [op.type for op in tide.default_main_program().global_block().ops]
    assert "shape" in ops
    for shape in ((3, 4, 5), (4, 4, 1), (1, 4, 6)):
        x = rand(shape, "float32")
        got = run(outs, {"x": x})
        np.testing.assert_array_equal(got[0], np.fft.fftshift(x))
        np.testing.assert_array_equal(got[1], np.fft.ifftshift(x, axes=[0, -1]))
        np.testing.assert_array_equal(got[2], np.fft.fftshift(x, 1))


# --- the complex layers ----------------------------------------------------------------------


@pytest.mark.parametrize("real_dtype", ["float32", "float64"])
def test_complex_layers_against_numpy(real_dtype):
    cdtype = COMPLEX_OF[real_dtype]
    re, im = rand((2, 3, 4), real_dtype), rand((3, 1), real_dtype)
    z = rand((2, 3), cdtype)
    pairs = rand((3, 2), real_dtype)
    rv, iv, zv, pv = data(re, "re"), data(im, "im"), data(z, "z"), data(pairs, "p")
    outs = [
        layers.complex(rv, iv),
        layers.real(zv),
        layers.imag(zv),
        layers.as_complex(pv),
        layers.as_real(zv),
        layers.conj(zv),
        layers.angle(zv),
        layers.conj(rv),
        layers.angle(rv),
    ]
    wants = [
        (re + 1j * im).astype(cdtype),
        z.real,
        z.imag,
        (pairs[:, 0] + 1j * pairs[:, 1]).astype(cdtype),
        np.stack([z.real, z.imag], axis=-1),
        np.conj(z),
        np.angle(z),
        re,
        np.angle(re).astype(real_dtype),
    ]
    for out, want in zip(outs, wants):
        assert out.shape == want.shape and out.dtype == want.dtype.name, (out, want.dtype)
    got = run(outs, {"re": re, "im": im, "z": z, "p": pairs})
    for g, want in zip(got, wants):
        assert g.dtype == want.dtype
        np.testing.assert_allclose(g, want, **tol(real_dtype))


def test_complex_layers_errors():
    f32 = layers.data(name="f32", shape=[3], dtype="float32", append_batch_size=False)
    f64 = layers.data(name="f64", shape=[3], dtype="float64", append_batch_size=False)
    i64 = layers.data(name="i64", shape=[3], dtype="int64", append_batch_size=False)
    c64 = layers.data(name="c64", shape=[3], dtype="complex64", append_batch_size=False)
    three = layers.data(name="three", shape=[4, 3], dtype="float32", append_batch_size=False)
    with pytest.raises(TypeError, match="'real' is float32 but 'imag' is float64"):
        layers.complex(f32, f64)
    with pytest.raises(TypeError, match="complex: the data type of 'imag'"):
        layers.complex(f32, i64)
    with pytest.raises(TypeError, match="complex: the type of 'real' must be a Variable"):
        layers.complex(1.0, f32)
    for layer in (layers.real, layers.imag, layers.as_real):
        with pytest.raises(TypeError, match="the data type of 'x' must be one of complex64"):
            layer(f32)
    with pytest.raises(TypeError, match="as_complex: the data type of 'x'"):
        layers.as_complex(c64)
    with pytest.raises(ValueError, match="last dim of 2.*\\[4, 3\\]"):
        layers.as_complex(three)
    with pytest.raises(TypeError, match="angle: the data type of 'x'"):
        layers.angle(i64)


# --- bad input -------------------------------------------------------------------------------


def test_bad_input_is_refused_naming_the_argument():
    x = layers.data(name="x", shape=[4, 6], dtype="float32", append_batch_size=False)
    z = layers.data(name="z", shape=[4, 6], dtype="complex64", append_batch_size=False)
    i = layers.data(name="i", shape=[4, 6], dtype="int32", append_batch_size=False)
    one_bin = layers.data(name="b", shape=[4, 1], dtype="complex64", append_batch_size=False)
    scalar = layers.data(name="s", shape=[], dtype="float32", append_batch_size=False)
    cases = [
        (
            TypeError,
            "tide.fft.fft: the data type of 'x' must be one of float32.*int32",
            lambda: tide.fft.fft(i),
        ),
        (TypeError, "tide.fft.rfftn: the data type of 'x'.*complex64", lambda: tide.fft.rfftn(z)),
        (
            TypeError,
            "tide.fft.ihfft: the type of 'x' must be a Variable",
            lambda: tide.fft.ihfft(np.zeros(3)),
        ),
        (
            ValueError,
            "tide.fft.fft: axis = 2 is out of range for x of rank 2",
            lambda: tide.fft.fft(x, axis=2),
        ),
        (ValueError, "axis = -3 is out of range", lambda: tide.fft.irfft(z, axis=-3)),
        (TypeError, "tide.fft.fft: axis must be an int", lambda: tide.fft.fft(x, axis=1.0)),
        (ValueError, "tide.fft.fft: n must be >= 1, got 0", lambda: tide.fft.fft(x, n=0)),
        (TypeError, "tide.fft.rfft: n must be an int, got 2.5", lambda: tide.fft.rfft(x, n=2.5)),
        (
            ValueError,
            "tide.fft.ifft: norm must be 'backward', 'forward' or 'ortho', got 'none'",
            lambda: tide.fft.ifft(x, norm="none"),
        ),
        (ValueError, "norm must be", lambda: tide.fft.rfft2(x, norm=None)),
        (
            ValueError,
            "tide.fft.fftn: axes \\[1, -1\\] repeats axis 1",
            lambda: tide.fft.fftn(x, axes=[1, -1]),
        ),
        (
            ValueError,
            "tide.fft.fftn: axes\\[1\\] = 5 is out of range",
            lambda: tide.fft.fftn(x, axes=[0, 5]),
        ),
        (
            ValueError,
            "s \\[4\\] and axes \\[0, 1\\] must have one length",
            lambda: tide.fft.fftn(x, s=[4], axes=[0, 1]),
        ),
        (
            ValueError,
            "s \\[2, 2, 2\\] has 3 sizes, more than x's rank 2",
            lambda: tide.fft.rfftn(x, s=[2, 2, 2]),
        ),
        (
            ValueError,
            "tide.fft.irfftn: s\\[1\\] must be >= 1, got -1",
            lambda: tide.fft.irfftn(z, s=[2, -1]),
        ),
        (
            TypeError,
            "tide.fft.fftn: the type of 's' must be list or tuple",
            lambda: tide.fft.fftn(x, s=4),
        ),
        (ValueError, "tide.fft.fft2: axes must have 2 entries", lambda: tide.fft.fft2(x, axes=[0])),
        (
            ValueError,
            "tide.fft.irfft2: s must have 2 entries",
            lambda: tide.fft.irfft2(z, s=[1, 2, 3]),
        ),
        (ValueError, "no axis to transform", lambda: tide.fft.fftn(scalar)),
        (ValueError, "no axis to transform", lambda: tide.fft.fftn(x, axes=[])),
        (
            ValueError,
            "has 1 bin\\(s\\) along axis 1.*give the output size",
            lambda: tide.fft.irfft(one_bin),
        ),
        (ValueError, "tide.fft.fftfreq: n must be >= 1", lambda: tide.fft.fftfreq(0)),
        (
            ValueError,
            "tide.fft.rfftfreq: the sample spacing d must not be 0",
            lambda: tide.fft.rfftfreq(4, 0.0),
        ),
        (
            TypeError,
            "tide.fft.fftfreq: the data type of 'dtype'",
            lambda: tide.fft.fftfreq(4, dtype="int32"),
        ),
        (
            ValueError,
            "tide.fft.fftshift: axes\\[0\\] = 2 is out of range",
            lambda: tide.fft.fftshift(x, 2),
        ),
        (
            ValueError,
            "tide.fft.ifftshift: axes \\[0, 0\\] repeats axis 0",
            lambda: tide.fft.ifftshift(x, [0, 0]),
        ),
    ]
    for error, message, build in cases:
        with pytest.raises(error, match=message):
            build()
    # n given: one bin is enough
    assert tide.fft.irfft(one_bin, n=1).shape == (4, 1)
    assert tide.fft.hfft(one_bin, n=3).shape == (4, 3)


# --- gradients through the API ---------------------------------------------------------------


def central_differences(f, w, delta=1e-6):
    g = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        up, down = w.copy(), w.copy()
        up[i] += delta
        down[i] -= delta
        g[i] = (f(up) - f(down)) / (2 * delta)
    return g


def trained_gradient(build, w0):
    """The gradient of loss = build(w) for parameter w set to w0, through append_backward."""
    w = layers.create_parameter(
        shape=list(w0.shape),
        dtype=str(w0.dtype),
        name="w",
        default_initializer=tide.initializer.Constant(0.0),
    )
    loss = build(w)
    pairs = tide.append_backward(loss)
    assert [p.name for p, _ in pairs] == ["w"]
    exe = tide.Executor(tide.CPUPlace())
    exe.run(tide.default_startup_program())
    tide.global_scope().var("w").get_tensor().set(w0, tide.CPUPlace(), False)
    loss_value, grad = exe.run(tide.default_main_program(), fetch_list=[loss, "w@GRAD"])
    return float(np.asarray(loss_value).reshape(-1)[0]), grad


def constant(value):
    v = layers.assign(np.ascontiguousarray(value))
    v.stop_gradient = True
    return v


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradient_through_rfft2_a_complex_filter_and_irfft2(dtype):
    w0 = RNG.uniform(-1, 1, (4, 6))
    fre, fim = RNG.uniform(-1, 1, (4, 4)), RNG.uniform(-1, 1, (4, 4))

    def build(w):
        spectrum = tide.fft.rfft2(w)
        assert spectrum.shape == (4, 4) and spectrum.dtype == COMPLEX_OF[dtype]
        filt = layers.complex(constant(fre.astype(dtype)), constant(fim.astype(dtype)))
        y = tide.fft.irfft2(layers.elementwise_mul(spectrum, filt), s=[4, 6])
        assert y.shape == (4, 6) and y.dtype == dtype
        return layers.mean(layers.square(y))

    def numpy_loss(w):
        y = np.fft.irfft2(np.fft.rfft2(w) * (fre + 1j * fim), s=(4, 6))
        return np.mean(y**2)

    loss, grad = trained_gradient(build, w0.astype(dtype))
    want = central_differences(numpy_loss, w0)
    rtol = 1e-7 if dtype == "float64" else 2e-3
    np.testing.assert_allclose(loss, numpy_loss(w0), rtol=rtol)
    np.testing.assert_allclose(grad, want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_gradient_through_padded_fft_fftshift_real_and_imag():
    """w -> fft with n padding (fft_r2c of every bin, pad) -> fftshift (roll) -> real / imag ->
    a weighted sum of squares; and through ifft of a cropped axis."""
    w0 = RNG.uniform(-1, 1, (3, 5))
    a, b = RNG.uniform(0.5, 2, (3, 8)), RNG.uniform(0.5, 2, (2, 5))

    def build(w):
        z = tide.fft.fftshift(tide.fft.fft(w, n=8, norm="ortho"), axes=[-1])
        v = tide.fft.ifft(w, n=2, axis=0)
        first = layers.reduce_sum(
            layers.elementwise_mul(layers.square(layers.real(z)), constant(a))
        )
        second = layers.reduce_sum(layers.elementwise_mul(layers.imag(z), constant(a)))
        third = layers.reduce_sum(layers.elementwise_mul(layers.imag(v), constant(b)))
        return layers.sums([first, second, third])

    def numpy_loss(w):
        z = np.fft.fftshift(np.fft.fft(w, n=8, norm="ortho"), axes=[-1])
        v = np.fft.ifft(w, n=2, axis=0)
        return np.sum(z.real**2 * a) + np.sum(z.imag * a) + np.sum(v.imag * b)

    loss, grad = trained_gradient(build, w0)
    want = central_differences(numpy_loss, w0)
    np.testing.assert_allclose(loss, numpy_loss(w0), rtol=1e-10)
    np.testing.assert_allclose(grad, want, rtol=1e-7, atol=1e-8)
