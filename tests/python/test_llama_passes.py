"""InferenceTranspiler on a LLaMA-style block written out in ops, as Paddle exports one: the RMS
normalisation (pow, reduce_mean, + eps, rsqrt, the products with x and the weight) becomes
rms_norm (fuse_rms_norm), bias-free projections become fc ops without Bias (fuse_fc), silu joins
the gate's fc as its swish epilogue. Each against a float64 numpy reference, plain and oneDNN,
at a decode step's few rows (the oneDNN fc's skinny path) and at a prefill's many (its packed
weights); patterns that differ in one detail are left as they are."""

import numpy as np
import pytest
from float64_grad import central_diff_of
from kernel_libraries import LIBS
from test_transformer_passes import counts, run, transpiled

import tide

H, FFN, EPS = 16, 40, 1e-6


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


# --- fused_rotary_position_embedding and fuse_rotary -------------------------------------------


def rope_ref(x, sin, cos, pairs, ids=None, time_major=False):
    """The rotation in float64 numpy: x [B, S, H, D] ([S, B, H, D]), tables [rows, D]."""
    x = x.astype(np.float64)
    if time_major:
        x = x.transpose(1, 0, 2, 3)
    b, s, _, d = x.shape
    rows = ids if ids is not None else np.broadcast_to(np.arange(s), (b, s))
    c, sn = cos.reshape(-1, d)[rows][:, :, None, :], sin.reshape(-1, d)[rows][:, :, None, :]
    if pairs:
        rot = np.empty_like(x)
        rot[..., 0::2], rot[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    else:
        rot = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], -1)
    out = x * c + rot * sn
    return out.transpose(1, 0, 2, 3) if time_major else out


def rope_program(main, shape, tables, with_ids, attrs, dtype="float32"):
    blk = main.global_block()
    ins = {}
    for n in ("q", "k", "v"):
        ins[n] = [tide.layers.data(name=n, shape=shape, dtype=dtype, append_batch_size=False).name]
    for n, t in tables.items():
        ins[n] = [
            tide.layers.data(name=n, shape=list(t.shape), dtype=dtype, append_batch_size=False).name
        ]
    if with_ids:
        ins["position_ids"] = [
            tide.layers.data(
                name="ids", shape=[shape[0], shape[1]], dtype="int64", append_batch_size=False
            ).name
        ]
    outs = {o: [blk.create_var(name=o, dtype=dtype).name] for o in ("out_q", "out_k", "out_v")}
    blk.append_op("fused_rotary_position_embedding", inputs=ins, outputs=outs, attrs=attrs)
    return [blk.var(o) for o in ("out_q", "out_k", "out_v")]


ROPE_CASES = {
    # id: (pairs, table dims ([S, D] or [1, S, 1, D]), position_ids, time_major, given tables)
    "rotate_half": (False, "flat", False, False, True),
    "rotate_half_padded_tables": (False, "padded", False, False, True),
    "pairs": (True, "flat", False, False, True),
    "pairs_position_ids": (True, "padded", True, False, True),
    "rotate_half_time_major": (False, "flat", False, True, True),
    "pairs_computed_angles": (True, None, True, False, False),
}


@pytest.mark.parametrize("case", sorted(ROPE_CASES))
def test_fused_rotary_position_embedding_matches_numpy(case, fresh_programs, rng):
    pairs, form, with_ids, time_major, given = ROPE_CASES[case]
    main, _ = fresh_programs
    b, s, h, d, rows = 2, 5, 3, 8, 9
    shape = [s, b, h, d] if time_major else [b, s, h, d]
    ids = rng.randint(0, rows, (b, s)).astype(np.int64) if with_ids else None
    n = rows if with_ids else s
    if given:
        angles = rng.uniform(-3, 3, (n, d))
        table = {"sin": np.sin(angles), "cos": np.cos(angles)}
    else:  # Paddle's: p / 10000^(2 floor(i / 2) / D)
        p = np.arange(rows)[:, None]
        angles = p / 10000.0 ** ((np.arange(d) // 2 * 2) / d)
        table = {}
    tables = {
        k: (v if form == "flat" else v.reshape(1, n, 1, d)).astype("float32")
        for k, v in table.items()
    }
    outs = rope_program(
        main, shape, tables, with_ids, {"use_neox_rotary_style": pairs, "time_major": time_major}
    )
    feed = {k: rng.uniform(-1, 1, shape).astype("float32") for k in ("q", "k", "v")}
    feed.update(tables)
    if with_ids:
        feed["ids"] = ids
    got = tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=outs)
    for k, g in zip(("q", "k", "v"), got):
        want = rope_ref(feed[k], np.sin(angles), np.cos(angles), pairs, ids, time_major)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("pairs", [False, True], ids=["rotate_half", "pairs"])
def test_fused_rotary_position_embedding_gradient(pairs, fresh_programs, rng):
    main, _ = fresh_programs
    b, s, h, d = 2, 3, 2, 4
    angles = rng.uniform(-3, 3, (s, d))
    tables = {"sin": np.sin(angles), "cos": np.cos(angles)}
    outs = rope_program(
        main, [b, s, h, d], tables, False, {"use_neox_rotary_style": pairs}, "float64"
    )
    for n in ("q", "k"):
        main.global_block().var(n).stop_gradient = False
    w = rng.uniform(-1, 1, (b, s, h, d))
    wv = tide.layers.assign(w)
    loss = tide.layers.reduce_sum(
        tide.layers.elementwise_add(
            tide.layers.elementwise_mul(outs[0], wv), tide.layers.elementwise_mul(outs[1], wv)
        )
    )
    tide.append_backward(loss, parameter_list=["q", "k"])
    feed = {k: rng.uniform(-1, 1, (b, s, h, d)) for k in ("q", "k", "v")}
    feed.update(tables)
    gq, gk = tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=["q@GRAD", "k@GRAD"])
    for name, got in (("q", gq), ("k", gk)):
        want = central_diff_of(
            lambda x: np.sum(rope_ref(x, tables["sin"], tables["cos"], pairs) * w),
            {"x": feed[name]},
            "x",
        )
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=name)


def test_fused_rotary_position_embedding_refuses_bad_input(fresh_programs, rng):
    main, _ = fresh_programs
    table = np.zeros((4, 8), "float32")  # 4 rows for S = 5
    with pytest.raises(Exception, match=r"fused_rotary_position_embedding.*S = 5 rows"):
        rope_program(main, [1, 5, 2, 8], {"sin": table, "cos": table}, False, {})


def test_fused_rotary_position_embedding_checks_tables_at_run_time(fresh_programs):
    """S unknown when the program is built: the kernel names the mismatch (no read past the
    table)."""
    main, _ = fresh_programs
    table = np.zeros((4, 8), "float32")
    outs = rope_program(main, [1, -1, 2, 8], {"sin": table, "cos": table}, False, {})
    feed = {k: np.zeros((1, 5, 2, 8), "float32") for k in ("q", "k", "v")}
    feed.update(sin=table, cos=table)
    with pytest.raises(Exception, match=r"fused_rotary_position_embedding.*S = 5 rows.*got 4"):
        tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=outs)


class Rotary:
    """q * cos + rotate_half(q) * sin as LLaMA-style models export it, on a [B, S, H, D] input;
    `variant` changes one detail."""

    def __init__(self, variant=None, d=8):
        self.block = tide.default_main_program().global_block()
        self.d, h = d, d // 2
        x = tide.layers.data(
            name="x", shape=[-1, -1, 2, d], dtype="float32", append_batch_size=False
        )
        cos_u, sin_u = self.tables(d)
        first = self.op("slice", {"Input": [x.name]}, {"axes": [3], "starts": [0], "ends": [h]})
        second = self.op(
            "slice", {"Input": [x.name]}, {"axes": [3], "starts": [h], "ends": [2147483647]}
        )
        neg = self.op("scale", {"X": [second]}, {"scale": -0.5 if variant == "scaled" else -1.0})
        halves = [first, neg] if variant == "halves_swapped" else [neg, first]
        cat = self.op("concat", {"X": halves}, {"axis": -1})
        if variant == "rotated_fetched":
            self.fetch_extra = [cat]
        prod_sin = self.op(
            "elementwise_mul",
            {"X": [sin_u], "Y": [cat]} if variant == "swapped" else {"X": [cat], "Y": [sin_u]},
        )
        prod_cos = self.op("elementwise_mul", {"X": [x.name], "Y": [cos_u]})
        self.out = self.op(
            "elementwise_add",
            {"X": [prod_sin], "Y": [prod_cos]}
            if variant == "swapped"
            else {"X": [prod_cos], "Y": [prod_sin]},
        )

    def tables(self, d):
        """sin / cos [1, S, 1, D]: unsqueeze2 of [S, D] tables."""
        cos = tide.layers.data(name="cos", shape=[-1, d], dtype="float32", append_batch_size=False)
        sin = tide.layers.data(name="sin", shape=[-1, d], dtype="float32", append_batch_size=False)
        return [self.op("unsqueeze2", {"X": [t.name]}, {"axes": [0, 2]}) for t in (cos, sin)]

    fetch_extra = []

    def op(self, t, ins, attrs=None):
        out = tide.unique_name.generate(t)
        self.block.create_var(name=out, dtype="float32")
        outs = {"Out": [out]}
        if t in ("unsqueeze2", "reshape2", "flatten_contiguous_range"):
            xs = tide.unique_name.generate("xshape")
            self.block.create_var(name=xs, dtype="float32")
            outs["XShape"] = [xs]
        self.block.append_op(t, inputs=ins, outputs=outs, attrs=attrs or {})
        return out


@pytest.mark.parametrize(
    "variant", [None, "swapped", "halves_swapped", "scaled", "rotated_fetched"]
)
def test_fuse_rotary_fuses_rotate_half_only(variant, fresh_programs, rng):
    main, _ = fresh_programs
    r = Rotary(variant)
    fetch = [r.out] + r.fetch_extra
    program = transpiled(main, fetch)
    fused = counts(program)["fused_rotary_position_embedding"]
    assert fused == (1 if variant in (None, "swapped") else 0), counts(program)
    if fused:
        assert counts(program)["concat"] == 0 and counts(program)["slice"] == 0
    angles = rng.uniform(-3, 3, (6, 8))
    feed = {
        "x": rng.uniform(-1, 1, (2, 6, 2, 8)).astype("float32"),
        "sin": np.sin(angles).astype("float32"),
        "cos": np.cos(angles).astype("float32"),
    }
    got, _ = run("plain", program, feed, fetch)
    want, _ = run("plain", main, feed, fetch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    if variant in (None, "swapped"):
        ref = rope_ref(feed["x"], np.sin(angles), np.cos(angles), pairs=False)
        np.testing.assert_allclose(got[0], ref, rtol=1e-5, atol=1e-5)


class GatheredRotary(Rotary):
    """The decode step's form: sin / cos rows gathered from [rows, D] tables at the flattened
    position ids [B, S], reshaped to [B, S, 1, D]."""

    def __init__(self, b, s, d=8):
        self.b, self.s = b, s
        super().__init__(d=d)

    def tables(self, d):
        ids = tide.layers.data(
            name="ids", shape=[self.b, self.s], dtype="int64", append_batch_size=False
        )
        flat = self.op(
            "flatten_contiguous_range", {"X": [ids.name]}, {"start_axis": 0, "stop_axis": -1}
        )
        out = []
        for name in ("cos", "sin"):
            t = tide.layers.data(name=name, shape=[-1, d], dtype="float32", append_batch_size=False)
            rows = self.op("gather", {"X": [t.name], "Index": [flat]}, {"axis": 0})
            out.append(self.op("reshape2", {"X": [rows]}, {"shape": [self.b, self.s, 1, d]}))
        return out


@pytest.mark.parametrize("b,s", [(2, 1), (3, 2)], ids=["decode", "two_tokens"])
def test_fuse_rotary_reads_gathered_rows_by_position_ids(b, s, fresh_programs, rng):
    main, _ = fresh_programs
    r = GatheredRotary(b, s)
    program = transpiled(main, [r.out])
    rope = [op for op in program.global_block().ops if op.type == "fused_rotary_position_embedding"]
    assert len(rope) == 1 and rope[0].input("position_ids") == ["ids"], counts(program)
    assert rope[0].input("cos") == ["cos"] and rope[0].input("sin") == ["sin"]
    angles = rng.uniform(-3, 3, (10, 8))
    feed = {
        "x": rng.uniform(-1, 1, (b, s, 2, 8)).astype("float32"),
        "ids": rng.randint(0, 10, (b, s)).astype(np.int64),
        "sin": np.sin(angles).astype("float32"),
        "cos": np.cos(angles).astype("float32"),
    }
    (got,), _ = run("plain", program, feed, [r.out])
    (want,), _ = run("plain", main, feed, [r.out])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    ref = rope_ref(feed["x"], np.sin(angles), np.cos(angles), pairs=False, ids=feed["ids"])
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_fused_rotary_position_embedding_computes_far_positions(fresh_programs, rng):
    """Without tables each token's angles are computed for its own position: an id of 10^9 needs
    no 10^9-row table; a negative id is refused by name."""
    main, _ = fresh_programs
    outs = rope_program(main, [1, 2, 1, 4], {}, True, {"use_neox_rotary_style": True})
    feed = {k: rng.uniform(-1, 1, (1, 2, 1, 4)).astype("float32") for k in ("q", "k", "v")}
    feed["ids"] = np.array([[10**9, 3]], np.int64)
    (got, _, _) = tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=outs)
    p = feed["ids"].reshape(-1, 1).astype(np.float64)
    angles = p / 10000.0 ** ((np.arange(4) // 2 * 2) / 4)
    want = rope_ref(feed["q"], np.sin(angles), np.cos(angles), True, np.array([[0, 1]]))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    feed["ids"] = np.array([[0, -1]], np.int64)
    with pytest.raises(Exception, match=r"position id -1 at \[0, 1\] is negative"):
        tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=outs)


def test_fuse_fc_keeps_products_of_a_bfloat16_weight(fresh_programs):
    """fc reads W in float32 (AsFloat32Param): a model saved with bfloat16 weights keeps its
    matmul_v2, which reads them as they are, rather than have each W widened on every run."""
    main, _ = fresh_programs
    block = main.global_block()
    x = tide.layers.data(name="x", shape=[-1, -1, 8], dtype="bfloat16", append_batch_size=False)
    w = block.create_var(name="w16", shape=[8, 4], dtype="bfloat16", persistable=True)
    out = block.create_var(name="out", dtype="bfloat16")
    block.append_op("matmul_v2", inputs={"X": [x.name], "Y": [w.name]}, outputs={"Out": [out.name]})
    program = transpiled(main, [out])
    assert counts(program)["matmul_v2"] == 1 and counts(program)["fc"] == 0, counts(program)


# --- bfloat16 kernels (bf16 inference: between bfloat16 projections) ---------------------------


def bf16_rounded(a):
    """float32 values rounded to bfloat16 (to nearest even, ml_dtypes'), as float32."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def low_program(main, op_type, ins_f32, params_f32, outs, attrs, others=None):
    """op_type on bfloat16 casts of the float32 feeds `ins_f32` (its float32 inputs
    `params_f32` fed as they are, `others` {slot: variable} as given), each output cast back to
    float32; and the same op in float32 between casts (x -> bfloat16 -> float32 -> op ->
    bfloat16 -> float32): both fetch lists."""
    blk = main.global_block()
    feeds = {}
    for slot, (name, shape) in list(ins_f32.items()) + list(params_f32.items()):
        feeds[slot] = tide.layers.data(
            name=name, shape=shape, dtype="float32", append_batch_size=False
        )
    fetched = []
    for low in (True, False):
        ins = {}
        for slot in ins_f32:
            v = tide.layers.cast(feeds[slot], "bfloat16")
            ins[slot] = [v.name if low else tide.layers.cast(v, "float32").name]
        for slot in params_f32:
            ins[slot] = [feeds[slot].name]
        for slot, var in (others or {}).items():
            ins[slot] = [var.name]
        dtype = "bfloat16" if low else "float32"
        out_vars = {
            o: [blk.create_var(name=tide.unique_name.generate(o), dtype=dtype).name] for o in outs
        }
        blk.append_op(op_type, inputs=ins, outputs=out_vars, attrs=attrs)
        for o in outs:
            v = blk.var(out_vars[o][0])
            if not low:
                v = tide.layers.cast(v, "bfloat16")
            fetched.append(tide.layers.cast(v, "float32"))
    return fetched[: len(outs)], fetched[len(outs) :]


def test_rms_norm_in_bfloat16_rounds_once(fresh_programs, rng):
    """A bfloat16 rms_norm (scale float32) computes as the float32 kernel between two casts, bit
    for bit, and within bfloat16's rounding of float64 numpy."""
    main, _ = fresh_programs
    low, between = low_program(
        main,
        "rms_norm",
        {"x": ("x", [6, 5, 48])},
        {"scale": ("w", [48])},
        ["y"],
        {"normalized_shape": [48], "epsilon": 1e-6},
    )
    feed = {
        "x": rng.normal(0, 3, (6, 5, 48)).astype("float32"),
        "w": rng.uniform(0.5, 1.5, 48).astype("float32"),
    }
    exe = tide.Executor(tide.CPUPlace())
    got = exe.run(main, feed=feed, fetch_list=low + between)
    kernels = [k for t, k in exe.last_run_info()["kernels"] if t == "rms_norm"]
    assert any("bfloat16" in k for k in kernels), kernels
    np.testing.assert_array_equal(got[0], got[1])
    x = bf16_rounded(feed["x"]).astype(np.float64)
    want = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * feed["w"]
    np.testing.assert_allclose(got[0], want, rtol=2**-8, atol=1e-6)


@pytest.mark.parametrize("after", [True, False], ids=["bias_after_scale", "bias_before_scale"])
def test_scale_in_bfloat16_rounds_once(after, fresh_programs, rng):
    """A bfloat16 scale (attention's 1 / sqrt(d) between bfloat16 products) computes as the
    float32 kernel between two casts, bit for bit, and within bfloat16's rounding of numpy; in
    place too."""
    main, _ = fresh_programs
    attrs = {"scale": 0.125 * 1.1, "bias": 0.3, "bias_after_scale": after}
    low, between = low_program(main, "scale", {"X": ("x", [3, 7, 67])}, {}, ["Out"], attrs)
    x16 = tide.layers.cast(main.global_block().var("x"), "bfloat16")
    main.global_block().append_op(
        "scale", inputs={"X": [x16.name]}, outputs={"Out": [x16.name]}, attrs=attrs
    )
    in_place = tide.layers.cast(x16, "float32")
    feed = {"x": rng.normal(0, 3, (3, 7, 67)).astype("float32")}
    exe = tide.Executor(tide.CPUPlace())
    got = exe.run(main, feed=feed, fetch_list=low + between + [in_place])
    kernels = [k for t, k in exe.last_run_info()["kernels"] if t == "scale"]
    assert any("bfloat16" in k for k in kernels), kernels
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[2], got[0])
    x = bf16_rounded(feed["x"]).astype(np.float64)
    want = x * attrs["scale"] + 0.3 if after else (x + 0.3) * attrs["scale"]
    np.testing.assert_allclose(got[0], want, rtol=2**-8, atol=1e-6)


@pytest.mark.parametrize("case", ["rotate_half", "pairs_position_ids", "pairs_computed_angles"])
def test_fused_rotary_position_embedding_in_bfloat16_rounds_once(case, fresh_programs, rng):
    """bfloat16 q, k, v with float32 tables (or computed angles): the float32 rotation of the
    widened values, each rounded to bfloat16 once, bit for bit as the float32 kernel between
    two casts."""
    pairs, form, with_ids, _, given = ROPE_CASES[case]
    main, _ = fresh_programs
    b, s, h, d, rows = 2, 5, 3, 8, 9
    shape = [b, s, h, d]
    n = rows if with_ids else s
    params = {}
    feed = {k: rng.uniform(-2, 2, shape).astype("float32") for k in ("q", "k", "v")}
    if given:
        angles = rng.uniform(-3, 3, (n, d))
        tshape = [n, d] if form == "flat" else [1, n, 1, d]
        for k, f in (("sin", np.sin), ("cos", np.cos)):
            params[k] = (k, tshape)
            feed[k] = f(angles).reshape(tshape).astype("float32")
    others = {}
    if with_ids:
        others["position_ids"] = tide.layers.data(
            name="ids", shape=[b, s], dtype="int64", append_batch_size=False
        )
        feed["ids"] = rng.randint(0, rows, (b, s)).astype(np.int64)
    ins = {k: (k, shape) for k in ("q", "k", "v")}
    low, between = low_program(
        main,
        "fused_rotary_position_embedding",
        ins,
        params,
        ["out_q", "out_k", "out_v"],
        {"use_neox_rotary_style": pairs},
        others,
    )
    exe = tide.Executor(tide.CPUPlace())
    got = exe.run(main, feed=feed, fetch_list=low + between)
    kernels = [k for t, k in exe.last_run_info()["kernels"] if "rotary" in t]
    assert any("bfloat16" in k for k in kernels), kernels
    for i, k in enumerate(("q", "k", "v")):
        np.testing.assert_array_equal(got[i], got[3 + i], err_msg=k)
        if given:
            want = rope_ref(bf16_rounded(feed[k]), feed["sin"], feed["cos"], pairs, feed.get("ids"))
            np.testing.assert_allclose(got[i], want, rtol=2**-8, atol=1e-6, err_msg=k)
