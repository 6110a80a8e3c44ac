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
    for add, ln, inputs, attrs in residual_layer_norms(g):
        if not g.intermediate(ln.input("X")[0], ln):
            continue
        if g.replace([add, ln], "skip_layernorm", inputs, {"Out": ln.output("Y")}, attrs):
            return True
    return False


def residual_layer_norms(g):
    """The pairs both fused ops replace: a residual elementwise_add (X and Y of the same declared
    dims and dtype, rank >= 2, axis -1) and a layer_norm of its sum with Scale and Bias whose
    Mean and Variance nothing reads; with the fused op's inputs and attributes.

    Yields:
        (add op, layer_norm op, inputs, attrs)
    """
    for ln in g.ops("layer_norm"):
        add = g.writer(ln.input("X")[0])
        if add is None or add.type != "elementwise_add":
            continue
        x, y = add.input("X")[0], add.input("Y")[0]
        xs = g.shape(x)
        if add.attr("axis") != -1 or xs is None or xs != g.shape(y) or len(xs) < 2:
            continue
        if g.block.var(x).dtype != g.block.var(y).dtype:
            continue
        if not (ln.input("Scale") and ln.input("Bias")):
            continue
        if not (_unread(g, ln, "Mean") and _unread(g, ln, "Variance")):
            continue
        inputs = {"X": [x], "Y": [y], "Scale": ln.input("Scale"), "Bias": ln.input("Bias")}
        attrs = {"epsilon": ln.attr("epsilon"), "begin_norm_axis": ln.attr("begin_norm_axis")}
        yield add, ln, inputs, attrs


def _unread(g, op, param):
    return not any(g.readers.get(n) or n in g.keep for n in op.desc.outputs().get(param, []))
