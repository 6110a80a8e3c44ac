"""fuse_rotary: rotary position embedding written out with rotate_half, as LLaMA-style models
export it (PaddleNLP's apply_rotary_pos_emb without its fused kernel):

    x * cos + concat([-x[..., D/2:], x[..., :D/2]], -1) * sin

(elementwise_mul of x and cos, two slices of x's last axis, a scale by -1, the concat, the
product with sin, the sum; either operand order) becomes Paddle's
fused_rotary_position_embedding(q=x, sin, cos, use_neox_rotary_style=False): one pass over x
instead of seven ops. Matched for x [B, S, H, D] and sin / cos [1, S, 1, D], or [S, 1, D] made
by unsqueeze2 of an [S, D] table (the op reads that table), or a decode step's [B, S, 1, D]
rows gathered from a [rows, D] table at the flattened position ids [B, S] and reshaped (the op
reads the table and the ids: it checks at run time that the ids are [B, S], so the reshape's
dims are x's B and S wherever the sum keeps x's dims, which a rotation does); every
intermediate must be read by the next op only."""

from .graph import other_operand


def _product(g, out):
    """(the op, its operands) where `out` is written by an axis -1 elementwise_mul."""
    op = g.writer(out)
    if op is None or op.type != "elementwise_mul" or op.attr("axis") != -1:
        return None, ()
    return op, (op.input("X")[0], op.input("Y")[0])


def _last_axis_slice(g, name, rank):
    """(op, x, start, end) of a plain slice of one last-axis range writing `name`, or None."""
    op = g.writer(name)
    if op is None or op.type != "slice":
        return None
    if any(
        op.input(t) for t in ("StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList")
    ):
        return None
    if list(op.attr("axes")) not in ([-1], [rank - 1]) or list(op.attr("decrease_axis") or []):
        return None
    return op, op.input("Input")[0], op.attr("starts")[0], op.attr("ends")[0]


def _table(g, name, s):
    """The [S, D] or [1, S, 1, D] table `name` ([S, 1, D] or [1, S, 1, D]) is, or None."""
    shape = g.shape(name)
    if shape is not None and len(shape) == 4 and shape[0] == 1 and shape[2] == 1:
        return name
    op = g.writer(name)
    if shape is None or len(shape) != 3 or shape[1] != 1 or op is None or op.type != "unsqueeze2":
        return None
    if list(op.attr("axes")) not in ([1], [-2]) or op.input("AxesTensor"):
        return None
    table = op.input("X")[0]
    ts = g.shape(table)
    if ts is None or len(ts) != 2 or (s >= 0 and ts[0] not in (s, -1)):
        return None
    return table


def _gathered(g, name, d):
    """(table, position_ids) where `name` is reshape2(gather(table [rows, D], flatten(ids [B, S]),
    axis 0)) to [B, S, 1, D], or None."""
    shape, op = g.shape(name), g.writer(name)
    if shape is None or len(shape) != 4 or shape[2:] != [1, d] or op is None:
        return None
    if op.type != "reshape2":
        return None
    gather = g.writer(op.input("X")[0])
    if gather is None or gather.type != "gather" or gather.input("Axis") or gather.attr("axis"):
        return None
    table, flat = gather.input("X")[0], gather.input("Index")[0]
    ts = g.shape(table)
    flatten = g.writer(flat)
    if ts is None or len(ts) != 2 or ts[1] != d or flatten is None:
        return None
    if flatten.type != "flatten_contiguous_range":
        return None
    ids = flatten.input("X")[0]
    ids_shape = g.shape(ids)
    if ids_shape is None or len(ids_shape) != 2 or flatten.attr("start_axis") != 0:
        return None
    if flatten.attr("stop_axis") not in (-1, 1) or g.block.var(ids).dtype != "int64":
        return None
    return table, ids


def _match(g, add):
    """(ops, x, sin, cos, position_ids or None) of the rotation whose final sum is `add`, or
    None."""
    if add.attr("axis") != -1:
        return None
    terms = add.input("X") + add.input("Y")
    for rot_out, plain_out in (terms, terms[::-1]):
        rot, rot_args = _product(g, rot_out)
        plain, _ = _product(g, plain_out)
        if rot is None or plain is None:
            continue
        for cat_name, sin in (rot_args, rot_args[::-1]):
            cat = g.writer(cat_name)
            if cat is None or cat.type != "concat" or len(cat.input("X")) != 2:
                continue
            neg, low = cat.input("X")
            scale = g.writer(neg)
            if scale is None or scale.type != "scale" or scale.input("ScaleTensor"):
                continue
            if scale.attr("scale") != -1.0 or scale.attr("bias") != 0.0:
                continue
            high = _last_axis_slice(g, scale.input("X")[0], 4)
            first = _last_axis_slice(g, low, 4)
            if high is None or first is None or high[1] != first[1]:
                continue
            x = high[1]
            xs = g.shape(x)
            if xs is None or len(xs) != 4 or xs[-1] <= 0 or xs[-1] % 2:
                continue
            half = xs[-1] // 2
            if (first[2], first[3]) != (0, half) or high[2] != half or high[3] < xs[-1]:
                continue
            if cat.attr("axis") not in (-1, 3):
                continue
            cos = other_operand(plain, x)
            if cos is None:
                continue
            cos_t, sin_t, ids = _table(g, cos, xs[1]), _table(g, sin, xs[1]), None
            if cos_t is None and sin_t is None:  # a decode step's rows at the position ids
                cos_g, sin_g = _gathered(g, cos, xs[-1]), _gathered(g, sin, xs[-1])
                if cos_g is not None and sin_g is not None and cos_g[1] == sin_g[1]:
                    (cos_t, ids), sin_t = cos_g, sin_g[0]
            if cos_t is None or sin_t is None or g.shape(cos_t) != g.shape(sin_t):
                continue
            out_shape = g.shape(add.output("Out")[0])
            if out_shape is None or len(out_shape) != 4:
                continue
            if any(a >= 0 and b >= 0 and a != b for a, b in zip(out_shape, xs)):
                continue  # the tables broadcast x to other dims: not a rotation
            ops = [plain, first[0], high[0], scale, cat, rot, add]
            inner = [(neg, cat), (low, cat), (cat_name, rot), (rot_out, add), (plain_out, add)]
            inner.append((scale.input("X")[0], scale))
            if all(g.intermediate(n, r) for n, r in inner):
                return ops, x, sin_t, cos_t, ids
    return None


def fuse_rotary(g):
    """Fuses the first written-out rotate_half rotation it finds into one
    fused_rotary_position_embedding op.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    for add in g.ops("elementwise_add"):
        found = _match(g, add)
        if found is None:
            continue
        ops, x, sin, cos, ids = found
        inputs = {"q": [x], "sin": [sin], "cos": [cos]}
        if ids is not None:
            inputs["position_ids"] = [ids]
        attrs = {"use_neox_rotary_style": False}
        outputs = {"out_q": add.output("Out")}
        if g.replace(ops, "fused_rotary_position_embedding", inputs, outputs, attrs):
            return True
    return False
