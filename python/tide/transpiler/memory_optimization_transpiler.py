"""memory_optimize: Fluid's memory optimisation transpiler (its developer guide's "Transpiler").

Liveness analysis over a program's global block: after the op that last reads (or writes) a
temporary variable, a `delete_var` op (the core's own) lets go of its data, so a training step
holds each activation and gradient only as long as the rest of the step needs it. The memory goes
back to the allocator's cache and the next tensor of its size takes it: that is the reuse.

Fluid also renamed a new variable to a dead one of the same shape to write into its memory; Tide
does not, because ops may share memory between variables (reshape's output is a view of its
input, a feed shares the fed array), and writing into a "dead" variable's memory would change a
live one. Freeing is always safe: memory shared with a live variable stays alive through it. So
the pass never changes a result (tests/python/test_memory_optimize.py compares every output bit
for bit).

Not freed: persistable variables (parameters, optimizer state, learning rates), variables in
`skip_opt_set`, and anything a sub-block (while, conditional_block, recurrent) reads or writes,
which lives until the op that runs the sub-block is done. Fetch targets need no `skip_opt_set`:
the executor's prepared copy of the program keeps what a run fetches (its delete_var ops leave
those variables alone, core/executor/feed_fetch.h), so Fluid's `memory_optimize(main)` followed
by `exe.run(main, fetch_list=[avg_cost] + accuracy.metrics)` fetches the right values. Keeping a
variable only skips giving its memory back, so results stay bit-identical.
"""

from ..framework import Program
from .fuse_weight_updates import fuse_weight_updates as _fuse

DELETE_OP = "delete_var"


def _sub_block_names(program, op, seen=None):
    """Every variable name the ops of op's sub-blocks (recursively) read or write."""
    seen = set() if seen is None else seen
    names = set()
    for attr in op.attr_names:
        if op.desc.attr_type(attr) not in ("block", "blocks"):
            continue
        value = op.attr(attr)
        for b in value if isinstance(value, (list, tuple)) else [value]:
            idx = getattr(b, "idx", b)
            if idx in seen:
                continue
            seen.add(idx)
            for sub_op in program.block(idx).ops:
                names.update(sub_op.input_arg_names)
                names.update(sub_op.output_arg_names)
                names |= _sub_block_names(program, sub_op, seen)
    return names


def _last_uses(program, block):
    """{variable name: index of the last op of `block` that reads or writes it}."""
    last = {}
    for i, op in enumerate(block.ops):
        names = set(op.input_arg_names) | set(op.output_arg_names) | _sub_block_names(program, op)
        for name in names:
            last[name] = i
    return last


def _freeable(block, name, skip):
    if name in skip or name == "@EMPTY@" or not block.has_var(name):
        return False  # skipped, or declared outside block 0 (a sub-block's own variable)
    var = block.var(name)
    return not var.persistable and var.type in ("LOD_TENSOR", "LOD_TENSOR_ARRAY")


def memory_optimize(
    input_program,
    skip_opt_set=None,
    print_log=False,
    level=0,
    skip_grads=True,
    fuse_weight_updates=False,
):
    """Frees each temporary variable of `input_program`'s global block right after its last use
    (in place: the program gains `delete_var` ops). Returns the names freed.

    skip_opt_set: names (or Variables) never freed (what a run fetches is kept anyway, by the
    executor). skip_grads (True
    by default, as in Fluid) keeps every @GRAD variable; skip_grads=False frees them too. level
    is accepted for Fluid compatibility (level 0 and 1 behave the same). Running it twice frees
    nothing more.

    fuse_weight_updates=True first computes each fully connected layer's weight gradient straight
    into its SGD / momentum update where nothing else reads the gradient (fuse_weight_updates.py):
    those gradients are never stored, which changes results by float rounding only, and they
    cannot be fetched unless named in skip_opt_set."""
    if not isinstance(input_program, Program):
        raise TypeError("memory_optimize needs a Program, got %r" % (input_program,))
    if level not in (0, 1):
        raise ValueError("memory_optimize: level must be 0 or 1, got %r" % (level,))
    skip = set()
    for item in skip_opt_set or ():
        skip.add(getattr(item, "name", item))
    block = input_program.global_block()
    if fuse_weight_updates:
        fused = _fuse(input_program, skip)
        if print_log and fused:
            print("memory_optimize: weight gradients fused into their update: " + ", ".join(fused))
    if any(op.type == DELETE_OP for op in block.ops):
        return sorted(getattr(input_program, "_memory_optimized", set()))
    last = _last_uses(input_program, block)
    frees = {}  # op index -> names it is the last use of
    for name, i in last.items():
        if skip_grads and name.endswith("@GRAD"):
            continue
        if _freeable(block, name, skip):
            frees.setdefault(i, []).append(name)
    # Insert from the end so the indices of earlier ops stay valid.
    for i in sorted(frees, reverse=True):
        names = sorted(frees[i])
        # The role of the op it follows, so clone(for_test) drops it with a backward op.
        after = block.ops[i]
        role = after.attr("op_role") if after.has_attr("op_role") else 0
        block._insert_op(i + 1, DELETE_OP, inputs={"X": names}, attrs={"op_role": role})
        if print_log:
            print(
                "memory_optimize: after op #%d (%s) free %s"
                % (i, block.ops[i].type, ", ".join(names))
            )
    freed = {n for names in frees.values() for n in names}
    input_program._memory_optimized = freed
    return sorted(freed)


def release_memory(input_program, skip_opt_set=None):
    """Fluid's other name for the same pass."""
    return memory_optimize(input_program, skip_opt_set=skip_opt_set)
