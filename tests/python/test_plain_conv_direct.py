"""The plain float32 convolution's direct kernel (tide/kernels/conv_direct.hpp: the input staged as
NHWC, register tiles of output-channel blocks by output positions, the filter packed once per op,
the epilogue fused) and its Winograd F(2x2, 3x3) for 3x3 stride-1 convs (conv_winograd.hpp)
against a float64 numpy reference over many shapes: 3x3 stride 1 and 2, the 7x7
stem, strided and padded 1x1, asymmetric padding, odd sizes with stride 2, dilation, batch 1 and
16, channel counts off the kernel's blocks, and those that keep im2col + GEMM (1x1 without padding,
strided too, its GEMM in tiles over the threads; few products per output, groups, depthwise);
conv2d and fused_conv2d (bias, residual, in place, relu and an activation applied after); a filter
rewritten between runs; thread counts 1, 2 and 3; and each instruction set the CPU has
(TIDE_PLAIN_CONV_ISA, in a process of its own), each within float rounding of im2col + GEMM's
results (TIDE_PLAIN_CONV_ISA=none)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conv_reference import conv_ref

import tide

# (id, N, C, H, W, M, kh, kw, strides, paddings, dilations, groups)
SHAPES = [
    ("1x1", 2, 64, 7, 7, 64, 1, 1, [1, 1], [0, 0], [1, 1], 1),
    ("1x1_b16_odd_channels", 16, 13, 5, 6, 37, 1, 1, [1, 1], [0, 0], [1, 1], 1),
    ("1x1_stride2_odd", 1, 130, 9, 11, 70, 1, 1, [2, 2], [0, 0], [1, 1], 1),
    ("1x1_padded", 1, 129, 5, 5, 20, 1, 1, [1, 1], [1, 1], [1, 1], 1),
    ("3x3", 1, 32, 14, 14, 64, 3, 3, [1, 1], [1, 1], [1, 1], 1),
    ("3x3_b16", 16, 16, 7, 7, 16, 3, 3, [1, 1], [1, 1], [1, 1], 1),
    # images split unevenly between threads, each staging and convolving its own
    ("3x3_b5_uneven", 5, 16, 9, 7, 24, 3, 3, [1, 1], [1, 1], [1, 1], 1),
    ("3x3_many_blocks", 2, 70, 9, 9, 130, 3, 3, [1, 1], [1, 1], [1, 1], 1),
    ("3x3_stride2_odd", 2, 16, 15, 13, 20, 3, 3, [2, 2], [1, 1], [1, 1], 1),
    ("3x3_asym_pad", 1, 15, 8, 9, 7, 3, 3, [1, 2], [0, 2, 1, 0], [1, 1], 1),
    ("3x3_dilated", 2, 16, 12, 10, 9, 3, 3, [1, 1], [2, 2], [2, 2], 1),
    ("5x3_rect", 1, 9, 11, 9, 65, 5, 3, [1, 1], [2, 1], [1, 1], 1),
    ("stem_7x7", 1, 3, 32, 32, 64, 7, 7, [2, 2], [3, 3], [1, 1], 1),
    ("few_taps", 4, 1, 12, 12, 20, 5, 5, [1, 1], [0, 0], [1, 1], 1),
    ("grouped", 2, 8, 6, 6, 12, 3, 3, [1, 1], [1, 1], [1, 1], 2),
    ("depthwise", 1, 8, 6, 6, 8, 3, 3, [1, 1], [1, 1], [1, 1], 8),
    ("one_position", 3, 17, 1, 1, 33, 1, 1, [1, 1], [0, 0], [1, 1], 1),
    # batch 1 pointwise: the GEMM cut into tiles over the threads, each with its epilogue
    # (columns in tiles, 130 rows in one; 35 columns in one, 300 rows in uneven tiles)
    ("1x1_b1_many_positions", 1, 96, 37, 29, 130, 1, 1, [1, 1], [0, 0], [1, 1], 1),
    ("1x1_b1_few_positions", 1, 256, 5, 7, 300, 1, 1, [1, 1], [0, 0], [1, 1], 1),
    # pointwise over images of few positions, batched side by side into wide GEMMs: groups of
    # uneven size, strided, filter rows in tiles
    ("1x1_b5_stride2_batched", 5, 48, 13, 13, 70, 1, 1, [2, 2], [0, 0], [1, 1], 1),
    ("1x1_b4_batched_row_tiles", 4, 40, 7, 7, 300, 1, 1, [1, 1], [0, 0], [1, 1], 1),
    ("1x1_b23_batched_groups", 23, 24, 5, 5, 40, 1, 1, [1, 1], [0, 0], [1, 1], 1),
    # a strided 1x1 whose gathered positions are split between the threads by channel planes
    ("1x1_stride2_many_planes", 1, 160, 29, 27, 48, 1, 1, [2, 2], [0, 0], [1, 1], 1),
    # a channel block's filter of over 1 MiB over few tiles: taken a chunk of taps at a time
    # by every tile (chunks that end inside a filter tap, a last short chunk), by image at batch 5
    ("3x3_chunked_filter", 1, 460, 9, 11, 70, 3, 3, [1, 1], [1, 1], [1, 1], 1),
    ("3x3_s2_chunked_b5", 5, 500, 12, 10, 64, 3, 3, [2, 2], [1, 1], [1, 1], 1),
    # Winograd F(2x2, 3x3) (3x3 stride 1, >= 32 channels each way, >= 64 tiles of 2x2 outputs):
    # odd output sizes (half tiles at the right and bottom), channel counts off every vector,
    # chunks of tiles that cut tile rows, output channels split between jobs (batch 1), no
    # padding, asymmetric padding, padding wider than the filter's reach, one position per image
    ("wino_odd", 1, 33, 17, 15, 45, 3, 3, [1, 1], [1, 1], [1, 1], 1),
    ("wino_chunks_cut_rows", 1, 64, 61, 57, 64, 3, 3, [1, 1], [1, 1], [1, 1], 1),
    ("wino_channels_split", 1, 96, 15, 17, 200, 3, 3, [1, 1], [1, 1], [1, 1], 1),
    ("wino_unpadded", 3, 40, 12, 11, 36, 3, 3, [1, 1], [0, 0], [1, 1], 1),
    ("wino_asym_pad", 1, 32, 16, 17, 32, 3, 3, [1, 1], [0, 2, 1, 0], [1, 1], 1),
    ("wino_wide_pad", 2, 48, 8, 10, 33, 3, 3, [1, 1], [3, 3], [1, 1], 1),
    ("wino_one_position", 64, 64, 1, 1, 64, 3, 3, [1, 1], [1, 1], [1, 1], 1),
]


def out_size(case):
    _, n, c, h, w, m, kh, kw, st, p, d, _ = case
    pads = [p[0], p[0], p[1], p[1]] if len(p) == 2 else p
    oh = (h + pads[0] + pads[1] - (d[0] * (kh - 1) + 1)) // st[0] + 1
    ow = (w + pads[2] + pads[3] - (d[1] * (kw - 1) + 1)) // st[1] + 1
    return pads, oh, ow


def build(case, op, bias, residual, act, in_place=False):
    """The program: one conv op on fed Input / Filter (and Bias / ResidualData); its output."""
    _, n, c, h, w, m, kh, kw, strides, paddings, dilations, groups = case
    _, oh, ow = out_size(case)
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        block = main.global_block()
        x = tide.layers.data(name="x", shape=[n, c, h, w], dtype="float32", append_batch_size=False)
        tide.layers.data(
            name="f", shape=[m, c // groups, kh, kw], dtype="float32", append_batch_size=False
        )
        inputs = {"Input": [x.name], "Filter": ["f"]}
        if bias:
            tide.layers.data(name="b", shape=[m], dtype="float32", append_batch_size=False)
            inputs["Bias"] = ["b"]
        if residual:
            tide.layers.data(
                name="r", shape=[n, m, oh, ow], dtype="float32", append_batch_size=False
            )
            inputs["ResidualData"] = ["r"]
        out = "r" if in_place else block.create_var(name="out", dtype="float32").name
        attrs = {"strides": strides, "paddings": paddings, "dilations": dilations, "groups": groups}
        if op == "fused_conv2d":
            attrs.update(fuse_activation=act, fuse_residual_connection=residual)
            if act == "leaky_relu":
                attrs["fuse_alpha"] = 0.1
        block.append_op(op, inputs=inputs, outputs={"Output": [out]}, attrs=attrs)
    return main, out


def reference(case, feed, bias, residual, act):
    _, n, c, h, w, m, kh, kw, strides, paddings, dilations, groups = case
    pads, _, _ = out_size(case)
    want = conv_ref(feed["x"], feed["f"], strides, pads, dilations, groups)
    if bias:
        want += feed["b"].astype(np.float64).reshape(1, m, 1, 1)
    if residual:
        want += feed["r"]
    if act == "relu":
        want = np.maximum(want, 0)
    elif act == "leaky_relu":
        want = np.where(want > 0, want, 0.1 * want)
    elif act == "sigmoid":
        want = 1 / (1 + np.exp(-want))
    return want


def make_feed(case, rng, bias, residual):
    _, n, c, h, w, m, kh, kw, _, _, _, groups = case
    _, oh, ow = out_size(case)
    feed = {
        "x": rng.uniform(-1, 1, (n, c, h, w)).astype("float32"),
        "f": rng.uniform(-1, 1, (m, c // groups, kh, kw)).astype("float32"),
    }
    if bias:
        feed["b"] = rng.uniform(-1, 1, (m,)).astype("float32")
    if residual:
        feed["r"] = rng.uniform(-1, 1, (n, m, oh, ow)).astype("float32")
    return feed


def tolerance(case):
    """float32 sums of C/groups * kh * kw products of values in [-1, 1]."""
    _, _, c, _, _, _, kh, kw, _, _, _, groups = case
    return 2e-6 * (c // groups * kh * kw) ** 0.5 + 1e-6


@pytest.mark.parametrize("case", SHAPES, ids=[c[0] for c in SHAPES])
def test_conv2d_matches_float64(case, rng):
    main, out = build(case, "conv2d", False, False, "")
    feed = make_feed(case, rng, False, False)
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        (got,) = exe.run(main, feed=feed, fetch_list=[out])
    want = reference(case, feed, False, False, "")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=tolerance(case))


# (bias, residual, activation, in place)
FUSIONS = [
    (True, False, "", False),
    (True, False, "relu", False),
    (True, True, "relu", False),
    (False, True, "", True),
    (True, True, "relu", True),
    (True, False, "leaky_relu", False),
    (False, True, "sigmoid", False),
]


@pytest.mark.parametrize("fusion", FUSIONS, ids=lambda f: "-".join(map(str, f)))
@pytest.mark.parametrize("case", SHAPES, ids=[c[0] for c in SHAPES])
def test_fused_conv2d_matches_float64(case, fusion, rng):
    bias, residual, act, in_place = fusion
    main, out = build(case, "fused_conv2d", bias, residual, act, in_place)
    feed = make_feed(case, rng, bias, residual)
    want = reference(case, feed, bias, residual, act)  # in place, the run overwrites feed["r"]
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        (got,) = exe.run(main, feed=feed, fetch_list=[out])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=tolerance(case))


@pytest.mark.parametrize("size", [14, 18], ids=["direct", "winograd"])
def test_filter_rewritten_between_runs_is_repacked(size, rng):
    """A persistable Filter set anew between runs (an optimizer's step, a reload): the second run
    convolves with the new values, not the packed (or Winograd-transformed) copy of the old
    ones."""
    case = next(c for c in SHAPES if c[0] == "3x3")
    main = tide.Program()
    startup = tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data(
            name="x", shape=[1, 32, size, size], dtype="float32", append_batch_size=False
        )
        y = tide.layers.conv2d(x, num_filters=64, filter_size=3, padding=1, bias_attr=False)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        exe.run(startup)
        fname = main.global_block().all_parameters()[0].name
        xv = rng.uniform(-1, 1, (1, 32, size, size)).astype("float32")
        for _ in range(3):
            w = rng.uniform(-1, 1, (64, 32, 3, 3)).astype("float32")
            scope.find_var(fname).get_tensor().set(w, tide.CPUPlace())
            for _ in range(2):  # the second run reads the kept copy
                (got,) = exe.run(main, feed={"x": xv}, fetch_list=[y])
                want = conv_ref(xv, w, [1, 1], [1, 1, 1, 1], [1, 1], 1)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=tolerance(case))


@pytest.mark.parametrize(
    "k,groups,ic",
    [(3, 1, 16), (3, 1, 32), (1, 1, 16), (3, 2, 16)],
    ids=["direct", "winograd", "gemm_pointwise", "gemm_grouped"],
)
def test_in_place_residual_of_another_conv(k, groups, ic, rng):
    """The transpiler's in-place residual: fused_conv2d writes its Output over ResidualData, a
    tensor another conv made (the core's memory, kept without a copy): the direct kernel and
    Winograd's read each value before they overwrite it; the GEMM adds the conv to it where it
    lies (pointwise: straight into the images; grouped, 2 small images per GEMM: through its row
    layout)."""
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        block = main.global_block()
        for name, shape in (
            ("x", [2, ic, 12, 12]),
            ("f1", [32, ic, 3, 3]),
            ("f2", [32, ic // groups, k, k]),
            ("b", [32]),
        ):
            tide.layers.data(name=name, shape=shape, dtype="float32", append_batch_size=False)
        block.create_var(name="r", dtype="float32")
        block.append_op(
            "conv2d",
            inputs={"Input": ["x"], "Filter": ["f1"]},
            outputs={"Output": ["r"]},
            attrs={"paddings": [1, 1]},
        )
        block.append_op(
            "fused_conv2d",
            inputs={"Input": ["x"], "Filter": ["f2"], "Bias": ["b"], "ResidualData": ["r"]},
            outputs={"Output": ["r"]},
            attrs={
                "paddings": [k // 2, k // 2],
                "groups": groups,
                "fuse_activation": "relu",
                "fuse_residual_connection": True,
            },
        )
    feed = {
        k_: rng.uniform(-1, 1, block.var(k_).shape).astype("float32")
        for k_ in ("x", "f1", "f2", "b")
    }
    p1, p2 = [1] * 4, [k // 2] * 4
    want = conv_ref(feed["x"], feed["f1"], [1, 1], p1, [1, 1], 1) + conv_ref(
        feed["x"], feed["f2"], [1, 1], p2, [1, 1], groups
    )
    want = np.maximum(want + feed["b"].astype(np.float64).reshape(1, 32, 1, 1), 0)
    with tide.scope_guard(tide.Scope()):
        for _ in range(2):
            (got,) = tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=["r"])
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "k,groups,stride,fmt",
    [(1, 1, 1, "NCHW"), (1, 1, 2, "NCHW"), (3, 2, 1, "NCHW"), (5, 1, 2, "NCHW"), (3, 1, 1, "NHWC")],
    ids=["pointwise", "strided_pointwise", "grouped", "5x5_s2", "nhwc"],
)
def test_in_place_and_apart_residual_agree_bit_for_bit(k, groups, stride, fmt, rng):
    """fused_conv2d over its ResidualData's own variable (the transpiler's in place) and into a
    variable apart (a compiled model's plan separates them) round the same sums the same way, so
    a compiled model reproduces the executor's output exactly."""
    nhwc = fmt == "NHWC"
    x_shape = [2, 12, 12, 16] if nhwc else [2, 16, 12, 12]
    oh = (12 + 2 * (k // 2) - k) // stride + 1
    r_shape = [2, oh, oh, 32] if nhwc else [2, 32, oh, oh]
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        block = main.global_block()
        for name, shape in (
            ("x", x_shape),
            ("f", [32, 16 // groups, k, k]),
            ("b", [32]),
            ("r", r_shape),
        ):
            tide.layers.data(name=name, shape=shape, dtype="float32", append_batch_size=False)
        block.create_var(name="apart", dtype="float32")
        for out in ("apart", "r"):  # apart first: it reads r before the in-place op writes it
            block.append_op(
                "fused_conv2d",
                inputs={"Input": ["x"], "Filter": ["f"], "Bias": ["b"], "ResidualData": ["r"]},
                outputs={"Output": [out]},
                attrs={
                    "paddings": [k // 2, k // 2],
                    "strides": [stride, stride],
                    "groups": groups,
                    "data_format": fmt,
                    "fuse_activation": "relu",
                    "fuse_residual_connection": True,
                },
            )
    feed = {n: rng.uniform(-1, 1, block.var(n).shape).astype("float32") for n in "xfbr"}
    want = conv_ref(
        feed["x"].transpose(0, 3, 1, 2) if nhwc else feed["x"],
        feed["f"],
        [stride, stride],
        [k // 2] * 4,
        [1, 1],
        groups,
    ) + feed["b"].astype(np.float64).reshape(1, 32, 1, 1)
    want = np.maximum(want + (feed["r"].transpose(0, 3, 1, 2) if nhwc else feed["r"]), 0)
    with tide.scope_guard(tide.Scope()):
        apart, in_place = tide.Executor(tide.CPUPlace()).run(
            main, feed=feed, fetch_list=["apart", "r"]
        )
    np.testing.assert_array_equal(in_place, apart)
    np.testing.assert_allclose(
        apart.transpose(0, 3, 1, 2) if nhwc else apart, want, rtol=1e-5, atol=1e-4
    )


WORKER = r"""
import json, sys
import numpy as np
import tide
sys.path.insert(0, {here!r})
import test_plain_conv_direct as t
tide.set_flags({{"cpu_threads": {threads!r}}})
outs = {{}}
for i, case in enumerate(t.SHAPES):
    rng = np.random.RandomState(i)
    for fusion in ((False, False, ""), (True, True, "relu")):
        op = "fused_conv2d" if fusion[0] else "conv2d"
        if fusion[0] and case[-1] != 1:
            continue
        main, out = t.build(case, op, *fusion)
        feed = t.make_feed(case, rng, fusion[0], fusion[1])
        with tide.scope_guard(tide.Scope()):
            (got,) = tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=[out])
        outs["%s-%s" % (case[0], op)] = np.asarray(got).tolist()
print(json.dumps(outs))
"""


def run_worker(isa, threads, winograd="1"):
    env = dict(os.environ, TIDE_PLAIN_CONV_ISA=isa, TIDE_PLAIN_CONV_WINOGRAD=winograd)
    code = WORKER.format(here=os.path.dirname(os.path.abspath(__file__)), threads=str(threads))
    r = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return {k: np.array(v) for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items()}


def test_every_isa_and_thread_count_agree_with_im2col_gemm():
    """The AVX-512 and AVX2 kernels (where this CPU has them; Winograd's row kernels too), each
    at 1 and 2 threads, Winograd at 3 (jobs split unevenly), the direct kernel on the 3x3 shapes
    Winograd takes (TIDE_PLAIN_CONV_WINOGRAD=0), and im2col + GEMM at 3 (batch 1 pointwise GEMMs
    in tiles for a thread count that divides none of the shapes' tiles evenly), give im2col +
    GEMM's 1-thread results within float rounding."""
    base = run_worker("none", 1)
    runs = [(isa, threads, "1") for isa in ("avx512", "avx2") for threads in (1, 2)]
    runs += [("avx512", 3, "1"), ("avx512", 2, "0"), ("none", 3, "1")]
    for isa, threads, winograd in runs:
        got = run_worker(isa, threads, winograd)
        assert got.keys() == base.keys()
        for k, v in base.items():
            case = next(c for c in SHAPES if k.startswith(c[0] + "-"))
            np.testing.assert_allclose(
                got[k],
                v,
                rtol=1e-5,
                atol=2 * tolerance(case),
                err_msg=f"{isa} {threads} winograd={winograd} {k}",
            )


@pytest.mark.parametrize("size,case", [(8, "winograd"), (6, "direct")])
def test_a_trained_filter_keeps_no_copy(size, case):
    """A filter the step rewrites in place (SGD) is packed / transformed for each run: the op keeps
    no copy between steps (Winograd's is 16/9 of the filter), and the steps train as the numpy
    reference says."""
    m = c = 256  # 2.25 MiB of filter; Winograd at 8x8 (64 tiles of 2x2 over the batch of 4)
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data(name="x", shape=[4, c, size, size], append_batch_size=False)
        y = tide.layers.conv2d(x, num_filters=m, filter_size=3, padding=1, bias_attr=False)
        loss = tide.layers.reduce_sum(y)
        tide.optimizer.SGD(0.01).minimize(loss)
    place = tide.CPUPlace()
    exe = tide.Executor(place)
    scope = tide.Scope()
    rng = np.random.RandomState(2)
    xv = rng.uniform(-1, 1, (4, c, size, size)).astype("float32")
    base = tide.memory.stats(place)["used"]  # what other tests in this process still hold
    with tide.scope_guard(scope):
        exe.run(startup)
        fname = main.global_block().all_parameters()[0].name
        w = np.array(scope.find_var(fname).get_tensor())
        for _ in range(3):
            (got,) = exe.run(main, feed={"x": xv}, fetch_list=[y])
            np.testing.assert_allclose(
                got, conv_ref(xv, w, [1, 1], [1, 1, 1, 1], [1, 1], 1), rtol=1e-4, atol=1e-3
            )
            # d(sum y)/dw = the sum over the batch and positions of the input windows
            xp = np.pad(xv.astype("float64"), ((0, 0), (0, 0), (1, 1), (1, 1)))
            win = np.stack(
                [
                    xp[:, :, i : i + size, j : j + size].sum(axis=(0, 2, 3))
                    for i in range(3)
                    for j in range(3)
                ],
                axis=1,
            ).reshape(c, 3, 3)
            w = (w - 0.01 * win[None]).astype("float32")
            used = tide.memory.stats(place)["used"] - base
            # the filter (SGD keeps no state): no copy of 2.25 MiB (Winograd's: 4) held
            assert used < w.nbytes + (1 << 20), (used, w.nbytes)
    np.testing.assert_allclose(
        np.array(scope.find_var(fname).get_tensor()), w, rtol=1e-4, atol=1e-4
    )
