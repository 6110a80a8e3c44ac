"""fuse_skip_layernorm: elementwise_add(X, Y) of two tensors of the same declared dims (a
residual connection) whose only reader is a layer_norm with Scale and Bias, its Mean and
Variance unread, becomes Paddle's skip_layernorm (its skip_layernorm_fuse_pass): one pass
writes the sum and a second normalises it. Left alone: an add that broadcasts (declared dims
that differ, an axis other than -1), a sum read by another op or fetched (a pre-norm model's:
fuse_preln_skip_layernorm's)."""


def fuse_skip_layernorm(g):
    """Fuses a residual elementwise_add read only by a layer_norm into one skip_layernorm op.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    for ln in g.ops("layer_norm"):
        s = ln.input("X")[0]
        add = g.writer(s)
        if add is None or not g.intermediate(s, ln) or not residual_layer_norm(g, add, ln):
            continue
        inputs = {
            "X": add.input("X"),
            "Y": add.input("Y"),
            "Scale": ln.input("Scale"),
            "Bias": ln.input("Bias"),
        }
        attrs = {"epsilon": ln.attr("epsilon"), "begin_norm_axis": ln.attr("begin_norm_axis")}
        if g.replace([add, ln], "skip_layernorm", inputs, {"Out": ln.output("Y")}, attrs):
            return True
    return False


def residual_layer_norm(g, add, ln):
    """`add` is a residual elementwise_add (X and Y of the same declared dims and dtype, rank
    >= 2, axis -1) and `ln` a layer_norm of its sum with Scale and Bias whose Mean and Variance
    nothing reads: the pair both fused ops replace."""
    if add.type != "elementwise_add":
        return False
    x, y = add.input("X")[0], add.input("Y")[0]
    xs = g.shape(x)
    if add.attr("axis") != -1 or xs is None or xs != g.shape(y) or len(xs) < 2:
        return False
    if g.block.var(x).dtype != g.block.var(y).dtype:
        return False
    if not (ln.input("Scale") and ln.input("Bias")):
        return False
    return _unread(g, ln, "Mean") and _unread(g, ln, "Variance")


def _unread(g, op, param):
    return not any(g.readers.get(n) or n in g.keep for n in op.desc.outputs().get(param, []))
