"""fuse_preln_skip_layernorm: a pre-norm transformer's residual elementwise_add(X, Y) (two
tensors of the same declared dims) whose sum is read by a layer_norm with Scale and Bias (its
Mean and Variance unread) and by later ops (the next residual add, a fetch) becomes Paddle's
preln_skip_layernorm (its preln_skip_layernorm_fuse_pass): Out_0 the layer_norm's Y, Out_1 the
sum under its own name, so its other readers read it unchanged. It runs after
fuse_skip_layernorm, which takes the sums only a layer_norm reads. Left alone: an add that
broadcasts, a sum read by an op before the layer_norm, or in a sub-block, or written twice."""

from .skip_layernorm import residual_layer_norms


def fuse_preln_skip_layernorm(g):
    """Fuses a residual elementwise_add read by a layer_norm and by later ops into one
    preln_skip_layernorm op.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    for add, ln, inputs, attrs in residual_layer_norms(g):
        s = ln.input("X")[0]
        if g.persistable(s) or not g.single_assignment(s) or ln.input_arg_names.count(s) != 1:
            continue
        others = [r for r in g.readers.get(s, []) if r is not ln]
        if not others or not all(_reads_after(g, r, ln) for r in others):
            continue
        outputs = {"Out_0": ln.output("Y"), "Out_1": [s]}
        if g.replace([add, ln], "preln_skip_layernorm", inputs, outputs, attrs):
            return True
    return False


def _reads_after(g, reader, ln):
    """`reader` (an op of block 0 after the layer_norm, or a name kept outside the program)
    still reads the sum once the fused op, in the layer_norm's place, has written it."""
    if isinstance(reader, str):
        return True
    return reader.block.idx == 0 and g.index(reader) > g.index(ln)
