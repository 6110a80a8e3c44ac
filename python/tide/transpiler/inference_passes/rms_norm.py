"""fuse_rms_norm: RMS normalisation written out in ops, as LLaMA-style models export it
(PaddleNLP's LlamaRMSNorm without its fused kernel, `x * rsqrt(mean(x^2) + eps) * w`):

    pow(x, 2) -> reduce_mean(last axis, keep_dim) -> + eps (scale's bias, or elementwise_add of
    a persistable scalar) -> rsqrt -> elementwise_mul with x [-> elementwise_mul with a
    persistable weight of x's last dim]

becomes Paddle's rms_norm (normalized_shape = [x's last dim], epsilon, scale = the weight): one
pass over each row instead of six ops and five temporaries. Every intermediate must be read by
the next op only (nothing fetched or kept); the products may name their operands either way
round."""

import numpy as np

from .graph import other_operand


def _epsilon(g, op, mean):
    """eps where `op` computes mean + eps, else None."""
    if op.type == "scale":
        after = not op.has_attr("bias_after_scale") or op.attr("bias_after_scale")
        if op.input("ScaleTensor") or op.attr("scale") != 1.0 or not after:
            return None
        return float(op.attr("bias"))
    if op.type == "elementwise_add" and op.input("X") == [mean]:
        value = g.value(op.input("Y")[0])
        if value is not None and value.size == 1:
            return float(np.asarray(value).reshape(-1)[0])
    return None


def _last_axis_mean(op, rank):
    dims = list(op.attr("dim") or [])
    return (
        op.attr("keep_dim")
        and not (op.has_attr("reduce_all") and op.attr("reduce_all"))
        and dims in ([-1], [rank - 1])
    )


def _chain(g, sq):
    """(ops, x, weight or None, y, eps) of the normalisation starting at pow op `sq`, or None."""
    x, p = sq.input("X")[0], sq.output("Out")[0]
    xs = g.shape(x)
    if sq.input("FactorTensor") or sq.attr("factor") != 2.0 or not xs or xs[-1] <= 0:
        return None
    mean = g.only_reader(p)
    if mean is None or mean.type != "reduce_mean" or not _last_axis_mean(mean, len(xs)):
        return None
    m = mean.output("Out")[0]
    add = g.only_reader(m)
    eps = _epsilon(g, add, m) if add is not None else None
    if eps is None or eps < 0:
        return None
    e = add.output("Out")[0]
    rsqrt = g.only_reader(e)
    if rsqrt is None or rsqrt.type != "rsqrt":
        return None
    r = rsqrt.output("Out")[0]
    norm = g.only_reader(r)
    if norm is None or norm.type != "elementwise_mul" or other_operand(norm, r) != x:
        return None
    ops, y = [sq, mean, add, rsqrt, norm], norm.output("Out")[0]
    if norm.attr("axis") != -1 or any(
        not g.intermediate(o.output("Out")[0], nxt) for o, nxt in zip(ops, ops[1:])
    ):
        return None
    weight, scale = None, g.only_reader(y)
    w = other_operand(scale, y) if scale is not None and scale.type == "elementwise_mul" else None
    if (
        w is not None
        and scale.attr("axis") == -1
        and g.persistable(w)
        and g.shape(w) == [xs[-1]]
        and g.intermediate(y, scale)
    ):
        ops, weight, y = ops + [scale], w, scale.output("Out")[0]
    if y == x or g.shape(y) != xs:
        return None
    return ops, x, weight, y, eps


def fuse_rms_norm(g):
    """Fuses the first written-out RMS normalisation it finds into one rms_norm op.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    for sq in g.ops("pow"):
        found = _chain(g, sq)
        if found is None:
            continue
        ops, x, weight, y, eps = found
        inputs = {"x": [x]}
        if weight is not None:
            inputs["scale"] = [weight]
        attrs = {"normalized_shape": [g.shape(x)[-1]], "epsilon": eps}
        if g.replace(ops, "rms_norm", inputs, {"y": [y]}, attrs):
            return True
    return False
