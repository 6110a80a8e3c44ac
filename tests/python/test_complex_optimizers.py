"""Complex parameters in the optimizers: sgd, momentum and adam update a complex64 / complex128
Param as its real view (PyTorch's rule, torch.view_as_real: each real and imaginary part one real
element; Adam's second moment per part, not |g|^2). Checked for several steps against numpy's
real optimizer formulas applied to np.view_as_real-style arrays: the ops themselves (dense and
SelectedRows gradients), the Python optimizers (their accumulators' dtypes: Param-shaped ones
complex, Adam's beta powers real), L2 decay and clipping by norm / global norm of complex
gradients, a small program that trains a complex weight through append_backward, and a
checkpoint of a complex parameter with its accumulators. Errors: the optimizers without complex
kernels (adagrad, rmsprop, lars_momentum), L1 decay and clipping by value refuse complex
parameters by name; state of the wrong type is refused."""

import numpy as np
import pytest

import tide
from tide import layers
from tide.initializer import Constant

CDTYPES = ["complex64", "complex128"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}
TOL = {"complex64": dict(rtol=3e-5, atol=3e-6), "complex128": dict(rtol=1e-12, atol=1e-13)}
F = np.float32  # float attributes (mu, scale) reach the kernels as float32 values
STEPS = 4


def crand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dtype)


def view(z):
    """np.view_as_real of z, in float64: shape [..., 2], the real and imaginary parts."""
    z = np.asarray(z)
    return np.stack([z.real, z.imag], axis=-1).astype(np.float64)


def unview(x):
    return x[..., 0] + 1j * x[..., 1]


# ---------------------------------------------------------------------------------------------
# numpy references on real views (float64 arrays [..., 2]): one step of the real formula
def sgd_ref(p, g, state, lr, attrs, pows=None):
    return p - lr * g, {}


def momentum_ref(p, g, state, lr, attrs, pows=None):
    mu = float(F(attrs["mu"]))
    v = mu * state["Velocity"] + g
    p = p - lr * (g + mu * v) if attrs.get("use_nesterov") else p - lr * v
    return p, {"Velocity": v}


def adam_ref(p, g, state, lr, attrs, pows):  # adam's attributes are float64: exact
    b1, b2, eps = (
        attrs.get(k, d) for k, d in (("beta1", 0.9), ("beta2", 0.999), ("epsilon", 1e-8))
    )
    b1pow, b2pow = pows
    m1 = b1 * state["Moment1"] + (1 - b1) * g
    m2 = b2 * state["Moment2"] + (1 - b2) * g * g  # per part: re^2 and im^2, not |g|^2
    p = p - lr * (m1 / (1 - b1pow)) / (np.sqrt(m2 / (1 - b2pow)) + eps)
    return p, {"Moment1": m1, "Moment2": m2}


REFS = {"sgd": sgd_ref, "momentum": momentum_ref, "adam": adam_ref}
STATE = {"sgd": [], "momentum": ["Velocity"], "adam": ["Moment1", "Moment2"]}
CASES = {  # name: op, attrs
    "sgd": ("sgd", {}),
    "momentum": ("momentum", {"mu": 0.9}),
    "momentum_nesterov": ("momentum", {"mu": 0.85, "use_nesterov": True}),
    "adam": ("adam", {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}),
    "adam_other_betas": ("adam", {"beta1": 0.5, "beta2": 0.75, "epsilon": 1e-3}),
}


def reference_steps(op, attrs, p, state, grads, lr, pows=None):
    """The real formula over the real views for len(grads) steps: (param, {state}) complex."""
    p, state = view(p), {k: view(v) for k, v in state.items()}
    for t, g in enumerate(grads):
        p, new = REFS[op](p, view(g), state, lr, attrs, pows[t] if pows else None)
        state.update(new)
    return unview(p), {k: unview(v) for k, v in state.items()}


def adam_pows(attrs, dtype, steps):
    """Beta1Pow, Beta2Pow at steps 1..steps in the real type, as Adam keeps them."""
    b1, b2 = attrs.get("beta1", 0.9), attrs.get("beta2", 0.999)
    rt = REAL_OF[dtype]
    return [
        (float(np.asarray(b1**t, rt)), float(np.asarray(b2**t, rt))) for t in range(1, steps + 1)
    ]


def persistable(block, name, shape, dtype, **kw):
    return block.create_var(name=name, shape=list(shape), dtype=dtype, persistable=True, **kw)


def set_tensor(scope, name, value):
    scope.var(name).get_tensor().set(np.ascontiguousarray(value), tide.CPUPlace(), False)


def get_tensor(scope, name):
    return np.array(scope.find_var(name).get_tensor())


# ---------------------------------------------------------------------------------------------
# The ops: several steps, updates in place, Grad a new value each step
def op_inputs(op, rng, shape, dtype, lr_dtype):
    ins = {"Param": crand(rng, shape, dtype), "LearningRate": np.array([0.05], lr_dtype)}
    for s in STATE[op]:
        lo = 0.01 if s == "Moment2" else -1.0  # a second moment is >= 0 in each part
        ins[s] = crand(rng, shape, dtype, lo, 1.0)
    return ins


def build_op_program(op, attrs, ins, dtype, grad_type="LOD_TENSOR"):
    main = tide.Program()
    b = main.global_block()
    v = {k: persistable(b, k.lower(), a.shape, a.dtype.name) for k, a in ins.items()}
    if op == "adam":
        for k in ("Beta1Pow", "Beta2Pow"):
            v[k] = persistable(b, k.lower(), [1], REAL_OF[dtype])
    grad = persistable(b, "grad", ins["Param"].shape, dtype, type=grad_type)
    outputs = {"ParamOut": v["Param"]}
    outputs.update({s + "Out": v[s] for s in STATE[op]})
    b.append_op(op, inputs=dict(v, Grad=grad), outputs=outputs, attrs=attrs)
    return main


def run_op_steps(op, attrs, ins, dtype, grads, pows=None, sparse=None):
    """Runs `op` once per gradient (dense, or SelectedRows (rows, values, height) with `sparse`);
    returns {input name: value after the last step}."""
    main = build_op_program(op, attrs, ins, dtype, "SELECTED_ROWS" if sparse else "LOD_TENSOR")
    scope, exe = tide.Scope(), tide.Executor(tide.CPUPlace())
    for k, a in ins.items():
        set_tensor(scope, k.lower(), a)
    for t, g in enumerate(grads):
        if sparse:
            rows, height = sparse
            sr = scope.var("grad").get_selected_rows()
            sr.set_rows(list(rows))
            sr.set_height(height)
            sr.get_tensor().set(np.ascontiguousarray(g), tide.CPUPlace(), False)
        else:
            set_tensor(scope, "grad", g)
        if pows:
            for k, value in zip(("beta1pow", "beta2pow"), pows[t]):
                set_tensor(scope, k, np.array([value], REAL_OF[dtype]))
        exe.run(main, scope=scope)
    return {k: get_tensor(scope, k.lower()) for k in ins}


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_op_steps_update_the_real_view(case, dtype, rng):
    op, attrs = CASES[case]
    ins = op_inputs(op, rng, (3, 4), dtype, REAL_OF[dtype])
    grads = [crand(rng, (3, 4), dtype, -2, 2) for _ in range(STEPS)]
    pows = adam_pows(attrs, dtype, STEPS) if op == "adam" else None
    got = run_op_steps(op, attrs, ins, dtype, grads, pows)
    state = {s: ins[s] for s in STATE[op]}
    want_p, want_state = reference_steps(op, attrs, ins["Param"], state, grads, 0.05, pows)
    assert got["Param"].dtype == np.dtype(dtype)
    np.testing.assert_allclose(got["Param"], want_p, **TOL[dtype])
    for s in STATE[op]:
        assert got[s].dtype == np.dtype(dtype), s
        np.testing.assert_allclose(got[s], want_state[s], err_msg=s, **TOL[dtype])
    assert not np.allclose(got["Param"].imag, ins["Param"].imag)  # the imaginary parts moved


def test_adam_second_moment_is_per_part_not_modulus():
    """One step from zero moments: Moment2 = (1 - beta2) (re^2 + i im^2), not |g|^2; with
    beta1 = beta2 = 0 every part moves by lr * sign(part) (Adam's step on each real element)."""
    g = np.array([3 + 4j, -1 + 0.5j], "complex128")
    ins = {
        "Param": np.zeros(2, "complex128"),
        "LearningRate": np.array([0.1]),
        "Moment1": np.zeros(2, "complex128"),
        "Moment2": np.zeros(2, "complex128"),
    }
    attrs = {"beta1": 0.0, "beta2": 0.0, "epsilon": 1e-12}
    got = run_op_steps("adam", attrs, ins, "complex128", [g], [(0.0, 0.0)])
    np.testing.assert_allclose(got["Moment2"], g.real**2 + 1j * g.imag**2, rtol=1e-15)
    np.testing.assert_allclose(got["Param"], -0.1 * (np.sign(g.real) + 1j * np.sign(g.imag)))


@pytest.mark.parametrize("op", ["sgd", "momentum", "adam"])
def test_op_takes_a_learning_rate_of_the_other_real_type(op, rng):
    """Fluid makes the learning rate float32 whatever the parameter: a complex128 Param takes a
    float32 LearningRate (read as float64), a complex64 one a float64 LearningRate."""
    attrs = {"mu": 0.9} if op == "momentum" else {}
    for dtype, lr_dtype in (("complex128", "float32"), ("complex64", "float64")):
        ins = op_inputs(op, rng, (5,), dtype, lr_dtype)
        ins["LearningRate"] = np.array([0.3], lr_dtype)
        grads = [crand(rng, (5,), dtype)]
        pows = adam_pows(attrs, dtype, 1) if op == "adam" else None
        got = run_op_steps(op, attrs, ins, dtype, grads, pows)
        lr = float(np.asarray(0.3, lr_dtype).astype(REAL_OF[dtype]))
        state = {s: ins[s] for s in STATE[op]}
        want, _ = reference_steps(op, attrs, ins["Param"], state, grads, lr, pows)
        np.testing.assert_allclose(got["Param"], want, **TOL[dtype])


def dense_of(rows, values, shape):
    g = np.zeros(shape, np.complex128)
    np.add.at(g, np.asarray(rows), values.astype(np.complex128))
    return g


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("case", ["sgd", "momentum", "adam", "adam_lazy"])
def test_selected_rows_grad(case, dtype, rng):
    """A SelectedRows complex Grad (a row is 2 * row_size reals): sgd moves only the listed rows
    (a repeated row by both values); momentum and adam take the dense step with 0 elsewhere;
    lazy adam updates the listed rows only and leaves the others exactly."""
    op = "adam" if case.startswith("adam") else case
    attrs = {"mu": 0.9} if op == "momentum" else {}
    if case == "adam_lazy":
        attrs = {"lazy_mode": True}
    ins = op_inputs(op, rng, (5, 3), dtype, REAL_OF[dtype])
    rows, values = [4, 1, 4], crand(rng, (3, 3), dtype, -2, 2)
    pows = adam_pows(attrs, dtype, 1) if op == "adam" else None
    got = run_op_steps(op, attrs, ins, dtype, [values], pows, sparse=(rows, 5))
    dense = dense_of(rows, values, (5, 3))
    state = {s: ins[s] for s in STATE[op]}
    want_p, want_state = reference_steps(op, attrs, ins["Param"], state, [dense], 0.05, pows)
    listed = [1, 4]
    checked = listed if case in ("sgd", "adam_lazy") else slice(None)
    np.testing.assert_allclose(got["Param"][checked], want_p[checked], **TOL[dtype])
    for s in STATE[op]:
        np.testing.assert_allclose(got[s][checked], want_state[s][checked], err_msg=s, **TOL[dtype])
    if case in ("sgd", "adam_lazy"):
        others = [0, 2, 3]
        for k in ["Param"] + STATE[op]:
            np.testing.assert_array_equal(got[k][others], ins[k][others], err_msg=k)


# ---------------------------------------------------------------------------------------------
# The Python optimizers: accumulators and steps, the gradient given
OPTIMIZERS = {  # name: (class, kwargs, op, attrs of the reference)
    "SGD": (tide.optimizer.SGD, {}, "sgd", {}),
    "Momentum": (tide.optimizer.Momentum, {"momentum": 0.9}, "momentum", {"mu": 0.9}),
    "Nesterov": (
        tide.optimizer.Momentum,
        {"momentum": 0.8, "use_nesterov": True},
        "momentum",
        {"mu": 0.8, "use_nesterov": True},
    ),
    "Adam": (tide.optimizer.Adam, {}, "adam", {}),
    "Adam_other_betas": (
        tide.optimizer.Adam,
        {"beta1": 0.6, "beta2": 0.8, "epsilon": 1e-4},
        "adam",
        {"beta1": 0.6, "beta2": 0.8, "epsilon": 1e-4},
    ),
}
ACCUMULATORS = {"sgd": [], "momentum": ["velocity"], "adam": ["moment1", "moment2"]}


def complex_param(shape, dtype, name="w", **kw):
    return layers.create_parameter(shape, dtype, name=name, default_initializer=Constant(0.0), **kw)


def accumulator(opt, name, param):
    return opt._get_accumulator(name, param)


def pow_value(scope, opt, name, param):
    """The value of Adam's beta power accumulator `name` of `param`."""
    return float(get_tensor(scope, accumulator(opt, name, param).name)[0])


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_trains_a_complex_parameter(name, dtype, fresh_programs, rng):
    main, startup = fresh_programs
    cls, kwargs, op, attrs = OPTIMIZERS[name]
    w = complex_param([3, 2], dtype)
    g = persistable(main.global_block(), "w_grad", [3, 2], dtype)
    opt = cls(learning_rate=0.05, **kwargs)
    opt.apply_gradients([(w, g)])
    for acc in ACCUMULATORS[op]:
        assert accumulator(opt, acc, w).dtype == dtype, acc
    if op == "adam":
        for acc in ("beta1_pow_acc", "beta2_pow_acc"):
            v = accumulator(opt, acc, w)
            assert v.dtype == REAL_OF[dtype] and list(v.shape) == [1], acc
    scope, exe = tide.Scope(), tide.Executor(tide.CPUPlace())
    exe.run(startup, scope=scope)
    w0 = crand(rng, (3, 2), dtype)
    set_tensor(scope, "w", w0)
    grads = [crand(rng, (3, 2), dtype, -2, 2) for _ in range(STEPS)]
    pows = []
    for gv in grads:
        set_tensor(scope, "w_grad", gv)
        if op == "adam":
            pows.append([pow_value(scope, opt, a, w) for a in ("beta1_pow_acc", "beta2_pow_acc")])
        exe.run(main, scope=scope)
    lr = float(F(0.05))  # the learning rate variable is float32
    state = {s: np.zeros((3, 2), dtype) for s in STATE[op]}
    want, want_state = reference_steps(op, attrs, w0, state, grads, lr, pows or None)
    np.testing.assert_allclose(get_tensor(scope, "w"), want, **TOL[dtype])
    for s, acc in zip(STATE[op], ACCUMULATORS[op]):
        got = get_tensor(scope, accumulator(opt, acc, w).name)
        np.testing.assert_allclose(got, want_state[s], err_msg=s, **TOL[dtype])
    if op == "adam":
        b1 = float(F(attrs.get("beta1", 0.9)))
        np.testing.assert_allclose(pows[-1][0], b1**STEPS, rtol=1e-6)


@pytest.mark.parametrize(
    "cls,kwargs,op",
    [
        (tide.optimizer.Adagrad, {}, "adagrad"),
        (tide.optimizer.RMSProp, {}, "rmsprop"),
        (tide.optimizer.LarsMomentum, {"momentum": 0.9}, "lars_momentum"),
    ],
)
def test_optimizers_without_complex_kernels_refuse_by_name(cls, kwargs, op, fresh_programs):
    main, _ = fresh_programs
    w = complex_param([3], "complex64", name="spectral_w")
    g = persistable(main.global_block(), "spectral_w_grad", [3], "complex64")
    msg = r"%s cannot train the complex parameter 'spectral_w' \(complex64\): its update op '%s'"
    msg %= (cls.__name__, op)
    with pytest.raises(TypeError, match=msg):
        cls(learning_rate=0.1, **kwargs).apply_gradients([(w, g)])
    # The op itself, appended by hand, refuses when it is built.
    b = main.global_block()
    state = {"adagrad": ["Moment"], "rmsprop": ["MeanSquare", "Moment"]}.get(op, ["Velocity"])
    inputs = {"Param": w, "Grad": g, "LearningRate": persistable(b, "lr", [1], "float32")}
    outputs = {"ParamOut": w}
    for s in state:
        inputs[s] = outputs[s + "Out"] = persistable(b, s.lower(), [3], "complex64")
    attrs = {"mu": 0.9} if op == "lars_momentum" else {}
    with pytest.raises(
        tide.TideError,
        match=r"op '%s': Param \('spectral_w'\) is complex64; %s updates float32 and float64 "
        r"parameters only" % (op, op),
    ):
        b.append_op(op, inputs=inputs, outputs=outputs, attrs=attrs)


def test_state_and_scalars_of_the_wrong_type_are_refused(fresh_programs):
    """A complex Param's moments must be complex of its type; its scalars real."""
    main, _ = fresh_programs
    b = main.global_block()
    p = persistable(b, "p", [3], "complex64")
    g = persistable(b, "g", [3], "complex64")
    lr = persistable(b, "lr", [1], "float32")
    pows = {k: persistable(b, k.lower(), [1], "float32") for k in ("Beta1Pow", "Beta2Pow")}
    real_m = persistable(b, "m_real", [3], "float32")
    wide_m = persistable(b, "m_wide", [3], "complex128")
    m = persistable(b, "m", [3], "complex64")

    def adam(m1, lr_var=lr, pow_vars=pows):
        b.append_op(
            "adam",
            inputs=dict(pow_vars, Param=p, Grad=g, LearningRate=lr_var, Moment1=m1, Moment2=m),
            outputs={"ParamOut": p, "Moment1Out": m1, "Moment2Out": m},
        )

    for bad, name in ((real_m, "float32"), (wide_m, "complex128")):
        msg = r"op 'adam': Moment1 \('%s'\) is %s, Param \('p'\) is complex64" % (bad.name, name)
        with pytest.raises(tide.TideError, match=msg):
            adam(bad)
    complex_lr = persistable(b, "lr_c", [1], "complex64")
    with pytest.raises(tide.TideError, match=r"LearningRate \('lr_c'\) is complex64; it must be"):
        adam(m, lr_var=complex_lr)
    with pytest.raises(tide.TideError, match=r"Beta1Pow \('pow_c'\) is complex64; it must be"):
        adam(m, pow_vars=dict(pows, Beta1Pow=persistable(b, "pow_c", [1], "complex64")))


# ---------------------------------------------------------------------------------------------
# Regularisation and clipping of complex gradients
def run_sgd_steps(main, startup, values, grads, lr=0.1):
    """Sets the parameters' values, then per step their gradients (vars '<name>_grad'), runs
    `main`; returns the parameters' values after the last step."""
    scope, exe = tide.Scope(), tide.Executor(tide.CPUPlace())
    exe.run(startup, scope=scope)
    for k, v in values.items():
        set_tensor(scope, k, v)
    for step in grads:
        for k, v in step.items():
            set_tensor(scope, k + "_grad", v)
        exe.run(main, scope=scope)
    return {k: get_tensor(scope, k) for k in values}


@pytest.mark.parametrize("dtype", CDTYPES)
def test_l2_decay_decays_both_parts(dtype, fresh_programs, rng):
    main, startup = fresh_programs
    w = complex_param([4], dtype)
    g = persistable(main.global_block(), "w_grad", [4], dtype)
    tide.optimizer.SGD(0.1, regularization=tide.regularizer.L2Decay(0.5)).apply_gradients([(w, g)])
    w0, g0 = crand(rng, (4,), dtype), crand(rng, (4,), dtype)
    got = run_sgd_steps(main, startup, {"w": w0}, [{"w": g0}])["w"]
    want = unview(view(w0) - float(F(0.1)) * (view(g0) + 0.5 * view(w0)))
    np.testing.assert_allclose(got, want, **TOL[dtype])


def test_l1_decay_and_clip_by_value_refuse_complex_by_name(fresh_programs):
    main, _ = fresh_programs
    w = complex_param([4], "complex64", name="spectral_w")
    g = persistable(main.global_block(), "spectral_w_grad", [4], "complex64")
    opt = tide.optimizer.SGD(0.1, regularization=tide.regularizer.L1Decay(0.5))
    msg = r"L1Decay cannot regularize the complex parameter 'spectral_w' \(complex64\)"
    with pytest.raises(TypeError, match=msg):
        opt.apply_gradients([(w, g)])
    opt = tide.optimizer.SGD(0.1, grad_clip=tide.clip.GradientClipByValue(1.0))
    msg = r"GradientClipByValue cannot clip the complex gradient of parameter 'spectral_w'"
    with pytest.raises(TypeError, match=msg):
        opt.apply_gradients([(w, g)])


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("scale", [0.1, 10.0])  # clipped, and left alone
def test_clip_by_norm_takes_the_modulus(dtype, scale, fresh_programs, rng):
    """||g|| of a complex g is sqrt(sum |g|^2) = that of its real view."""
    main, startup = fresh_programs
    w = complex_param([3, 2], dtype)
    g = persistable(main.global_block(), "w_grad", [3, 2], dtype)
    clip = tide.clip.GradientClipByNorm(2.0)
    tide.optimizer.SGD(0.1, grad_clip=clip).apply_gradients([(w, g)])
    w0, g0 = crand(rng, (3, 2), dtype), crand(rng, (3, 2), dtype) * scale
    got = run_sgd_steps(main, startup, {"w": w0}, [{"w": g0}])["w"]
    norm = np.sqrt(np.sum(np.abs(g0.astype(np.complex128)) ** 2))
    want = w0 - float(F(0.1)) * g0.astype(np.complex128) * 2.0 / max(norm, 2.0)
    np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", CDTYPES)
def test_clip_by_global_norm_counts_both_parts(dtype, fresh_programs, rng):
    """A complex and a real parameter: global_norm^2 = sum |g_c|^2 + sum g_r^2; both scaled."""
    main, startup = fresh_programs
    rdtype = REAL_OF[dtype]
    w = complex_param([3, 2], dtype, name="a_w")
    v = layers.create_parameter([4], rdtype, name="b_v", default_initializer=Constant(0.0))
    b = main.global_block()
    gw = persistable(b, "a_w_grad", [3, 2], dtype)
    gv = persistable(b, "b_v_grad", [4], rdtype)
    clip = tide.clip.GradientClipByGlobalNorm(1.5)
    tide.optimizer.SGD(0.1, grad_clip=clip).apply_gradients([(w, gw), (v, gv)])
    w0, v0 = crand(rng, (3, 2), dtype), rng.uniform(-1, 1, 4).astype(rdtype)
    g_w, g_v = crand(rng, (3, 2), dtype), rng.uniform(-1, 1, 4).astype(rdtype)
    got = run_sgd_steps(main, startup, {"a_w": w0, "b_v": v0}, [{"a_w": g_w, "b_v": g_v}])
    norm = np.sqrt(np.sum(np.abs(g_w.astype(np.complex128)) ** 2) + np.sum(g_v**2.0))
    assert norm > 1.5
    factor = 1.5 / norm
    lr = float(F(0.1))
    np.testing.assert_allclose(
        got["a_w"], w0 - lr * factor * g_w.astype(np.complex128), **TOL[dtype]
    )
    np.testing.assert_allclose(got["b_v"], v0 - lr * factor * g_v.astype(np.float64), **TOL[dtype])


# ---------------------------------------------------------------------------------------------
# End to end: a complex weight trained through append_backward
def forward_and_grad(w, x):
    """out = x * w (w broadcast over the batch), loss = mean(real(out)^2); the gradient by the
    convention (dL/d re(w) + i dL/d im(w)): out@GRAD = 2 re(out) / n + 0i, w@GRAD = sum over the
    batch of out@GRAD * conj(x)."""
    out = x * w
    loss = np.mean(out.real**2)
    d_out = 2 * out.real / out.size
    return loss, np.sum(d_out * np.conj(x), axis=0)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_training_a_complex_weight_end_to_end(name, dtype, fresh_programs, rng):
    main, startup = fresh_programs
    cls = {"SGD": tide.optimizer.SGD, "Adam": tide.optimizer.Adam}[name]
    lr = 0.2 if name == "SGD" else 0.05
    x = layers.data(name="x", shape=[4], dtype=dtype)
    w = complex_param([4], dtype)
    r = layers.real(layers.elementwise_mul(x, w))
    loss = layers.mean(layers.elementwise_mul(r, r))
    opt = cls(learning_rate=lr)
    _, params_grads = opt.minimize(loss)
    assert [(p.name, gr.dtype) for p, gr in params_grads] == [("w", dtype)]
    scope, exe = tide.Scope(), tide.Executor(tide.CPUPlace())
    exe.run(startup, scope=scope)
    w0 = crand(rng, (4,), dtype)
    set_tensor(scope, "w", w0)
    xv = crand(rng, (6, 4), dtype)
    wr = w0.astype(np.complex128)
    op = name.lower()
    state = {s: view(np.zeros((4,), np.complex128)) for s in STATE[op]}
    losses = []
    for _ in range(5):
        pows = None
        if op == "adam":  # as the step reads them (the powers advance after the update)
            pows = [pow_value(scope, opt, a, w) for a in ("beta1_pow_acc", "beta2_pow_acc")]
        lv, gv = exe.run(main, feed={"x": xv}, fetch_list=[loss, params_grads[0][1]], scope=scope)
        want_loss, want_grad = forward_and_grad(wr, xv.astype(np.complex128))
        np.testing.assert_allclose(lv.reshape(()), want_loss, **TOL[dtype])
        np.testing.assert_allclose(gv, want_grad, **TOL[dtype])
        losses.append(float(lv.reshape(())))
        p, new = REFS[op](view(wr), view(want_grad), state, float(F(lr)), {}, pows)
        state.update(new)
        wr = unview(p)
        np.testing.assert_allclose(get_tensor(scope, "w"), wr, **TOL[dtype])
    assert losses[-1] < losses[0] * 0.9, losses


# ---------------------------------------------------------------------------------------------
# Checkpoints
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("filename", [None, "all"])
def test_checkpoint_of_a_complex_parameter_and_its_accumulators(
    tmp_path, dtype, filename, fresh_programs, rng
):
    """Adam two steps, saved, two more; loaded into a fresh scope, the same two more steps give
    the same bits; the accumulators load with their types (moments complex, powers real)."""
    main, startup = fresh_programs
    w = complex_param([3, 2], dtype)
    g = persistable(main.global_block(), "w_grad", [3, 2], dtype)
    opt = tide.optimizer.Adam(0.05)
    opt.apply_gradients([(w, g)])
    names = ["w"] + [
        accumulator(opt, a, w).name
        for a in ("moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc")
    ]
    grads = [crand(rng, (3, 2), dtype) for _ in range(4)]
    exe = tide.Executor(tide.CPUPlace())

    def steps(scope, gs):
        for gv in gs:
            set_tensor(scope, "w_grad", gv)
            exe.run(main, scope=scope)
        return {n: get_tensor(scope, n) for n in names}

    scope = tide.Scope()
    exe.run(startup, scope=scope)
    set_tensor(scope, "w", crand(rng, (3, 2), dtype))
    saved = steps(scope, grads[:2])
    with tide.scope_guard(scope):
        tide.io.save_persistables(exe, str(tmp_path), main, filename=filename)
    straight = steps(scope, grads[2:])
    other = tide.Scope()
    with tide.scope_guard(other):
        tide.io.load_persistables(exe, str(tmp_path), main, filename=filename)
    loaded = {n: get_tensor(other, n) for n in names}
    resumed = steps(other, grads[2:])
    for n in names:
        want_dtype = REAL_OF[dtype] if "pow" in n else dtype
        assert loaded[n].dtype == np.dtype(want_dtype), n
        assert loaded[n].tobytes() == saved[n].tobytes(), n
        assert resumed[n].tobytes() == straight[n].tobytes(), n
