"""fuse_qkv: the fc ops (no activation, a bias each) that read the same input, as the query,
key and value projections of an attention do, become one fc on their weights concatenated
along N (once, here, into new parameters) and a split of its output into the old outputs: one
GEMM of N = 3H instead of three of H. Matched for two or more such fc ops of the same
in_num_col_dims and K whose outputs are written once; the fused fc runs where the first did."""

import numpy as np


def _plain_fc(g, op):
    return (
        not op.attr("fuse_activation")
        and not op.attr("activation_type")
        and op.input("Bias")
        and g.value(op.input("W")[0]) is not None
        and g.value(op.input("Bias")[0]) is not None
        and g.single_assignment(op.output("Out")[0])
    )


def fuse_qkv(g):
    """Fuses three fc ops reading the same input (the Q, K and V projections) into one fc on
    the concatenated weights, followed by a split.

    Args:
        g (Graph): the program's block 0 as the passes see it.

    Returns:
        bool: whether it changed the program.
    """
    groups = {}
    for op in g.ops("fc"):
        if _plain_fc(g, op):
            key = (op.input("Input")[0], op.attr("in_num_col_dims"), g.shape(op.input("W")[0])[0])
            groups.setdefault(key, []).append(op)
    for (x, ncd, _), ops in groups.items():
        if len(ops) < 2:
            continue
        ws = [g.value(op.input("W")[0]) for op in ops]
        bs = [g.value(op.input("Bias")[0]).reshape(-1) for op in ops]
        outs = [op.output("Out")[0] for op in ops]
        if x in outs or len(set(outs)) != len(outs):
            continue
        lo, hi = g.index(ops[0]), g.index(ops[-1])
        if any(x in op.output_arg_names for op in g.block.ops[lo:hi]):
            continue  # the fused fc reads X where the first did
        first = ops[0]
        w = g.new_parameter(
            first.input("W")[0] + "_qkv", np.concatenate(ws, axis=1), ops[0].input("W")[0]
        )
        b = g.new_parameter(
            first.input("Bias")[0] + "_qkv", np.concatenate(bs), ops[0].input("Bias")[0]
        )
        fused = g.new_temporary(outs[0] + "_qkv", like=outs[0])
        block, at = g.block, g.index(first)
        for op in ops:
            block._remove_op(g.index(op))
        block._insert_op(
            at,
            "fc",
            inputs={"Input": [x], "W": [w], "Bias": [b]},
            outputs={"Out": [fused]},
            attrs={"in_num_col_dims": ncd},
        )
        block._insert_op(
            at + 1,
            "split",
            inputs={"X": [fused]},
            outputs={"Out": outs},
            attrs={"axis": -1, "sections": [int(a.shape[1]) for a in ws]},
        )
        return True
    return False
