"""Fine-tuning PIR programs with control flow: a model Paddle 3.x saved with data-dependent `if` and
`while` (pd_op.if / pd_op.while, loaded as conditional_block / while with sub-blocks) gets a loss and
append_backward in Tide, and its parameters' gradients equal Paddle's own (grads.npz beside each
fixture: Paddle's dygraph gradients of sum(out * R), written by tools/paddle_control_flow_models.py
--grads) for inputs that take each branch and several trip counts, none included. cond_while_reshape
reshapes, transposes, flattens and squeezes inside the loop and the `if`: Paddle's PIR writes no
XShape for them, which backward binds inside the sub-blocks as in block 0. PaddlePaddle itself is
not needed. cond_while and cond_while_break (tensor arrays of the states, a break), for which
Paddle gives no reference, are checked against central differences of test_pir_control_flow's
numpy forwards in float64."""

import os

import numpy as np
import pytest
from test_pir_control_flow import (
    FIXTURES,
    cases,
    cond_while_numpy,
    load,
    params,
    while_break_numpy,
)

import tide

GRAD_MODELS = ["cond_if", "cond_nested", "cond_while_gru", "cond_while_reshape"]


def fine_tuning_program(name, exe):
    """The loaded program (as saved) with R fed and loss = sum(out * R); its parameters' gradients."""
    program, feeds, fetches, scope = load(name, exe, optimize=False)
    out = fetches[0]
    with tide.program_guard(program, tide.Program()):
        r = tide.layers.data(name="R", shape=list(out.shape), dtype="float32")
        loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(out, r))
        pairs = tide.append_backward(loss)
    return program, feeds, scope, {p.name: g for p, g in pairs}


@pytest.mark.parametrize("name", GRAD_MODELS)
def test_parameter_gradients_match_paddle(name):
    exe = tide.Executor(tide.CPUPlace())
    program, feeds, scope, grads = fine_tuning_program(name, exe)
    with np.load(os.path.join(FIXTURES, name, "grads.npz")) as f:
        want = {k: f[k] for k in f.files}
    names = sorted(grads)
    assert names == sorted(k.split("@GRAD@")[0] for k in want if k.endswith("@GRAD@0"))
    numbered = list(enumerate(cases(name)))
    for i, (feed, _) in numbered + numbered[::-1]:  # nothing of one run reaches the next
        got = exe.run(
            program,
            feed={**feed, "R": want["R@%d" % i]},
            fetch_list=[grads[n] for n in names],
            scope=scope,
        )
        for n, g in zip(names, got):
            expected = want["%s@GRAD@%d" % (n, i)]
            scale = max(np.abs(expected).max(), 1e-3)  # zero where the case's path misses n
            np.testing.assert_allclose(
                g, expected, rtol=1e-4, atol=1e-5 * scale, err_msg="%s case %d" % (n, i)
            )


def test_sgd_lowers_the_loss_through_the_loop():
    """cond_while_reshape trained by SGD through its loop: the loss of a fixed case falls, and the
    forward (without the optimizer) still runs every case after the updates."""
    exe = tide.Executor(tide.CPUPlace())
    program, feeds, fetches, scope = load("cond_while_reshape", exe, optimize=False)
    forward = program.clone()
    startup = tide.Program()
    with tide.program_guard(program, startup):
        loss = tide.layers.reduce_mean(tide.layers.square(fetches[0]))
        tide.optimizer.SGD(learning_rate=0.05).minimize(loss)
    exe.run(startup, scope=scope)
    feed = cases("cond_while_reshape")[3][0]  # 4 steps of the loop
    losses = [
        exe.run(program, feed=feed, fetch_list=[loss], scope=scope)[0].item() for _ in range(5)
    ]
    assert losses[-1] < losses[0] * 0.9, losses
    for case, _ in cases("cond_while_reshape"):
        (out,) = exe.run(forward, feed=case, fetch_list=[fetches[0].name], scope=scope)
        assert out.shape == (case["x"].shape[0], 3) and np.isfinite(out).all()


@pytest.mark.parametrize(
    "name,reference", [("cond_while", cond_while_numpy), ("cond_while_break", while_break_numpy)]
)
def test_gradients_through_tensor_arrays_match_central_differences(name, reference):
    exe = tide.Executor(tide.CPUPlace())
    program, feeds, scope, grads = fine_tuning_program(name, exe)
    p64 = {k: v.astype(np.float64) for k, v in params(scope, program).items()}
    rng = np.random.default_rng(7)
    for feed, _ in cases(name) + cases(name)[::-1]:  # another batch, more or fewer iterations
        args = [feed["x"].astype(np.float64)] + [int(feed["n"][0])]
        args += [float(feed["budget"][0])] if "budget" in feed else []
        r = rng.standard_normal(reference(p64, *args)[0].shape)
        got = exe.run(
            program,
            feed={**feed, "R": r.astype(np.float32)},
            fetch_list=[grads[n] for n in sorted(grads)],
            scope=scope,
        )
        for n, g in zip(sorted(grads), got):
            want = np.zeros_like(p64[n])
            for idx in np.ndindex(*want.shape):
                value = p64[n][idx]
                p64[n][idx] = value + 1e-6
                hi = np.sum(reference(p64, *args)[0] * r)
                p64[n][idx] = value - 1e-6
                lo = np.sum(reference(p64, *args)[0] * r)
                p64[n][idx] = value
                want[idx] = (hi - lo) / 2e-6
            scale = max(np.abs(want).max(), 1e-3)
            np.testing.assert_allclose(
                g, want, rtol=1e-3, atol=1e-4 * scale, err_msg="%s %s" % (n, args[1:])
            )
