"""Constant folding for inference programs (ONNX Runtime's and Paddle's constant_folding_pass):
the ops of block 0 whose every input is a constant (a parameter in the scope, or an earlier such
op's output) run once, here, and the values their other readers read become parameters. A
LLaMA-style decoder saved by Paddle computes its rotary tables (range, pow, einsum, concat, sin,
cos over every position) and its constant masks on every run otherwise.

Never folded: ops that draw random numbers (a `seed` attribute, or a known random op), ops with
side effects or sub-blocks (feed, fetch, print, save / load, control flow, collectives), outputs
written by more than one op, persistables, LoD or non-tensor outputs, and anything read outside
the program (`keep`: fetch targets stay as they are computed). The folded values' total is
capped (`max_bytes`): a constant bigger than that (a [S, S] mask of a long context) is cheaper
to compute than to keep."""

import collections

import numpy as np

from .. import unique_name

# Ops that must run every time, or cannot run here: random, side effects, control flow,
# communication, I/O.
_NEVER = {
    "feed",
    "fetch",
    "print",
    "save",
    "load",
    "save_combine",
    "load_combine",
    "delete_var",
    "while",
    "conditional_block",
    "recurrent",
    "increment",
    "uniform_random",
    "uniform_random_batch_size_like",
    "gaussian_random",
    "gaussian_random_batch_size_like",
    "truncated_gaussian_random",
    "randint",
    "randperm",
    "bernoulli",
    "multinomial",
    "dropout",
    "sampling_id",
    "random_crop",
    "top_p_sampling",
    "send",
    "recv",
    "barrier",
    "listen_and_serv",
}
_LOD_TENSOR = 7


def _foldable_type(op):
    if op.type in _NEVER or op.type.startswith("c_") or op.has_attr("seed"):
        return False
    return not any(op.has_attr(a) for a in ("sub_block", "sub_blocks"))


def fold_constants(program, scope, executor, keep=(), max_bytes=64 << 20, prefix="folded"):
    """Folds block 0's constant ops of `program` (values read from and stored into `scope`,
    computed by `executor`). Returns the names of the new parameters."""
    block = program.global_block()
    keep = set(keep)

    def is_const_param(name):
        if not block.has_var(name):
            return False
        v = block.var(name)
        if not v.persistable or v.desc.type != _LOD_TENSOR:
            return False
        var = scope.find_var(name)
        return var is not None and var.is_initialized() and var.get_tensor()._is_initialized()

    writes = collections.Counter()
    readers = collections.defaultdict(list)
    for b in range(program.num_blocks):
        for op in program.block(b).ops:
            writes.update(op.output_arg_names)
            for n in op.input_arg_names:
                readers[n].append(op)
            if b != 0:  # a sub-block's writes make a name variable where it is read
                writes.update(op.output_arg_names)
    const = set()
    folded = []
    for op in block.ops:
        if not _foldable_type(op) or not op.output_arg_names:
            continue
        ins, outs = op.input_arg_names, op.output_arg_names
        if not all(n in const or is_const_param(n) for n in ins):
            continue
        if any(
            writes[o] != 1
            or o in keep
            or not block.has_var(o)
            or block.var(o).persistable
            or block.var(o).desc.type != _LOD_TENSOR
            or block.var(o).lod_level
            for o in outs
        ):
            continue
        folded.append(op)
        const.update(outs)
    folded_ids = {id(op) for op in folded}
    # The values other ops read: they become parameters; the rest of `const` goes with its ops.
    needed = sorted(n for n in const if any(id(r) not in folded_ids for r in readers.get(n, ())))
    if not needed:
        return []
    evaluate = program.clone()
    keep_idx = {i for i, op in enumerate(block.ops) if id(op) in folded_ids}
    eb = evaluate.global_block()
    for i in reversed(range(len(eb.ops))):
        if i not in keep_idx:
            eb._remove_op(i)
    values = executor.run(evaluate, feed={}, fetch_list=needed, scope=scope)
    if sum(np.asarray(v).nbytes for v in values) > max_bytes:
        return []
    made = []
    for name, value in zip(needed, values):
        value = np.asarray(value, order="C")  # (np.ascontiguousarray makes 0-D values 1-D)
        fresh = unique_name.generate("%s.%s" % (prefix, name))
        while block.has_var(fresh) or scope.find_var(fresh) is not None:
            fresh = unique_name.generate("%s.%s" % (prefix, name))
        block.create_var(
            name=fresh, shape=list(value.shape), dtype=block.var(name).dtype, persistable=True
        )
        scope.var(fresh).get_tensor().set(value, executor.place, False)
        for r in readers[name]:
            if id(r) not in folded_ids:
                r.desc.rename_input(name, fresh)
        made.append(fresh)
    for i in sorted(keep_idx, reverse=True):
        block._remove_op(i)
    program._bump()
    return made
