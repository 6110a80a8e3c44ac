"""Fine-tuning PIR programs with control flow: a model Paddle 3.x saved with data-dependent `if` and
`while` (pd_op.if / pd_op.while, loaded as conditional_block / while with sub-blocks) gets a loss and
append_backward in Tide, and its parameters' gradients equal Paddle's own (grads.npz beside each
fixture: Paddle's dygraph gradients of sum(out * R), written by tools/paddle_control_flow_models.py
--grads) for inputs that take each branch and several trip counts, none included. cond_while_reshape
reshapes, transposes, flattens and squeezes inside the loop and the `if`: Paddle's PIR writes no
XShape for them, which backward binds inside the sub-blocks as in block 0. PaddlePaddle itself is
not needed."""

import os

import numpy as np
import pytest
from test_pir_control_flow import FIXTURES, cases, load

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
    for i, (feed, _) in enumerate(cases(name)):
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
