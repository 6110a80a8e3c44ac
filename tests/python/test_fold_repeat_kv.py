"""InferenceTranspiler's fold_repeat_kv (python/tide/transpiler/inference_passes/repeat_kv.py):
grouped-query attention written as Paddle's model code writes it (keys / values repeated per
query head by unsqueeze2 + expand_v2 or tile + reshape2 or flatten, or by repeat_interleave, then
transpose2, then Q K^T and
P V) gives the same outputs with the repeat folded into the products (float32 rounding: the
products take more rows, which a GEMM may sum in another order), plain and with oneDNN, at
decode (one query row) and prefill shapes, against float64 numpy too; the repeat ops are gone; what does not match exactly (the
repeated keys read elsewhere, another repeat layout) is left alone; and the LLM fixtures that
use grouped-query attention get folded."""

import collections
import os

import numpy as np
import pytest
from kernel_libraries import LIBS

import tide

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "paddle", "pir")


def counts(program):
    return collections.Counter(op.type for op in program.global_block().ops)


class Gqa:
    """q [B, M, H, D], k / v [B, S, Hkv, D] (fed) -> attention output [B, H, M, D]."""

    def __init__(self, heads, kv_heads, d, repeat_op="expand_v2", variant=None, merge="reshape2"):
        self.block = tide.default_main_program().global_block()
        self.heads, self.kv_heads, self.d = heads, kv_heads, d
        self.repeat_op, self.variant, self.merge = repeat_op, variant, merge
        self.fetch_extra = []
        for name, h in (("q", heads), ("k", kv_heads), ("v", kv_heads)):
            tide.layers.data(name=name, shape=[-1, -1, h, d], append_batch_size=False)
        qt = self.op("transpose2", {"X": ["q"]}, {"axis": [0, 2, 1, 3]}, ("Out", "XShape"))
        qs = self.op("scale", {"X": [qt]}, {"scale": d**-0.5}, ("Out",))
        scores = self.op(
            "matmul_v2", {"X": [qs], "Y": [self.repeat("k")]}, {"trans_y": True}, ("Out",)
        )
        p = self.op("softmax", {"X": [scores]}, {"axis": -1}, ("Out",))
        self.out = self.op("matmul_v2", {"X": [p], "Y": [self.repeat("v")]}, {}, ("Out",))

    def op(self, op_type, inputs, attrs, outputs):
        names = {o: tide.unique_name.generate(op_type + "." + o) for o in outputs}
        for n in names.values():
            self.block.create_var(name=n, dtype="float32")
        self.block.append_op(
            op_type, inputs=inputs, outputs={o: [n] for o, n in names.items()}, attrs=attrs
        )
        return names[outputs[0]]

    def repeat(self, x):
        rep = self.heads // self.kv_heads
        if self.repeat_op == "repeat_interleave":
            r = self.op("repeat_interleave", {"X": [x]}, {"Repeats": rep, "dim": 2}, ("Out",))
            return self.op("transpose2", {"X": [r]}, {"axis": [0, 2, 1, 3]}, ("Out", "XShape"))
        u = self.op("unsqueeze2", {"X": [x]}, {"axes": [-2]}, ("Out", "XShape"))
        if self.repeat_op == "expand_v2":
            e = self.op("expand_v2", {"X": [u]}, {"shape": [-1, -1, -1, rep, -1]}, ("Out",))
        else:
            e = self.op("tile", {"X": [u]}, {"repeat_times": [1, 1, 1, rep, 1]}, ("Out",))
        if self.merge == "reshape2":
            r = self.op(
                "reshape2", {"X": [e]}, {"shape": [0, 0, self.heads, self.d]}, ("Out", "XShape")
            )
        else:
            r = self.op(
                "flatten_contiguous_range",
                {"X": [e]},
                {"start_axis": 2, "stop_axis": 3},
                ("Out", "XShape"),
            )
        if self.variant == "repeat_fetched" and x == "k":
            self.fetch_extra.append(r)
        return self.op("transpose2", {"X": [r]}, {"axis": [0, 2, 1, 3]}, ("Out", "XShape"))


def run(lib, program, feed, fetch):
    exe = tide.Executor(tide.CPUPlace())
    tide.set_flags({"use_mkldnn": lib == "mkldnn"})
    try:
        return exe.run(program, feed=feed, fetch_list=fetch)
    finally:
        tide.set_flags({"use_mkldnn": False})


def transpiled(main, fetch, skip=()):
    program = main.clone()
    tide.transpiler.InferenceTranspiler().transpile(program, keep=fetch, skip_passes=skip)
    return program


def feed(rng, b, m, s, heads, kv_heads, d):
    return {
        "q": rng.uniform(-1, 1, (b, m, heads, d)).astype("float32"),
        "k": rng.uniform(-1, 1, (b, s, kv_heads, d)).astype("float32"),
        "v": rng.uniform(-1, 1, (b, s, kv_heads, d)).astype("float32"),
    }


def numpy_attention(f, heads, kv_heads):
    rep = heads // kv_heads
    q = f["q"].astype(np.float64).transpose(0, 2, 1, 3) * f["q"].shape[-1] ** -0.5
    k = np.repeat(f["k"].astype(np.float64), rep, axis=2).transpose(0, 2, 1, 3)
    v = np.repeat(f["v"].astype(np.float64), rep, axis=2).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize(
    "repeat_op,merge",
    [
        ("expand_v2", "reshape2"),
        ("tile", "reshape2"),
        ("expand_v2", "flatten"),
        ("repeat_interleave", None),
    ],
)
@pytest.mark.parametrize("shape", [(4, 1, 9), (2, 5, 5)], ids=["decode", "prefill"])
def test_folded_and_equal(shape, repeat_op, merge, lib, fresh_programs, rng):
    main, _ = fresh_programs
    heads, kv_heads, d = 8, 2, 16
    g = Gqa(heads, kv_heads, d, repeat_op, merge=merge)
    program = transpiled(main, [g.out])
    before, after = counts(main), counts(program)
    assert before[repeat_op] == 2
    assert after[repeat_op] == 0 and after["unsqueeze2"] == 0, after
    assert after["matmul_v2"] == 2 and after["transpose2"] == 3, after
    f = feed(rng, *shape, heads, kv_heads, d)
    (want,) = run(lib, main, f, [g.out])
    (got,) = run(lib, program, f, [g.out])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    ref = numpy_attention(f, heads, kv_heads)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    # The same program at another sequence length and batch (dims are read at run time).
    f = feed(rng, 3, 1, 17, heads, kv_heads, d)
    (got,) = run(lib, program, f, [g.out])
    np.testing.assert_allclose(got, numpy_attention(f, heads, kv_heads), rtol=1e-5, atol=1e-6)


def test_switched_off_and_left_alone(fresh_programs, rng):
    main, _ = fresh_programs
    g = Gqa(8, 2, 16, variant="repeat_fetched")
    fetch = [g.out] + g.fetch_extra
    program = transpiled(main, fetch)
    # The repeated keys are fetched: their repeat stays; the values' folds.
    assert counts(program)["expand_v2"] == 1, counts(program)
    f = feed(rng, 2, 3, 4, 8, 2, 16)
    for w, o in zip(run("plain", main, f, fetch), run("plain", program, f, fetch)):
        np.testing.assert_array_equal(o, w)
    assert counts(transpiled(main, fetch, skip=("fold_repeat_kv",)))["expand_v2"] == 2


@pytest.mark.parametrize("name", ["llm_llama", "llm_qwen2", "llm_mistral", "llm_decode"])
def test_llm_fixtures_folded(name):
    """Paddle-saved LLaMA-family models with grouped-query attention: no repeat is left (their
    outputs against Paddle's are test_paddle_llm.py's, which loads them optimized)."""
    path = os.path.join(FIXTURES, name, "inference")
    if not os.path.exists(path + ".json") and not os.path.exists(path + ".pdmodel"):
        pytest.skip("no fixture %s" % name)
    exe = tide.Executor(tide.CPUPlace())
    raw = counts(tide.io.load_inference_model(path, exe, optimize=False, scope=tide.Scope())[0])
    prog = tide.io.load_inference_model(path, exe, scope=tide.Scope())[0]
    kinds = ("expand_v2", "tile", "repeat_interleave")
    after = counts(prog)
    assert sum(raw[k] for k in kinds) > 0, raw
    assert sum(after[k] for k in kinds) < sum(raw[k] for k in kinds), (raw, after)
