"""InferenceTranspiler on a LLaMA-style block written out in ops, as Paddle exports one: the RMS
normalisation (pow, reduce_mean, + eps, rsqrt, the products with x and the weight) becomes
rms_norm (fuse_rms_norm), bias-free projections become fc ops without Bias (fuse_fc), silu joins
the gate's fc as its swish epilogue. Each against a float64 numpy reference, plain and oneDNN,
at a decode step's few rows (the oneDNN fc's skinny path) and at a prefill's many (its packed
weights); patterns that differ in one detail are left as they are."""

import collections

import numpy as np
import pytest
from kernel_libraries import LIBS

import tide

H, FFN, EPS = 16, 40, 1e-6


def counts(program):
    return collections.Counter(op.type for op in program.global_block().ops)


def run(lib, program, feed, fetch_list):
    exe = tide.Executor(tide.CPUPlace())
    tide.set_flags({"use_mkldnn": lib == "mkldnn"})
    try:
        out = exe.run(program, feed=feed, fetch_list=fetch_list)
        return out, exe.last_run_info()["kernels"]
    finally:
        tide.set_flags({"use_mkldnn": False})


class Block:
    """x + down(silu(n @ Wg) * (n @ Wu)) with n = rms_norm(x + (n0 @ Wq) @ Wo), n0 = rms_norm(x):
    a decoder layer without the attention, every normalisation written out; `variant` changes
    one detail of the first normalisation."""

    def __init__(self, rng, variant=None):
        self.rng, self.variant = rng, variant
        self.block = tide.default_main_program().global_block()
        self.params, self.fetch_extra = {}, []
        x = tide.layers.data(name="x", shape=[-1, -1, H], dtype="float32", append_batch_size=False)
        n0 = self.norm(x.name, first=True)
        h = self.add(x.name, self.linear(self.linear(n0, "wq"), "wo"))
        n1 = self.norm(h)
        gate = self.op("silu", {"X": [self.linear(n1, "wg", FFN)]})
        up = self.linear(n1, "wu", FFN)
        self.out = self.add(
            h, self.linear(self.op("elementwise_mul", {"X": [gate], "Y": [up]}), "wd", H, FFN)
        )

    def op(self, t, ins, attrs=None):
        out = tide.unique_name.generate(t)
        self.block.create_var(name=out, dtype="float32")
        self.block.append_op(t, inputs=ins, outputs={"Out": [out]}, attrs=attrs or {})
        return out

    def param(self, name, value):
        self.block.create_var(name=name, shape=list(value.shape), dtype="float32", persistable=True)
        tide.global_scope().var(name).get_tensor().set(value, tide.CPUPlace(), False)
        self.params[name] = value.astype(np.float64)
        return name

    def linear(self, x, name, n=H, k=H):
        w = self.param(name, self.rng.uniform(-0.5, 0.5, (k, n)).astype("float32"))
        return self.op("matmul_v2", {"X": [x], "Y": [w]})

    def add(self, a, b):
        return self.op("elementwise_add", {"X": [a], "Y": [b]}, {"axis": -1})

    def norm(self, x, first=False):
        v = self.variant if first else None
        sq = self.op("pow", {"X": [x]}, {"factor": 2.0})
        mean = self.op("reduce_mean", {"X": [sq]}, {"dim": [-1], "keep_dim": True})
        if v == "mean_fetched":
            self.fetch_extra.append(mean)
        if v == "eps_added":
            eps = self.param("eps", np.array([EPS], "float32"))
            e = self.add(mean, eps)
        else:
            e = self.op("scale", {"X": [mean]}, {"scale": 1.0, "bias": EPS})
        r = self.op("rsqrt", {"X": [e]})
        ins = {"X": [r], "Y": [x]} if v == "swapped" else {"X": [x], "Y": [r]}
        n = self.op("elementwise_mul", ins)
        if v == "no_weight":
            return n
        w = self.param(
            "norm_w%d" % len(self.params), self.rng.uniform(0.5, 1.5, H).astype("float32")
        )
        ins = {"X": [w], "Y": [n]} if v == "swapped" else {"X": [n], "Y": [w]}
        return self.op("elementwise_mul", ins, {"axis": -1})

    def reference(self, x):
        p = self.params
        x = x.astype(np.float64)
        norm_ws = [p[k] for k in p if k.startswith("norm_w")]

        def norm(t, w):
            t = t / np.sqrt((t * t).mean(-1, keepdims=True) + EPS)
            return t * w if w is not None else t

        first_w = None if self.variant == "no_weight" else norm_ws.pop(0)
        h = x + norm(x, first_w) @ p["wq"] @ p["wo"]
        n1 = norm(h, norm_ws.pop(0))
        g = n1 @ p["wg"]
        return h + (g / (1 + np.exp(-g)) * (n1 @ p["wu"])) @ p["wd"]


def transpiled(main, fetch):
    program = main.clone()
    tide.transpiler.InferenceTranspiler().transpile(program, keep=fetch)
    return program


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("rows", [(1, 3), (2, 12)], ids=["decode", "prefill"])
@pytest.mark.parametrize("variant", [None, "eps_added", "swapped", "no_weight"])
def test_llama_block_fused_and_equal(variant, rows, lib, fresh_programs, rng):
    main, _ = fresh_programs
    blk = Block(rng, variant)
    feed = {"x": rng.uniform(-1, 1, rows + (H,)).astype("float32")}
    program = transpiled(main, [blk.out])
    before, after = counts(main), counts(program)
    assert before["matmul_v2"] == 5 and before["pow"] == 2 and before["silu"] == 1, before
    assert after["rms_norm"] == 2 and after["fc"] == 5, after
    for gone in ("matmul_v2", "pow", "reduce_mean", "rsqrt", "silu", "scale"):
        assert after[gone] == 0, (gone, after)
    assert after["elementwise_mul"] == 1, after  # the gate times up
    fcs = [op for op in program.global_block().ops if op.type == "fc"]
    assert not any(op.input("Bias") for op in fcs)
    assert [op.attr("fuse_activation") for op in fcs].count("swish") == 1
    (got,), kernels = run(lib, program, feed, [blk.out])
    if lib == "mkldnn":
        assert all("mkldnn" in k for op, k in kernels if op == "fc"), kernels
    want = blk.reference(feed["x"])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    (unfused,), _ = run(lib, main, feed, [blk.out])
    np.testing.assert_allclose(got, unfused, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_rms_norm_left_alone_where_an_intermediate_is_read(fresh_programs, rng):
    main, _ = fresh_programs
    blk = Block(rng, "mean_fetched")
    fetch = [blk.out] + blk.fetch_extra
    program = transpiled(main, fetch)
    after = counts(program)
    assert after["rms_norm"] == 1 and after["reduce_mean"] == 1 and after["rsqrt"] == 1, after
    feed = {"x": rng.uniform(-1, 1, (2, 5, H)).astype("float32")}
    got, _ = run("plain", program, feed, fetch)
    want, _ = run("plain", main, feed, fetch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_bias_free_fusion_can_be_switched_off(fresh_programs, rng):
    main, _ = fresh_programs
    blk = Block(rng)
    program = main.clone()
    tide.transpiler.InferenceTranspiler().transpile(
        program, keep=[blk.out], skip_passes=["fuse_fc", "fuse_rms_norm"]
    )
    after = counts(program)
    assert after["fc"] == 0 and after["matmul_v2"] == 5 and after["rms_norm"] == 0, after
    assert after["pow"] == 2 and after["silu"] == 1, after


@pytest.mark.parametrize("lib", LIBS)
def test_rms_norm_op_many_rows_matches_numpy(lib, fresh_programs, rng):
    """Rows split over the CPU pool: each row normalised by its own RMS."""
    main, _ = fresh_programs
    x = tide.layers.data(name="x", shape=[64, 7, 33], dtype="float32", append_batch_size=False)
    w = main.global_block().create_var(name="w", shape=[7, 33], dtype="float32")
    y = main.global_block().create_var(name="y", dtype="float32")
    main.global_block().append_op(
        "rms_norm",
        inputs={"x": [x.name], "scale": [w.name]},
        outputs={"y": [y.name]},
        attrs={"normalized_shape": [7, 33], "epsilon": 1e-5},
    )
    feed = {
        "x": rng.normal(0, 3, (64, 7, 33)).astype("float32"),
        "w": rng.uniform(0.5, 1.5, (7, 33)).astype("float32"),
    }
    (got,), _ = run(lib, main, feed, [y])
    xd = feed["x"].astype(np.float64)
    ms = (xd * xd).mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got, xd / np.sqrt(ms + 1e-5) * feed["w"], rtol=1e-5, atol=1e-6)
