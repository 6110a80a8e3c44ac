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


def fixture(name):
    return os.path.join(fixtures.FIXTURES, "pir", name)


def expected_outputs(d):
    if os.path.exists(os.path.join(d, "expected.npy")):
        return [np.load(os.path.join(d, "expected.npy"))]
    with np.load(os.path.join(d, "expected.npz")) as f:
        return [f["out%d" % i] for i in range(len(f.files))]


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
                    assert out.shape == want.shape
                    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
        finally:
            tide.set_flags({"use_mkldnn": False})
    kernels = [k for _, k in exe.last_run_info()["kernels"]]
    assert any("mkldnn" in k for k in kernels) == (lib == "mkldnn"), kernels


def test_conv_transpose_sizes_redeclared():
    """Paddle 3.3.1 declares a Conv2DTranspose(output_padding=1) of a dynamic height / width as
    [N, C, 0, 0] (its -1 plus the padding), and the ops after it sizes computed from that 0; the
    loader declares them unknown, so the optimizer's fused convs infer their shapes."""
    d = fixture("gen_cyclegan")
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
        # A bias whose gradient is zero in exact arithmetic (a conv's before an instance norm
        # without affine, which takes each channel's mean away) is rounding noise in both: the
        # scale's floor.
        np.testing.assert_allclose(
            g, want[n], rtol=1e-3, atol=1e-4 * np.abs(want[n]).max() + 1e-6 * scale, err_msg=n
        )
