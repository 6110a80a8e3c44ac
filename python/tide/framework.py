"""Compile time, as in Fluid: Program, Block, Variable, Parameter and Operator, the Python
side of the core's ProgramDesc/BlockDesc/VarDesc/OpDesc, plus the default programs."""

import contextlib
import re

import numpy as np

from . import _C, unique_name
from .core import (
    VAR_TYPE_NAMES,
    VAR_TYPES,
    bfloat16_dtype,
    convert_dtype,
    dtype_code,
    dtype_name,
    is_complex_dtype,
    is_float_dtype,
)

# Op roles (the op_role attribute), as the core's backward writes them.
OP_ROLE_FORWARD = 0
OP_ROLE_BACKWARD = 1
OP_ROLE_OPTIMIZE = 2
OP_ROLE_LOSS = 256

_current_role = [OP_ROLE_FORWARD]


@contextlib.contextmanager
def op_role_guard(role):
    """Ops appended inside get op_role `role` (optimizers mark their ops OPTIMIZE)."""
    _current_role.append(role)
    try:
        yield
    finally:
        _current_role.pop()


def grad_var_name(name):
    """The name of a variable's gradient: name + "@GRAD".

    Args:
        name (str): the variable's name.
    """
    return name + "@GRAD"


class Variable:
    """A variable of a block: a name with a type, data type, shape and LoD level. Values live
    in a Scope at run time; this is only the description. `shape` is a tuple, -1 for a dim known
    at run time; `()` is a 0-D tensor (declared `shape=[]`, `desc.zero_dim` true) or dims not
    known yet (`shape=None`, filled by shape inference). Its arithmetic and ordering operators
    (a + b, a < b build ops) are attached by tide.layers (layers/math_op_patch.py), which builds
    on this module."""

    def __init__(
        self,
        block,
        name=None,
        type="LOD_TENSOR",
        shape=None,
        dtype=None,
        lod_level=None,
        persistable=None,
        stop_gradient=False,
        **kwargs,
    ):
        self.block = block
        if name is None:
            name = unique_name.generate("_generated_var")
        self.desc = block.desc.find_var(name)
        if self.desc is None:
            self.desc = block.desc.var(name)
            self.desc.type = VAR_TYPES[type] if isinstance(type, str) else type
            self.desc.dtype = dtype_code(dtype if dtype is not None else "float32")
            if shape is not None:
                self._set_shape(shape)
            self.desc.lod_level = lod_level or 0
            self.desc.persistable = bool(persistable)
        else:  # an existing description: only fill what is given
            if shape is not None:
                self._set_shape(shape)
            if dtype is not None:
                self.desc.dtype = dtype_code(dtype)
            if lod_level is not None:
                self.desc.lod_level = lod_level
            if persistable is not None:
                self.desc.persistable = bool(persistable)
        self.stop_gradient = stop_gradient
        self.op = None  # the op that writes it last, when known
        block.vars[name] = self
        block.program._bump()

    def _set_shape(self, shape):
        # shape=[] (or ()) declares a 0-D tensor, Paddle 2.5+'s scalar; shape=None leaves the
        # dims unknown (an empty tuple too, until shape inference fills them).
        dims = [int(d) for d in shape]
        if dims:
            self.desc.shape = dims
        else:
            self.desc.zero_dim = True

    name = property(lambda self: self.desc.name)
    shape = property(lambda self: tuple(self.desc.shape))
    dtype = property(lambda self: dtype_name(self.desc.dtype))
    lod_level = property(lambda self: self.desc.lod_level)
    type = property(lambda self: VAR_TYPE_NAMES.get(self.desc.type, self.desc.type))

    @property
    def persistable(self):
        return self.desc.persistable

    @persistable.setter
    def persistable(self, value):
        self.desc.persistable = bool(value)

    @property
    def stop_gradient(self):
        return self.desc.stop_gradient

    @stop_gradient.setter
    def stop_gradient(self, value):
        self.desc.stop_gradient = bool(value)

    # Printed by to_string(with_details=True) after the VarDesc's fields, as Fluid does.
    _DETAIL_ATTRS = ("error_clip", "stop_gradient")

    def to_string(self, throw_on_error=True, with_details=False):
        """The VarDesc in protobuf text format (Fluid's); with_details adds the Python-side
        attributes (stop_gradient, and a Parameter's trainable, optimize_attr, ...)."""
        s = self.desc.to_proto_text(throw_on_error)
        if with_details:
            for attr in self._DETAIL_ATTRS:
                s += "%s: %s\n" % (attr, getattr(self, attr, None))
        return s

    def summary(self, with_details=False):
        """Tide's one-line description: name, type, dtype, shape, flags."""
        s = self.desc.to_string()
        if with_details and isinstance(self, Parameter):
            s += " trainable=%s" % self.trainable
        return s

    def __str__(self):
        return self.to_string(True)

    def __repr__(self):
        return "Variable(%s)" % self.desc.to_string()


class Parameter(Variable):
    """A persistable, trainable variable (weights), initialised by the startup program."""

    def __init__(
        self,
        block,
        shape,
        dtype,
        trainable=True,
        optimize_attr=None,
        regularizer=None,
        gradient_clip_attr=None,
        do_model_average=None,
        **kwargs,
    ):
        if shape is None or any(int(d) <= 0 for d in shape):
            raise ValueError(
                "parameter %r needs a fully known positive shape, got %r"
                % (kwargs.get("name"), shape)
            )
        kwargs.setdefault("persistable", True)
        super().__init__(block, shape=shape, dtype=dtype, **kwargs)
        self.persistable = True
        self.trainable = trainable
        self.stop_gradient = not trainable
        self.optimize_attr = optimize_attr or {"learning_rate": 1.0}
        self.regularizer = regularizer
        self.gradient_clip_attr = gradient_clip_attr
        self.do_model_average = do_model_average

    _DETAIL_ATTRS = Variable._DETAIL_ATTRS + (
        "trainable",
        "optimize_attr",
        "regularizer",
        "gradient_clip_attr",
        "do_model_average",
    )


def _indent(text):
    """Indents every line of `text` after the first by 4 (Fluid's re_add_indent)."""
    return re.sub(r"\n(.)", r"\n    \1", text)


def _names(value):
    """The variable names of an op argument: a Variable, a name, or a list of these."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            out.extend(_names(v))
        return out
    if isinstance(value, Variable):
        return [value.name]
    if isinstance(value, str):
        return [value]
    raise TypeError(
        "an op argument must be a Variable, a name or a list of them, got %r" % (value,)
    )


class Operator:
    """An op of a block. Building one checks it against its registered proto (filling default
    attributes) and infers the shapes and types of its outputs."""

    def __init__(self, block, desc, type=None, inputs=None, outputs=None, attrs=None, check=True):
        self.block = block
        self.desc = desc
        if type is None:  # wrapping an op that already exists in the desc
            return
        if not _C.has_op(type):
            raise _C.NotFoundError(
                "op '%s' is not registered: no loaded plugin provides it (load one with "
                "tide.load_plugin; tide.plugins() lists what loaded and what failed)" % type
            )
        desc.type = type
        for param, value in (inputs or {}).items():
            desc.set_input(param, _names(value))
        for param, value in (outputs or {}).items():
            desc.set_output(param, _names(value))
        attrs = dict(attrs or {})
        attrs.setdefault("op_role", _current_role[-1])
        for name, value in attrs.items():
            if value is None:
                continue
            if isinstance(value, Block):
                value = value.desc
            desc.set_attr(name, value)
        if check:
            desc.check()
            desc.infer_shape(block.desc)
        for name in desc.output_arg_names():
            var = block._find_var_recursive(name)
            if var is not None:
                var.op = self

    type = property(lambda self: self.desc.type)

    def input(self, param):
        return self.desc.input(param)

    def output(self, param):
        return self.desc.output(param)

    @property
    def input_arg_names(self):
        return self.desc.input_arg_names()

    @property
    def output_arg_names(self):
        return self.desc.output_arg_names()

    def attr(self, name):
        return self.desc.attr(name)

    def has_attr(self, name):
        return self.desc.has_attr(name)

    def _set_attr(self, name, value):
        # A Block (sub_block) is set as its desc, as append_op does (Fluid's _set_attr takes one).
        self.desc.set_attr(name, value.desc if isinstance(value, Block) else value)
        self.block.program._bump()

    @property
    def attr_names(self):
        return self.desc.attr_names()

    def to_string(self, throw_on_error=True):
        """The OpDesc in protobuf text format (Fluid's)."""
        return self.desc.to_proto_text(throw_on_error)

    def summary(self):
        """Tide's one-line description: type(inputs) -> (outputs) {attributes}."""
        return self.desc.to_string()

    def __str__(self):
        return self.to_string(True)

    def __repr__(self):
        return "Operator(%s)" % self.desc.to_string()


class Block:
    """A block of a program: variables (by name) and ops in order."""

    def __init__(self, program, idx):
        self.program = program
        self.desc = program.desc.block(idx)
        self.vars = {}
        self.ops = []

    idx = property(lambda self: self.desc.idx)
    parent_idx = property(lambda self: self.desc.parent_idx)

    @property
    def forward_block_idx(self):
        return self.desc.forward_block_idx

    def var(self, name):
        v = self.vars.get(name)
        if v is None:
            raise ValueError("variable '%s' is not in block %d" % (name, self.idx))
        return v

    def has_var(self, name):
        return name in self.vars

    def _find_var_recursive(self, name):
        block = self
        while block is not None:
            if name in block.vars:
                return block.vars[name]
            block = self.program.block(block.parent_idx) if block.parent_idx >= 0 else None
        return None

    def _var_recursive(self, name):
        v = self._find_var_recursive(name)
        if v is None:
            raise ValueError("variable '%s' is not in block %d or its parents" % (name, self.idx))
        return v

    def all_parameters(self):
        return [v for v in self.vars.values() if isinstance(v, Parameter)]

    def create_var(self, **kwargs):
        return Variable(self, **kwargs)

    def create_parameter(self, **kwargs):
        global_block = self.program.global_block()
        param = Parameter(global_block, **kwargs)
        initializer = kwargs.get("initializer")
        if initializer is not None:
            initializer(param, self)
        return param

    def append_op(self, type, inputs=None, outputs=None, attrs=None):
        return self._insert_op(len(self.ops), type, inputs, outputs, attrs)

    def _prepend_op(self, type, inputs=None, outputs=None, attrs=None):
        return self._insert_op(0, type, inputs, outputs, attrs)

    def _insert_op(self, index, type, inputs=None, outputs=None, attrs=None):
        desc = self.desc.insert_op(index)
        try:
            op = Operator(self, desc, type, inputs, outputs, attrs)
        except BaseException:
            self.desc.remove_ops(index, index + 1)  # a rejected op leaves no trace
            raise
        self.ops.insert(index, op)
        self.program._bump()
        return op

    def _remove_op(self, index):
        self.desc.remove_ops(index, index + 1)
        del self.ops[index]
        self.program._bump()

    def _remove_var(self, name):
        self.desc.remove_var(name)
        self.vars.pop(name, None)
        self.program._bump()

    def _sync_with_cpp(self):
        """Makes Python objects for the variables and ops the core added (backward, parsing)."""
        for vd in self.desc.all_vars():
            if vd.name not in self.vars:
                v = Variable.__new__(Variable)
                v.block, v.desc, v.op = self, vd, None
                self.vars[vd.name] = v
        descs = self.desc.all_ops()
        known = {id(op.desc): op for op in self.ops}
        self.ops = [known.get(id(d)) or Operator(self, d) for d in descs]
        self.program._bump()

    def to_string(self, throw_on_error=True, with_details=False):
        """The BlockDesc in protobuf text format (Fluid's); with_details, each variable's with
        its Python-side attributes."""
        if not with_details:
            return self.desc.to_proto_text(throw_on_error)
        text = "blocks {\n  idx: %d\n  parent_idx: %d" % (self.idx, self.parent_idx)
        for v in self.vars.values():
            text += "\n  vars {\n    %s  }" % _indent(v.to_string(throw_on_error, True))
        for op in self.ops:
            text += "\n  ops {\n    %s  }" % _indent(op.to_string(throw_on_error))
        return text + "\n}"

    def summary(self, with_details=False):
        """Tide's listing of the block: a line per variable, then a line per op."""
        lines = ["block %d (parent %d):" % (self.idx, self.parent_idx)]
        for v in self.vars.values():
            lines.append("  var " + v.summary(with_details))
        for op in self.ops:
            lines.append("  op " + op.summary())
        return "\n".join(lines)

    def __str__(self):
        return self.to_string(True)


class Program:
    """A whole program: blocks of variables and ops (Fluid's ProgramDesc). Build it with layers inside
    program_guard, run it with an Executor."""

    def __init__(self):
        self.desc = _C.ProgramDesc()
        self.blocks = [Block(self, 0)]
        self.current_block_idx = 0
        self.random_seed = 0
        self._version = 0
        self._seed_counter = 0

    def _bump(self):
        self._version += 1

    def global_block(self):
        return self.blocks[0]

    def block(self, idx):
        return self.blocks[idx]

    def current_block(self):
        return self.blocks[self.current_block_idx]

    @property
    def num_blocks(self):
        return len(self.blocks)

    def _create_block(self, parent_idx=None):
        parent = self.current_block() if parent_idx is None else self.block(parent_idx)
        self.desc.append_block(parent.desc)
        self.current_block_idx = len(self.blocks)
        self.blocks.append(Block(self, self.current_block_idx))
        self._bump()
        return self.current_block()

    def _rollback(self):
        self.current_block_idx = self.current_block().parent_idx

    def list_vars(self):
        for block in self.blocks:
            yield from block.vars.values()

    def all_parameters(self):
        return self.global_block().all_parameters()

    def _next_seed(self):
        """A seed for a random initializer: fixed by random_seed when that is set."""
        if not self.random_seed:
            return 0
        self._seed_counter += 1
        return self.random_seed * 1000 + self._seed_counter

    def to_string(self, throw_on_error=True, with_details=False):
        """The ProgramDesc in protobuf text format, as Fluid prints it (throw_on_error: a desc
        missing a required field is an error); with_details, block by block with each variable's
        Python-side attributes (stop_gradient, a Parameter's trainable, ...)."""
        if with_details:
            return "".join(b.to_string(throw_on_error, True) for b in self.blocks)
        return self.desc.to_proto_text(throw_on_error)

    def summary(self, with_details=False):
        """Tide's compact listing: per block, a line per variable and per op."""
        return "\n".join(b.summary(with_details) for b in self.blocks) + "\n"

    def __str__(self):
        return self.to_string(True)

    def clone(self, for_test=False):
        """A deep copy. With for_test, backward and optimizer ops are dropped and ops with an
        is_test attribute get is_test=True (dropout, batch_norm behave for inference)."""
        p = Program._from_desc(_C.ProgramDesc(self.desc))
        p.random_seed = self.random_seed
        p._memory_optimized = set(getattr(self, "_memory_optimized", ()))
        if hasattr(self, "_py_readers"):  # its non-iterable DataLoaders feed the copy too
            p._py_readers = list(self._py_readers)
        _keep_parameters(p.blocks, self.blocks)
        if for_test:
            p._inference_optimize()
        return p

    def _inference_optimize(self):
        for block in self.blocks:
            for i in reversed(range(len(block.ops))):
                op = block.ops[i]
                role = op.attr("op_role") if op.has_attr("op_role") else 0
                if role & (OP_ROLE_BACKWARD | OP_ROLE_OPTIMIZE):
                    block._remove_op(i)
        self._set_is_test(True)

    def _set_is_test(self, is_test):
        """Every op's is_test attribute in every block to `is_test`: inference (dropout passes
        its input, batch norm normalizes by its running statistics) or training."""
        for block in self.blocks:
            for op in block.ops:
                if op.has_attr("is_test"):
                    op._set_attr("is_test", bool(is_test))
        self._bump()

    def _prune(self, targets):
        """A copy keeping only the forward ops needed to compute `targets` (names or vars)."""
        p = self.clone(for_test=True)
        block = p.global_block()
        needed = set(_names(targets))
        keep = [False] * len(block.ops)
        for i in reversed(range(len(block.ops))):
            op = block.ops[i]
            if op.type in ("feed", "fetch"):
                continue
            if needed & set(op.output_arg_names):
                keep[i] = True
                needed |= set(op.input_arg_names)
        for i in reversed(range(len(block.ops))):
            if not keep[i]:
                block._remove_op(i)
        used = set()
        for op in block.ops:
            used |= set(op.input_arg_names) | set(op.output_arg_names)
        used |= set(_names(targets))
        for name in list(block.vars):
            if name not in used:
                block._remove_var(name)
        return p

    def _replace_desc(self, desc):
        """Makes `desc` this program's (a plugin's program pass rewrote it), keeping its
        Parameters' Python-side attributes."""
        old = self.blocks
        self.desc = desc
        self.blocks = [Block(self, i) for i in range(desc.num_blocks())]
        for b in self.blocks:
            b._sync_with_cpp()
        _keep_parameters(self.blocks, old)
        self._bump()

    @staticmethod
    def _from_desc(desc):
        p = Program.__new__(Program)
        p.desc = desc
        p.blocks = [Block(p, i) for i in range(desc.num_blocks())]
        p.current_block_idx = 0
        p.random_seed = 0
        p._version = 0
        p._seed_counter = 0
        for b in p.blocks:
            b._sync_with_cpp()
        return p

    @staticmethod
    def parse_from_string(binary):
        """A Program from serialised ProgramDesc bytes (raises on invalid bytes)."""
        return Program._from_desc(_C.ProgramDesc.parse(binary))

    def serialize_to_string(self):
        return self.desc.serialize()


def _keep_parameters(blocks, src_blocks):
    """The variables of `blocks` that are Parameters in `src_blocks` (same names) become
    Parameters again, with their Python-only attributes."""
    for block, src in zip(blocks, src_blocks):
        for name, v in src.vars.items():
            if isinstance(v, Parameter) and name in block.vars:
                c = block.vars[name]
                c.__class__ = Parameter
                for attr in (
                    "trainable",
                    "optimize_attr",
                    "regularizer",
                    "gradient_clip_attr",
                    "do_model_average",
                ):
                    setattr(c, attr, getattr(v, attr))


def _mark_loaded_parameters(program):
    """The weights of a loaded inference program (persistable float or complex tensors that no op
    writes: Paddle's parameters, those Tide saved) become Parameters, trainable unless marked
    stop_gradient (a layer's buffer, batch norm's statistics), so all_parameters() lists them
    as it does in the program that saved them."""
    written = {n for b in program.blocks for op in b.ops for n in op.output_arg_names}
    for v in list(program.global_block().vars.values()):
        if isinstance(v, Parameter) or not v.persistable or v.name in written:
            continue
        if v.type != "LOD_TENSOR" or not (is_float_dtype(v.dtype) or is_complex_dtype(v.dtype)):
            continue
        v.__class__ = Parameter
        v.trainable = not v.stop_gradient
        v.optimize_attr = {"learning_rate": 1.0}
        v.regularizer = v.gradient_clip_attr = v.do_model_average = None


_main_program = Program()
_startup_program = Program()


def default_main_program():
    """The program layers append their ops to (outside program_guard)."""
    return _main_program


def default_startup_program():
    """The program that initialises parameters (run once before training)."""
    return _startup_program


def switch_main_program(program):
    """Makes `program` the default main program and returns the previous one.

    Args:
        program (Program): the new default.
    """
    global _main_program
    prev, _main_program = _main_program, program
    return prev


def switch_startup_program(program):
    """Makes `program` the default startup program and returns the previous one.

    Args:
        program (Program): the new default.
    """
    global _startup_program
    prev, _startup_program = _startup_program, program
    return prev


@contextlib.contextmanager
def program_guard(main_program, startup_program=None):
    """Layers inside build into `main_program` (and initialise into `startup_program`)."""
    if not isinstance(main_program, Program):
        raise TypeError("program_guard needs a Program, got %r" % (main_program,))
    prev_main = switch_main_program(main_program)
    prev_startup = switch_startup_program(startup_program) if startup_program is not None else None
    try:
        yield
    finally:
        switch_main_program(prev_main)
        if startup_program is not None:
            switch_startup_program(prev_startup)


def to_numpy_dtype(dtype):
    """The numpy dtype of a Tide data type; bfloat16's is ml_dtypes' (numpy has none of its own).

    Args:
        dtype (str|np.dtype): the data type.
    """
    name = convert_dtype(dtype)
    return bfloat16_dtype() if name == "bfloat16" else np.dtype(name)
