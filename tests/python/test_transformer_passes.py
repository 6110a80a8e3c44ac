"""InferenceTranspiler's transformer passes (python/tide/transpiler/inference_passes) and the ops
they make (fc, fused_multihead_attention, skip_layernorm, preln_skip_layernorm: plugins/ops_nn,
devices/mkldnn):
each op's plain and oneDNN kernels against a float64 numpy reference; each pass finds its pattern
in the bert / gpt / vit fixtures (Paddle 2.6 legacy and Paddle 3.3 PIR) and in a random
encoder built here (op counts before and after), and changes no output beyond float rounding,
plain and with oneDNN; and leaves alone what does not match exactly."""

import collections
import math
import os
import shutil

import numpy as np
import pytest
from kernel_libraries import LIBS

import tide

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "paddle")


def run(lib, program, feed, fetch_list):
    """One run with a fresh executor (the kernel choice is made per program and executor)."""
    exe = tide.Executor(tide.CPUPlace())
    tide.set_flags({"use_mkldnn": lib == "mkldnn"})
    try:
        out = exe.run(program, feed=feed, fetch_list=fetch_list)
        return out, exe.last_run_info()["kernels"]
    finally:
        tide.set_flags({"use_mkldnn": False})


def kernel_of(kernels, op_type):
    ks = [k for op, k in kernels if op == op_type]
    assert ks, "no %s ran" % op_type
    return ks


def counts(program):
    return collections.Counter(op.type for op in program.global_block().ops)


def gelu(x, approximate):
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def data(name, shape, dtype="float32"):
    return tide.layers.data(name=name, shape=shape, dtype=dtype, append_batch_size=False)


# --- the ops -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("act", ["", "gelu", "gelu_tanh", "relu", "tanh"])
def test_fc_matches_numpy(act, lib, fresh_programs, rng):
    main, _ = fresh_programs
    x = data("x", [2, 5, 24])
    data("w", [24, 40])
    data("b", [40])
    out = main.global_block().create_var(name="out", dtype="float32")
    main.global_block().append_op(
        "fc",
        inputs={"Input": [x.name], "W": ["w"], "Bias": ["b"]},
        outputs={"Out": ["out"]},
        attrs={"in_num_col_dims": 2, "fuse_activation": act},
    )
    feed = {
        n: rng.uniform(-1, 1, s).astype("float32")
        for n, s in (("x", (2, 5, 24)), ("w", (24, 40)), ("b", (40,)))
    }
    (got,), kernels = run(lib, main, feed, [out])
    assert all(("mkldnn" in k) == (lib == "mkldnn") for k in kernel_of(kernels, "fc"))
    want = feed["x"].astype(np.float64) @ feed["w"] + feed["b"]
    want = {
        "": want,
        "gelu": gelu(want, False),
        "gelu_tanh": gelu(want, True),
        "relu": np.maximum(want, 0),
        "tanh": np.tanh(want),
    }[act]
    assert got.shape == (2, 5, 40)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def attention_ref(q, k, v, mask, heads, alpha):
    b, sq, h = q.shape
    d = h // heads
    split = lambda t: t.astype(np.float64).reshape(b, -1, heads, d).transpose(0, 2, 1, 3)  # noqa
    s = alpha * split(q) @ split(k).transpose(0, 1, 3, 2)
    if mask is not None:
        s = s + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ split(v)).transpose(0, 2, 1, 3).reshape(b, sq, h)


# (id, B, Sq, Sk, heads, D, mask dims or None, QKV form)
ATTENTION_CASES = [
    ("padding_mask", 2, 7, 7, 3, 4, [2, 1, 1, 7], False),
    ("causal_mask", 2, 6, 6, 2, 8, [6, 6], False),
    ("full_mask", 1, 5, 5, 2, 4, [1, 2, 5, 5], False),
    ("mask_broadcast_on_keys", 2, 5, 5, 2, 4, [2, 1, 5, 1], False),
    ("no_mask_cross", 2, 4, 9, 4, 4, None, False),
    ("qkv", 2, 8, 8, 4, 8, [2, 1, 1, 8], True),
]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", ATTENTION_CASES, ids=[c[0] for c in ATTENTION_CASES])
def test_fused_multihead_attention_matches_numpy(case, lib, fresh_programs, rng):
    _, b, sq, sk, heads, d, mask_dims, qkv = case
    main, _ = fresh_programs
    h = heads * d
    feed, inputs = {}, {}
    if qkv:
        data("qkv", [b, sq, 3 * h])
        feed["qkv"] = rng.uniform(-1, 1, (b, sq, 3 * h)).astype("float32")
        inputs["QKV"] = ["qkv"]
        q, k, v = np.split(feed["qkv"], 3, axis=-1)
    else:
        for n, s in (("q", sq), ("k", sk), ("v", sk)):
            data(n, [b, s, h])
            feed[n] = rng.uniform(-1, 1, (b, s, h)).astype("float32")
            inputs[n.upper()] = [n]
        q, k, v = feed["q"], feed["k"], feed["v"]
    mask = None
    if mask_dims:
        data("mask", mask_dims)
        # Paddle's -1e4 where hidden; a mask constant along Sk shifts whole rows, which float32
        # rounds at -1e4's magnitude: small values there.
        if mask_dims[-1] == 1:
            mask = rng.uniform(-2, 0, mask_dims).astype("float32")
        else:
            mask = (rng.uniform(0, 1, mask_dims) < 0.3).astype("float32") * -1e4
        feed["mask"], inputs["Mask"] = mask, ["mask"]
    out = main.global_block().create_var(name="out", dtype="float32")
    alpha = 1 / math.sqrt(d)
    main.global_block().append_op(
        "fused_multihead_attention",
        inputs=inputs,
        outputs={"Out": ["out"]},
        attrs={"head_number": heads, "alpha": alpha},
    )
    (got,), kernels = run(lib, main, feed, [out])
    assert all(
        ("mkldnn" in k) == (lib == "mkldnn")
        for k in kernel_of(kernels, "fused_multihead_attention")
    )
    np.testing.assert_allclose(
        got, attention_ref(q, k, v, mask, heads, alpha), rtol=1e-5, atol=1e-5
    )


def test_fused_multihead_attention_refuses_a_mask_that_does_not_broadcast(fresh_programs, rng):
    main, _ = fresh_programs
    for n in "qkv":
        data(n, [2, 4, 8])
    data("mask", [3, 1, 1, 4])
    main.global_block().create_var(name="out", dtype="float32")
    with pytest.raises(tide.TideError, match="Mask .* does not broadcast"):
        main.global_block().append_op(
            "fused_multihead_attention",
            inputs={"Q": ["q"], "K": ["k"], "V": ["v"], "Mask": ["mask"]},
            outputs={"Out": ["out"]},
            attrs={"head_number": 2},
        )


# (id, X's dims, begin_norm_axis, the addends' offset: a residual stream far from zero mean)
ADD_LAYER_NORM_CASES = [
    ("rows_of_32", [3, 4, 32], 2, 0.0),
    ("bert_base_rows", [2, 16, 768], 2, 0.0),
    ("two_dims_normalised", [3, 4, 8], 1, 0.0),
    ("offset_mean", [4, 96], 1, 20.0),
    ("offset_mean_large", [64, 256], 1, 20.0),
]
# Both ops have a oneDNN kernel, which declines X of fewer elements than this (the plain kernel
# is faster there: devices/mkldnn/README.md, "Speed").
ONEDNN_MIN_ELEMENTS = 16384


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("op", ["skip_layernorm", "preln_skip_layernorm"])
@pytest.mark.parametrize("case", ADD_LAYER_NORM_CASES, ids=[c[0] for c in ADD_LAYER_NORM_CASES])
def test_add_layer_norm_ops_match_numpy(case, op, lib, fresh_programs, rng):
    _, dims, axis, offset = case
    main, _ = fresh_programs
    n = int(np.prod(dims[axis:]))
    shapes = (("x", dims), ("y", dims), ("s", [n]), ("b", [n]))
    for name, shape in shapes:
        data(name, shape)
    outs = ["out"] if op == "skip_layernorm" else ["out_0", "out_1"]
    for name in outs:
        main.global_block().create_var(name=name, dtype="float32")
    params = ["Out"] if op == "skip_layernorm" else ["Out_0", "Out_1"]
    main.global_block().append_op(
        op,
        inputs={"X": ["x"], "Y": ["y"], "Scale": ["s"], "Bias": ["b"]},
        outputs={p: [name] for p, name in zip(params, outs)},
        attrs={"epsilon": 1e-5, "begin_norm_axis": axis},
    )
    feed = {name: rng.uniform(-1, 1, shape).astype("float32") for name, shape in shapes}
    feed["x"] += np.float32(offset)
    got, kernels = run(lib, main, feed, outs)
    onednn = lib == "mkldnn" and np.prod(dims) >= ONEDNN_MIN_ELEMENTS
    assert all(("mkldnn" in k) == onednn for k in kernel_of(kernels, op)), kernels
    t = feed["x"].astype(np.float64) + feed["y"]
    rows = t.reshape(-1, n)
    norm = (rows - rows.mean(-1, keepdims=True)) / np.sqrt(rows.var(-1, keepdims=True) + 1e-5)
    want = (norm * feed["s"] + feed["b"]).reshape(dims)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
    if op == "preln_skip_layernorm":
        np.testing.assert_array_equal(got[1], feed["x"] + feed["y"])  # the float32 sum


# --- the passes on Paddle's fixtures -----------------------------------------------------------


def fixture_prefix(tmp_path, name):
    """The fixture's prefix; a PIR fixture sharing the legacy one's parameters gets them copied."""
    d = os.path.join(FIXTURES, name)
    info = os.path.join(d, "info.json")
    import json

    params = json.load(open(info)).get("params")
    if not params:
        return os.path.join(d, "inference"), d
    dst = tmp_path / name.replace("/", "_")
    shutil.copytree(d, dst)
    shutil.copy(os.path.join(d, params), dst / "inference.pdiparams")
    return str(dst / "inference"), d


def fixture_feed(d, feeds):
    if os.path.exists(os.path.join(d, "inputs.npz")):
        return dict(np.load(os.path.join(d, "inputs.npz")))
    return {feeds[0]: np.load(os.path.join(d, "input.npy"))}


# name -> ops after the passes: (fc, fused_multihead_attention, skip_layernorm,
# preln_skip_layernorm, layer_norm)
FIXTURE_COUNTS = {
    "bert": (8, 2, 5, 0, 0),  # post-norm: each residual sum is read by its layer_norm only
    # pre-norm: each residual sum feeds the next residual too, but the last (the final norm's)
    "gpt": (8, 2, 1, 3, 1),
    "vit": (8, 2, 1, 3, 1),
    "pir/bert": (8, 2, 5, 0, 0),
    "pir/gpt": (8, 2, 1, 3, 1),
    "pir/vit": (8, 2, 1, 3, 1),
}
FUSED = ("fc", "fused_multihead_attention", "skip_layernorm", "preln_skip_layernorm", "layer_norm")


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", sorted(FIXTURE_COUNTS))
def test_passes_on_paddle_fixtures(name, lib, tmp_path):
    prefix, d = fixture_prefix(tmp_path, name)
    outs = {}
    for optimize in (False, True):
        with tide.scope_guard(tide.Scope()):
            program, feeds, fetches = tide.io.load_inference_model(prefix, optimize=optimize)
            c = counts(program)
            (outs[optimize],), kernels = run(lib, program, fixture_feed(d, feeds), fetches)
        if not optimize:
            assert c["matmul_v2"] == 17 and c["softmax"] == 2, c
            continue
        assert tuple(c[op] for op in FUSED) == FIXTURE_COUNTS[name], c
        for gone in ("dropout", "softmax", "gelu", "split"):
            assert c[gone] == 0, (gone, c)
        assert c["transpose2"] == (1 if name.endswith("vit") else 0), c  # vit's patches' transpose
        assert c["matmul_v2"] == 1  # the output layer (rank 2 in, or the tied embedding)
        if lib == "mkldnn":
            for op in ("fc", "fused_multihead_attention"):
                assert all("mkldnn" in k for k in kernel_of(kernels, op)), op
    expected = np.load(os.path.join(d, "expected.npy"))
    scale = np.abs(expected).max()
    assert np.abs(outs[True] - outs[False]).max() <= 1e-5 * scale
    assert np.abs(outs[True] - expected).max() <= 1e-4 * scale


def test_passes_can_be_switched_off(tmp_path):
    prefix, _ = fixture_prefix(tmp_path, "bert")
    program, _, _ = tide.io.load_inference_model(prefix, optimize=False)
    tide.transpiler.InferenceTranspiler().transpile(
        program, skip_passes=["fuse_attention", "fuse_skip_layernorm"]
    )
    c = counts(program)
    assert c["fused_multihead_attention"] == 0 and c["skip_layernorm"] == 0 and c["softmax"] == 2
    assert c["fc"] == 8 and c["split"] == 2  # fc and QKV still fused
    with pytest.raises(ValueError, match="no pass named fuse_nothing"):
        tide.transpiler.InferenceTranspiler().transpile(program, skip_passes=["fuse_nothing"])


# --- the passes on a random encoder built here -------------------------------------------------


class Encoder:
    """A transformer encoder as Paddle 2.6 saves nn.TransformerEncoder, post-norm (the op pattern
    of the bert fixture) or with `pre_norm` (normalize_before, the gpt and vit fixtures' and a
    final layer_norm), with random parameters in the scope; `variant` breaks one detail."""

    def __init__(
        self,
        rng,
        heads=2,
        d=4,
        ffn=16,
        layers=2,
        mask_dims=(-1, 1, 1, -1),
        approximate=False,
        variant=None,
        pre_norm=False,
    ):
        self.pre_norm = pre_norm
        self.rng, self.block, self.variant = (
            rng,
            tide.default_main_program().global_block(),
            variant,
        )
        self.heads, self.d, h = heads, d, heads * d
        self.fetch_extra = []
        x = data("x", [-1, -1, h]).name
        mask = data("mask", list(mask_dims)) if mask_dims else None
        for _ in range(layers):
            t = self.norm(x) if pre_norm else x
            qkv = [self.heads_of(self.linear(t, h, h)) for _ in range(3)]
            q = self.op("scale", {"X": [qkv[0]]}, {"scale": d**-0.5})
            k = qkv[1]
            if variant == "keys_transposed_otherwise":  # K as [B, heads, D, S], no trans_y
                k = self.op("transpose2", {"X": [k]}, {"axis": [0, 1, 3, 2]}, ("Out", "XShape"))
            s = self.op(
                "matmul_v2",
                {"X": [q], "Y": [k]},
                {"trans_y": variant != "keys_transposed_otherwise"},
            )
            if mask:
                axis = 0 if variant == "mask_on_axis_0" else -1
                s = self.op("elementwise_add", {"X": [s], "Y": [mask]}, {"axis": axis})
            p = self.op("softmax", {"X": [s]}, {"axis": 2 if variant == "softmax_axis_2" else -1})
            if variant == "probabilities_fetched":
                self.fetch_extra.append(p)
            p = self.op(
                "dropout",
                {"X": [p]},
                {
                    "is_test": True,
                    "dropout_implementation": "upscale_in_train",
                    "dropout_prob": 0.1,
                },
                ("Out", "Mask"),
            )
            o = self.op("matmul_v2", {"X": [p], "Y": [qkv[2]]})
            o = self.op("transpose2", {"X": [o]}, {"axis": [0, 2, 1, 3]}, ("Out", "XShape"))
            o = self.op("reshape2", {"X": [o]}, {"shape": [0, 0, h]}, ("Out", "XShape"))
            x = self.residual(x, self.linear(o, h, h))
            t = self.norm(x) if pre_norm else x
            f = self.op("gelu", {"X": [self.linear(t, h, ffn)]}, {"approximate": approximate})
            x = self.residual(x, self.linear(f, ffn, h))
        self.out = self.norm(x) if pre_norm else x

    def residual(self, x, y):
        """x + y, normalised after (post-norm) or as it is (pre-norm: each reader normalises)."""
        s = self.op("elementwise_add", {"X": [x], "Y": [y]})
        if not self.pre_norm:
            return self.norm(s)
        if self.variant == "sum_read_before_its_norm":
            self.fetch_extra.append(self.op("scale", {"X": [s]}, {"scale": 2.0}))
        if self.variant == "sum_fetched":
            self.fetch_extra.append(s)
        return s

    def op(self, t, ins, attrs=None, outs=("Out",)):
        names = {o: [tide.unique_name.generate(t + "_" + o.lower())] for o in outs}
        for n in names.values():
            self.block.create_var(name=n[0], dtype="float32")
        self.block.append_op(t, inputs=ins, outputs=names, attrs=attrs or {})
        return names[outs[0]][0]

    def param(self, shape, low=-0.5, high=0.5):
        name = tide.unique_name.generate("p")
        self.block.create_var(name=name, shape=list(shape), dtype="float32", persistable=True)
        value = self.rng.uniform(low, high, shape).astype("float32")
        tide.global_scope().var(name).get_tensor().set(value, tide.CPUPlace(), False)  # a copy
        return name

    def linear(self, x, n_in, n_out):
        y = self.op("matmul_v2", {"X": [x], "Y": [self.param((n_in, n_out))]})
        return self.op("elementwise_add", {"X": [y], "Y": [self.param((n_out,))]}, {"axis": -1})

    def heads_of(self, t):
        r = self.op(
            "reshape2", {"X": [t]}, {"shape": [0, 0, self.heads, self.d]}, ("Out", "XShape")
        )
        return self.op("transpose2", {"X": [r]}, {"axis": [0, 2, 1, 3]}, ("Out", "XShape"))

    def norm(self, x):
        n = self.block.var(x).shape[-1]
        y = self.op(
            "layer_norm",
            {"X": [x], "Scale": [self.param((n,), 0.5, 1.5)], "Bias": [self.param((n,))]},
            {"begin_norm_axis": 2},
            ("Y", "Mean", "Variance"),
        )
        if self.variant == "mean_fetched":
            self.fetch_extra.append(self.block.ops[-1].output("Mean")[0])
        return y


def encoder_feed(rng, mask_dims=(2, 1, 1, 6)):
    feed = {"x": rng.uniform(-1, 1, (2, 6, 8)).astype("float32")}
    if mask_dims:
        feed["mask"] = (rng.uniform(0, 1, mask_dims) < 0.3).astype("float32") * -1e4
    return feed


def transpiled(main, fetch):
    program = main.clone()
    tide.transpiler.InferenceTranspiler().transpile(program, keep=fetch)
    return program


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("approximate", [False, True], ids=["gelu_erf", "gelu_tanh"])
def test_random_encoder_fused_and_equal(approximate, lib, fresh_programs, rng):
    main, _ = fresh_programs
    enc = Encoder(rng, approximate=approximate)
    feed = encoder_feed(rng)
    program = transpiled(main, [enc.out])
    before, after = counts(main), counts(program)
    assert before["matmul_v2"] == 16 and before["layer_norm"] == 4 and before["gelu"] == 2
    assert after == collections.Counter(
        {"fc": 8, "fused_multihead_attention": 2, "skip_layernorm": 4}
    ), after
    fcs = [op for op in program.global_block().ops if op.type == "fc"]
    acts = {op.attr("fuse_activation") for op in fcs}
    # The passes read the weights without exporting a view, so the oneDNN kernel's reordered
    # copies stay valid between runs (content version 0 would reorder them every run).
    for op in fcs:
        assert tide.global_scope().find_var(op.input("W")[0]).get_tensor()._content_version() != 0
    assert acts == {"", "gelu_tanh" if approximate else "gelu_erf"}
    (want,), _ = run(lib, main, feed, [enc.out])
    (got,), kernels = run(lib, program, feed, [enc.out])
    if lib == "mkldnn":
        assert all("mkldnn" in k for k in kernel_of(kernels, "fused_multihead_attention"))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


# variant -> (feed's mask dims, what stays unfused)
LEFT_ALONE = {
    "probabilities_fetched": ((2, 1, 1, 6), "softmax"),  # an intermediate read outside
    "mask_on_axis_0": ((2,), "softmax"),  # Paddle's axis broadcasting, not numpy's
    "softmax_axis_2": ((2, 1, 1, 6), "softmax"),
    "keys_transposed_otherwise": ((2, 1, 1, 6), "softmax"),
}


@pytest.mark.parametrize("variant", sorted(LEFT_ALONE))
def test_passes_leave_other_patterns_alone(variant, fresh_programs, rng):
    main, _ = fresh_programs
    mask_dims, stays = LEFT_ALONE[variant]
    enc = Encoder(rng, mask_dims=[-1] * len(mask_dims), variant=variant)
    feed = encoder_feed(rng, mask_dims)
    fetch = [enc.out] + enc.fetch_extra
    program = transpiled(main, fetch)
    after = counts(program)
    assert after["fused_multihead_attention"] == 0 and after[stays] == 2, after
    assert after["fc"] == 8 and after["skip_layernorm"] == 4, after  # the rest still fuses
    want, _ = run("plain", main, feed, fetch)
    got, _ = run("plain", program, feed, fetch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * np.abs(w).max())


# pre-norm variant -> (skip_layernorm, preln_skip_layernorm, layer_norm) after the passes
PRE_NORM = {
    # the first norm reads the input; of the four residual sums, three feed the next residual
    # too, the last only the final norm
    None: (1, 3, 1),
    "sum_fetched": (0, 4, 1),  # fetched sums stay written, under their names
    "sum_read_before_its_norm": (0, 0, 5),  # the fused op, in the norm's place, would be late
    "mean_fetched": (0, 0, 5),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("variant", list(PRE_NORM), ids=lambda v: v or "fused")
def test_pre_norm_encoder_residuals_fused_and_equal(variant, lib, fresh_programs, rng):
    main, _ = fresh_programs
    enc = Encoder(rng, pre_norm=True, variant=variant)
    feed = encoder_feed(rng)
    fetch = [enc.out] + enc.fetch_extra
    program = transpiled(main, fetch)
    before, after = counts(main), counts(program)
    assert before["layer_norm"] == 5 and before["elementwise_add"] == 4 + 12 + 2, before
    got_counts = tuple(after[op] for op in ("skip_layernorm", "preln_skip_layernorm", "layer_norm"))
    assert got_counts == PRE_NORM[variant], after
    assert after["fc"] == 8 and after["fused_multihead_attention"] == 2, after
    want, _ = run(lib, main, feed, fetch)
    got, kernels = run(lib, program, feed, fetch)
    if variant is None:
        kernel_of(kernels, "preln_skip_layernorm")
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * np.abs(w).max())
