"""fold_repeat_kv: grouped-query attention (LLaMA-2/3, Qwen2, Mistral: H query heads over Hkv
key / value heads) as PaddleNLP's and Paddle's model code writes it, each K / V head repeated for
rep = H / Hkv query heads before the products::

    K_rep = transpose2(reshape2(expand_v2(unsqueeze2(kv, [-2]), [.., .., Hkv, rep, D]),
                                [0, 0, H, D]), [0, 2, 1, 3])
            (tile for expand_v2, flatten_contiguous_range of axes 2-3 for reshape2 likewise;
             or K_rep = transpose2(repeat_interleave(kv, rep, axis 2), [0, 2, 1, 3]))
    out   = matmul_v2(X, K_rep, trans_y)                          (Q K^T, or P V)

becomes the same products with each group of rep query heads as rows of one matrix::

    out = reshape2(matmul_v2(reshape2(X, [0, Hkv, -1, 0]), transpose2(kv, [0, 2, 1, 3]),
                             trans_y), [0, H, -1, 0])

Query head h = g * rep + r reads K / V head g in both (the repeat puts the copies of head g next
to each other), so every product is the same (summed in another order where the GEMM that takes
rep times the rows sums differently: float32 rounding). The repeated keys and values (rep times
the cache, copied twice per layer and step) are never made, and at decode each product has rep
rows instead of one. Left alone: another axis order, a repeat read by
anything else (or fetched), X transposed, dims unknown where they matter."""


def _only(g, name, reader, op_type):
    """The op of `op_type` writing `name`, a temporary only `reader` reads, XShape unread."""
    w = g.writer(name)
    if w is None or w.type != op_type or not g.intermediate(name, reader):
        return None
    if "XShape" in w.desc.outputs() and any(g.readers.get(n) for n in w.output("XShape")):
        return None
    return w


def _static(op, *params):
    """No tensor input overrides the op's attributes."""
    return not any(op.input(p) for p in params if p in op.desc.inputs())


def _repeat(g, y, mm):
    """y = transpose2(reshape2(expand_v2 / tile(unsqueeze2(kv)))) or
    transpose2(repeat_interleave(kv)) read only by `mm`:
    (kv, Hkv, rep, [ops]); else None."""
    tr = _only(g, y, mm, "transpose2")
    if tr is None or list(tr.attr("axis")) != [0, 2, 1, 3]:
        return None
    ri = _only(g, tr.input("X")[0], tr, "repeat_interleave")
    if ri is not None:  # paddle.repeat_interleave(kv, rep, axis=2)
        kv = ri.input("X")[0]
        ks = g.shape(kv)
        if not _static(ri, "RepeatsTensor") or ks is None or len(ks) != 4 or ks[2] <= 0:
            return None
        if ri.attr("dim") not in (2, -2) or ri.attr("Repeats") <= 1:
            return None
        return kv, ks[2], ri.attr("Repeats"), [ri, tr]
    merge = g.writer(tr.input("X")[0])  # the repeat's axis merged into the heads'
    if merge is None or merge.type not in ("reshape2", "flatten_contiguous_range"):
        return None
    rs = _only(g, tr.input("X")[0], tr, merge.type)
    if rs is None or (rs.type == "reshape2" and not _static(rs, "Shape", "ShapeTensor")):
        return None
    if rs.type == "flatten_contiguous_range" and (
        rs.attr("start_axis") != 2 or rs.attr("stop_axis") not in (3, -2)
    ):
        return None
    rep_op = g.writer(rs.input("X")[0])
    if rep_op is None or rep_op.type not in ("expand_v2", "tile"):
        return None
    rep_op = _only(g, rs.input("X")[0], rs, rep_op.type)
    if rep_op is None:
        return None
    un = _only(g, rep_op.input("X")[0], rep_op, "unsqueeze2")
    if un is None or not _static(un, "AxesTensor", "AxesTensorList"):
        return None
    kv = un.input("X")[0]
    ks = g.shape(kv)
    if ks is None or len(ks) != 4 or list(un.attr("axes")) not in ([-2], [3]):
        return None
    hkv, d = ks[2], ks[3]
    if hkv <= 0 or d <= 0:
        return None
    if rep_op.type == "expand_v2":
        if not _static(rep_op, "Shape", "expand_shapes_tensor"):
            return None
        shape = list(rep_op.attr("shape"))
        if len(shape) != 5 or shape[:2] != [-1, -1] or shape[2] not in (-1, hkv):
            return None
        if shape[4] not in (-1, d):
            return None
        rep = shape[3]
    else:
        if not _static(rep_op, "RepeatTimes", "repeat_times_tensor"):
            return None
        times = list(rep_op.attr("repeat_times"))
        if len(times) != 5 or times[:3] != [1, 1, 1] or times[4] != 1:
            return None
        rep = times[3]
    if rep <= 1:
        return None
    if rs.type == "reshape2" and list(rs.attr("shape")) not in (
        [0, 0, hkv * rep, d],
        [0, 0, hkv * rep, -1],
    ):
        return None
    return kv, hkv, rep, [un, rep_op, rs, tr]


def _fold_one(g, mm):
    if mm.attr("trans_x"):
        return False
    x, out = mm.input("X")[0], mm.output("Out")[0]
    found = _repeat(g, mm.input("Y")[0], mm)
    xs = g.shape(x)
    if found is None or xs is None or len(xs) != 4:
        return False
    kv, hkv, rep, chain = found
    trans_y = bool(mm.attr("trans_y"))
    if xs[1] != hkv * rep or out in (x, kv):
        return False
    old = chain + [mm]
    idx = sorted(g.index(o) for o in old)
    # kv is read where the product was now: nothing between the repeat's start and there may
    # write it (X is read where it was).
    if g.writers_between([kv], idx[0], idx[-1]):
        return False
    block = g.block
    kvt, kvt_shape = g.new_temporary("repeat_kv.kt", kv), g.new_temporary("repeat_kv.xs", kv)
    xg, xg_shape = g.new_temporary("repeat_kv.x", x), g.new_temporary("repeat_kv.xs", x)
    prod, prod_shape = g.new_temporary("repeat_kv.out", out), g.new_temporary("repeat_kv.xs", out)
    for i in reversed(idx):
        block._remove_op(i)
    pos = idx[-1] - (len(idx) - 1)
    new = [
        ("transpose2", {"X": [kv]}, {"Out": [kvt], "XShape": [kvt_shape]}, {"axis": [0, 2, 1, 3]}),
        ("reshape2", {"X": [x]}, {"Out": [xg], "XShape": [xg_shape]}, {"shape": [0, hkv, -1, 0]}),
        (
            "matmul_v2",
            {"X": [xg], "Y": [kvt]},
            {"Out": [prod]},
            {"trans_x": False, "trans_y": trans_y},
        ),
        (
            "reshape2",
            {"X": [prod]},
            {"Out": [out], "XShape": [prod_shape]},
            {"shape": [0, hkv * rep, -1, 0]},
        ),
    ]
    for k, (op_type, inputs, outputs, attrs) in enumerate(new):
        block._insert_op(pos + k, op_type, inputs=inputs, outputs=outputs, attrs=attrs)
    return True


def fold_repeat_kv(g):
    """Folds the first repeat of grouped-query attention's keys or values it finds into the
    product that reads them (each group of query heads as rows of one product).

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    return any(_fold_one(g, mm) for mm in g.ops("matmul_v2"))
