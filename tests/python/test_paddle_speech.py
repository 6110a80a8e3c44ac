"""Speech and sequence-to-sequence models saved by PaddlePaddle 3.3.1 as PIR programs
(tests/fixtures/paddle/pir/speech_*, made by tools/paddle_speech_models.py, written as PaddleSpeech
and PaddleNLP write them): a u2 Conformer CTC encoder with a padding mask from the fed lengths
and a chunk mask (`speech_conformer`), the same encoder exported for streaming with attention and
convolution caches, the first chunk's attention cache empty (`speech_conformer_stream`), a TCN /
WaveNet stack (`speech_tcn`), an nn.Transformer with greedy decoding in a `while` loop, plain and
with the decoder's caches carried through it (`speech_transformer`), and GRU / LSTM seq2seq models
with Bahdanau / Luong attention stepped by hand, over a fed target length (a `while` with a tensor
array) or unrolled (`speech_gru_attn_dyn`, `speech_lstm_attn`).

Each loads and matches Paddle's outputs, at the example feed and at other batch sizes and
sequence lengths (cases.npz), on the plain CPU kernels and with oneDNN, with the inference
rewrites and without; and each fine-tunes: loaded with optimize=False, the loss sum(out0 * R)
differentiated by append_backward gives Paddle's dygraph gradients for every parameter."""

import json
import os

import numpy as np
import pytest
import test_paddle_models as fixtures
from kernel_libraries import LIBS

import tide

MODELS = [
    "speech_conformer",
    "speech_conformer_stream",
    "speech_tcn",
    "speech_transformer",
    "speech_gru_attn_dyn",
    "speech_lstm_attn",
]


def fixture_dir(name):
    return os.path.join(fixtures.FIXTURES, "pir", name)


def expected_outputs(d):
    with np.load(os.path.join(d, "expected.npz")) as f:
        return [f["out%d" % i] for i in range(len(f.files))]


def cases(d, feeds, n_out):
    """[(feed, [Paddle's outputs])] at the other batch sizes / lengths of cases.npz."""
    with np.load(os.path.join(d, "cases.npz")) as f:
        c = {k: f[k] for k in f.files}
    n = len({k.rsplit("_", 1)[1] for k in c})
    return [
        ({k: c["%s_%d" % (k, i)] for k in feeds}, [c["out%d_%d" % (k, i)] for k in range(n_out)])
        for i in range(n)
    ]


def assert_matches(got, want, what):
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.dtype.kind in "iub":  # lengths, greedy tokens
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        scale = np.abs(want).max() if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale, err_msg=what)


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", MODELS)
def test_speech_model_matches_paddle(name, lib, optimize):
    d = fixture_dir(name)
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3."), info["paddle"]
    feed, want = fixtures.load_feed(d), expected_outputs(d)
    assert [list(e.shape) for e in want] == info["output_shapes"]
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(
            os.path.join(d, "inference"), exe, optimize=optimize
        )
        assert sorted(feeds) == sorted(feed) and len(fetches) == len(want)
        tide.set_flags({"use_mkldnn": lib == "mkldnn"})
        try:
            runs = [(feed, want)] + cases(d, feeds, len(want))
            for i, (f, w) in enumerate(runs):
                outs = exe.run(program, feed=f, fetch_list=fetches)
                assert len(outs) == len(w)
                for k, (o, e) in enumerate(zip(outs, w)):
                    assert_matches(o, e, "%s run %d out%d" % (name, i, k))
        finally:
            tide.set_flags({"use_mkldnn": False})
    kernels = [k for _, k in exe.last_run_info()["kernels"]]
    assert any("mkldnn" in k for k in kernels) == (lib == "mkldnn"), kernels


@pytest.mark.parametrize("name", MODELS)
def test_speech_model_gradients_match_paddle(name):
    """Fine-tuning: the gradients of sum(out0 * R) (R fed as a new data variable) for every
    parameter of the loaded program, against Paddle's dygraph gradients at the same feed
    (grads.npz). The weight-normed convolutions of speech_tcn are saved as their effective
    weights (Paddle's jit.save does not trace weight_norm's hook), whose gradients Paddle's
    export computed. Attention's key biases have gradient zero up to rounding (softmax is
    shift-invariant), so each parameter is held to the scale of all the gradients too."""
    d = fixture_dir(name)
    feed = fixtures.load_feed(d)
    with np.load(os.path.join(d, "grads.npz")) as f:
        want = {k: f[k] for k in f.files}
    r = want.pop("loss_weight")
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        program, _, fetches = tide.io.load_inference_model(
            os.path.join(d, "inference"), exe, optimize=False
        )
    with tide.program_guard(program, tide.Program()):
        weight = tide.layers.data(
            name="loss_weight", shape=list(r.shape), dtype="float32", append_batch_size=False
        )
        loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(fetches[0], weight))
        grads = {p.name: g for p, g in tide.append_backward(loss)}
    assert sorted(grads) == sorted(want)
    names = sorted(want)
    got = exe.run(
        program,
        feed=dict(feed, loss_weight=r),
        fetch_list=[loss] + [grads[n] for n in names],
        scope=scope,
    )
    info = json.load(open(os.path.join(d, "info.json")))
    np.testing.assert_allclose(got[0], info["dygraph_loss"], rtol=1e-5)
    scale = max(np.abs(w).max() for w in want.values())
    for n, g in zip(names, got[1:]):
        w = want[n]
        np.testing.assert_allclose(
            g, w, rtol=1e-3, atol=1e-3 * np.abs(w).max() + 1e-5 * scale, err_msg=n
        )
