"""drop_unread_outputs: the optional outputs of an RMS normalisation that only its gradient reads
(rms_norm's invvar, fused_rms_norm_quant's inv_var) or that nothing reads (fused_rms_norm_quant's
residual_out, x itself when there is no residual), where no op reads, fetches or keeps them: the
op stops writing them (Paddle's saved programs name them all). The kernels then skip a copy of x
and a row of statistics, and bf16 inference, which keeps an op writing a program result in
float32, can put the normalisation in bfloat16."""

# op type -> its dispensable outputs its kernels skip when absent
_OPTIONAL = {
    "rms_norm": ("invvar",),
    "fused_rms_norm_quant": ("residual_out", "inv_var"),
}


def drop_unread_outputs(g):
    """Removes the unread optional outputs (the module says which) of one op.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    for op in g.block.ops:
        for param in _OPTIONAL.get(op.type, ()):
            names = op.output(param)
            if names and all(_unread(g, n) for n in names):
                op.desc.set_output(param, [])
                for n in names:
                    g.block._remove_var(n)
                return True
    return False


def _unread(g, name):
    return not g.readers.get(name) and not g.persistable(name) and g.single_assignment(name)
