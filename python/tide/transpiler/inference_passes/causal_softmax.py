"""fuse_causal_softmax: a causal attention mask built from the scores and added before the
softmax, as GPT- and LLaMA-style models export it (`paddle.triu(paddle.full_like(s, v), 1)`):

    fill_any_like(S, value v) -> tril_triu(lower false, diagonal d) -> elementwise_add with S
    -> softmax(last axis)

becomes fused_softmax_mask_upper_triangle(S, mask_value v, diagonal d): one pass over the
[..., q, k] scores instead of four passes and three temporaries of their size. The mask, the sum
and the fill must be read by the next op only (nothing fetched or kept); the sum may name its
operands either way round."""

from ...core import dtype_code
from .graph import other_operand


def _last_axis(op, rank):
    return op.attr("axis") in (-1, rank - 1)


def _chain(g, fill):
    """(ops, scores, out, value, diagonal) of the mask starting at fill_any_like op `fill`, or
    None."""
    s, f = fill.input("X")[0], fill.output("Out")[0]
    dims = g.shape(s)
    value = fill.attr("value")
    if not dims or len(dims) < 2 or value != value:  # NaN fills are left alone
        return None
    if fill.has_attr("dtype") and fill.attr("dtype") not in (-1, dtype_code(g.block.var(s).dtype)):
        return None
    tri = g.only_reader(f)
    if tri is None or tri.type != "tril_triu" or tri.attr("lower"):
        return None
    m = tri.output("Out")[0]
    add = g.only_reader(m)
    if add is None or add.type != "elementwise_add" or other_operand(add, m) != s:
        return None
    a = add.output("Out")[0]
    soft = g.only_reader(a)
    if soft is None or soft.type != "softmax" or not _last_axis(soft, len(dims)):
        return None
    ops = [fill, tri, add, soft]
    if add.attr("axis") != -1 or any(
        not g.intermediate(o.output("Out")[0], nxt) for o, nxt in zip(ops, ops[1:])
    ):
        return None
    return ops, s, soft.output("Out")[0], float(value), int(tri.attr("diagonal"))


def fuse_causal_softmax(g):
    """Fuses the first causal mask + softmax it finds into fused_softmax_mask_upper_triangle.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    for fill in g.ops("fill_any_like"):
        found = _chain(g, fill)
        if found is None:
            continue
        ops, s, out, value, diagonal = found
        attrs = {"mask_value": value, "diagonal": diagonal}
        if g.replace(ops, "fused_softmax_mask_upper_triangle", {"X": [s]}, {"Out": [out]}, attrs):
            return True
    return False
