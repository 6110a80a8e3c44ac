"""Dense-prediction and generative vision models as PaddleSeg and PaddleMIX (ppdiffusers) write
them, small, saved by PaddlePaddle 3.3.1 as PIR programs by tools/paddle_seg_models.py
(tests/fixtures/paddle/pir/seg_*): a diffusion UNet (sinusoidal timestep embedding, GroupNorm +
SiLU residual blocks with the time embedding per channel, strided-conv down, nearest up by a
scale and to a skip's size, skip concatenations, self-attention by
F.scaled_dot_product_attention and cross-attention to a fed context by nn.MultiHeadAttention),
DeepLabV3+ (dilated ResNet-vd padded by F.pad, ASPP with separable dilated convs and image
pooling, the decoder, the bilinear upsample to the input and PaddleSeg's int32 argmax), PaddleSeg's
UNet (Conv2DTranspose to the skip's size from paddle.shape: conv2d_transpose's output_size
computed at run time) and PP-LiteSeg's SPPM + UAFM head. Each matches Paddle's outputs on the
plain kernels and with oneDNN, with and without the inference rewrites, at the export's shapes
and at others (batch, size, context length; odd sizes for the UNet); and loaded with
optimize=False, append_backward gives Paddle's dygraph gradients of sum(out0 * R) for every
parameter (grads.npz)."""

import json
import os

import numpy as np
import pytest
import test_paddle_models as fixtures

import tide

MODELS = ["seg_diffusion_unet", "seg_deeplabv3p", "seg_unet", "seg_ppliteseg"]


def fixture(name):
    return os.path.join(fixtures.FIXTURES, "pir", name)


def expected_outputs(d):
    if os.path.exists(os.path.join(d, "expected.npy")):
        return [np.load(os.path.join(d, "expected.npy"))]
    with np.load(os.path.join(d, "expected.npz")) as f:
        return [f["out%d" % i] for i in range(len(f.files))]


def other_cases(d):
    """[(feed, Paddle's outputs)] at the other shapes (others.npz: feed<i>_<name>, out<i>_<k>)."""
    with np.load(os.path.join(d, "others.npz")) as f:
        arrays = {k: f[k] for k in f.files}
    cases, i = [], 0
    while any(k.startswith("feed%d_" % i) for k in arrays):
        feed = {k.split("_", 1)[1]: v for k, v in arrays.items() if k.startswith("feed%d_" % i)}
        outs = [
            arrays["out%d_%d" % (i, k)] for k in range(len(arrays)) if "out%d_%d" % (i, k) in arrays
        ]
        cases.append((feed, outs))
        i += 1
    return cases


def assert_matches(out, want):
    if want.dtype.kind in "iu":  # the argmax: equal (the logits have no near ties)
        assert out.dtype == want.dtype and out.shape == want.shape
        np.testing.assert_array_equal(out, want)
        return
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", fixtures.LIBS)
@pytest.mark.parametrize("name", MODELS)
def test_matches_paddle(name, lib, optimize):
    d = fixture(name)
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3.") and "PIR" in info["saved_by"]
    cases = [(fixtures.load_feed(d), expected_outputs(d))] + other_cases(d)
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(
            os.path.join(d, "inference"), exe, optimize=optimize
        )
        tide.set_flags({"use_mkldnn": lib == "mkldnn"})
        try:
            for feed, expected in cases:
                assert sorted(feeds) == sorted(feed) and len(fetches) == len(expected)
                outs = exe.run(program, feed=feed, fetch_list=fetches)
                for out, want in zip(outs, expected):
                    assert_matches(out, want)
        finally:
            tide.set_flags({"use_mkldnn": False})
    kernels = [k for _, k in exe.last_run_info()["kernels"]]
    assert any("mkldnn" in k for k in kernels) == (lib == "mkldnn"), kernels


@pytest.mark.parametrize("name", MODELS)
def test_gradients_match_paddle(name):
    """Fine-tuning: the program loaded as saved, loss = sum(out0 * R) with R fed, every
    parameter's gradient from append_backward against Paddle's dygraph one (the net in eval
    mode, batch norm on its running statistics, as saved)."""
    d = fixture(name)
    with np.load(os.path.join(d, "grads.npz")) as f:
        want = {k: f[k] for k in f.files}
    r = want.pop("R")
    scale = max(np.abs(g).max() for g in want.values())
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        program, feeds, fetches = tide.io.load_inference_model(
            os.path.join(d, "inference"), exe, optimize=False
        )
        with tide.program_guard(program, tide.Program()):
            rv = tide.layers.data(name="R", shape=list(r.shape), append_batch_size=False)
            loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(fetches[0], rv))
            grads = {p.name: g for p, g in tide.append_backward(loss)}
        assert sorted(grads) == sorted(want)
        names = sorted(want)
        got = exe.run(
            program,
            feed=dict(fixtures.load_feed(d), R=r),
            fetch_list=[grads[n] for n in names],
        )
    for n, g in zip(names, got):
        # A bias whose gradient is zero in exact arithmetic (the attention's key bias: softmax
        # ignores a shift common to every key) is rounding noise in both: the scale's floor.
        np.testing.assert_allclose(
            g, want[n], rtol=1e-3, atol=1e-4 * np.abs(want[n]).max() + 1e-6 * scale, err_msg=n
        )
