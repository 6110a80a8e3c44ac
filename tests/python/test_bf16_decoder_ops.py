"""bfloat16 kernels of the ops between a decoder's bfloat16 projections in bf16 inference
(Qwen2- and Mistral-style programs as Paddle saves them): swiglu, fused_rms_norm_quant and the
oneDNN elementwise_sub each compute in float32 and round each value once, bit for bit as the
float32 kernel between two casts, and within bfloat16's rounding of float64 numpy."""

import numpy as np
import pytest
from test_bf16_inference import needs_bf16
from test_llama_passes import bf16_rounded, low_program

import tide


def run_both(main, feed, low, between, op_type):
    exe = tide.Executor(tide.CPUPlace())
    got = exe.run(main, feed=feed, fetch_list=low + between)
    kernels = [k for t, k in exe.last_run_info()["kernels"] if t == op_type]
    assert any("bfloat16" in k for k in kernels), kernels
    n = len(low)
    for i in range(n):
        np.testing.assert_array_equal(got[i], got[n + i], err_msg="output %d" % i)
    return got[:n]


def silu(a):
    return a / (1.0 + np.exp(-a))


@pytest.mark.parametrize("with_y", [True, False], ids=["x_and_y", "halves_of_x"])
def test_swiglu_in_bfloat16_rounds_once(with_y, fresh_programs, rng):
    main, _ = fresh_programs
    shape = [3, 5, 40]
    ins = {"x": ("x", shape)}
    if with_y:
        ins["y"] = ("y", shape)
    low, between = low_program(main, "swiglu", ins, {}, ["out"], {})
    feed = {k: rng.normal(0, 2, shape).astype("float32") for k in ins}
    (got,) = run_both(main, feed, low, between, "swiglu")
    x = bf16_rounded(feed["x"]).astype(np.float64)
    if with_y:
        want = silu(x) * bf16_rounded(feed["y"])
    else:
        want = silu(x[..., :20]) * x[..., 20:]
    np.testing.assert_allclose(got, want, rtol=2**-7, atol=1e-6)


@pytest.mark.parametrize("residual", [True, False], ids=["residual_bias_shift", "x_alone"])
def test_fused_rms_norm_quant_in_bfloat16_rounds_once(residual, fresh_programs, rng):
    """out, residual_out and inv_var; weights, bias and shift float32 (AsFloat32Param)."""
    main, _ = fresh_programs
    shape, cols = [4, 3, 32], 32
    ins = {"x": ("x", shape)}
    params = {"norm_weight": ("w", [cols]), "norm_bias": ("shift", [cols])}
    if residual:
        ins["residual"] = ("res", shape)
        params["bias"] = ("bias", [cols])
    outs = ["out", "residual_out", "inv_var"]
    attrs = {"epsilon": 1e-6, "begin_norm_axis": 2}
    low, between = low_program(main, "fused_rms_norm_quant", ins, params, outs, attrs)
    values = {
        "x": rng.normal(0, 3, shape),
        "res": rng.normal(0, 3, shape),
        "w": rng.uniform(0.5, 1.5, cols),
        "shift": rng.uniform(-1, 1, cols),
        "bias": rng.uniform(-1, 1, cols),
    }
    feed = {n: values[n].astype("float32") for n, _ in list(ins.values()) + list(params.values())}
    out, sum_out, inv = run_both(main, feed, low, between, "fused_rms_norm_quant")
    s = bf16_rounded(feed["x"]).astype(np.float64)
    if residual:
        s = s + bf16_rounded(feed["res"]) + feed["bias"]
    r = 1.0 / np.sqrt((s * s).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(out, s * r * feed["w"] + feed["shift"], rtol=2**-7, atol=2**-7)
    np.testing.assert_allclose(sum_out, s, rtol=2**-8, atol=1e-6)
    np.testing.assert_allclose(inv, r.reshape(-1), rtol=2**-8)


@needs_bf16
@pytest.mark.parametrize("y_shape", [[2, 6, 16], [16]], ids=["same_dims", "broadcast_y"])
def test_elementwise_sub_in_bfloat16_on_onednn(y_shape, fresh_programs, rng):
    """An interleaved rotary embedding's x0 cos - x1 sin between bfloat16 products."""
    main, _ = fresh_programs
    low, between = low_program(
        main, "elementwise_sub", {"X": ("x", [2, 6, 16]), "Y": ("y", y_shape)}, {}, ["Out"], {}
    )
    feed = {"x": rng.normal(0, 2, [2, 6, 16]), "y": rng.normal(0, 2, y_shape)}
    feed = {k: v.astype("float32") for k, v in feed.items()}
    tide.set_flags({"use_mkldnn": True})
    try:
        (got,) = run_both(main, feed, low, between, "elementwise_sub")
    finally:
        tide.set_flags({"use_mkldnn": False})
    want = bf16_rounded(feed["x"]).astype(np.float64) - bf16_rounded(feed["y"])
    np.testing.assert_allclose(got, want, rtol=2**-8, atol=1e-6)


def two_norms(main, rng):
    """Paddle's saved shape of two pre-norm layers: fused_rms_norm_quant naming all its outputs
    (the second's residual is the first's residual_out), rms_norm naming invvar."""
    blk = main.global_block()
    x = tide.layers.data(name="x", shape=[2, 3, 8], dtype="float32", append_batch_size=False)

    def var(name):
        blk.create_var(name=name, dtype="float32")
        return name

    w = ["w%d" % i for i in range(3)]
    for name in w:
        blk.create_var(name=name, shape=[8], dtype="float32", persistable=True)
        value = rng.uniform(0.5, 1.5, 8).astype("float32")
        tide.global_scope().var(name).get_tensor().set(value, tide.CPUPlace(), False)
    attrs = {"epsilon": 1e-6, "begin_norm_axis": 2}
    outs = {p: [var("n1_" + p)] for p in ("out", "residual_out", "inv_var")}
    blk.append_op(
        "fused_rms_norm_quant",
        inputs={"x": [x.name], "norm_weight": [w[0]]},
        outputs=outs,
        attrs=attrs,
    )
    outs2 = {p: [var("n2_" + p)] for p in ("out", "residual_out", "inv_var")}
    blk.append_op(
        "fused_rms_norm_quant",
        inputs={"x": ["n1_out"], "residual": ["n1_residual_out"], "norm_weight": [w[1]]},
        outputs=outs2,
        attrs=attrs,
    )
    blk.append_op(
        "rms_norm",
        inputs={"x": ["n2_out"], "scale": [w[2]]},
        outputs={"y": [var("y")], "invvar": [var("invvar")]},
        attrs={"normalized_shape": [8], "epsilon": 1e-6},
    )
    return {"x": rng.normal(0, 2, [2, 3, 8]).astype("float32")}


@pytest.mark.parametrize("kept", [(), ("invvar", "n2_residual_out")], ids=["none", "two"])
def test_unread_norm_outputs_are_not_written(kept, fresh_programs, rng):
    """drop_unread_outputs: what no op reads and nobody keeps goes; a residual_out the next
    layer reads and the outputs kept stay; the results are unchanged."""
    main, _ = fresh_programs
    feed = two_norms(main, rng)
    fetch = ["y", *kept]
    program = main.clone()
    tide.transpiler.InferenceTranspiler().transpile(program, keep=fetch)
    written = {n for op in program.global_block().ops for n in op.output_arg_names}
    assert "n1_residual_out" in written and "y" in written
    for gone in ("n1_inv_var", "n2_inv_var", "n2_residual_out", "invvar"):
        assert (gone in written) == (gone in kept), gone
    exe = tide.Executor(tide.CPUPlace())
    got = exe.run(program, feed=feed, fetch_list=fetch)
    want = exe.run(main, feed=feed, fetch_list=fetch)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
