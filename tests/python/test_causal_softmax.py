"""fused_softmax_mask_upper_triangle (Paddle's causal softmax, with Tide's mask_value and
diagonal) against float64 numpy, plain and oneDNN, and InferenceTranspiler's
fuse_causal_softmax, which makes it of an exported causal mask (fill_any_like of the scores,
tril_triu, the add, softmax): the fused program equals the unfused one; a mask that is kept, a
lower triangle or a softmax over another axis are left as they are; its gradient (softmax's of
Out) against finite differences."""

import numpy as np
import pytest
from kernel_libraries import LIBS
from op_test import make
from test_bf16_inference import needs_bf16
from test_llama_passes import bf16_rounded
from test_transformer_passes import counts, data, run, transpiled

import tide


def masked_softmax(x, value, diagonal):
    x = x.astype(np.float64)
    q, k = x.shape[-2:]
    i, j = np.meshgrid(np.arange(q), np.arange(k), indexing="ij")
    x = x + np.where(j - i >= diagonal, value, 0.0)
    with np.errstate(invalid="ignore"):  # a row masked whole with -inf is NaN, as Paddle's
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)


def causal_softmax(main, x, attrs=None, dtype="float32"):
    """Appends fused_softmax_mask_upper_triangle of variable `x` to `main`; its Out."""
    out = main.global_block().create_var(name="out", dtype=dtype)
    main.global_block().append_op(
        "fused_softmax_mask_upper_triangle",
        inputs={"X": [x.name]},
        outputs={"Out": [out.name]},
        attrs=attrs or {},
    )
    return out


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize(
    "shape,value,diagonal",
    [
        ([2, 3, 6, 6], float("-inf"), 1),  # Paddle's op: GPT's square scores
        ([2, 3, 6, 6], -10000.0, 1),  # an exported mask's value, added
        ([1, 2, 4, 9], -10000.0, 6),  # keys past the queries: a cache of 5 before 4 queries
        ([3, 5, 7], 2.5, 0),  # a finite value, the diagonal masked too, rank 3
        ([4, 4], float("-inf"), -2),  # rank 2, below the diagonal
        ([1, 2, 600, 600], -10000.0, 1),  # oneDNN's chunks of rows end inside a matrix
    ],
)
def test_op_matches_numpy(shape, value, diagonal, lib, fresh_programs, rng):
    main, _ = fresh_programs
    out = causal_softmax(main, data("x", shape), {"mask_value": value, "diagonal": diagonal})
    feed = {"x": rng.uniform(-3, 3, shape).astype("float32")}
    (got,), kernels = run(lib, main, feed, [out])
    ran = [k for op, k in kernels if op == "fused_softmax_mask_upper_triangle"]
    assert ran and all(("mkldnn" in k) == (lib == "mkldnn") for k in ran), ran
    want = masked_softmax(feed["x"], value, diagonal)
    rows_all_masked = np.isnan(want)  # diagonal <= -(k - 1) with -inf: as Paddle, NaN rows
    np.testing.assert_array_equal(np.isnan(got), rows_all_masked)
    np.testing.assert_allclose(got[~rows_all_masked], want[~rows_all_masked], rtol=1e-5, atol=1e-7)


def test_paddles_defaults_mask_above_the_diagonal(fresh_programs, rng):
    """Without Tide's attributes (a program of Paddle's op): -inf above the main diagonal."""
    main, _ = fresh_programs
    out = causal_softmax(main, data("x", [1, 2, 5, 5]))
    feed = {"x": rng.uniform(-3, 3, [1, 2, 5, 5]).astype("float32")}
    (got,), _ = run("plain", main, feed, [out])
    assert np.all(np.triu(got[0, 0], 1) == 0)
    np.testing.assert_allclose(got, masked_softmax(feed["x"], -np.inf, 1), rtol=1e-5, atol=1e-7)


def attention(main, variant=None):
    """softmax(Q K^T + triu(full_like(scores, -10000), 1)) V as an export writes it; `variant`
    changes one detail that must keep it unfused."""
    blk = main.global_block()
    q, k, v = (data(n, [2, 2, 6, 4]) for n in "qkv")

    def op(t, ins, attrs=None, out=None):
        out = out or tide.unique_name.generate(t)
        blk.create_var(name=out, dtype="float32")
        blk.append_op(t, inputs=ins, outputs={"Out": [out]}, attrs=attrs or {})
        return out

    s = op("matmul_v2", {"X": [q.name], "Y": [k.name]}, {"trans_y": True})
    fill = op("fill_any_like", {"X": [s]}, {"value": -10000.0, "dtype": 5})
    lower = variant == "lower"
    m = op("tril_triu", {"X": [fill]}, {"diagonal": 0 if lower else 1, "lower": lower})
    ins = {"X": [m], "Y": [s]} if variant == "swapped" else {"X": [s], "Y": [m]}
    a = op("elementwise_add", ins, {"axis": -1})
    p = op("softmax", {"X": [a]}, {"axis": 2 if variant == "other_axis" else -1})
    out = op("matmul_v2", {"X": [p], "Y": [v.name]})
    return out, m


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("variant", [None, "swapped"])
def test_fuse_causal_softmax_fuses_and_equals(variant, lib, fresh_programs, rng):
    main, _ = fresh_programs
    out, _ = attention(main, variant)
    program = transpiled(main, [out])
    after = counts(program)
    assert after["fused_softmax_mask_upper_triangle"] == 1, after
    for gone in ("fill_any_like", "tril_triu", "elementwise_add", "softmax"):
        assert after[gone] == 0, (gone, after)
    (op,) = [o for o in program.global_block().ops if o.type == "fused_softmax_mask_upper_triangle"]
    assert op.attr("mask_value") == -10000.0 and op.attr("diagonal") == 1
    feed = {n: rng.uniform(-2, 2, [2, 2, 6, 4]).astype("float32") for n in "qkv"}
    (got,), _ = run(lib, program, feed, [out])
    (want,), _ = run(lib, main, feed, [out])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("variant", ["mask_kept", "lower", "other_axis"])
def test_fuse_causal_softmax_leaves_others_alone(variant, fresh_programs):
    main, _ = fresh_programs
    out, mask = attention(main, variant)
    keep = [out, mask] if variant == "mask_kept" else [out]
    program = transpiled(main, keep)
    after = counts(program)
    assert after["fused_softmax_mask_upper_triangle"] == 0, after
    assert after["softmax"] == 1 and after["tril_triu"] == 1, after


@needs_bf16
def test_bfloat16_kernel_rounds_the_float32_softmax_once(fresh_programs, rng):
    """bfloat16 scores (bf16 inference, between bfloat16 products): oneDNN's softmax computes in
    float32 and rounds each probability to bfloat16 once; the masked entries stay 0."""
    main, _ = fresh_programs
    shape = [1, 2, 600, 600]  # several of the kernel's chunks of rows
    x = tide.layers.cast(data("x", shape), "bfloat16")
    out = causal_softmax(main, x, {"mask_value": -10000.0, "diagonal": 1}, dtype="bfloat16")
    y = tide.layers.cast(out, "float32")
    feed = {"x": rng.uniform(-4, 4, shape).astype("float32")}
    (got,), kernels = run("mkldnn", main, feed, [y])
    ran = [k for op, k in kernels if op == "fused_softmax_mask_upper_triangle"]
    assert ran and all("bfloat16" in k for k in ran), ran
    want = masked_softmax(bf16_rounded(feed["x"]), -10000.0, 1)
    np.testing.assert_allclose(got, want, rtol=2**-8, atol=1e-6)
    assert np.all(np.triu(got, 1) == 0)


@pytest.mark.parametrize("lib", LIBS)
def test_a_masked_entry_that_still_counts_is_computed(lib, fresh_programs, rng):
    """An exported mask adds -10000; an entry 20000 above the rest still dominates its row after
    it: the mask is added, never taken for probability 0."""
    main, _ = fresh_programs
    shape = [1, 2, 300, 300]
    out = causal_softmax(main, data("x", shape), {"mask_value": -10000.0, "diagonal": 1})
    feed = {"x": rng.uniform(-3, 3, shape).astype("float32")}
    feed["x"][0, 1, 5, 250] = 20000.0  # masked (250 > 5), yet 10000 after the mask
    (got,), _ = run(lib, main, feed, [out])
    want = masked_softmax(feed["x"], -10000.0, 1)
    assert want[0, 1, 5, 250] > 0.99
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "shape,value,diagonal",
    [
        ([2, 3, 4, 4], float("-inf"), 1),  # Paddle's op: masked entries get 0
        ([2, 4, 6], -3.0, 1),  # a finite mask moves the others' share: still X's gradient
        ([3, 2, 5], float("-inf"), 3),  # keys past the queries (a cache before the queries)
        ([4, 4], 1.5, 0),  # rank 2, the diagonal masked too
    ],
)
def test_gradient_matches_finite_differences(shape, value, diagonal, rng):
    x = rng.uniform(-2, 2, shape)  # float64: the differences resolve the gradient
    t = make(
        "fused_softmax_mask_upper_triangle",
        {"X": x},
        {"Out": masked_softmax(x, value, diagonal)},
        {"mask_value": value, "diagonal": diagonal},
    )
    t.check_output(rtol=1e-12, atol=1e-14)
    t.check_grad(["X"], "Out", max_relative_error=1e-6, numeric_grad_delta=1e-6)


@pytest.mark.parametrize("lib", LIBS)
def test_causal_attention_trains_through_the_fused_op(lib, fresh_programs, rng):
    """A causal attention's query projection trained through the op: the loss falls, and the
    masked probabilities stay 0 as the weights move."""
    main, startup = fresh_programs
    x = data("x", [2, 6, 8])
    q = tide.layers.fc(x, size=8, num_flatten_dims=2, bias_attr=False)
    scores = tide.layers.matmul(q, x, transpose_y=True)
    p = causal_softmax(main, scores)
    loss = tide.layers.mean(tide.layers.square(tide.layers.matmul(p, x) - x))
    tide.optimizer.SGD(learning_rate=0.5).minimize(loss)
    feed = {"x": rng.uniform(-1, 1, [2, 6, 8]).astype("float32")}
    exe = tide.Executor(tide.CPUPlace())
    tide.set_flags({"use_mkldnn": lib == "mkldnn"})
    try:
        exe.run(startup)
        losses = []
        for _ in range(20):
            got_loss, probs = exe.run(main, feed=feed, fetch_list=[loss, p])
            losses.append(float(got_loss.reshape(())))
            assert np.all(np.triu(probs, 1) == 0)
    finally:
        tide.set_flags({"use_mkldnn": False})
    assert losses[-1] < 0.5 * losses[0], losses
