"""Training through complex values end to end: a Fourier neural operator's spectral layer (rfft
along the signal, the lowest `modes` bins mixed across channels by complex weights with einsum,
irfft back) plus a pointwise real path, as PaddleScience's and neuraloperator's FNO write it.
The weights are either two real parameters joined by `complex` (Paddle's way: Paddle has no
complex Adam) or one complex parameter (PyTorch's way). Checked: every parameter's gradient
against central differences of a float64 numpy forward, and Adam training both ways to the same
losses (Adam on a complex parameter is Adam on its real and imaginary parts, PyTorch's rule)
down to the target."""

import os

import numpy as np
import pytest

import tide

B, C_IN, C_OUT, N, MODES = 4, 2, 3, 16, 5


def numpy_forward(x, w, pw):
    """The layer in float64 numpy: irfft(einsum(rfft(x)[..., :modes], w), n) + pw-mixed x."""
    spec = np.fft.rfft(x, axis=-1)[..., :MODES]
    mixed = np.einsum("bix,iox->box", spec, w)
    full = np.zeros((x.shape[0], C_OUT, N // 2 + 1), complex)
    full[..., :MODES] = mixed
    return np.fft.irfft(full, n=N, axis=-1) + np.einsum("bin,io->bon", x, pw)


def numpy_loss(x, y, w, pw):
    return np.mean((numpy_forward(x, w, pw) - y) ** 2)


def spectral_layer(x, w, pw):
    """The same layer as a Tide program (x: [B, C_IN, N] real, w: [C_IN, C_OUT, MODES] complex,
    pw: [C_IN, C_OUT] real)."""
    block = tide.default_main_program().current_block()
    spec = tide.layers.slice(tide.fft.rfft(x), axes=[2], starts=[0], ends=[MODES])
    mixed = block.create_var(name="mixed", dtype=w.dtype)
    block.append_op(
        "einsum",
        inputs={"Operands": [spec, w]},
        outputs={"Out": [mixed]},
        attrs={"equation": "bix,iox->box"},
    )
    spectral = tide.fft.irfft(mixed, n=N)
    pointwise = tide.layers.transpose(
        tide.layers.matmul(tide.layers.transpose(x, [0, 2, 1]), pw), [0, 2, 1]
    )
    return tide.layers.elementwise_add(spectral, pointwise)


def build(dtype, complex_param, lr=None):
    """The program, its loss and the parameter names; with lr, Adam minimizes the loss."""
    cdtype = {"float32": "complex64", "float64": "complex128"}[dtype]
    x = tide.layers.data(name="x", shape=[C_IN, N], dtype=dtype)
    y = tide.layers.data(name="y", shape=[C_OUT, N], dtype=dtype)
    pw = tide.layers.create_parameter([C_IN, C_OUT], dtype, name="pw")
    if complex_param:
        w = tide.layers.create_parameter(
            [C_IN, C_OUT, MODES],
            cdtype,
            name="w",
            default_initializer=tide.initializer.Constant(0.0),
        )
        names = ["w", "pw"]
    else:
        wr = tide.layers.create_parameter([C_IN, C_OUT, MODES], dtype, name="wr")
        wi = tide.layers.create_parameter([C_IN, C_OUT, MODES], dtype, name="wi")
        w = tide.layers.complex(wr, wi)
        names = ["wr", "wi", "pw"]
    loss = tide.layers.reduce_mean(
        tide.layers.square(tide.layers.elementwise_sub(spectral_layer(x, w, pw), y))
    )
    if lr is None:
        pairs = tide.append_backward(loss)
    else:
        _, pairs = tide.optimizer.Adam(learning_rate=lr).minimize(loss)
    assert sorted(p.name for p, _ in pairs) == sorted(names)
    return loss, {p.name: g for p, g in pairs}


def data(rng, dtype):
    x = rng.standard_normal((B, C_IN, N)).astype(dtype)
    w_true = rng.standard_normal((C_IN, C_OUT, MODES)) + 1j * rng.standard_normal(
        (C_IN, C_OUT, MODES)
    )
    pw_true = rng.standard_normal((C_IN, C_OUT))
    y = numpy_forward(x.astype(np.float64), w_true, pw_true).astype(dtype)
    return x, y


def init(rng):
    w = 0.3 * (
        rng.standard_normal((C_IN, C_OUT, MODES)) + 1j * rng.standard_normal((C_IN, C_OUT, MODES))
    )
    pw = 0.3 * rng.standard_normal((C_IN, C_OUT))
    return w, pw


def set_params(scope, w, pw, dtype, complex_param):
    cdtype = {"float32": "complex64", "float64": "complex128"}[dtype]
    values = {"pw": pw.astype(dtype)}
    if complex_param:
        values["w"] = w.astype(cdtype)
    else:
        values["wr"], values["wi"] = w.real.astype(dtype), w.imag.astype(dtype)
    for name, value in values.items():
        scope.find_var(name).get_tensor().set(value, tide.CPUPlace())


@pytest.mark.parametrize("complex_param", [False, True])
def test_gradients_match_central_differences(complex_param):
    rng = np.random.default_rng(5)
    x, y = data(rng, "float64")
    w, pw = init(rng)
    loss, grads = build("float64", complex_param)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    exe.run(tide.default_startup_program(), scope=scope)
    set_params(scope, w, pw, "float64", complex_param)
    names = sorted(grads)
    fetched = exe.run(
        feed={"x": x, "y": y}, fetch_list=[loss] + [grads[n] for n in names], scope=scope
    )
    np.testing.assert_allclose(fetched[0], numpy_loss(x, y, w, pw), rtol=1e-12)
    got = dict(zip(names, fetched[1:]))

    eps = 1e-6

    def diff(f, value):
        """dL/d(value) by central differences; a complex value's: dL/d(real) + i dL/d(imag)."""
        out = np.zeros(value.shape, value.dtype)
        steps = [1.0, 1j] if np.iscomplexobj(value) else [1.0]
        for idx in np.ndindex(value.shape):
            for step in steps:
                hi, lo = value.copy(), value.copy()
                hi[idx] += eps * step
                lo[idx] -= eps * step
                out[idx] += (f(hi) - f(lo)) / (2 * eps) * step
        return out

    want = {"pw": diff(lambda v: numpy_loss(x, y, w, v), pw)}
    dw = diff(lambda v: numpy_loss(x, y, v, pw), w)
    if complex_param:
        want["w"] = dw
    else:
        want["wr"], want["wi"] = dw.real, dw.imag
    for name in names:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=1e-9, err_msg=name)


def train(complex_param, steps):
    rng = np.random.default_rng(11)
    x, y = data(rng, "float32")
    w, pw = init(rng)
    loss, _ = build("float32", complex_param, lr=0.05)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    exe.run(tide.default_startup_program(), scope=scope)
    set_params(scope, w, pw, "float32", complex_param)
    return [
        exe.run(feed={"x": x, "y": y}, fetch_list=[loss], scope=scope)[0].item()
        for _ in range(steps)
    ]


def test_adam_trains_a_complex_parameter_as_its_real_and_imaginary_parts():
    """One complex parameter or two real ones: the same Adam steps, so the same losses; both
    fit the target (a layer of the same form) to a hundredth of the first loss."""
    with tide.program_guard(tide.Program(), tide.Program()):
        as_reals = train(False, 150)
    with tide.program_guard(tide.Program(), tide.Program()):
        as_complex = train(True, 150)
    np.testing.assert_allclose(as_complex, as_reals, rtol=2e-4)
    assert as_reals[-1] < as_reals[0] / 100, as_reals[::25]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "init, low, high",
    [
        (None, -np.sqrt(6 / 7), np.sqrt(6 / 7)),  # the default: Xavier's U(+-sqrt(6 / (3 + 4)))
        (tide.initializer.Uniform(-0.5, 2.0), -0.5, 2.0),
        (tide.initializer.Normal(1.0, 0.01), 0.9, 1.1),
    ],
)
def test_initializers_draw_both_parts_of_a_complex_parameter(dtype, init, low, high):
    """A complex parameter's real and imaginary parts are each drawn as a real parameter's
    values would be (independently), in the parameter's precision."""
    w = tide.layers.create_parameter([3, 4], dtype, name="w", default_initializer=init)
    scope = tide.Scope()
    tide.Executor(tide.CPUPlace()).run(tide.default_startup_program(), scope=scope)
    value = np.array(scope.find_var("w").get_tensor())
    assert value.dtype == np.dtype(dtype) and value.shape == (3, 4) and w.dtype == dtype
    for part in (value.real, value.imag):
        assert np.all(part >= low) and np.all(part <= high), part
        assert len(np.unique(part)) == part.size  # drawn, not filled
    assert not np.array_equal(value.real, value.imag)


def test_the_fft_guide_example_trains():
    """docs/fft.md's first example, run as written, then trained a few Adam steps."""
    source = os.environ.get("TIDE_SOURCE_DIR") or os.path.join(
        os.path.dirname(__file__), "..", ".."
    )
    text = open(os.path.join(source, "docs", "fft.md")).read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    scope = {}
    exec(compile(code, "docs/fft.md", "exec"), scope)
    exe = tide.Executor(tide.CPUPlace())
    exe.run(tide.default_startup_program())
    x = np.random.default_rng(0).standard_normal((2, 3, 64)).astype("float32")
    losses = [exe.run(feed={"x": x}, fetch_list=[scope["loss"]])[0].item() for _ in range(5)]
    assert scope["w"].dtype == "complex64" and scope["y"].shape[1:] == (3, 64)
    assert losses[-1] < losses[0], losses


def test_fine_tuning_a_paddle_saved_fourier_layer():
    """Paddle 3.3.1's FNO layer (fixture pir/spectral_conv: rfft2, a complex einsum with weights
    made by paddle.complex, set_value into complex zeros, irfft2, a conv, a reshape) loaded from
    its PIR program and trained further: PIR programs have no XShape outputs, which backward binds
    for reshape2's grad; the spectral weights' gradients match central differences and SGD lowers
    the loss."""
    source = os.environ.get("TIDE_SOURCE_DIR") or os.path.join(
        os.path.dirname(__file__), "..", ".."
    )
    prefix = os.path.join(
        source, "tests", "fixtures", "paddle", "pir", "spectral_conv", "inference"
    )
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        program, feeds, fetches = tide.io.load_inference_model(prefix, exe, optimize=False)
    x = np.load(os.path.join(os.path.dirname(prefix), "input.npy"))
    forward = program.clone()
    startup = tide.Program()
    with tide.program_guard(program, startup):
        loss = tide.layers.reduce_mean(tide.layers.square(fetches[0]))
        _, pairs = tide.optimizer.SGD(learning_rate=0.05).minimize(loss)
    grads = {p.name: g for p, g in pairs}
    assert {"spectral_conv_0.w_0", "spectral_conv_0.w_1"} <= set(grads), sorted(grads)
    exe.run(startup, scope=scope)

    def loss_now():
        (out,) = exe.run(forward, feed={feeds[0]: x}, fetch_list=[fetches[0].name], scope=scope)
        return float(np.mean(out.astype(np.float64) ** 2))

    names = ["spectral_conv_0.w_0", "spectral_conv_0.w_1"]
    tensors = {n: scope.find_var(n).get_tensor() for n in names}
    start = {n: np.array(t) for n, t in tensors.items()}
    # No update yet: fetch the gradients from a copy of the program without the sgd ops.
    no_update = program.clone()
    block = no_update.global_block()
    for i in reversed([i for i, op in enumerate(block.ops) if op.type == "sgd"]):
        block._remove_op(i)
    got = exe.run(no_update, feed={feeds[0]: x}, fetch_list=[grads[n] for n in names], scope=scope)
    rng = np.random.default_rng(3)
    eps = 1e-2
    for name, g in zip(names, got):
        for flat in rng.choice(g.size, 4, replace=False):
            idx = np.unravel_index(flat, g.shape)
            value = start[name].copy()
            value[idx] += eps
            tensors[name].set(value, tide.CPUPlace())
            hi = loss_now()
            value[idx] -= 2 * eps
            tensors[name].set(value, tide.CPUPlace())
            lo = loss_now()
            tensors[name].set(start[name], tide.CPUPlace())
            np.testing.assert_allclose(g[idx], (hi - lo) / (2 * eps), rtol=2e-2, atol=1e-5)
    losses = [
        exe.run(program, feed={feeds[0]: x}, fetch_list=[loss], scope=scope)[0].item()
        for _ in range(4)
    ]
    assert losses[-1] < losses[0] * 0.95, losses
