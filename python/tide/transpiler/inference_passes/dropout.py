"""delete_dropout: an inference dropout that passes its input through (is_test with
upscale_in_train, or a probability of 0) goes; its readers read its input (Paddle's
delete_dropout_op_pass). downgrade_in_infer's inference scale by 1 - p stays, and so does a dropout of a rank-2 tensor (a
classifier head's, e.g. MobileNet's: the transformer passes leave CNN programs as they were)."""


def _identity(op):
    if not op.attr("is_test"):
        return False
    p = float(op.attr("dropout_prob"))
    return op.attr("dropout_implementation") == "upscale_in_train" or p == 0.0


def delete_dropout(g):
    """Removes a dropout that is the identity at inference (the module says when), renaming its
    output to its input.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    for op in g.ops("dropout"):
        if not _identity(op) or op.input("Seed"):
            continue
        x, out = op.input("X")[0], op.output("Out")[0]
        if len(g.shape(x) or []) < 3:
            continue
        if out in g.keep or g.persistable(out) or not g.single_assignment(out):
            continue
        if any(g.readers.get(m) for m in op.output("Mask")):
            continue
        readers = g.readers.get(out, [])
        if any(isinstance(r, str) or r.block.idx != 0 or r.type == "fetch" for r in readers):
            continue
        i = g.index(op)
        # X keeps its value until the last reader of Out.
        last = max([g.index(r) for r in readers] + [i])
        if any(x in o.output_arg_names for o in g.block.ops[i + 1 : last + 1]):
            continue
        for r in readers:
            r.desc.rename_input(out, x)
        g.block._remove_op(i)
        return True
    return False
