"""bfloat16 inference (issue 32): `load_inference_model(..., precision="bf16")` and
`tide.contrib.mixed_precision.bf16_inference` put the ops the place computes in bfloat16 in it.
Paddle-saved models (a ResNet, a MobileNet, a BERT) match their float32 outputs within bfloat16's
tolerance with the expected ops in bfloat16, feeds and fetches float32, parameters converted once;
where nothing runs in bfloat16 (no oneDNN, or a CPU without bfloat16 jit kernels) a warning says
why and the program stays float32; a bad precision is an error listing the allowed ones."""

import collections
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from cpu_isa import cpu_flags
from ctest_env import plugin_file

import tide
from tide.contrib.mixed_precision import bf16_inference
from tide.contrib.mixed_precision.rewrite import kernel_types

FIXTURES = os.path.join(
    os.environ.get("TIDE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
    "tests",
    "fixtures",
    "paddle",
)


ONEDNN = "bfloat16" in kernel_types("fused_conv2d", "cpu")
# Native bfloat16 dot products: what bf16 inference is for (elsewhere oneDNN's kernels decline or
# emulate bfloat16, and these tests have nothing to measure).
BF16_ISA = bool({"avx512_bf16", "amx_bf16"} & set(cpu_flags())) and os.environ.get(
    "ONEDNN_MAX_CPU_ISA", "ALL"
).upper() in ("ALL", "AVX512_CORE_BF16", "AVX512_CORE_AMX")
needs_bf16 = pytest.mark.skipif(
    not (ONEDNN and BF16_ISA),
    reason="needs device_mkldnn and a CPU with AVX-512 BF16 or AMX-BF16 (oneDNN %s, flags %s)"
    % (
        "loaded" if ONEDNN else "not loaded",
        "with bf16" if BF16_ISA else "or ONEDNN_MAX_CPU_ISA without bf16",
    ),
)


def feed_of(name, feeds):
    d = os.path.join(FIXTURES, name)
    if os.path.exists(os.path.join(d, "input.npy")):
        return {feeds[0]: np.load(os.path.join(d, "input.npy"))}
    with np.load(os.path.join(d, "inputs.npz")) as f:
        return {k: f[k] for k in feeds}


def load_and_run(name, precision, runs=2):
    """(output, program, {op type: [kernel key]} of the last run, its transform counts)."""
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    program, feeds, fetches = tide.io.load_inference_model(
        os.path.join(FIXTURES, name), exe, scope=scope, precision=precision
    )
    assert len(fetches) == 1 and fetches[0].dtype == "float32"
    feed = feed_of(name, feeds)
    for _ in range(runs):
        (out,) = exe.run(program, feed=feed, fetch_list=fetches, scope=scope)
    info = exe.last_run_info()
    kernels = collections.defaultdict(list)
    for t, k in info["kernels"]:
        kernels[t].append(k)
    return out, program, kernels, info["transforms"]


def bf16_ops(program):
    """{op type: count} of block 0's ops writing a bfloat16 value (casts left out)."""
    block = program.global_block()
    counts = collections.Counter()
    for op in block.ops:
        if op.type != "cast" and any(
            block.var(n).dtype == "bfloat16" for n in op.output_arg_names if block.has_var(n)
        ):
            counts[op.type] += 1
    return counts


def check_model(name, want_bf16, tolerance):
    ref, ref_program, _, _ = load_and_run(name, "float32")
    assert not bf16_ops(ref_program)
    out, program, kernels, transforms = load_and_run(name, "bf16")
    assert out.dtype == np.float32 and out.shape == ref.shape
    counts = bf16_ops(program)
    for op_type, n in want_bf16.items():
        assert counts[op_type] == n, (op_type, counts)
        assert all("bfloat16" in k and "mkldnn" in k for k in kernels[op_type]), kernels[op_type]
    # The tolerance is relative to the largest float32 output.
    err = float(np.abs(out - ref).max() / np.abs(ref).max())
    assert 0 < err < tolerance, err
    block = program.global_block()
    for op in block.ops:  # no cast op reads a parameter each run: they were converted once
        if op.type == "cast":
            assert not block.var(op.input("X")[0]).persistable, op.summary()
    assert transforms["casts"] == 0, transforms  # nor does the core cast one in each run
    return out, ref


@needs_bf16
@pytest.mark.parametrize(
    "name,want",
    [
        # ResNet-18's topology at 1/8 width: every convolution is a fused_conv2d after the
        # transpiler (batch norm folded, residual and relu fused), and both poolings.
        ("resnet18", {"fused_conv2d": 20, "pool2d": 2}),
        ("mobilenet_v1", {"fused_conv2d": 27, "pool2d": 1}),  # depthwise ones too
    ],
)
def test_cnn_in_bf16_matches_float32(name, want):
    out, ref = check_model(name, want, 2e-2)
    assert (out.argmax(-1) == ref.argmax(-1)).all()  # the classifier's top-1 is the same


@needs_bf16
def test_bert_in_bf16_matches_float32():
    # 2 post-norm layers: 4 fc each (QKV, out, 2 FFN), the attention; layer norms stay float32.
    check_model("bert", {"fc": 8, "fused_multihead_attention": 2}, 4e-2)


def test_float32_is_the_default_and_changes_nothing():
    d = os.path.join(FIXTURES, "resnet18")

    def ops(program):
        block = program.global_block()
        return [(op.type, [block.var(n).dtype for n in op.output_arg_names]) for op in block.ops]

    a = tide.io.load_inference_model(d, scope=tide.Scope())[0]
    b = tide.io.load_inference_model(d, scope=tide.Scope(), precision="float32")[0]
    assert ops(a) == ops(b) and "bfloat16" not in str(ops(b))


def test_a_bad_precision_names_the_allowed_ones():
    with pytest.raises(
        ValueError, match=r"precision must be one of \('float32', 'bf16', 'int8'\), got 'fp8'"
    ):
        tide.io.load_inference_model(os.path.join(FIXTURES, "resnet18"), precision="fp8")


@needs_bf16
def _user_program():
    """conv2d + batch_norm + relu (transpiled into one fused_conv2d), a reshape (its XShape read
    by no op), a mul and a bias add; (program, feed, scope, [reshaped, result])."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data("x", shape=[16, 8, 8])
        y = tide.layers.conv2d(x, 32, 3, padding=1, bias_attr=False)
        y = tide.layers.relu(tide.layers.batch_norm(y, is_test=True))
        flat = tide.layers.reshape(y, [-1, 32 * 8 * 8])
        out = tide.layers.fc(flat, 10)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    infer = main.clone(for_test=True)
    tide.transpiler.InferenceTranspiler().transpile(infer, tide.CPUPlace(), scope)
    feed = {"x": np.random.RandomState(0).uniform(-1, 1, (2, 16, 8, 8)).astype(np.float32)}
    return infer, feed, scope, [flat.name, out.name]


@needs_bf16
@pytest.mark.parametrize("fetch_reshaped", [False, True])
def test_bf16_inference_on_a_program_the_user_built(fetch_reshaped):
    # What may be fetched stays float32 and keeps its name: the result (no op reads it; the bias
    # add writing it computes in float32), and with fetch_list the reshaped value too (the reshape
    # computes in float32; the mul reading it still in bfloat16, through a cast). reshape2's
    # XShape, which no op reads either, is no result: the reshape follows the convolution.
    infer, feed, scope, (flat, out) = _user_program()
    exe = tide.Executor(tide.CPUPlace())
    fetch = [flat, out] if fetch_reshaped else [out]
    ref = exe.run(infer, feed=feed, fetch_list=fetch, scope=scope)
    low = bf16_inference(infer, tide.CPUPlace(), scope, fetch_list=fetch[:-1])
    want = ["fused_conv2d", "mul"] if fetch_reshaped else ["fused_conv2d", "reshape2", "mul"]
    assert low == want, low
    got = exe.run(infer, feed=feed, fetch_list=fetch, scope=scope)
    for g, r in zip(got, ref):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, r, atol=2e-2 * np.abs(r).max())


@needs_bf16
def test_an_fc_writing_a_fetched_value_computes_in_bf16_with_a_float32_out(fresh_programs):
    # An LLM's logits: the fc writing them (the LM head, the largest product of a prefill) runs
    # the bfloat16 kernel with force_fp32_output, as Paddle's cpu_bfloat16_pass: its inputs in
    # bfloat16, Out float32 and its float32 sums not rounded to bfloat16.
    main, _ = fresh_programs
    block = main.global_block()
    rng = np.random.RandomState(3)
    x = tide.layers.data(name="x", shape=[2, 5, 48], dtype="float32", append_batch_size=False)
    scope = tide.global_scope()
    names = []
    for i, shape in enumerate(([48, 64], [64, 300])):
        w = block.create_var(name="w%d" % i, shape=list(shape), dtype="float32", persistable=True)
        scope.var(w.name).get_tensor().set(
            rng.uniform(-0.3, 0.3, shape).astype("float32"), tide.CPUPlace(), False
        )
        names.append(w.name)
    h = block.create_var(name="h", dtype="float32")
    out = block.create_var(name="logits", dtype="float32")
    block.append_op(
        "fc",
        inputs={"Input": [x.name], "W": [names[0]]},
        outputs={"Out": [h.name]},
        attrs={"in_num_col_dims": 2, "fuse_activation": "relu"},
    )
    block.append_op(
        "fc",
        inputs={"Input": [h.name], "W": [names[1]]},
        outputs={"Out": [out.name]},
        attrs={"in_num_col_dims": 2},
    )
    feed = {"x": rng.uniform(-1, 1, (2, 5, 48)).astype("float32")}
    exe = tide.Executor(tide.CPUPlace())
    (ref,) = exe.run(main, feed=feed, fetch_list=[out])
    assert bf16_inference(main, tide.CPUPlace(), scope) == ["fc", "fc"]
    head = [op for op in block.ops if op.type == "fc"][-1]
    assert head.attr("force_fp32_output") and block.var("logits").dtype == "float32"
    assert not [op for op in block.ops if op.type == "fc"][0].attr("force_fp32_output")
    tide.set_flags({"use_mkldnn": True})
    try:
        (got,) = exe.run(main, feed=feed, fetch_list=[out])
        kernels = [k for t, k in exe.last_run_info()["kernels"] if t == "fc"]
    finally:
        tide.set_flags({"use_mkldnn": False})
    assert got.dtype == np.float32 and all("bfloat16" in k for k in kernels), kernels
    np.testing.assert_allclose(got, ref, atol=2e-2 * np.abs(ref).max())
    # Not rounded to bfloat16: some values need more than bfloat16's 8 significant bits.
    as_bf16 = (got.view(np.uint32) & 0xFFFF0000).view(np.float32)
    assert np.any(as_bf16 != got)


# ---- where no op runs in bfloat16 -----------------------------------------------------------------

NO_BF16_SCRIPT = textwrap.dedent("""
    import json, sys, warnings, numpy as np, tide
    d = sys.argv[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program, feeds, fetches = tide.io.load_inference_model(d, precision="bf16")
    block = program.global_block()
    low = [n for n, v in block.vars.items() if v.dtype == "bfloat16"]
    exe = tide.Executor(tide.CPUPlace())
    (out,) = exe.run(program, feed={feeds[0]: np.load(d + "/input.npy")}, fetch_list=fetches)
    print(json.dumps({"warnings": [str(w.message) for w in caught], "low": low,
                      "dtype": str(out.dtype)}))
""")


def _run_without_bf16(env):
    p = subprocess.run(
        [sys.executable, "-c", NO_BF16_SCRIPT, os.path.join(FIXTURES, "resnet18")],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["low"] == [] and r["dtype"] == "float32", r  # the program stayed float32
    assert len(r["warnings"]) == 1, r
    return r["warnings"][0]


def test_without_onednn_a_warning_says_no_op_runs_in_bf16():
    names = [r["name"] for r in tide.plugins() if r["status"] == "loaded"]
    plugins = [plugin_file(n) for n in names if n != "device_mkldnn"]
    w = _run_without_bf16(
        {"TIDE_PLUGIN_PATH": os.pathsep.join(plugins), "TIDE_PLUGIN_PATH_ONLY": "1"}
    )
    assert "no op runs in bfloat16 on cpu:0" in w and "device_mkldnn" in w, w
    assert "the program runs in float32" in w, w


@pytest.mark.skipif(not ONEDNN, reason="device_mkldnn is not loaded")
def test_without_bf16_jit_kernels_a_warning_says_the_kernels_decline():
    w = _run_without_bf16({"ONEDNN_MAX_CPU_ISA": "AVX2"})
    assert "its bfloat16 kernels decline on this CPU" in w, w
    assert "the program runs in float32" in w, w
