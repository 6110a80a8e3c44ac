"""Each optimizer's updates match a numpy implementation step by step (float32, 3 steps), with
learning-rate variables, regularisation and clipping in the order Fluid applies them."""

import numpy as np
import pytest

import tide
from tide import layers

STEPS = 3


def _build(opt, w0):
    """loss = mean(w * c): d loss / d w = c / n, so each step's gradient is known exactly."""
    w = layers.create_parameter(
        shape=w0.shape,
        dtype="float32",
        name="w",
        default_initializer=tide.initializer.Constant(0.0),
    )
    c = layers.data(name="c", shape=list(w0.shape), append_batch_size=False)
    loss = layers.mean(layers.elementwise_mul(w, c))
    opt.minimize(loss)
    return loss


def _run(opt, w0, cs):
    exe = tide.Executor(tide.CPUPlace())
    _build(opt, w0)
    exe.run(tide.default_startup_program())
    tide.global_scope().var("w").get_tensor().set(w0.copy(), tide.CPUPlace(), False)
    out = []
    for c in cs:
        exe.run(feed={"c": c})
        out.append(np.array(tide.global_scope().find_var("w").get_tensor()).copy())
    return out


def _grads(rng, shape):
    return [rng.uniform(-2, 2, shape).astype("float32") for _ in range(STEPS)]


def check(opt, numpy_step, rng, shape=(5,)):
    w0 = rng.uniform(-1, 1, shape).astype("float32")
    cs = _grads(rng, shape)
    got = _run(opt, w0, cs)
    w, state = w0.astype(np.float64), {}
    for step, c in enumerate(cs):
        g = c.astype(np.float64) / c.size
        w = numpy_step(w, g, state, step + 1)
        np.testing.assert_allclose(
            got[step], w, rtol=2e-5, atol=1e-6, err_msg="step %d" % (step + 1)
        )


def test_sgd(rng):
    check(tide.optimizer.SGD(0.1), lambda w, g, s, t: w - 0.1 * g, rng)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum(rng, nesterov):
    def step(w, g, s, t):
        v = 0.9 * s.get("v", 0.0) + g
        s["v"] = v
        return w - 0.1 * (g + 0.9 * v) if nesterov else w - 0.1 * v

    check(tide.optimizer.Momentum(0.1, momentum=0.9, use_nesterov=nesterov), step, rng)


def test_lars_momentum(rng):
    # Fluid's lars_momentum: a local learning rate from the norms of the parameter and gradient.
    def step(w, g, s, t):
        pn, gn = np.linalg.norm(w), np.linalg.norm(g)
        local_lr = 0.1 * 0.01 * pn / (gn + 0.0005 * pn)
        v = s["v"] = 0.9 * s.get("v", 0.0) + local_lr * (g + 0.0005 * w)
        return w - v

    check(tide.optimizer.LarsMomentumOptimizer(0.1, momentum=0.9, lars_coeff=0.01), step, rng)


def test_adam(rng):
    def step(w, g, s, t):
        b1, b2, eps, lr = 0.9, 0.999, 1e-8, 0.01
        m = s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        v = s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
        # bias-corrected moments, epsilon joining sqrt(v_hat) (Paddle 2+, PyTorch)
        return w - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)

    check(tide.optimizer.Adam(0.01), step, rng)


def test_adam_matches_paddle_where_epsilon_matters(rng):
    """Paddle 2+ (and PyTorch) add epsilon to the bias-corrected sqrt(v_hat); with a large epsilon
    and gradients of very different sizes the two formulas differ in the first digit: these are
    the parameters Paddle 3's Adam(0.1, epsilon=1e-2) reaches after two steps of
    sum(w * [1e-3, 1, 10]) from w = 1."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        w = tide.layers.create_parameter(
            [3], "float32", default_initializer=tide.initializer.Constant(1.0)
        )
        c = tide.layers.assign(np.array([1e-3, 1.0, 10.0], "float32"))
        loss = tide.layers.reduce_sum(w * c)
        tide.optimizer.Adam(0.1, epsilon=1e-2).minimize(loss)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    for _ in range(2):
        exe.run(main, scope=scope)
    got = np.array(scope.find_var(w.name).get_tensor())
    np.testing.assert_allclose(got, [0.98182, 0.80198, 0.80020], atol=2e-5)


def test_adagrad(rng):
    def step(w, g, s, t):
        m = s["m"] = s.get("m", 0.0) + g * g
        return w - 0.1 * g / (np.sqrt(m) + 1e-6)

    check(tide.optimizer.Adagrad(0.1), step, rng)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop(rng, centered):
    def step(w, g, s, t):
        rho, eps, mom, lr = 0.95, 1e-6, 0.5, 0.01
        ms = s["ms"] = rho * s.get("ms", 0.0) + (1 - rho) * g * g
        denom = ms
        if centered:
            mg = s["mg"] = rho * s.get("mg", 0.0) + (1 - rho) * g
            denom = ms - mg * mg
        m = s["m"] = mom * s.get("m", 0.0) + lr * g / np.sqrt(denom + eps)
        return w - m

    check(
        tide.optimizer.RMSProp(0.01, rho=0.95, epsilon=1e-6, momentum=0.5, centered=centered),
        step,
        rng,
    )


def test_l2_decay_and_clip_by_value(rng):
    """Order: backward -> clip -> regularisation -> update."""

    def step(w, g, s, t):
        g = np.clip(g, -0.1, 0.1) + 0.01 * w
        return w - 0.5 * g

    check(
        tide.optimizer.SGD(
            0.5,
            regularization=tide.regularizer.L2Decay(0.01),
            grad_clip=tide.clip.GradientClipByValue(0.1),
        ),
        step,
        rng,
    )


def test_l1_decay_and_global_norm_clip(rng):
    def step(w, g, s, t):
        g = g * 0.05 / max(np.sqrt(np.sum(g * g)), 0.05)
        return w - 0.5 * (g + 0.01 * np.sign(w))

    check(
        tide.optimizer.SGD(
            0.5,
            regularization=tide.regularizer.L1Decay(0.01),
            grad_clip=tide.clip.GradientClipByGlobalNorm(0.05),
        ),
        step,
        rng,
    )


def test_clip_by_norm(rng):
    def step(w, g, s, t):
        n = np.sqrt(np.sum(g * g))
        return w - 0.5 * (g * 0.05 / n if n > 0.05 else g)

    check(tide.optimizer.SGD(0.5, grad_clip=tide.clip.GradientClipByNorm(0.05)), step, rng)


def test_learning_rate_variable(rng):
    lr = layers.create_global_var(
        shape=[1], value=0.2, dtype="float32", persistable=True, name="lr"
    )
    check(tide.optimizer.SGD(lr), lambda w, g, s, t: w - 0.2 * g, rng)


def test_bad_learning_rate():
    with pytest.raises(ValueError, match="learning_rate must be > 0"):
        tide.optimizer.SGD(-1.0)
    with pytest.raises(TypeError, match="learning_rate must be a float or a Variable"):
        tide.optimizer.SGD("fast")
