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
from paddle_fixture_checks import (
    assert_close,
    assert_gradients_match,
    check_cases,
    fixture_dir,
    weighted_output_gradients,
)

MODELS = [
    "speech_conformer",
    "speech_conformer_stream",
    "speech_tcn",
    "speech_transformer",
    "speech_gru_attn_dyn",
    "speech_lstm_attn",
]


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


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", MODELS)
def test_speech_model_matches_paddle(name, lib, optimize):
    d = fixture_dir(name)
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3."), info["paddle"]
    feed, want = fixtures.load_feed(d), expected_outputs(d)
    assert [list(e.shape) for e in want] == info["output_shapes"]
    check_cases(d, [(feed, want)] + cases(d, feed, len(want)), lib, optimize, assert_close)


@pytest.mark.parametrize("name", MODELS)
def test_speech_model_gradients_match_paddle(name):
    """Fine-tuning: the gradients of sum(out0 * R) (R fed as a new data variable) for every
    parameter of the loaded program, against Paddle's dygraph gradients at the same feed
    (grads.npz). The weight-normed convolutions of speech_tcn are saved as their effective
    weights (Paddle's jit.save does not trace weight_norm's hook), whose gradients Paddle's
    export computed. Attention's key biases have gradient zero up to rounding (softmax is
    shift-invariant), so each parameter is held to the scale of all the gradients too."""
    d = fixture_dir(name)
    with np.load(os.path.join(d, "grads.npz")) as f:
        want = {k: f[k] for k in f.files}
    r = want.pop("loss_weight")
    got, (loss,) = weighted_output_gradients(
        d, fixtures.load_feed(d), r, r_name="loss_weight", extra_fetches=["loss"]
    )
    info = json.load(open(os.path.join(d, "info.json")))
    np.testing.assert_allclose(loss, info["dygraph_loss"], rtol=1e-5)
    assert_gradients_match(got, want, atol=1e-3, floor=1e-5)
