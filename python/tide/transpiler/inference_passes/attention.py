"""fuse_attention: the attention of paddle.nn.MultiHeadAttention as Paddle 2.x and 3.x save it,

    Q, K, V = transpose2(reshape2(q / k / v, [0, 0, heads, D]), [0, 2, 1, 3])
    scores  = matmul_v2(scale(Q, alpha), K, trans_y)      (or the scale on the scores)
    P       = softmax(scores + Mask, axis -1)              (the mask's add optional)
    out     = reshape2(transpose2(matmul_v2(P, V), [0, 2, 1, 3]), [0, 0, H])

becomes one fused_multihead_attention(Q = q, K = k, V = v, Mask) -> out (its kernels read each
head's columns in place: no reshape or transpose is left). Inference dropouts on P are gone
before (delete_dropout). Left alone: other permutations or reshapes, a softmax on another axis,
a mask of rank > 4 or whose dims do not broadcast to the scores', any intermediate read by
another op (or fetched), a scale with a bias.

attention_reads_qkv: then, when Q, K and V are the three equal parts of one split (fuse_qkv's)
that nothing else reads, the attention reads the fused projection's output as QKV and the split
goes."""


def _temp_writer(g, name, op_type, reader):
    """The op of `op_type` writing `name`, a temporary only `reader` reads; else None."""
    w = g.writer(name)
    if w is None or w.type != op_type or not g.intermediate(name, reader):
        return None
    return w


def _unused(g, op, param):
    return not any(g.readers.get(n) for n in op.desc.outputs().get(param, []))


def _scale_factor(op):
    """A scale op's factor when it only multiplies (no bias, no ScaleTensor), else None."""
    if op.input("ScaleTensor") or float(op.attr("bias")) != 0.0:
        return None
    return float(op.attr("scale"))


def _heads(g, t, reader):
    """t = transpose2(reshape2(x, [0, 0, heads, D]), [0, 2, 1, 3]) read only by `reader`:
    (x, heads, D, [ops]); else None."""
    tr = _temp_writer(g, t, "transpose2", reader)
    if tr is None or list(tr.attr("axis")) != [0, 2, 1, 3] or not _unused(g, tr, "XShape"):
        return None
    r = _temp_writer(g, tr.input("X")[0], "reshape2", tr)
    if r is None or r.input("Shape") or r.input("ShapeTensor") or not _unused(g, r, "XShape"):
        return None
    shape = list(r.attr("shape"))
    x = r.input("X")[0]
    xs = g.shape(x)
    if len(shape) != 4 or shape[:2] != [0, 0] or min(shape[2:]) <= 0 or xs is None:
        return None
    if len(xs) != 3 or xs[2] != shape[2] * shape[3]:
        return None
    return x, shape[2], shape[3], [r, tr]


def _merge_heads(g, ctx, reader_of):
    """reshape2(transpose2(ctx, [0, 2, 1, 3]), [0, 0, H]): (out, [ops]); else None."""
    tr = g.only_reader(ctx)
    if tr is None or tr.type != "transpose2" or not g.intermediate(ctx, tr):
        return None
    if list(tr.attr("axis")) != [0, 2, 1, 3] or not _unused(g, tr, "XShape"):
        return None
    t = tr.output("Out")[0]
    r = g.only_reader(t)
    if r is None or r.type != "reshape2" or not g.intermediate(t, r):
        return None
    if r.input("Shape") or r.input("ShapeTensor") or not _unused(g, r, "XShape"):
        return None
    if list(r.attr("shape")) not in ([0, 0, reader_of], [0, 0, -1]):
        return None
    return r.output("Out")[0], [tr, r]


def _mask_fits(g, mask, scores):
    """The mask's declared dims broadcast to the scores' [B, heads, Sq, Sk], numpy-style."""
    ms = g.shape(mask)
    if ms is None or len(ms) > 4 or g.block.var(mask).dtype != g.block.var(scores).dtype:
        return False
    full = g.shape(scores)
    if full is None or len(full) != 4:
        return False
    return all(m in (1, -1) or f in (-1, m) for m, f in zip(ms[::-1], full[::-1]))


def _fuse_one(g, sm):
    """The pattern around softmax `sm` fused; False when it does not match."""
    if sm.attr("axis") not in (-1, 3):
        return False
    ops, alpha, mask = [sm], 1.0, None
    s = sm.input("X")[0]
    w = g.writer(s)
    if w is not None and w.type == "elementwise_add" and g.intermediate(s, sm):
        x, y = w.input("X")[0], w.input("Y")[0]
        if w.attr("axis") != -1 or x == y:
            return False
        kinds = [g.writer(n).type if g.writer(n) is not None else None for n in (x, y)]
        scores = x if kinds[0] in ("matmul_v2", "scale") else y
        mask = y if scores == x else x
        if not _mask_fits(g, mask, scores) or g.shape(s) != g.shape(scores):
            return False
        ops.append(w)
        s, reader = scores, w
    else:
        reader = sm
    w = g.writer(s)
    if w is not None and w.type == "scale" and g.intermediate(s, reader):
        f = _scale_factor(w)
        if f is None:
            return False
        alpha *= f
        ops.append(w)
        s, reader = w.input("X")[0], w
    qk = _temp_writer(g, s, "matmul_v2", reader)
    if qk is None or qk.attr("trans_x") or not qk.attr("trans_y"):
        return False
    ops.append(qk)
    q, k = qk.input("X")[0], qk.input("Y")[0]
    sc = _temp_writer(g, q, "scale", qk)
    if sc is not None:
        f = _scale_factor(sc)
        if f is None:
            return False
        alpha *= f
        ops.append(sc)
        q_reader, q = sc, sc.input("X")[0]
    else:
        q_reader = qk
    qh, kh = _heads(g, q, q_reader), _heads(g, k, qk)
    p = sm.output("Out")[0]
    pv = g.only_reader(p)
    if qh is None or kh is None or pv is None or pv.type != "matmul_v2":
        return False
    if (
        pv.input("X") != [p]
        or pv.attr("trans_x")
        or pv.attr("trans_y")
        or not g.intermediate(p, pv)
    ):
        return False
    vh = _heads(g, pv.input("Y")[0], pv)
    if vh is None or len({(h[1], h[2]) for h in (qh, kh, vh)}) != 1:
        return False
    heads, size = qh[1], qh[2]
    merged = _merge_heads(g, pv.output("Out")[0], heads * size)
    if merged is None:
        return False
    out, tail = merged
    ops += qh[3] + kh[3] + vh[3] + [pv] + tail
    inputs = {"Q": [qh[0]], "K": [kh[0]], "V": [vh[0]]}
    if mask is not None:
        inputs["Mask"] = [mask]
    if out in (qh[0], kh[0], vh[0], mask):
        return False
    attrs = {"head_number": heads, "alpha": alpha}
    return g.replace(ops, "fused_multihead_attention", inputs, {"Out": [out]}, attrs)


def fuse_attention(g):
    """Fuses the first attention it finds (scaled Q·K^T, the mask, softmax, ·V, the heads
    reshaped and transposed) into one fused_multihead_attention op.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    return any(_fuse_one(g, sm) for sm in g.ops("softmax"))


def attention_reads_qkv(g):
    """Makes a fused_multihead_attention whose Q, K and V are the three outputs of one split
    read the split's input as QKV instead, and drops the split.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    for att in g.ops("fused_multihead_attention"):
        if not att.input("Q"):
            continue
        names = [att.input(p)[0] for p in ("Q", "K", "V")]
        split = g.writer(names[0])
        if split is None or split.type != "split" or split.output("Out") != names:
            continue
        x = split.input("X")[0]
        xs = g.shape(x)
        if split.input("AxisTensor") or split.input("SectionsTensorList") or xs is None:
            continue
        if len(xs) != 3 or xs[2] <= 0 or split.attr("axis") not in (-1, 2):
            continue
        sections = list(split.attr("sections")) or [xs[2] // 3] * 3
        if split.attr("num") not in (0, 3) or len(set(sections)) != 1 or len(sections) != 3:
            continue
        if not all(g.intermediate(n, att) for n in names):
            continue
        inputs = {"QKV": [x]}
        if att.input("Mask"):
            inputs["Mask"] = att.input("Mask")
        attrs = {"head_number": att.attr("head_number"), "alpha": att.attr("alpha")}
        if g.replace(
            [split, att], "fused_multihead_attention", inputs, {"Out": att.output("Out")}, attrs
        ):
            return True
    return False
