"""append_backward: the core adds the gradient ops (core/passes/backward); Python then wraps the
new variables and ops."""

from . import _C
from .framework import Block, Parameter, Variable


def _names(items):
    return [v.name if isinstance(v, Variable) else str(v) for v in (items or [])]


def append_backward(loss, parameter_list=None, no_grad_set=None, callbacks=None):
    """Appends the backward pass of `loss` to its program and returns [(param, grad)] for the
    parameters in `parameter_list` (default: every trainable parameter the loss depends on).
    Variables in `no_grad_set` (names or Variables) and those with stop_gradient get no grad."""
    if not isinstance(loss, Variable):
        raise TypeError("append_backward: loss must be a Variable, got %r" % (loss,))
    program = loss.block.program
    block = program.global_block()
    if parameter_list is None:
        params = [p.name for p in block.all_parameters() if p.trainable]
    else:
        params = _names(parameter_list)
        for name in params:
            if name not in block.vars:
                raise ValueError("append_backward: parameter '%s' is not in the program" % name)
    pairs = _C.append_backward(program.desc, loss.name, params, sorted(set(_names(no_grad_set))))
    for b in program.blocks:  # the grad ops, and copies of values kept for them (@SNAPSHOT)
        b._sync_with_cpp()
    for idx in range(len(program.blocks), program.desc.num_blocks()):  # control flow's grad blocks
        program.blocks.append(Block(program, idx))
        program.blocks[idx]._sync_with_cpp()
    return [(block.var(p), block.var(g)) for p, g in pairs]


def _trainable(params_grads):
    return [(p, g) for p, g in params_grads if not isinstance(p, Parameter) or p.trainable]
