"""Today's large-language-model decoders as PaddleNLP writes LLaMA, Qwen2 and Mistral, small
(hidden 32, 4 heads over 2 KV heads, 2 layers, vocabulary 64), saved by Paddle 3.3.1 as PIR
programs (tools/paddle_llm_models.py): hand-written RMSNorm and fused_rms_norm, rotary embeddings
(rotate_half with cos / sin from paddle.arange; caches gathered at position ids; the interleaved
form by reshape / stack), grouped-query attention (expand + reshape, repeat_interleave, and
scaled_dot_product_attention's own), scaled_dot_product_attention (is_causal; an additive 4-D
mask), the matmul / softmax form under -inf and sliding-window masks, SwiGLU (F.silu, swiglu),
tied and untied heads; greedy generation in a pd_op.while (caches grown by concat in the loop);
one decode step with a KV cache of dynamic length and a sampling tail
(argmax, softmax with a temperature, topk, top-k filtering); one over a preallocated cache
written at a fed position by a slice assignment with tensor bounds. Each matches Paddle's outputs at the
example's shapes and at other batch sizes and lengths (the prompt's step of the decoder too), on
the plain kernels and oneDNN, optimized or as saved (and in bfloat16); and fine-tuning it gives Paddle's gradients
of sum(logits * R) for every parameter."""

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
    load_for_training,
    weighted_output_gradients,
)
from test_bf16_inference import needs_bf16

import tide

# tools/paddle_llm_models.py's LLM_MODELS.
LLM = ["llm_llama", "llm_qwen2", "llm_mistral", "llm_decode", "llm_static_cache", "llm_generate"]


def cases(d):
    """(feed, Paddle's outputs): the example, then alt.npz's other shapes."""
    out = [(fixtures.load_feed(d), expected_outputs(d))]
    with np.load(os.path.join(d, "alt.npz")) as f:
        n = len({k.split("/")[0] for k in f.files})
        for i in range(n):
            feed = {k.split("/")[2]: f[k] for k in f.files if k.startswith("%d/in/" % i)}
            outs = [
                f["%d/out/%d" % (i, j)]
                for j in range(sum(k.startswith("%d/out/" % i) for k in f.files))
            ]
            out.append((feed, outs))
    return out


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", fixtures.LIBS)
@pytest.mark.parametrize("name", LLM)
def test_llm_matches_paddle(name, lib, optimize):
    d = fixture_dir(name)
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3."), info["paddle"]
    check_cases(d, cases(d), lib, optimize)


@pytest.mark.parametrize("name", LLM)
def test_llm_fine_tuning_gradients_match_paddle(name):
    """Loaded as saved (optimize=False), loss = sum(logits * R), append_backward: every
    parameter's gradient is Paddle's dygraph one (grads.npz), to 1e-3 of its largest."""
    d = fixture_dir(name)
    with np.load(os.path.join(d, "grads.npz")) as f:
        r = f["R"]
        want = {k[len("grad/") :]: f[k] for k in f.files if k.startswith("grad/")}
    got, _ = weighted_output_gradients(d, fixtures.load_feed(d), r)
    assert_gradients_match(got, want, floor=0.0)


def test_llm_next_token_fine_tuning_with_adam():
    """Qwen2 (fused_rms_norm, swiglu, a tied head, rotary caches Paddle saves as parameters of a
    buffer: stop_gradient, not trained) fine-tuned on next-token prediction of its own example
    (softmax cross entropy, padding ignored) by Adam: the loss falls, the weights move, the
    rotary caches stay."""
    d = fixture_dir("llm_qwen2")
    feed = fixtures.load_feed(d)
    ids, mask = feed["input_ids"], feed["attention_mask"]
    labels = np.where(mask[:, 1:] > 0, ids[:, 1:], -100)
    labels = np.concatenate([labels, np.full((ids.shape[0], 1), -100)], axis=1)
    exe, scope, program, feeds, fetches = load_for_training(d)
    startup = tide.Program()
    with tide.program_guard(program, startup):
        label = tide.layers.data(
            name="labels", shape=[-1, 1], dtype="int64", append_batch_size=False
        )
        logits = tide.layers.reshape(fetches[0], [-1, fetches[0].shape[-1]])
        losses = tide.layers.softmax_with_cross_entropy(logits, label, ignore_index=-100)
        valid = float((labels != -100).sum())
        loss = tide.layers.scale(tide.layers.reduce_sum(losses), scale=1.0 / valid)
        _, pairs = tide.optimizer.Adam(learning_rate=1e-2).minimize(loss)
    trained = {p.name for p, _ in pairs}
    buffers = sorted(n for n in scope.local_var_names() if n.startswith("eager_tmp"))
    assert buffers and not trained & set(buffers), (buffers, sorted(trained))
    assert "embedding_0.w_0" in trained and "linear_0.b_0" in trained, sorted(trained)
    exe.run(startup, scope=scope)
    before = {n: np.array(scope.find_var(n).get_tensor()) for n in buffers + ["embedding_0.w_0"]}
    run_feed = dict(feed, labels=labels.reshape(-1, 1).astype(np.int64))
    steps = [
        exe.run(program, feed=run_feed, fetch_list=[loss], scope=scope)[0].item() for _ in range(10)
    ]
    assert steps[-1] < 0.7 * steps[0], steps
    for n, v in before.items():
        after = np.array(scope.find_var(n).get_tensor())
        assert np.array_equal(after, v) == (n in buffers), n


@needs_bf16
@pytest.mark.parametrize("name", LLM)
def test_llm_in_bf16_matches_paddle(name):
    """precision="bf16": the matmuls run in bfloat16, the scalars of Paddle's `where` (0-D
    values; oneDNN's kernels take no rank 0) in float32; the logits within 5e-2 of the largest."""
    d = fixture_dir(name)
    feed, expected = cases(d)[0]
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(
            os.path.join(d, "inference"), exe, precision="bf16"
        )
        out = exe.run(program, feed=feed, fetch_list=fetches)[0]
    kernels = exe.last_run_info()["kernels"]
    assert any("bfloat16" in k for t, k in kernels if t.startswith("matmul")), kernels
    np.testing.assert_allclose(out, expected[0], rtol=0, atol=5e-2 * np.abs(expected[0]).max())
