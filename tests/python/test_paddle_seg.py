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
from paddle_fixture_checks import (
    assert_close,
    assert_gradients_match,
    check_cases,
    expected_outputs,
    fixture_dir,
    weighted_output_gradients,
)

MODELS = ["seg_diffusion_unet", "seg_deeplabv3p", "seg_unet", "seg_ppliteseg"]


def other_cases(d):
    """[(feed, Paddle's outputs)] at the other shapes (others.npz: feed<i>_<name>, out<i>_<k>)."""
    if not os.path.exists(os.path.join(d, "others.npz")):
        return []
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


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", fixtures.LIBS)
@pytest.mark.parametrize("name", MODELS)
def test_matches_paddle(name, lib, optimize):
    """The argmax equal (the logits have no near ties), the rest to 1e-4."""
    d = fixture_dir(name)
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3.") and "PIR" in info["saved_by"]
    cases = [(fixtures.load_feed(d), expected_outputs(d))] + other_cases(d)
    check_cases(d, cases, lib, optimize, assert_close)


@pytest.mark.parametrize("name", MODELS)
def test_gradients_match_paddle(name):
    """Fine-tuning: the program loaded as saved, loss = sum(out0 * R) with R fed, every
    parameter's gradient from append_backward against Paddle's dygraph one (the net in eval
    mode, batch norm on its running statistics, as saved)."""
    d = fixture_dir(name)
    with np.load(os.path.join(d, "grads.npz")) as f:
        want = {k: f[k] for k in f.files}
    r = want.pop("R")
    got, _ = weighted_output_gradients(d, fixtures.load_feed(d), r)
    assert_gradients_match(got, want)
