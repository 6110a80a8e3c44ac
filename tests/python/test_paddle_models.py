"""Models saved by PaddlePaddle 3.x and 2.6 (tests/fixtures/paddle, made by tools/paddle_export.py): each
loads with tide.io.load_inference_model and Tide's output matches the one Paddle computed, on the
plain CPU kernels and with oneDNN; malformed files give errors naming the file and what is wrong.
PaddlePaddle itself is not needed."""

import json
import os
import shutil
import struct

import numpy as np
import pytest
from kernel_libraries import LIBS, MKLDNN_SKIP_REASON, has_mkldnn

import tide

FIXTURES = os.path.join(
    os.environ.get("TIDE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
    "tests",
    "fixtures",
    "paddle",
)
VISION = ["lenet", "lenet_separate", "resnet18", "mobilenet_v1", "mobilenet_v2", "vgg11"]
# paddle.nn transformers, RNN classifiers, a vision transformer and the ops users' models brought
# (new_ops, with a cond: conditional_block + select_input), saved by Paddle 2.6.
NN = ["bert", "gpt", "lstm", "gru", "simple_rnn", "vit", "new_ops"]
# Those with the rnn op (2 layers, bidirectional, 3 sequences of lengths 11, 6, 1).
RNN = ["lstm", "gru", "simple_rnn"]
# Quantization-aware trained, saved by Paddle 2.6 with its quant-dequant ops and in the QDQ form
# (quantize_linear / dequantize_linear, int8 weights): tools/paddle_quant_models.py.
QUANT = ["quant_fake", "quant_qdq"]
# Paddle 3.x's legacy program quirks: scale's empty BiasTensor slot (tools/paddle_export.py's
# ScaleBias).
LEGACY3 = ["scale_bias"]
MODELS = VISION + NN + QUANT + LEGACY3
# Op gaps (ops_nn, not the loader): Paddle's inference programs have dropout ops without a Mask
# output (pruned: is_test, upscale_in_train); Tide's dropout accepts that.
XFAIL = {}


def model_path(name):
    d = os.path.join(FIXTURES, name)
    return d if os.path.exists(os.path.join(d, "__model__")) else os.path.join(d, "inference")


def load_feed(d):
    """{feed name: array}: input.npy is the one input `x`, inputs.npz names each."""
    if os.path.exists(os.path.join(d, "input.npy")):
        return {"x": np.load(os.path.join(d, "input.npy"))}
    with np.load(os.path.join(d, "inputs.npz")) as f:
        return {k: f[k] for k in f.files}


def run(path, feed, use_mkldnn=False, exe=None, optimize=True):
    """`feed`: an array for a one-input model, or {feed name: array}."""
    exe = exe or tide.Executor(tide.CPUPlace())
    program, feeds, fetches = tide.io.load_inference_model(path, exe, optimize=optimize)
    if not isinstance(feed, dict):
        assert len(feeds) == 1
        feed = {feeds[0]: feed}
    assert sorted(feeds) == sorted(feed) and len(fetches) == 1
    tide.set_flags({"use_mkldnn": use_mkldnn})
    try:
        (out,) = exe.run(program, feed=feed, fetch_list=fetches)
    finally:
        tide.set_flags({"use_mkldnn": False})
    return out, exe


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=XFAIL[m])) if m in XFAIL else m
        for m in MODELS
    ],
)
def test_matches_paddle(name, lib, optimize):
    """Each fixture, with load_inference_model's inference optimisations (the default) and as
    saved."""
    d = os.path.join(FIXTURES, name)
    feed, expected = load_feed(d), np.load(os.path.join(d, "expected.npy"))
    info = json.load(open(os.path.join(d, "info.json")))
    shapes = (
        {"x": info["input_shape"]}
        if "input_shape" in info
        else {k: shape for k, (_, shape) in info["inputs"].items()}
    )
    assert {k: list(v.shape) for k, v in feed.items()} == shapes
    assert list(expected.shape) == info["output_shape"]
    out, exe = run(model_path(name), feed, use_mkldnn=lib == "mkldnn", optimize=optimize)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    kernels = [k for _, k in exe.last_run_info()["kernels"]]
    if lib == "mkldnn" and name in NN and name != "vit":
        # oneDNN ran some kernels (those it has: matmuls, softmax, layer norm, ...)
        assert any("mkldnn" in k for k in kernels), kernels
    elif lib == "mkldnn" and name not in LEGACY3:  # oneDNN really ran the convolutions
        assert any("mkldnn" in k for k in kernels), kernels
    else:
        assert not any("mkldnn" in k for k in kernels), kernels


@pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)
@pytest.mark.parametrize("name,fmt", [(n, "legacy") for n in RNN] + [("lstm", "pir")])
def test_rnn_fixtures_on_onednn(tmp_path, name, fmt):
    """The RNN classifiers with their batch repeated 4 times, so that each sequence length has 4
    rows (oneDNN's rnn kernel leaves smaller sub-batches to the plain kernel, faster there:
    devices/mkldnn/README.md, "Speed"): each row gives Paddle's output for it, and the rnn op
    ran oneDNN (its sub-batch per length), not the plain kernel after a decline."""
    d = os.path.join(FIXTURES, *(["pir", name] if fmt == "pir" else [name]))
    feed = {k: np.concatenate([v] * 4) for k, v in load_feed(d).items()}
    expected = np.concatenate([np.load(os.path.join(d, "expected.npy"))] * 4)
    path = pir_model(tmp_path, name) if fmt == "pir" else model_path(name)
    with tide.scope_guard(tide.Scope()):
        out, exe = run(path, feed, use_mkldnn=True)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    ks = [k for op, k in exe.last_run_info()["kernels"] if op == "rnn"]
    assert ks and all("mkldnn" in k for k in ks), ks


def test_layouts_and_entry_points(tmp_path):
    """The same model through each way of naming it: prefix, .pdmodel file, directory, Fluid's
    model_filename/params_filename; the C++ entry point reports the files it read."""
    d = os.path.join(FIXTURES, "lenet")
    feed, expected = np.load(os.path.join(d, "input.npy")), np.load(os.path.join(d, "expected.npy"))
    for path in (os.path.join(d, "inference"), os.path.join(d, "inference.pdmodel"), d):
        out, _ = run(path, feed)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    shutil.copy(os.path.join(d, "inference.pdmodel"), tmp_path / "net.pdmodel")
    shutil.copy(os.path.join(d, "inference.pdiparams"), tmp_path / "net.pdiparams")
    program, feeds, fetches = tide.io.load_inference_model(
        str(tmp_path),
        tide.Executor(tide.CPUPlace()),
        model_filename="net.pdmodel",
        params_filename="net.pdiparams",
        scope=tide.Scope(),  # another file: in the global scope, a warning that it replaced lenet's
    )
    assert feeds == ["x"] and program.desc.version == 3003001
    files = tide._C.find_paddle_model_files(os.path.join(d, "inference"))
    assert files["model"].endswith("inference.pdmodel") and files["params"].endswith(
        "inference.pdiparams"
    )
    sep = tide._C.find_paddle_model_files(os.path.join(FIXTURES, "lenet_separate"))
    assert sep["model"].endswith("__model__") and sep["params"] == ""
    # The program keeps Paddle's op_version_map through a round trip.
    again = tide.Program.parse_from_string(program.serialize_to_string())
    assert again.desc.version == 3003001
    versions = tide._C.program_op_versions(again.desc)
    assert versions["conv2d"] == 1 and versions["elementwise_add"] == 1 and len(versions) == 76
    assert versions == tide._C.program_op_versions(program.desc)


def test_tide_format_still_loads(tmp_path, exe):
    x = tide.layers.data(name="x", shape=[3], dtype="float32")
    y = tide.layers.fc(input=x, size=2)
    exe.run(tide.default_startup_program())
    feed = np.arange(6, dtype=np.float32).reshape(2, 3)
    (want,) = exe.run(feed={"x": feed}, fetch_list=[y])
    tide.io.save_inference_model(str(tmp_path), ["x"], [y], exe)
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(str(tmp_path))
        (got,) = tide.Executor(tide.CPUPlace()).run(
            program, feed={feeds[0]: feed}, fetch_list=fetches
        )
    np.testing.assert_allclose(got, want, rtol=1e-6)


# --- malformed files ---------------------------------------------------------------------------


def copy_model(tmp_path, name="lenet"):
    src = os.path.join(FIXTURES, name)
    dst = tmp_path / name
    shutil.copytree(src, dst)
    return dst


def load(path):
    with tide.scope_guard(tide.Scope()):
        return tide.io.load_inference_model(str(path), tide.Executor(tide.CPUPlace()))


def expect_error(path, *parts):
    with pytest.raises(tide.TideError) as e:
        load(path)
    msg = str(e.value)
    for p in parts:
        assert p in msg, msg
    return msg


def edit(path, fn):
    b = fn(path.read_bytes())
    path.write_bytes(b)


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def test_truncated_program(tmp_path):
    d = copy_model(tmp_path)
    edit(d / "inference.pdmodel", lambda b: b[: len(b) // 2])
    expect_error(d / "inference", "inference.pdmodel", "truncated or corrupt")


def test_garbage_program(tmp_path):
    d = copy_model(tmp_path)
    (d / "inference.pdmodel").write_bytes(np.random.RandomState(0).bytes(5000))
    expect_error(d / "inference", "inference.pdmodel", "Paddle ProgramDesc")


def test_truncated_params(tmp_path):
    d = copy_model(tmp_path)
    size = (d / "inference.pdiparams").stat().st_size
    edit(d / "inference.pdiparams", lambda b: b[: size - 1000])
    # The last parameter in name order (linear_2.w_0, 84 x 10 floats) loses its end.
    expect_error(
        d / "inference",
        "inference.pdiparams",
        "parameter 'linear_2.w_0'",
        "truncated",
        "needs 3360 bytes, the file has 2360 left",
    )


def test_params_with_extra_bytes(tmp_path):
    d = copy_model(tmp_path)
    edit(d / "inference.pdiparams", lambda b: b + b"\0" * 12)
    expect_error(
        d / "inference",
        "inference.pdiparams",
        "12 bytes are left after the last of its 10 parameters",
    )


def test_params_bad_header(tmp_path):
    d = copy_model(tmp_path)
    edit(d / "inference.pdiparams", lambda b: struct.pack("<I", 7) + b[4:])
    expect_error(d / "inference", "parameter 'conv2d_0.b_0'", "LoDTensor format version 7")
    d2 = copy_model(tmp_path / "b")
    # The first tensor's TensorDesc size (after u32 version, u64 lod levels, u32 version).
    edit(d2 / "inference.pdiparams", lambda b: b[:16] + struct.pack("<i", 1 << 30) + b[20:])
    expect_error(
        d2 / "inference",
        "parameter 'conv2d_0.b_0'",
        "TensorDesc size 1073741824",
        "past the end of the file",
    )


def test_params_of_another_model(tmp_path):
    d = copy_model(tmp_path)
    shutil.copy(os.path.join(FIXTURES, "vgg11", "inference.pdiparams"), d / "inference.pdiparams")
    expect_error(d / "inference", "inference.pdiparams", "parameter 'conv2d_0.b_0'", "dims")


def test_separate_params_missing_and_truncated(tmp_path):
    d = copy_model(tmp_path, "lenet_separate")
    os.remove(d / "linear_4.w_0")
    os.remove(d / "conv2d_3.b_0")
    expect_error(d, "2 of 10 parameters have no file of their own", "conv2d_3.b_0, linear_4.w_0")
    d2 = copy_model(tmp_path / "b", "lenet_separate")
    edit(d2 / "linear_3.w_0", lambda b: b[:-4])
    expect_error(d2, "linear_3.w_0: parameter 'linear_3.w_0'", "truncated")


def test_unknown_ops_listed_at_once(tmp_path):
    d = copy_model(tmp_path)
    # Same-length renames keep the protobuf valid.
    edit(
        d / "inference.pdmodel",
        lambda b: b.replace(b"\x1a\x04relu", b"\x1a\x04relx").replace(
            b"\x1a\x06pool2d", b"\x1a\x06poolzd"
        ),
    )
    expect_error(
        d / "inference",
        "inference.pdmodel",
        "2 op type(s)",
        "not registered by any loaded plugin",
        "poolzd (2 ops)",
        "relx (2 ops)",
    )


def test_a_fetch_of_an_undeclared_variable_names_the_file_and_the_op(tmp_path):
    d = copy_model(tmp_path)
    _, _, fetches = load(d / "inference")
    name = fetches[0].name.encode()
    arg = b"\x12" + bytes([len(name)]) + name  # an op's argument; the fetch op is the block's last
    ghost = b"g" * len(name)

    def rename_last(b):
        at = b.rindex(arg)
        return b[:at] + arg[:2] + ghost + b[at + len(arg) :]

    edit(d / "inference.pdmodel", rename_last)
    expect_error(
        d / "inference",
        "inference.pdmodel: the fetch op (col 0) reads variable '%s', which "
        "the program does not declare" % ghost.decode(),
    )


def test_newer_op_version_refused(tmp_path):
    d = copy_model(tmp_path)
    pair = b"\n\x06conv2d\x12\x02\x08\x01"
    edit(
        d / "inference.pdmodel", lambda b: (b.index(pair), b.replace(pair, pair[:-1] + b"\x05"))[1]
    )
    expect_error(
        d / "inference", "inference.pdmodel", "conv2d (version 5, Tide implements up to 1)"
    )
    assert tide._C.paddle_op_versions()["conv2d"] == 1


def test_newer_program_version_refused(tmp_path):
    d = copy_model(tmp_path)
    old, new = b'"\x05\x08' + varint(3003001), b'"\x05\x08' + varint(4000000)
    edit(d / "inference.pdmodel", lambda b: (b.index(old), b.replace(old, new))[1])
    expect_error(
        d / "inference",
        "inference.pdmodel",
        "program version 4000000",
        "PaddlePaddle 4.0.0",
        "newer than this Tide reads",
    )


def test_no_model(tmp_path):
    with pytest.raises(tide.TideError, match="no Paddle inference model"):
        tide._C.find_paddle_model_files(str(tmp_path / "nothing"))
    # A .json without its parameters is not a model; with them it is read as a PIR program.
    (tmp_path / "pir.json").write_text("{}")
    with pytest.raises(tide.TideError, match="no Paddle inference model"):
        tide._C.find_paddle_model_files(str(tmp_path / "pir"))
    (tmp_path / "pir.pdiparams").write_bytes(b"")
    expect_error(tmp_path / "pir", "pir.json", "no base_code.magic: not a PIR program")


def test_random_damage_is_refused_or_harmless(tmp_path):
    """Random byte flips and truncations of the program and the parameters: each load either
    succeeds (a flipped data byte is a different weight) or raises a TideError naming a file;
    never another exception or a crash."""
    src = copy_model(tmp_path)
    rng = np.random.RandomState(15)
    outcomes = {"ok": 0, "refused": 0}
    for i in range(60):
        d = tmp_path / ("m%d" % i)
        shutil.copytree(src, d)
        target = d / ("inference.pdmodel" if i % 2 else "inference.pdiparams")
        b = bytearray(target.read_bytes())
        if i % 3 == 0:
            b = b[: rng.randint(0, len(b))]
        else:
            # Mostly near the start, where the headers and the first ops are.
            for pos in rng.randint(
                0, min(len(b), 600 if i % 4 else len(b)), size=rng.randint(1, 5)
            ):
                b[pos] = rng.randint(0, 256)
        target.write_bytes(bytes(b))
        try:
            load(d / "inference")
            outcomes["ok"] += 1
        except tide.TideError as e:
            # A damaged program can surface as a parameter that no longer fits it.
            assert "inference.pd" in str(e), str(e)
            outcomes["refused"] += 1
    assert outcomes["refused"] >= 20, outcomes


def test_fluid_combined_params_and_lod(tmp_path):
    """Fluid 1.x's __model__ + __params__ (save_combine: the per-variable serialisations one after
    another, in name order), and a parameter carrying a LoD."""
    src = os.path.join(FIXTURES, "lenet_separate")
    d = tmp_path / "combined"
    d.mkdir()
    shutil.copy(os.path.join(src, "__model__"), d / "__model__")
    names = sorted(n for n in os.listdir(src) if "." in n and not n.endswith((".npy", ".json")))
    with open(d / "__params__", "wb") as f:
        for n in names:
            f.write(open(os.path.join(src, n), "rb").read())
    feed, expected = (
        np.load(os.path.join(src, "input.npy")),
        np.load(os.path.join(src, "expected.npy")),
    )
    for kwargs in ({}, {"model_filename": "__model__", "params_filename": "__params__"}):
        with tide.scope_guard(tide.Scope()):
            exe = tide.Executor(tide.CPUPlace())
            program, feeds, fetches = tide.io.load_inference_model(str(d), exe, **kwargs)
            (out,) = exe.run(program, feed={feeds[0]: feed}, fetch_list=fetches)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())

    # conv2d_2.b_0 (6 floats) rewritten with a one-level LoD [0, 2, 6]: u32 0, u64 1 level,
    # u64 24 bytes, 3 offsets, then the tensor as before (its own u32 version onwards).
    sep = copy_model(tmp_path, "lenet_separate")
    raw = (sep / "conv2d_2.b_0").read_bytes()
    assert raw[:12] == struct.pack("<IQ", 0, 0)
    lod_head = struct.pack("<IQQ3Q", 0, 1, 24, 0, 2, 6)
    (sep / "conv2d_2.b_0").write_bytes(lod_head + raw[12:])
    scope = tide.Scope()
    with tide.scope_guard(scope):  # not optimized: the transpiler folds the bias into its conv
        tide.io.load_inference_model(str(sep), tide.Executor(tide.CPUPlace()), optimize=False)
        t = scope.find_var("conv2d_2.b_0").get_tensor()
        assert t.lod() == [[0, 2, 6]]
        np.testing.assert_array_equal(np.array(t), np.frombuffer(raw[-24:], dtype=np.float32))
    (sep / "conv2d_2.b_0").write_bytes(struct.pack("<IQQ3Q", 0, 1, 24, 0, 2, 9) + raw[12:])
    expect_error(sep, "conv2d_2.b_0", "invalid LoD")


def test_dense_tensor_names(fresh_programs):
    """Paddle 3.x's DENSE_TENSOR / DENSE_TENSOR_ARRAY name LOD_TENSOR / LOD_TENSOR_ARRAY."""
    block = fresh_programs[0].global_block()
    v = block.create_var(name="v", type="DENSE_TENSOR", shape=[2], dtype="float32")
    a = block.create_var(name="a", type="DENSE_TENSOR_ARRAY", dtype="float32")
    assert (v.type, a.type) == ("LOD_TENSOR", "LOD_TENSOR_ARRAY")


# --- PIR programs (Paddle 3.x's default format) ------------------------------------------------

# Saved by Paddle 3.3.1's paddle.jit.save as PIR programs (tests/fixtures/paddle/pir). A fixture
# whose parameters are the legacy fixture's, byte for byte, names that file in info.json.
PIR = ["lenet", "resnet18", "mobilenet_v2", "bert", "gpt", "vit", "lstm", "tensor_ops", "new_ops"]
# Elementwise math (log1p ... digamma), isnan / isinf / isfinite, activations (hardtanh ...
# tanh_shrink), gather_nd, scatter, group_norm, instance_norm (paddle_nn_models.UnaryOps).
PIR += ["unary_ops"]
# pixel_shuffle / unshuffle, channel_shuffle, diagonal, trace, numel, amax / amin, cumprod,
# linspace, meshgrid (tools/paddle_nn_models.py's ShapeOps).
PIR += ["shape_ops"]
# atan2, fmax / fmin (NaNs on one side), heaviside, logcumsumexp, dist (paddle_nn_models's
# BinaryOps).
PIR += ["binary_ops"]
# round (decimals), floor, ceil, square, asin / acos / atan, softplus (beta, threshold), softshrink,
# hardshrink, prelu, stanh, thresholded_relu (value), clip_by_norm, prod, nonzero, argsort, p_norm,
# tan, log2, log10, frac, bitwise_and / or / xor / not, eye, diag, dot, mv, cross, lerp, addmm
# (paddle_nn_models's MiscOps).
PIR += ["misc_ops"]
# einsum (attention, batched matmul, reduction, outer product, diagonal, '...'), frobenius_norm,
# baddbmm, renorm, matrix_power (n 3, 0, -2) (paddle_nn_models's EinsumOps).
PIR += ["einsum_ops"]
# grid_sample (from affine_grid), bicubic interpolate, unfold, put_along_axis, searchsorted
# (tools/paddle_nn_models.py's VisionOps).
PIR += ["vision_ops"]
# conv3d (groups), conv3d_transpose (output_padding), pool3d (max with ceil_mode, avg not exclusive,
# adaptive avg, and local_response_norm's channel window), max_pool3d_with_index (adaptive, and
# return_mask), trilinear interpolate (scale; size with align_corners), nearest on 5-D
# (tools/paddle_nn_models.py's VolumetricOps).
PIR += ["volumetric_ops"]
# yolo_box decoding a conv head, then multiclass_nms3 (pixel boxes, keep_top_k), as a PaddleDetection
# model ends; prior_box and box_coder (an SSD head), roi_align, deform_conv2d (DCNv2)
# (tools/paddle_nn_models.py's DetectOps; helper detect's plugins/ops_detection).
PIR += ["detect_ops"]
# cummax / cummin, masked_fill, index_add, index_put (with accumulate), scatter_nd_add, diag_embed,
# bincount, histogram, unique, triu_indices / tril_indices, and sums of bool masks (nansum,
# quantile) and means of ints (tools/paddle_nn_models.py's IndexOps; helper indexops).
PIR += ["index_ops"]
# det, slogdet, inv, cholesky, triangular_solve, solve, cholesky_solve, svd, qr, eigh, eigvalsh,
# pinv (plugins/ops_linalg; tools/paddle_nn_models.py's LinalgOps).
PIR += ["linalg_ops"]
# lu (square, tall) and lu_unpack, lstsq (its four drivers), multi_dot (a vector first),
# corrcoef (cov's conj), nanmedian of an input with NaNs (tools/paddle_nn_models.py's Linalg2Ops);
# matrix_rank with a tolerance tensor, fetched as it is (Linalg2Rank: Paddle 3.3.1 declares its
# result float32, writes int64 and fails in any op reading it).
PIR += ["linalg2_ops", "linalg2_rank"]
# F.cross_entropy (also on probabilities), mean_all, kl_div, smooth_l1_loss,
# binary_cross_entropy_with_logits (pos_weight), label_smooth, maxout, sequence_mask (max_len
# constant and tensor), temporal_shift (NCHW, NHWC), i0 / i0e / i1 / i1e, polygamma, swiglu,
# fused_rms_norm (tools/paddle_nn_models.py's LossActOps).
PIR += ["loss_act_ops"]
# fold, max_unpool2d / 3d, lp_pool2d, linear interpolate (NCW, NWC), pd_op.pad, pad3d (reflect,
# circular), crop, SpectralNorm, bilinear, multiplex, shard_index (tools/paddle_nn_models.py's
# NnExtraOps; helper nnextra).
PIR += ["nn_extra_ops"]
# paddle.uniform, randn, randint, randperm, bernoulli, multinomial, F.gumbel_softmax, F.rrelu, each
# feeding what its draw cannot change (ranges, sorted permutations, certain probabilities, one-hot
# logits, sums) (tools/paddle_nn_models.py's RandomOps).
PIR += ["random_ops"]
# paddle.geometric's segment_sum / mean / max / min, send_u_recv (out_size constant and tensor),
# send_ue_recv, send_uv (plugins/ops_graph; tools/paddle_nn_models.py's GraphOps).
PIR += ["graph_ops"]
# bce_loss, log_loss, nll_loss (2-D, 4-D, weighted, ignore_index), warpctc (F.ctc_loss, blank 0 and
# 4), gather_tree; viterbi_decode's Scores (tools/paddle_nn_models.py's LossSeqOps, ViterbiOps).
PIR += ["loss_seq_ops", "viterbi_ops"]
# isclose, allclose, angle, copysign, nextafter, bitwise shifts, logspace, broadcast_tensors,
# unique_consecutive, diagonal_scatter (fill_diagonal_tensor), unstack, clip of int64
# (tools/paddle_nn_models.py's ElemExtraOps; helper elem).
PIR += ["elem_extra_ops"]
# paddle.fft (rfft, irfft, fft / ifft of complex signals, fft2, fftn, rfft2 / irfft2, hfft,
# ihfft), paddle.signal's frame, overlap_add, stft and istft; paddle.audio's LogMelSpectrogram
# and MFCC; complex arithmetic (complex, polar, as_complex / as_real, abs, angle, conj, exp,
# matmul, sum, mean, cast); a Fourier neural operator layer (rfft2, a complex einsum written into
# zeros by set_value, irfft2) (plugins/ops_fft; tools/paddle_nn_models.py's SpectralOps,
# AudioFeatures, ComplexOps, SpectralConv).
PIR += ["spectral_ops", "audio_features", "complex_ops", "spectral_conv"]
# The quant conv net through Paddle 3.3's paddle.quantization.QAT (tools/paddle_quant_models.py):
# as trained, its quanters' fake quant-dequant ops (quant_fake); after QAT.convert, quantize_linear
# / dequantize_linear with the weights' int8 levels stored as float32 (quant_qdq: channel-wise
# weight scales); quant_ptq: the untrained net through Paddle 3.3's PTQ (AbsmaxObserver: one scale
# per tensor, weights too), converted. The converted ones' expected.npy is Paddle's dygraph output
# of the saved net (Paddle 3.3.1 runs its PIR dequantize_linear as a quantize), equal to Paddle's
# executor on the same net saved in the legacy format (legacy/).
PIR_QUANT = ["quant_fake", "quant_qdq", "quant_ptq"]
PIR += PIR_QUANT


def pir_model(tmp_path, name):
    """The prefix of the PIR fixture `name`, with its parameters beside it."""
    src = os.path.join(FIXTURES, "pir", name)
    info = json.load(open(os.path.join(src, "info.json")))
    if "params" not in info:
        return os.path.join(src, "inference")
    d = tmp_path / ("pir_" + name)
    shutil.copytree(src, d)
    shutil.copy(os.path.join(src, info["params"]), d / "inference.pdiparams")
    return str(d / "inference")


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", PIR)
def test_pir_matches_paddle(tmp_path, name, lib, optimize):
    d = os.path.join(FIXTURES, "pir", name)
    feed, expected = load_feed(d), np.load(os.path.join(d, "expected.npy"))
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3.") and "PIR" in info["saved_by"]
    assert list(expected.shape) == info["output_shape"]
    with tide.scope_guard(tide.Scope()):
        out, exe = run(
            pir_model(tmp_path, name), feed, use_mkldnn=lib == "mkldnn", optimize=optimize
        )
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    kernels = [k for _, k in exe.last_run_info()["kernels"]]
    assert any("mkldnn" in k for k in kernels) == (lib == "mkldnn"), kernels


def test_pir_ops_have_every_attribute(tmp_path):
    """A PIR program writes only some of an op's attributes (pd_op.mean no reduce_all): the
    loader fills the rest with their defaults, as the layers do, so what reads the program (the
    bf16 rewrite's compile-time shape inference, a pass) finds them; bf16 inference of a model
    with a mean ran into 'op reduce_mean has no attribute reduce_all'."""
    with tide.scope_guard(tide.Scope()):
        exe = tide.Executor(tide.CPUPlace())
        program, _, _ = tide.io.load_inference_model(
            pir_model(tmp_path, "lstm"), exe, optimize=False
        )
        means = [op for b in program.blocks for op in b.ops if op.type == "reduce_mean"]
        assert means and all(op.desc.has_attr("reduce_all") for op in means)
        program, _, _ = tide.io.load_inference_model(
            pir_model(tmp_path, "zero_d"), exe, precision="bf16"
        )
        assert any(op.type == "reduce_mean" for b in program.blocks for op in b.ops)


def test_pir_model_without_parameters(tmp_path):
    """Paddle 3.x saves a model without parameters as inference.json alone (no .pdiparams,
    tools/paddle_export.py's no_params): it loads by its prefix, as every model, and by the
    file's name, and matches Paddle."""
    d = os.path.join(FIXTURES, "pir", "no_params")
    assert sorted(n for n in os.listdir(d) if n.startswith("inference")) == ["inference.json"]
    feed, expected = load_feed(d), np.load(os.path.join(d, "expected.npy"))
    prefix = os.path.join(d, "inference")
    for path in (prefix, prefix + ".json"):
        with tide.scope_guard(tide.Scope()):
            out, _ = run(path, feed)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    # A model that has parameters, its .pdiparams missing: the error lists them.
    shutil.copy(os.path.join(FIXTURES, "pir", "lenet", "inference.json"), tmp_path)
    expect_error(tmp_path / "inference", "inference.json", "no combined parameter file")


def test_second_model_in_a_scope_warns():
    """Paddle names parameters by layer counters, so two models share names (conv2d_0.w_0, ...):
    loading the second into the scope of the first replaces the first one's weights, and the
    first program then computes with them. That load warns, naming the parameters and the fix;
    reloading the same model, or a model in a scope of its own, is quiet."""
    import warnings

    # LeNet saved by Paddle 3.3 in the legacy format and as a PIR program: the same names and
    # dims (conv2d_0.w_0, ...), other weights.
    lenet, other = model_path("lenet"), os.path.join(FIXTURES, "pir", "lenet", "inference")
    feed = load_feed(os.path.join(FIXTURES, "lenet"))["x"]
    expected = np.load(os.path.join(FIXTURES, "lenet", "expected.npy"))
    scope = tide.Scope()
    with tide.scope_guard(scope), warnings.catch_warnings():
        warnings.simplefilter("error")
        exe = tide.Executor(tide.CPUPlace())
        program, feeds, fetches = tide.io.load_inference_model(lenet, exe)
        tide.io.load_inference_model(lenet, exe)  # the same model again: quiet
        with tide.scope_guard(tide.Scope()):
            tide.io.load_inference_model(other, exe)  # a scope of its own: quiet
        with pytest.warns(UserWarning, match=r"replaced variables .*conv2d_0\.w_0.*own scope"):
            tide.io.load_inference_model(other, exe)
        (out,) = exe.run(program, feed={feeds[0]: feed}, fetch_list=fetches)
    # What the warning is about: the first LeNet now runs with the second one's weights.
    assert not np.allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_pir_quantized_programs_translated():
    """Paddle 3.3's quantization ops become quant_ops' Fluid ops with Paddle 3's attributes; the
    converted weights hold their int8 levels."""
    got = {}
    for name in PIR_QUANT:
        scope = tide.Scope()
        with tide.scope_guard(scope):
            program, feeds, fetches = tide.io.load_inference_model(
                os.path.join(FIXTURES, "pir", name, "inference"), optimize=False
            )
        got[name] = (program.global_block().ops, scope)
        assert feeds == ["x"] and len(fetches) == 1
    ops, _ = got["quant_fake"]
    types = [op.type for op in ops]
    assert types.count("fake_quantize_dequantize_moving_average_abs_max") == 5, types
    assert types.count("fake_channel_wise_quantize_dequantize_abs_max") == 3, types
    act = next(op for op in ops if op.type.startswith("fake_quantize_dequantize_moving"))
    assert act.attr("round_type") == 1 and act.attr("is_test") and act.attr("bit_length") == 8
    # The training state dropped; the scale kept (a later op may read it, as Fluid's did).
    assert act.input("InAccum") == [] and act.output("OutState") == []
    assert len(act.output("OutScale")) == 1, act.output("OutScale")
    axes = [op.attr("quant_axis") for op in ops if op.type.startswith("fake_channel_wise")]
    assert axes == [0, 0, 1], axes  # conv, depthwise conv: dim 0; Linear's [in, out]: dim 1

    for name, weight_axes in (("quant_qdq", [0, 0, 1]), ("quant_ptq", [-1, -1, -1])):
        ops, scope = got[name]
        types = [op.type for op in ops]
        assert types.count("quantize_linear") == 5 and types.count("dequantize_linear") == 8, types
        assert not [t for t in types if t.startswith("fake_")], types
        for op in ops:
            if op.type in ("quantize_linear", "dequantize_linear"):
                assert (op.attr("qmin"), op.attr("qmax"), op.attr("bit_length")) == (-128, 127, 8)
                assert op.attr("round_type") == 0 and op.attr("is_test")
                assert not op.attr("only_observer") and op.input("InState") == []
        # A weight's dequantize_linear reads a parameter (loaded into the scope; nothing ran yet).
        weights = [
            op
            for op in ops
            if op.type == "dequantize_linear" and scope.find_var(op.input("X")[0]) is not None
        ]
        assert [op.attr("quant_axis") for op in weights] == weight_axes, name
        for op in weights:  # float32 parameters holding int8 levels, as Paddle 3.3 stores them
            w = np.array(scope.find_var(op.input("X")[0]).get_tensor(), copy=True)
            assert w.dtype == np.float32 and (w == np.round(w)).all()
            assert w.min() >= -128 and w.max() <= 127 and np.abs(w).max() >= 120, (name, w.max())


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", ["quant_qdq", "quant_ptq"])
def test_pir_quantized_legacy_twin_matches(name, lib):
    """The converted net saved by Paddle 3.3 in both formats (PIR; its legacy/: the legacy
    program) gives the same output in Tide, and Paddle's."""
    d = os.path.join(FIXTURES, "pir", name)
    x, expected = np.load(os.path.join(d, "input.npy")), np.load(os.path.join(d, "expected.npy"))
    outs = []
    for prefix in (os.path.join(d, "inference"), os.path.join(d, "legacy", "inference")):
        with tide.scope_guard(tide.Scope()):
            out, _ = run(prefix, x, use_mkldnn=lib == "mkldnn")
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_pir_quant_fake_and_qdq_agree():
    """quant_fake and quant_qdq are one trained net in two forms; they differ only by what convert
    changes: the weights quantized with the scales of the last training forward (before the last
    SGD step), round_type 0 and the level -128. Tide's outputs as Paddle's: within 2%, same
    classes."""
    outs = {}
    for name in ("quant_fake", "quant_qdq"):
        d = os.path.join(FIXTURES, "pir", name)
        with tide.scope_guard(tide.Scope()):
            outs[name], _ = run(os.path.join(d, "inference"), np.load(os.path.join(d, "input.npy")))
    a, b = outs["quant_fake"], outs["quant_qdq"]
    assert np.abs(a - b).max() / np.abs(a).max() < 0.02
    assert (a.argmax(1) == b.argmax(1)).all()


def test_pir_program_translated():
    """The PIR program becomes Fluid's ops, parameters and feed/fetch, read by either path."""
    prefix = os.path.join(FIXTURES, "pir", "lenet", "inference")
    assert tide._C.find_paddle_model_files(prefix)["model"].endswith("inference.json")
    for path in (prefix, prefix + ".json"):
        scope = tide.Scope()
        with tide.scope_guard(scope):
            program, feeds, fetches = tide.io.load_inference_model(path, optimize=False)
        ops = [op.type for op in program.global_block().ops]
        assert feeds == ["x"] and len(fetches) == 1
        assert ops[0] == "feed" and ops[-1] == "fetch"
        assert ops.count("conv2d") == 2 and ops.count("pool2d") == 2
        assert ops.count("matmul_v2") == 3 and ops.count("relu") == 2
        # The constants PIR made tensors (the pools' kernel size, the bias reshapes' shapes) are
        # folded into attributes; nothing computes them at run time.
        assert "assign_value" not in ops and "fill_constant" not in ops, ops
        pool = next(op for op in program.global_block().ops if op.type == "pool2d")
        assert pool.attr("ksize") == [2, 2] and pool.attr("strides") == [2, 2]
        params = sorted(v.name for v in program.list_vars() if v.persistable and "." in v.name)
        assert len(params) == 10 and params[0] == "conv2d_0.b_0"
        assert scope.find_var("conv2d_0.w_0").get_tensor().shape() == [6, 1, 3, 3]


def test_pir_table_matches_tide_ops():
    """Every entry of the PIR table names a registered op and parameters and attributes it
    declares, so a typo in the table fails here rather than on a user's model."""
    table = tide._C.pir_op_table()
    assert "pd_op.conv2d" in table and table["pd_op.matmul"]["type"] == "matmul_v2"
    for pir_name, rule in table.items():
        assert tide._C.has_op(rule["type"]), (pir_name, rule["type"])
        proto = tide._C.op_proto(rule["type"])
        inputs = {v["name"] for v in proto["inputs"]}
        outputs = {v["name"] for v in proto["outputs"]}
        attrs = {a["name"] for a in proto["attrs"]}
        for o in rule["operands"]:
            for slot in (o["slot"], o["list_slot"]):
                assert not slot or slot in inputs, (pir_name, slot, inputs)
            assert not o["attr"] or o["attr"] in attrs, (pir_name, o["attr"], attrs)
        for r in rule["results"]:
            assert not r["slot"] or r["slot"] in outputs, (pir_name, r["slot"], outputs)
        for to in list(rule["renames"].values()) + rule["fixed"] + [rule["dtype_of_input"]]:
            assert not to or to in attrs, (pir_name, to, attrs)


def pir_copy(tmp_path, name="lenet"):
    d = tmp_path / "pir_lenet"
    shutil.copytree(os.path.join(FIXTURES, "pir", name), d)
    return d


def edit_json(d, old, new):
    text = (d / "inference.json").read_text()
    assert old in text, old
    (d / "inference.json").write_text(text.replace(old, new))


@pytest.mark.parametrize(
    "old,new,error",
    [
        ('"magic":"pir"', '"magic":"pdx"', "base_code.magic is 'pdx', not 'pir'"),
        ('"version":4', '"version":5', "PIR format version 5 is newer than this Tide reads"),
        ('"regions"', '"regionz"', "at $.program: no key 'regions'"),
    ],
    ids=["wrong_magic", "newer_version", "missing_key_named_by_path"],
)
def test_pir_refused(tmp_path, old, new, error):
    d = pir_copy(tmp_path)
    edit_json(d, old, new)
    expect_error(d / "inference", "inference.json", error)


def test_pir_truncated_and_not_json(tmp_path):
    d = pir_copy(tmp_path)
    text = (d / "inference.json").read_bytes()
    (d / "inference.json").write_bytes(text[: len(text) // 2])
    expect_error(d / "inference", "inference.json", "not valid JSON (truncated or corrupt)")
    (d / "inference.json").write_bytes(np.random.RandomState(0).bytes(3000))
    expect_error(d / "inference", "inference.json", "not valid JSON")


def test_pir_unknown_operations_listed_at_once(tmp_path):
    d = pir_copy(tmp_path)
    edit_json(d, '"#":"1.relu"', '"#":"1.relx"')
    edit_json(d, '"#":"1.pool2d"', '"#":"1.poolzd"')
    expect_error(
        d / "inference",
        "inference.json",
        "2 PIR operation type(s) have no translation to Tide ops",
        "pd_op.poolzd (2 ops), pd_op.relx (2 ops)",
        "PIR format version 4",
    )


def test_pir_unknown_list_operations_listed(tmp_path):
    """An operation Tide lacks whose result is a list (split's, unpacked by builtin.split) is
    listed with the others, not reported as a builtin.split of a non-list."""
    d = pir_copy(tmp_path, "tensor_ops")
    edit_json(d, '"#":"1.split_with_num"', '"#":"1.split_with_numx"')
    edit_json(d, '"#":"1.argsort"', '"#":"1.argsortx"')
    msg = expect_error(
        d / "inference",
        "2 PIR operation type(s) have no translation to Tide ops",
        "pd_op.argsortx (1 op), pd_op.split_with_numx (1 op)",
    )
    assert "builtin.split" not in msg, msg


def test_pir_quantized_unknown_operations_listed_at_once(tmp_path):
    """A quantized program with operations Tide lacks: all of them named, with their counts."""
    d = tmp_path / "pir_quant_qdq"
    shutil.copytree(os.path.join(FIXTURES, "pir", "quant_qdq"), d)
    text = (d / "inference.json").read_text()
    text = text.replace('"#":"1.quantize_linear"', '"#":"1.quantize_linearx"')
    (d / "inference.json").write_text(text.replace('"#":"1.relu"', '"#":"1.relux"'))
    expect_error(
        d / "inference",
        "inference.json",
        "2 PIR operation type(s) have no translation to Tide ops",
        "pd_op.quantize_linearx (5 ops), pd_op.relux (2 ops)",
    )


def test_pir_random_damage_is_refused_or_harmless(tmp_path):
    """Byte flips and truncations of the PIR program: a load succeeds or raises a TideError
    naming the file; never another exception or a crash."""
    src = pir_copy(tmp_path)
    rng = np.random.RandomState(31)
    refused = 0
    for i in range(30):
        d = tmp_path / ("m%d" % i)
        shutil.copytree(src, d)
        b = bytearray((d / "inference.json").read_bytes())
        if i % 3 == 0:
            b = b[: rng.randint(0, len(b))]
        else:
            for pos in rng.randint(0, len(b), size=rng.randint(1, 5)):
                b[pos] = rng.randint(32, 127)
        (d / "inference.json").write_bytes(bytes(b))
        try:
            load(d / "inference")
        except tide.TideError as e:
            assert "inference." in str(e), str(e)
            refused += 1
    assert refused >= 10, refused


# --- lossact: pd_op.rms_norm ------------------------------------------------------------------


def test_pir_rms_norm(tmp_path):
    """Paddle 3.3.1 has pd_op.rms_norm (F.rms_norm) but builds it only for CUDA, so no program
    saved on the CPU holds it: loss_act_ops's plain fused_rms_norm_quant (no bias, residual or
    norm_bias; rows of 6 from begin_norm_axis 1) rewritten as rms_norm (x, scale;
    normalized_shape [6], the same epsilon) reads and gives Paddle's result."""
    d = pir_copy(tmp_path, "loss_act_ops")
    program = json.loads((d / "inference.json").read_text())
    ops = program["program"]["regions"][0]["blocks"][0]["ops"]
    fused = [o for o in ops if o["#"] == "1.fused_rms_norm_quant"]
    op = next(o for o in fused if [i["%"] for i in o["I"]][1:3] == [0, 0])
    eps = next(a["AT"]["D"] for a in op["A"] if a["N"] == "epsilon")
    op["#"] = "1.rms_norm"
    op["I"] = [op["I"][0], op["I"][3]]
    op["O"] = [op["O"][0], op["O"][2]]
    op["A"] = [
        {"AT": {"#": "0.a_array", "D": [{"#": "0.a_i64", "D": 6}]}, "N": "normalized_shape"},
        {"AT": {"#": "0.a_f64", "D": eps}, "N": "epsilon"},
    ]
    (d / "inference.json").write_text(json.dumps(program))
    feed, expected = load_feed(d), np.load(d / "expected.npy")
    with tide.scope_guard(tide.Scope()):
        out, exe = run(str(d / "inference"), feed)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    assert "rms_norm" in [t for t, _ in exe.last_run_info()["kernels"]]
