"""fuse_weight_updates: a fully connected layer's weight gradient computed straight into its SGD
or momentum update, so the gradient never exists as a tensor of its own.

A training step otherwise holds, at the end of backward, every weight's gradient beside the weight
and its optimizer state: for an MLP a third of the step's peak. `mul_grad`'s Y@GRAD is
`flatten(X)^T Out@GRAD`, one GEMM; `fused_mul_weight_update` runs that GEMM with the velocity
(momentum) or the weight itself (SGD) as its accumulator, right after `mul_grad`, and the
optimizer op goes. It changes results by float rounding only (the GEMM adds into the velocity
where momentum added the stored gradient).

A weight is fused only where nothing else needs its gradient, as a plain update reads it:

- the gradient has one writer, a `mul_grad` whose Y is the parameter, and one reader, an `sgd`
  or a `momentum` without Nesterov, updating the parameter (and velocity) in place;
- nothing else reads it: gradient clipping, regularization, AMP's unscaling, data-parallel
  allreduce all do, so those programs are left as they are; nor is it in `skip_opt_set`, nor
  named in a sub-block (a `While` or a conditional block reads it while its block runs: gradient
  merging, for one), nor is the parameter or its velocity;
- no op between `mul_grad` and the update writes the parameter, the velocity, or what the GEMM
  reads; the update goes after the last op reading the parameter or the velocity and after the
  learning rate is computed.

A gradient fused away cannot be fetched: name it in `skip_opt_set` to keep it.
"""

from ..framework import OP_ROLE_OPTIMIZE, Program

FUSED_OP = "fused_mul_weight_update"
DELETE_OP = "delete_var"  # memory_optimize's
UPDATES = ("sgd", "momentum")  # the updates it fuses


def _names(op):
    return set(op.input_arg_names) | set(op.output_arg_names)


def _single(op, param, outputs=False):
    names = op.output(param) if outputs else op.input(param)
    return names[0] if len(names) == 1 else None


def _fusable_update(block, op, skip, in_sub_blocks):
    """(param, grad, velocity or None) of an in-place sgd / plain momentum op, else None."""
    if op.type not in UPDATES:
        return None
    if op.type == "momentum" and op.attr("use_nesterov"):
        return None
    param, grad = _single(op, "Param"), _single(op, "Grad")
    if not param or not grad or grad in skip or {param, grad} & in_sub_blocks:
        return None
    if _single(op, "ParamOut", True) != param:
        return None
    velocity = None
    if op.type == "momentum":
        velocity = _single(op, "Velocity")
        if not velocity or velocity in in_sub_blocks:
            return None
        if _single(op, "VelocityOut", True) != velocity:
            return None
    grad_var = block.vars.get(grad)
    if grad_var is not None and grad_var.persistable:  # kept across runs: someone reads it
        return None
    var = block.vars.get(param)
    if var is None or len(var.shape) != 2 or var.dtype not in ("float32", "float64"):
        return None
    return param, grad, velocity


def _fuse_one(block, j, param, grad, velocity):
    """Fuses the update at index j (of `param` by `grad`, with `velocity` for momentum) into its
    mul_grad where it can; returns whether it did."""
    ops = block.ops
    update = ops[j]
    writers = [i for i, o in enumerate(ops) if grad in o.output_arg_names]
    # memory_optimize's delete_var ops let go of the gradient after its last use: not readers.
    deleters = [o for o in ops if o.type == DELETE_OP and grad in o.input_arg_names]
    readers = [i for i, o in enumerate(ops) if grad in o.input_arg_names and o.type != DELETE_OP]
    if len(writers) != 1 or readers != [j] or writers[0] > j:
        return False
    w = writers[0]
    mul_grad = ops[w]
    if (
        mul_grad.type != "mul_grad"
        or mul_grad.input("Y") != [param]
        or mul_grad.output("Y@GRAD") != [grad]
        or mul_grad.attr("y_num_col_dims") != 1
    ):
        return False
    x, out_grad = _single(mul_grad, "X"), _single(mul_grad, "Out@GRAD")
    lr = _single(update, "LearningRate")
    if not x or not out_grad or not lr:
        return False
    state = {param, velocity} - {None}
    pos, freed = w, len(ops)
    for i in range(w + 1, j):
        op = ops[i]
        if set(op.output_arg_names) & (state | {x, out_grad}):
            return False  # something rewrites what the fused op reads: keep the program
        if op.type == DELETE_OP and {x, out_grad} & set(op.input_arg_names):
            freed = min(freed, i)
        if _names(op) & state or lr in op.output_arg_names:
            pos = i
    if freed <= pos:
        return False  # the fused op would come after X or Out@GRAD is let go of
    inputs = {"X": [x], "OutGrad": [out_grad], "Param": [param], "LearningRate": [lr]}
    outputs = {"ParamOut": [param]}
    attrs = {"x_num_col_dims": mul_grad.attr("x_num_col_dims"), "op_role": OP_ROLE_OPTIMIZE}
    if velocity:
        inputs["Velocity"] = [velocity]
        outputs["VelocityOut"] = [velocity]
        attrs["mu"] = update.attr("mu")
    block._remove_op(j)
    block._insert_op(pos + 1, FUSED_OP, inputs=inputs, outputs=outputs, attrs=attrs)
    if [n for n in mul_grad.output("X@GRAD") if n != "@EMPTY@"]:
        mul_grad.desc.set_output("Y@GRAD", [])  # the version is bumped below
    else:  # the first layer: mul_grad has nothing left to compute
        block._remove_op(w)
    forget_var(block, grad, deleters)
    block.program._bump()
    return True


def forget_var(block, name, deleters):
    """Removes `name`, which no op reads or writes any more, from the `delete_var` ops among
    `deleters` (an op left with nothing to delete goes) and from the block."""
    for op in deleters:
        kept = [n for n in op.input("X") if n != name]
        if kept:
            op.desc.set_input("X", kept)
        else:
            block._remove_op(block.ops.index(op))
    if name in block.vars:
        block._remove_var(name)


def fuse_weight_updates(program, skip_opt_set=None):
    """Rewrites `program`'s global block in place (see the module's doc); returns the weights
    whose gradient now goes straight into their update."""
    if not isinstance(program, Program):
        raise TypeError("fuse_weight_updates needs a Program, got %r" % (program,))
    skip = {getattr(item, "name", item) for item in skip_opt_set or ()}
    # What a control-flow op's block reads or writes while it runs is not ours to move.
    in_sub_blocks = {n for b in program.blocks[1:] for op in b.ops for n in _names(op)}
    block = program.global_block()
    fused = []
    j = 0
    while j < len(block.ops):
        candidate = _fusable_update(block, block.ops[j], skip, in_sub_blocks)
        if candidate and _fuse_one(block, j, *candidate):
            fused.append(candidate[0])  # the ops before j moved by at most one: look at j again
        else:
            j += 1
    return fused
