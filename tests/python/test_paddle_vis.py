"""Today's image backbones as PaddleClas writes them, and a time-series forecaster, small, saved by
Paddle 3.3.1 as PIR programs (tools/paddle_vis_models.py): Swin Transformer (window partition /
reverse by reshape + transpose, shifted windows by paddle.roll under a mask buffer built from
slice assignments, the relative position bias table gathered by index_select at an int64 index
buffer, patch merging by strided slices + concat, DropPath in eval), PaddleDetection's padded
Swin (F.pad of NHWC maps to window multiples, the mask made in forward by set_value, the crop),
Swin V2 (cosine attention, a clipped learned logit scale, the continuous position bias MLP over a
log-spaced table buffer, 16 * sigmoid, q / v biases by concat with zeros_like), ConvNeXt (7x7
depthwise conv, channels-last LayerNorm by transpose, pointwise Linear, GELU, layer scale, the
channels-first LayerNorm written out, ConvNeXt V2's GRN by paddle.norm over H, W), an
EfficientNet-B0-like net channels-last (NHWC conv / batch norm / pool, 'SAME' stride-2 depthwise
convs, squeeze-and-excitation by sigmoid and by MobileNetV3's hardsigmoid, swish, silu,
hardswish) and PatchTST (RevIN with detached statistics, replicate padding, patches by F.unfold, a
BatchNorm1D encoder, the flatten head, the denormalisation). Each matches Paddle's outputs at
the example and at other batch sizes and image sizes, on the plain kernels and oneDNN, optimized
or as saved; fine-tuning it (loaded as saved, loss = sum(out0 * R)) gives Paddle's gradients for
every parameter and for the input; Momentum trains the Swin with its buffers untouched."""

import os

import numpy as np
import paddle_fixture_checks as checks
import pytest
import test_paddle_models as fixtures

import tide

# tools/paddle_vis_models.py's models saved as fixtures (vis_efficientnet, NCHW, and vis_nbeats
# load and match too, and exercise nothing these do not).
VIS = [
    "vis_swin",
    "vis_swin_padded",
    "vis_swinv2",
    "vis_convnext",
    "vis_efficientnet_nhwc",
    "vis_patchtst",
]


def cases(d):
    """(feed, Paddle's outputs): the example, then alt.npz's other batch sizes / image sizes."""
    out = [(fixtures.load_feed(d), checks.expected_outputs(d))]
    with np.load(os.path.join(d, "alt.npz")) as f:
        for i in range(len({k.split("/")[0] for k in f.files})):
            feed = {k.split("/")[2]: f[k] for k in f.files if k.startswith("%d/in/" % i)}
            n = sum(k.startswith("%d/out/" % i) for k in f.files)
            out.append((feed, [f["%d/out/%d" % (i, j)] for j in range(n)]))
    return out


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", fixtures.LIBS)
@pytest.mark.parametrize("name", VIS)
def test_vis_matches_paddle(name, lib, optimize):
    d = checks.fixture_dir(name)
    all_cases = cases(d)
    assert len(all_cases) > 1
    checks.check_cases(d, all_cases, lib, optimize)


@pytest.mark.parametrize("name", VIS)
def test_vis_fine_tuning_gradients_match_paddle(name):
    """Loaded as saved, loss = sum(out0 * R), append_backward over every trainable parameter and
    the input x: each gradient is Paddle's dygraph one (grads.npz). No buffer (Swin's index and
    mask, its V2 coordinate table, batch norm's statistics) gets one. Swin V2's input gradient
    passes logit scales up to 100: float32 rounding in both frameworks is ~1e-3 of it there
    (each is that far from a float64 run), hence its own tolerance."""
    d = checks.fixture_dir(name)
    feed = fixtures.load_feed(d)
    with np.load(os.path.join(d, "grads.npz")) as f:
        r = f["R"]
        want = {k[len("grad/") :]: f[k] for k in f.files if k.startswith("grad/")}
        xwant = f["xgrad/x"]
    got, _ = checks.weighted_output_gradients(d, feed, r)
    checks.assert_gradients_match(got, want)
    # The input's gradient (a saliency map's): the same loss, append_backward to x.
    exe, scope, program, _, fetches = checks.load_for_training(d)
    with tide.program_guard(program, tide.Program()):
        rv = tide.layers.data(name="R", shape=list(r.shape), append_batch_size=False)
        loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(fetches[0], rv))
        ((x, xgrad),) = tide.append_backward(loss, parameter_list=["x"])
    assert x.name == "x"
    (got_x,) = exe.run(program, feed=dict(feed, R=r), fetch_list=[xgrad], scope=scope)
    tol = 1e-3 if name == "vis_swinv2" else 1e-4
    np.testing.assert_allclose(got_x, xwant, rtol=1e-3, atol=tol * np.abs(xwant).max())


def test_vis_swin_fine_tuning_with_momentum():
    """The Swin fine-tuned towards fixed targets by Momentum: the loss falls, the relative
    position bias tables train, the buffers (the int64 index, the shifted window mask) stay."""
    d = checks.fixture_dir("vis_swin")
    x = fixtures.load_feed(d)["x"]
    exe, scope, program, _, fetches = checks.load_for_training(d)
    startup = tide.Program()
    with tide.program_guard(program, startup):
        target = tide.layers.data(name="target", shape=[-1, 10], append_batch_size=False)
        diff = tide.layers.elementwise_sub(fetches[0], target)
        loss = tide.layers.reduce_mean(tide.layers.square(diff))
        _, pairs = tide.optimizer.Momentum(learning_rate=0.01, momentum=0.9).minimize(loss)
    trained = {p.name for p, _ in pairs}
    buffers = sorted(n for n in scope.local_var_names() if n.startswith("eager_tmp"))
    assert len(buffers) == 4 and not trained & set(buffers), (buffers, sorted(trained))
    tables = sorted(n for n in trained if n.startswith("window_attention_"))
    assert len(tables) == 3, sorted(trained)
    exe.run(startup, scope=scope)
    before = {n: np.array(scope.find_var(n).get_tensor()) for n in buffers + tables}
    t = np.random.default_rng(0).standard_normal([x.shape[0], 10]).astype(np.float32)
    steps = [
        exe.run(program, feed={"x": x, "target": t}, fetch_list=[loss], scope=scope)[0].item()
        for _ in range(10)
    ]
    assert steps[-1] < 0.3 * steps[0], steps
    for n, v in before.items():
        assert np.array_equal(np.array(scope.find_var(n).get_tensor()), v) == (n in buffers), n
