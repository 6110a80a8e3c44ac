"""Generative, point-cloud and encoder-decoder models as PaddleGAN, Paddle3D and PaddleNLP write
them, small, saved by PaddlePaddle 3.3.1 as PIR programs by tools/paddle_gen_models.py
(tests/fixtures/paddle/pir/gen_*): CycleGAN's ResNet generator (reflect / replicate padding by
nn.Pad2D and F.pad, InstanceNorm2D without and with affine, Conv2DTranspose with output_padding
on a dynamic size, which Paddle declares wrong: the loader redeclares it), ESRGAN's RRDB stack
(Real-ESRGAN's pixel_unshuffle by reshape of x.shape, dense concats, LeakyReLU 0.2, residual
scaling, nearest x2, a pixel_shuffle head), StyleGAN2's generator (modulated convs with
demodulation, the batch folded into a grouped conv2d / conv2d_transpose at a fixed batch; and the
unfused form at any batch; upfirdn2d's blur and upsampling, fed noise, leaky ReLU with gain),
PointNet (T-nets applied by bmm, paddle.eye, max over points), DGCNN (k nearest neighbours by
topk, neighbours gathered by flat-index arithmetic with gather / index_select, max over k) and a T5
encoder-decoder (relative position buckets by log / minimum / where on int64, a bucket embedding
as the attention bias, RMS norm, gated-gelu, causal and cross-attention). Each matches Paddle's
outputs on the plain kernels and with oneDNN, with and without the inference rewrites, at the
export's shapes and at others (batch, size, number of points, sequence lengths); and loaded with
optimize=False, append_backward gives Paddle's dygraph gradients of sum(out0 * R) for every
parameter (grads.npz)."""

import json
import os

import numpy as np
import pytest
import test_paddle_models as fixtures
from paddle_fixture_checks import (
    assert_gradients_match,
    check_cases,
    expected_outputs,
    fixture_dir,
    weighted_output_gradients,
)
from test_paddle_seg import other_cases

import tide

MODELS = [
    "gen_cyclegan",
    "gen_esrgan",
    "gen_stylegan2",
    "gen_stylegan2_unfused",
    "gen_pointnet",
    "gen_dgcnn",
    "gen_t5",
]


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", fixtures.LIBS)
@pytest.mark.parametrize("name", MODELS)
def test_matches_paddle(name, lib, optimize):
    d = fixture_dir(name)
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3.") and "PIR" in info["saved_by"]
    cases = [(fixtures.load_feed(d), expected_outputs(d))] + other_cases(d)
    check_cases(d, cases, lib, optimize)


def test_conv_transpose_sizes_redeclared():
    """Paddle 3.3.1 declares a Conv2DTranspose(output_padding=1) of a dynamic height / width as
    [N, C, 0, 0] (its -1 plus the padding), and the ops after it sizes computed from that 0; the
    loader declares them unknown, so the optimizer's fused convs infer their shapes."""
    d = fixture_dir("gen_cyclegan")
    saved = json.load(open(os.path.join(d, "inference.json")))
    ops = saved["program"]["regions"][0]["blocks"][0]["ops"]
    deconv = [op for op in ops if op["#"] == "1.conv2d_transpose"]
    assert deconv and all(op["O"][0]["TT"]["D"][1][2:] == [0, 0] for op in deconv)
    with tide.scope_guard(tide.Scope()):
        program, _, _ = tide.io.load_inference_model(os.path.join(d, "inference"), optimize=False)
    block = program.global_block()
    for op in block.ops:
        if op.type == "conv2d_transpose":
            assert list(block.var(op.output("Output")[0]).shape)[2:] == [-1, -1]
    # The last conv's input: a reflect pad of the deconvolutions' output, size unknown.
    last = [op for op in block.ops if op.type == "conv2d"][-1]
    assert list(block.var(last.input("Input")[0]).shape)[2:] == [-1, -1]


@pytest.mark.parametrize("name", MODELS)
def test_gradients_match_paddle(name):
    """Fine-tuning: the program loaded as saved, loss = sum(out0 * R) with R fed, every
    parameter's gradient from append_backward against Paddle's dygraph one (the net in eval
    mode, batch norm on its running statistics, as saved; a conv's bias before an instance norm
    without affine has a zero gradient up to rounding)."""
    d = fixture_dir(name)
    with np.load(os.path.join(d, "grads.npz")) as f:
        want = {k: f[k] for k in f.files}
    r = want.pop("R")
    got, _ = weighted_output_gradients(d, fixtures.load_feed(d), r)
    assert_gradients_match(got, want)
