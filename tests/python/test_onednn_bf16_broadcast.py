"""device_mkldnn's bfloat16 elementwise_mul / elementwise_add where oneDNN has no jit kernel for
the broadcast: Y repeated over a middle dim of X (a LLaMA rotary table [1, S, 1, D] times the
queries [B, S, heads, D]) would run oneDNN's reference implementation (30x slower than the plain
kernel); the kernel declines it before Out is touched, and the float32 plain kernel runs the
widened data. The results stay those of the bfloat16 inputs (float64 reference, bfloat16's
rounding), whichever kernel ran; the broadcasts oneDNN runs itself (test_onednn_bf16) keep it.
And matmul_v2 of a batch of X matrices over one Y, folded into one product of B * S rows."""

import numpy as np
import pytest
from test_onednn_bf16 import BF16, BF16_ISA, close, run

import tide  # noqa: F401  (the kernels' registry, through test_onednn_bf16)
from tide.contrib.mixed_precision.rewrite import kernel_types

pytestmark = pytest.mark.skipif(
    "bfloat16" not in kernel_types("mul", "cpu"), reason="no oneDNN bfloat16 kernels loaded"
)

R = np.random.RandomState(7)


@pytest.mark.parametrize("op", ["elementwise_mul", "elementwise_add"])
@pytest.mark.parametrize(
    "xs,ys,reference",
    [
        ((2, 40, 16, 64), (1, 40, 1, 64), True),  # the rotary table's broadcast
        ((3, 5, 4, 8), (3, 1, 4, 8), False),  # a middle dim repeated, batch kept: oneDNN's jit
    ],
)
def test_middle_dim_broadcast(op, xs, ys, reference):
    x, y = R.uniform(-2, 2, xs), R.uniform(-2, 2, ys)
    outs, _, _, kernels, dtypes, fed = run(op, {"X": x, "Y": y}, {"axis": -1})
    want = fed["X"] * fed["Y"] if op == "elementwise_mul" else fed["X"] + fed["Y"]
    assert dtypes["Out"] == BF16
    close(outs["Out"], want, what=op)
    # The reference-implementation broadcast on plain data is declined to the float32 plain
    # kernel; the jit one stays oneDNN's (blocked data always does: MkldnnChain's exchange).
    ran = kernels[op]
    if BF16_ISA:
        if reference:
            assert all("plain" in k and "float32" in k for k in ran), ran
        else:
            assert all("mkldnn" in k and "bfloat16" in k for k in ran), ran


@pytest.mark.parametrize(
    "xs,ys,ty",
    [
        ((4, 1, 32), (32, 24), False),  # a decode step's batch of single rows
        ((2, 3, 5, 16), (16, 9), False),
        ((3, 5, 16), (9, 16), True),
    ],
)
def test_matmul_v2_batch_over_one_y(xs, ys, ty):
    """A batch of X over one Y matrix: one [B * S, K] product (matmul_kernels.cc's Forward), the
    values of float64's matmul of the bfloat16 inputs, Out's dims numpy's."""
    x, y = R.uniform(-2, 2, xs), R.uniform(-2, 2, ys)
    outs, _, _, kernels, dtypes, fed = run("matmul_v2", {"X": x, "Y": y}, {"trans_y": ty})
    b = np.swapaxes(fed["Y"], -1, -2) if ty else fed["Y"]
    want = np.matmul(fed["X"], b)
    assert dtypes["Out"] == BF16 and outs["Out"].shape == want.shape
    close(outs["Out"], want, what="matmul_v2")
    if BF16_ISA:
        assert all("bfloat16" in k and "mkldnn" in k for k in kernels["matmul_v2"]), kernels
