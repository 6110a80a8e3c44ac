"""The examples as tests, seeded: fit_a_line within 2% of the least-squares optimum, the digits
MLP at >= 95% test accuracy, the digits conv net at >= 97% with and without oneDNN, models Paddle
saved (legacy and PIR) fine-tuned on the digits from chance to >= 90%. How fast they
train is the benchmarks' business (benchmarks/), not a test's: a slow machine is no failure."""

import os
import sys

import numpy as np
import pytest
from kernel_libraries import MKLDNN_SKIP_REASON, has_mkldnn

sys.path.insert(
    0,
    os.path.join(
        os.environ.get("TIDE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
        "examples",
    ),
)
import control_flow_snippets  # noqa: E402
import finetune_paddle_model  # noqa: E402
import fit_a_line  # noqa: E402
import recognize_digits_conv  # noqa: E402
import recognize_digits_loop  # noqa: E402
import recognize_digits_mlp  # noqa: E402
import understand_sentiment  # noqa: E402


def test_fit_a_line_reaches_least_squares(tmp_path):
    loss, optimum, pred, test_y = fit_a_line.train(model_dir=str(tmp_path), verbose=False)
    assert loss <= optimum * 1.02, (loss, optimum)
    assert pred.shape == test_y.shape and np.isfinite(pred).all()
    assert np.mean((pred - test_y) ** 2) < 0.7  # the reloaded model predicts (target variance 1)


def test_digits_mlp_accuracy():
    acc = recognize_digits_mlp.train(verbose=False)
    assert acc >= 0.95, acc


@pytest.mark.parametrize("use_mkldnn", [False, True])
def test_digits_conv_accuracy(use_mkldnn):
    if use_mkldnn and not has_mkldnn():
        pytest.skip(MKLDNN_SKIP_REASON)
    acc = recognize_digits_conv.train(passes=12, use_mkldnn=use_mkldnn, verbose=False)
    assert acc >= 0.97, acc


def test_control_flow_snippets():
    assert [control_flow_snippets.switch_snippet(a) for a in (5.0, 20.0, -3.0)] == [1, 2, 1]
    d0 = np.arange(10, dtype="float32").reshape(1, 10)
    got = control_flow_snippets.while_snippet(d0)
    for g, w in zip(got, [d0, d0, 2 * d0, 4 * d0]):
        np.testing.assert_array_equal(g, w)


def test_digits_with_a_loop_and_piecewise_decay():
    acc = recognize_digits_loop.train(verbose=False)
    assert acc >= 0.93, acc


def test_machine_translation_reverses_sequences():
    # DynamicRNN encoder-decoder (GRU cells from fc layers) trained 3000 batches (~30 s on one
    # core), then beam search in a While loop: >= 80% of held-out sequences (lengths 2-8,
    # 10 words) come back exactly reversed (93.5% when written).
    import machine_translation

    exact = machine_translation.train(steps=3000, verbose=False)
    assert exact >= 0.80, exact


def test_understand_sentiment_lstm_learns_order():
    """The LSTM classifier (dynamic_lstm over LoD batches) tells whether token A comes before B;
    the same net without the LSTM (a bag of words) cannot, so the accuracy is the recurrence's."""
    acc = understand_sentiment.train(passes=3, verbose=False)
    assert acc >= 0.9, acc
    baseline = understand_sentiment.train(passes=3, net="bow", verbose=False)
    assert baseline < 0.7, baseline


@pytest.mark.parametrize("model", ["resnet18", "pir/vis_convnext"])
def test_finetune_paddle_model(tmp_path, model):
    """A ResNet-18 saved by Paddle (legacy, batch norms) and a ConvNeXt saved by Paddle 3.3.1
    (PIR, layer norms), random weights, fine-tuned on the digits: from chance to >= 90% test
    accuracy, and the saved fine-tuned model reloads to the same accuracy."""
    prefix = os.path.join(finetune_paddle_model.FIXTURE, "..", model, "inference")
    before, after, reloaded = finetune_paddle_model.train(
        prefix, passes=4, save_dir=str(tmp_path), verbose=False
    )
    assert before < 0.3 and after >= 0.9, (before, after)
    assert reloaded == after
