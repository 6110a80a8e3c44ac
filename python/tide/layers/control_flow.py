"""Control flow in the program, with Fluid's names and behaviour: While, Switch, IfElse,
ConditionalBlock, tensor arrays. A loop or a branch is a sub-block of the program that the
control-flow ops (the ops_control plugin) run in scopes of their own; variables of the
enclosing blocks are read and written by name."""

from .. import unique_name
from ..core import dtype_code
from ..framework import Variable, default_main_program
from ..layer_helper import LayerHelper
from .logic import logical_and, logical_not
from .nn import assign

__all__ = [
    "While",
    "Switch",
    "IfElse",
    "ConditionalBlock",
    "cond",
    "create_array",
    "array_write",
    "array_read",
    "array_length",
]


class BlockGuard:
    """Makes a new sub-block of the program current inside `with`; its parent after."""

    def __init__(self, main_program):
        self.main_program = main_program

    def __enter__(self):
        self.main_program._create_block()

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.main_program._rollback()
        return exc_type is None


def _outer_reads_and_writes(block, exclude=()):
    """(names read before written, names written) by the ops of `block` and its sub-blocks."""
    written, read = set(exclude), []
    for op in block.ops:
        for name in op.input_arg_names:
            if name not in written and name not in read:
                read.append(name)
        for name in op.output_arg_names:
            written.add(name)
    return read, written


def _outer_vars(parent, names):
    """The variables of `names` that `parent` or its ancestors declare, in order."""
    out = []
    for name in names:
        var = parent._find_var_recursive(name)
        if var is not None and var not in out:
            out.append(var)
    return out


def _keep_values_before(parent, names):
    """The control-flow op about to be appended to `parent` overwrites `names`. Ops before it that
    wrote or read one of them are switched to a copy ("<name>.before_N", then assigned to the
    name), so that their gradients see the values they saw, not the loop's or branch's result
    (the state becomes single-assignment, as backward needs). Variables without gradients
    (integer, bool), tensor arrays (written element by element), persistable ones, those no op of `parent` writes and those an earlier
    control-flow body uses keep their name."""
    for name in names:
        if not parent.has_var(name):
            continue
        var = parent.var(name)
        if (
            var.type != "LOD_TENSOR"
            or var.dtype not in ("float16", "bfloat16", "float32", "float64")
            or var.persistable
            or not any(name in op.output_arg_names for op in parent.ops)
        ):
            continue
        if any(
            op.has_attr("sub_block") and name in op.input_arg_names + op.output_arg_names
            for op in parent.ops
        ):
            continue
        before = parent.create_var(
            name=unique_name.generate(name + ".before"),
            dtype=var.dtype,
            shape=var.shape,
            lod_level=var.lod_level,
            stop_gradient=var.stop_gradient,
        )
        for op in parent.ops:
            op.desc.rename_input(name, before.name)
            op.desc.rename_output(name, before.name)
        parent.program._bump()
        parent.append_op("assign", inputs={"X": before}, outputs={"Out": var})


def _check_condition(layer, cond):
    if not isinstance(cond, Variable):
        raise TypeError("%s: the condition must be a Variable, got %r" % (layer, cond))
    if cond.dtype != "bool":
        raise TypeError(
            "%s: the condition '%s' must be a bool variable, got %s"
            % (layer, cond.name, cond.dtype)
        )
    known = [d for d in cond.shape if d >= 0]
    if len(known) != len(cond.shape) or int(_prod(known)) != 1:
        raise TypeError(
            "%s: the condition '%s' must hold one element, its shape is %s"
            % (layer, cond.name, list(cond.shape))
        )


def _prod(dims):
    p = 1
    for d in dims:
        p *= d
    return p


class While:
    """while cond: body. `cond` is a one-element bool variable the body must update::

        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", 10)
        cond = layers.less_than(i, n)
        loop = layers.While(cond)
        with loop.block():
            ...
            layers.increment(i, in_place=True)
            layers.less_than(i, n, cond=cond)

    is_test=True (no backward through the loop) runs every iteration in one scope, so memory
    does not grow with the number of iterations."""

    BEFORE_WHILE_BLOCK, IN_WHILE_BLOCK, AFTER_WHILE_BLOCK = range(3)

    def __init__(self, cond, is_test=False, name=None):
        self.helper = LayerHelper("while", name=name)
        self.status = While.BEFORE_WHILE_BLOCK
        _check_condition("While", cond)
        self.cond_var = cond
        self.is_test = is_test

    def block(self):
        return _WhileGuard(self)

    def _complete(self):
        program = self.helper.main_program
        body = program.current_block()
        parent = program.block(body.parent_idx)
        read, written = _outer_reads_and_writes(body, exclude=[self.cond_var.name])
        # A loop-carried float variable (read and written by the body) carries gradients from
        # one iteration to the one before, even when it started as a constant.
        for var in _outer_vars(parent, [n for n in read if n in written]):
            if var.dtype in ("float16", "bfloat16", "float32", "float64"):
                var.stop_gradient = False
        _keep_values_before(parent, sorted(written))
        step_scopes = parent.create_var(
            name=unique_name.generate(self.helper.name + ".step_scopes"), type="STEP_SCOPES"
        )
        parent.append_op(
            "while",
            inputs={"X": _outer_vars(parent, read), "Condition": [self.cond_var]},
            outputs={"Out": _outer_vars(parent, sorted(written)), "StepScopes": [step_scopes]},
            attrs={"sub_block": body, "is_test": self.is_test},
        )


class _WhileGuard(BlockGuard):
    def __init__(self, while_op):
        if while_op.status != While.BEFORE_WHILE_BLOCK:
            raise ValueError("While.block() can be entered only once")
        super().__init__(while_op.helper.main_program)
        self.while_op = while_op

    def __enter__(self):
        self.while_op.status = While.IN_WHILE_BLOCK
        return super().__enter__()

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_type is not None:
            self.main_program._rollback()
            return False
        self.while_op.status = While.AFTER_WHILE_BLOCK
        self.while_op._complete()
        return super().__exit__(exc_type, exc_val, exc_tb)


class ConditionalBlock:
    """Runs its block once when the condition holds: `inputs` is one one-element bool variable
    with is_scalar_condition, else variables that must all be non-empty."""

    def __init__(self, inputs, is_scalar_condition=False, name=None):
        for v in inputs:
            if not isinstance(v, Variable):
                raise TypeError("ConditionalBlock: inputs must be Variables, got %r" % (v,))
        if is_scalar_condition:
            if len(inputs) != 1:
                raise TypeError(
                    "ConditionalBlock: a scalar condition is one variable, got %d" % len(inputs)
                )
            _check_condition("ConditionalBlock", inputs[0])
        self.inputs = list(inputs)
        self.is_scalar_condition = is_scalar_condition
        self.helper = LayerHelper("conditional_block", name=name)

    def block(self):
        return _ConditionalBlockGuard(self)

    def _complete(self):
        program = self.helper.main_program
        inside = program.current_block()
        parent = program.block(inside.parent_idx)
        read, written = _outer_reads_and_writes(inside)
        _keep_values_before(parent, sorted(written))
        scope = parent.create_var(
            name=unique_name.generate(self.helper.name + ".scope"), type="STEP_SCOPES"
        )
        parent.append_op(
            "conditional_block",
            inputs={"Cond": self.inputs, "Input": _outer_vars(parent, read)},
            outputs={"Out": _outer_vars(parent, sorted(written)), "Scope": [scope]},
            attrs={"sub_block": inside, "is_scalar_condition": self.is_scalar_condition},
        )


def _flatten(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _branch(pred, fn, which):
    """Runs `fn` inside a conditional block on `pred`; its outputs copied to the parent block."""
    block = ConditionalBlock([pred], is_scalar_condition=True)
    with block.block():
        out = fn()
        if out is None:
            return None, None
        outs = _flatten(out)
        for v in outs:
            if not isinstance(v, Variable):
                raise TypeError(
                    "cond: %s must return Variables (or a list / tuple of them, or None), got %r"
                    % (which, v)
                )
        program = default_main_program()
        parent = program.block(program.current_block().parent_idx)
        copies = []
        for v in outs:
            copy = parent.create_var(
                name=unique_name.generate("cond_%s_out" % which.split("_")[0]),
                dtype=v.dtype,
                shape=v.shape,
                lod_level=v.lod_level,
            )
            assign(v, copy)
            copies.append(copy)
    return out, copies


def cond(pred, true_fn=None, false_fn=None, name=None):
    """Fluid 1.8's cond: runs true_fn() when the one-element bool `pred` holds, else false_fn(),
    each in a conditional block, and returns the branch's outputs (a Variable, or a list / tuple
    like the branches return; the two must match in number). A branch None returns None when
    both are None; only one None is an error, as in Fluid. Gradients flow into the branch that
    ran."""
    _check_condition("cond", pred)
    for which, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if fn is not None and not callable(fn):
            raise TypeError("cond: %s must be callable, got %r" % (which, fn))
    if true_fn is None and false_fn is None:
        return None
    true_out = true_copies = false_out = false_copies = None
    if true_fn is not None:
        true_out, true_copies = _branch(pred, true_fn, "true_fn")
    if false_fn is not None:
        false_out, false_copies = _branch(logical_not(pred), false_fn, "false_fn")
    if true_copies is None and false_copies is None:
        return None
    if true_copies is None or false_copies is None:
        raise ValueError(
            "cond: true_fn %s None while false_fn %s None; both must return the same "
            "number of Variables"
            % (
                "returns" if true_copies is None else "does not return",
                "returns" if false_copies is None else "does not return",
            )
        )
    if len(true_copies) != len(false_copies):
        raise ValueError(
            "cond: true_fn and false_fn must return the same number of Variables, got %d and %d"
            % (len(true_copies), len(false_copies))
        )
    helper = LayerHelper("cond", name=name)
    mask = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op(
        "cast",
        inputs={"X": pred},
        outputs={"Out": mask},
        attrs={"in_dtype": dtype_code("bool"), "out_dtype": dtype_code("int32")},
    )
    merged = []
    for t, f in zip(true_copies, false_copies):
        if t.dtype != f.dtype:
            raise ValueError(
                "cond: the branches' outputs '%s' (%s) and '%s' (%s) must have one dtype"
                % (t.name, t.dtype, f.name, f.dtype)
            )
        out = helper.create_variable_for_type_inference(t.dtype)
        out.desc.lod_level = max(t.lod_level, f.lod_level)
        helper.append_op("select_input", inputs={"X": [f, t], "Mask": mask}, outputs={"Out": out})
        merged.append(out)
    shape = true_out if isinstance(true_out, (list, tuple)) else None
    if shape is None:
        return merged[0]
    return tuple(merged) if isinstance(shape, tuple) else merged


class _ConditionalBlockGuard(BlockGuard):
    def __init__(self, block):
        super().__init__(block.helper.main_program)
        self.block = block

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_type is not None:
            self.main_program._rollback()
            return False
        self.block._complete()
        return super().__exit__(exc_type, exc_val, exc_tb)


class Switch:
    """The first case whose one-element bool condition holds runs, else the default::

        with layers.Switch() as switch:
            with switch.case(step < boundary):
                layers.assign(value_a, lr)
            with switch.default():
                layers.assign(value_b, lr)

    Fluid's developer guide writes the same switch as (tide.switch is this class)::

        switch = fluid.switch()
        with switch.block():
            with switch.case(cond):
                ...
    """

    def __init__(self, name=None):
        self.helper = LayerHelper("switch", name=name)
        self.inside_scope = False
        self.pre_not_conditions = []  # "no earlier case held", after each case

    def case(self, condition):
        if not self.inside_scope:
            raise ValueError("Switch.case() must be called inside 'with Switch() as switch:'")
        _check_condition("Switch.case", condition)
        if not self.pre_not_conditions:
            block = ConditionalBlock([condition], is_scalar_condition=True)
            self.pre_not_conditions.append(logical_not(condition))
        else:
            none_before = self.pre_not_conditions[-1]
            self.pre_not_conditions.append(logical_and(none_before, logical_not(condition)))
            block = ConditionalBlock(
                [logical_and(none_before, condition)], is_scalar_condition=True
            )
        return block.block()

    def default(self):
        if not self.inside_scope:
            raise ValueError("Switch.default() must be called inside 'with Switch() as switch:'")
        if not self.pre_not_conditions:
            raise ValueError("Switch.default() needs at least one case() before it")
        return ConditionalBlock([self.pre_not_conditions[-1]], is_scalar_condition=True).block()

    def block(self):
        """`with switch.block():` holds the cases, as `with switch:` does."""
        return self

    def __enter__(self):
        self.inside_scope = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.inside_scope = False
        return exc_type is None


class IfElse:
    """Per-row branches over a batch: `cond` is a bool [N, 1]; rows where it holds go through
    the true block, the others through the false block, and the outputs are merged back in row
    order (a branch with no rows does not run)::

        ie = layers.IfElse(cond)
        with ie.true_block():
            ie.output(layers.scale(ie.input(x), 2.0))
        with ie.false_block():
            ie.output(layers.scale(ie.input(x), -1.0))
        out, = ie()
    """

    OUT_IF_ELSE_BLOCKS, IN_IF_ELSE_TRUE_BLOCKS, IN_IF_ELSE_FALSE_BLOCKS = range(3)

    def __init__(self, cond, name=None):
        if not isinstance(cond, Variable) or cond.dtype != "bool":
            raise TypeError("IfElse: cond must be a bool Variable, got %r" % (cond,))
        self.helper = LayerHelper("ifelse", name=name)
        self.cond = cond
        self.input_table = {}  # input name -> (true half, false half)
        self.status = IfElse.OUT_IF_ELSE_BLOCKS
        self.blocks = (ConditionalBlock([]), ConditionalBlock([]))  # (false, true)
        self.output_table = ([], [])  # (false outputs, true outputs)

    def _parent_block(self):
        program = self.helper.main_program
        return program.block(program.current_block().parent_idx)

    def input(self, x):
        if self.status == IfElse.OUT_IF_ELSE_BLOCKS:
            raise ValueError("IfElse.input() must be called inside true_block() or false_block()")
        if x.name not in self.input_table:
            parent = self._parent_block()
            halves = tuple(
                parent.create_var(
                    name=unique_name.generate(self.helper.name + ".input_" + side),
                    dtype=x.dtype,
                    shape=x.shape,
                    lod_level=x.lod_level,
                )
                for side in ("true", "false")
            )
            parent.append_op(
                "split_lod_tensor",
                inputs={"X": x, "Mask": self.cond},
                outputs={"OutTrue": halves[0], "OutFalse": halves[1]},
                attrs={"level": 0},
            )
            self.input_table[x.name] = halves
        true_half, false_half = self.input_table[x.name]
        is_true = self.status == IfElse.IN_IF_ELSE_TRUE_BLOCKS
        # The branch runs only when its halves hold rows.
        block = self.blocks[is_true]
        half = true_half if is_true else false_half
        if half not in block.inputs:
            block.inputs.append(half)
        return half

    def true_block(self):
        return _IfElseBlockGuard(True, self)

    def false_block(self):
        return _IfElseBlockGuard(False, self)

    def output(self, *outs):
        if self.status == IfElse.OUT_IF_ELSE_BLOCKS:
            raise ValueError("IfElse.output() must be called inside true_block() or false_block()")
        table = self.output_table[self.status == IfElse.IN_IF_ELSE_TRUE_BLOCKS]
        parent = self._parent_block()
        for out in outs:
            outside = parent.create_var(
                name=unique_name.generate(self.helper.name + ".output"),
                dtype=out.dtype,
                shape=out.shape,
            )
            table.append(outside)
            assign(out, outside)

    def __call__(self):
        if self.status != IfElse.OUT_IF_ELSE_BLOCKS:
            raise ValueError("IfElse() must be called after its blocks, outside them")
        false_outs, true_outs = self.output_table
        if not false_outs and not true_outs:
            raise ValueError("IfElse(): neither block called output()")
        if false_outs and true_outs and len(false_outs) != len(true_outs):
            raise ValueError(
                "IfElse(): the true block has %d output(s), the false block %d"
                % (len(true_outs), len(false_outs))
            )
        if not false_outs or not true_outs:
            return true_outs or false_outs
        helper = LayerHelper("merge_lod_tensor")
        merged = []
        for f, t in zip(false_outs, true_outs):
            out = helper.create_variable_for_type_inference(t.dtype)
            helper.append_op(
                "merge_lod_tensor",
                inputs={"X": self.cond, "Mask": self.cond, "InTrue": t, "InFalse": f},
                outputs={"Out": out},
                attrs={"level": 0},
            )
            merged.append(out)
        return merged


class _IfElseBlockGuard:
    def __init__(self, is_true, ifelse):
        if ifelse.status != IfElse.OUT_IF_ELSE_BLOCKS:
            raise ValueError("IfElse: true_block() and false_block() cannot be nested")
        self.ie = ifelse
        self.is_true = is_true
        self.guard = ifelse.blocks[is_true].block()

    def __enter__(self):
        self.ie.status = (
            IfElse.IN_IF_ELSE_TRUE_BLOCKS if self.is_true else IfElse.IN_IF_ELSE_FALSE_BLOCKS
        )
        self.guard.__enter__()

    def __exit__(self, exc_type, exc_val, exc_tb):
        block = self.ie.blocks[self.is_true]
        if not block.inputs:  # a branch that read no input runs whenever the batch has rows
            block.inputs.append(self.ie.cond)
        self.ie.status = IfElse.OUT_IF_ELSE_BLOCKS
        return self.guard.__exit__(exc_type, exc_val, exc_tb)


def create_array(dtype):
    """A new, empty tensor array (LoDTensorArray) of `dtype` elements."""
    block = default_main_program().current_block()
    return block.create_var(
        name=unique_name.generate("array"), type="LOD_TENSOR_ARRAY", dtype=dtype
    )


def array_write(x, i, array=None):
    """array[i] = x (the array grows to hold i); returns the array (a new one when None)."""
    helper = LayerHelper("array_write")
    if array is None:
        array = create_array(x.dtype)
    helper.append_op("write_to_array", inputs={"X": [x], "I": [i]}, outputs={"Out": [array]})
    return array


def array_read(array, i):
    """A copy of array[i]."""
    helper = LayerHelper("array_read")
    if not isinstance(array, Variable) or array.type != "LOD_TENSOR_ARRAY":
        raise TypeError("array_read: %r is not a tensor array variable" % (array,))
    out = helper.create_variable_for_type_inference(array.dtype)
    helper.append_op("read_from_array", inputs={"X": [array], "I": [i]}, outputs={"Out": [out]})
    return out


def array_length(array):
    """The number of elements of `array`, as an int64 [1] variable."""
    helper = LayerHelper("array_length")
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("array_length", inputs={"X": [array]}, outputs={"Out": [out]})
    return out
