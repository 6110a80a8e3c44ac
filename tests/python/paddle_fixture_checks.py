"""What the tests of the model families saved by Paddle 3.x share (test_paddle_llm, _seg, _speech,
_det, _gen, _vis): the fixture's directory, a run of its cases against Paddle's outputs on one
kernel library, and the fine-tuning check, append_backward's gradients of sum(out0 * R) on the
program loaded as saved against Paddle's dygraph ones. Each family reads its own files (the
cases' formats differ) and says how an output compares."""

import os

import numpy as np
import test_paddle_models as fixtures

import tide


def fixture_dir(name):
    return os.path.join(fixtures.FIXTURES, "pir", name)


def expected_outputs(d):
    """Paddle's outputs at the example feed: expected.npy, or expected.npz's out0, out1, ..."""
    if os.path.exists(os.path.join(d, "expected.npy")):
        return [np.load(os.path.join(d, "expected.npy"))]
    with np.load(os.path.join(d, "expected.npz")) as f:
        return [f["out%d" % i] for i in range(len(f.files))]


def assert_close(out, want, what=""):
    """Paddle's shape and type; integers (argmax, top-k indices, tokens, lengths) equal; floats
    to 1e-4 of the largest finite value (a relative tolerance alone fails near zero)."""
    assert out.shape == want.shape and out.dtype == want.dtype, (what, out.shape, want.shape)
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(out, want, err_msg=what)
        return
    finite = want[np.isfinite(want)]
    scale = np.abs(finite).max() if finite.size else 0.0
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * scale, err_msg=what)


def check_cases(d, cases, lib, optimize, compare=assert_close):
    """Loads d's model (optimize: the inference rewrites) and runs each (feed, Paddle's outputs)
    of `cases` on the kernel library `lib` ("plain" or "mkldnn") in turn, one program for all
    (a run leaves nothing to the next); the last run took oneDNN kernels exactly when asked."""
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(
            os.path.join(d, "inference"), exe, optimize=optimize
        )
        tide.set_flags({"use_mkldnn": lib == "mkldnn"})
        try:
            for i, (feed, expected) in enumerate(cases):
                assert sorted(feeds) == sorted(feed) and len(fetches) == len(expected)
                outs = exe.run(program, feed=feed, fetch_list=fetches)
                shapes = {k: v.shape for k, v in feed.items()}
                for k, (out, want) in enumerate(zip(outs, expected)):
                    compare(out, want, "case %d %s out%d" % (i, shapes, k))
        finally:
            tide.set_flags({"use_mkldnn": False})
    kernels = [k for _, k in exe.last_run_info()["kernels"]]
    assert any("mkldnn" in k for k in kernels) == (lib == "mkldnn"), kernels


def load_for_training(d):
    """d's model loaded as saved (no inference rewrite: they fold and fuse ops into forms without
    gradients), in a scope of its own: (exe, scope, program, feed names, fetch targets)."""
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        program, feeds, fetches = tide.io.load_inference_model(
            os.path.join(d, "inference"), exe, optimize=False
        )
    return exe, scope, program, feeds, fetches


def weighted_output_gradients(d, feed, r, r_name="R", extra_fetches=()):
    """Fine-tuning: d's program loaded as saved, `r_name` fed with r, loss = sum(out0 * r),
    append_backward; runs it on `feed` and returns ({parameter: its gradient}, the values of
    extra_fetches ("loss" for the loss))."""
    exe, scope, program, _, fetches = load_for_training(d)
    with tide.program_guard(program, tide.Program()):
        rv = tide.layers.data(
            name=r_name, shape=list(r.shape), dtype=str(r.dtype), append_batch_size=False
        )
        loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(fetches[0], rv))
        grads = {p.name: g for p, g in tide.append_backward(loss)}
    names = sorted(grads)
    extra = [loss if f == "loss" else f for f in extra_fetches]
    got = exe.run(
        program, feed={**feed, r_name: r}, fetch_list=extra + [grads[n] for n in names], scope=scope
    )
    return dict(zip(names, got[len(extra) :])), got[: len(extra)]


def assert_gradients_match(got, want, rtol=1e-3, atol=1e-4, floor=1e-6):
    """Each parameter's gradient to rtol, and to atol of its own largest value plus `floor` of
    the largest of all: a gradient that is zero in exact arithmetic (an attention key's bias,
    which softmax's shift invariance cancels; a conv's bias before a norm without affine) is
    rounding noise in both frameworks."""
    assert sorted(got) == sorted(want), (sorted(got), sorted(want))
    scale = max(np.abs(w).max() for w in want.values())
    for n in sorted(want):
        bound = atol * np.abs(want[n]).max() + floor * scale
        np.testing.assert_allclose(got[n], want[n], rtol=rtol, atol=bound, err_msg=n)
