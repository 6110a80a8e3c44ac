"""fuse_fc: matmul_v2(X, W) [+ elementwise_add(a bias of N values)] [+ an activation] becomes
Paddle's fc (its fc_fuse_pass, and fc_act_mkldnn_fuse_pass for the activation: gelu in both
forms, relu, tanh, ...): one GEMM with the bias and activation as its epilogue.

Matched only as Paddle's nn.Linear writes it: W a persistable [K, N] parameter, no transposes,
X of rank >= 3 (the token-wise layers of a transformer; a classifier's rank-2 matmul, e.g.
ResNet's last layer, is left as it is), the bias a persistable [N] added on the last axis, and
nothing else reading the matmul's output (nor the sum, when an activation follows). A
bias-free layer (LLaMA's projections, `bias_attr=False`) becomes an fc without Bias: the
oneDNN fc keeps its W packed in the primitive's format (a 128-token prefill's products took
0.75x-0.9x the time on a plain W). W must be float32, as fc reads it (a model saved in
bfloat16 keeps its products: fc would have its W widened on every run)."""

import numpy as np

from .activation import _fused_activation


def _bias_add(g, out, n):
    """The elementwise_add reading `out` as X with a persistable [n] Y on its last axis."""
    add = g.only_reader(out)
    if add is None or add.type != "elementwise_add" or add.input("X") != [out]:
        return None
    b = add.input("Y")[0]
    rank = len(g.shape(out) or [])
    if not g.persistable(b) or g.shape(b) != [n] or add.attr("axis") not in (-1, rank - 1):
        return None
    return add


def _columns(mm, xs):
    """in_num_col_dims of the fc computing matmul `mm` of an X of dims `xs`: matmul_v2's last
    axis, mul's x_num_col_dims (None where its Y is not [K, N])."""
    if mm.type == "mul":
        return mm.attr("x_num_col_dims") if mm.attr("y_num_col_dims") == 1 else None
    return None if mm.attr("trans_x") or mm.attr("trans_y") else len(xs) - 1


def fuse_fc(g, min_rank=3, op_types=("matmul_v2",), bias_free=True):
    """Fuses the first matmul_v2 [+ bias add] [+ activation] it finds (the module says which)
    into one fc op.

    Args:
        g (Graph): the program's block 0 as the passes see it.
        min_rank (int): X's least rank (int8 quantization, which has int8 kernels for fc only,
            fuses a classifier's rank-2 products too: 2).
        op_types (tuple): the products fused: matmul_v2, and for int8 mul (Fluid's fc layer).
        bias_free (bool): whether a product without a bias add becomes an fc too.

    Returns:
        bool: whether it changed the program (the transpiler runs a pass until it does not).
    """
    for mm in [op for op in g.block.ops if op.type in op_types]:
        x, w, out = mm.input("X")[0], mm.input("Y")[0], mm.output("Out")[0]
        xs, ws = g.shape(x), g.shape(w)
        if xs is None or len(xs) < min_rank or not g.persistable(w) or ws is None or len(ws) != 2:
            continue
        if g.block.var(w).dtype != "float32":
            continue  # fc reads W in float32: a saved bfloat16 W would be widened every run
        cols = _columns(mm, xs)
        if cols is None or (min(xs[cols:]) >= 0 and int(np.prod(xs[cols:])) != ws[0]):
            continue
        inputs = {"Input": [x], "W": [w]}
        add = _bias_add(g, out, ws[1])
        if add is not None and g.intermediate(out, add):
            ops, result = [mm, add], add.output("Out")[0]
            inputs["Bias"] = add.input("Y")
        elif bias_free:
            ops, result = [mm], out
        else:
            continue
        attrs = {"in_num_col_dims": cols}
        act = g.only_reader(result)
        fused = _fused_activation(act) if act is not None and "X" in act.desc.inputs() else None
        if fused is not None and act.input("X") == [result] and g.intermediate(result, act):
            ops.append(act)
            result = act.output("Out")[0]
            attrs.update(fuse_activation=fused[0], fuse_alpha=fused[1], fuse_beta=fused[2])
        if result in (x, w):
            continue
        if g.replace(ops, "fc", inputs, {"Out": [result]}, attrs):
            return True
    return False
