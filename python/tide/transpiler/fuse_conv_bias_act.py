"""fuse_conv_bias_act: a convolution's bias and activation computed in its epilogue while training,
as the InferenceTranspiler does for inference.

`layers.conv2d(..., act=...)` writes three ops, conv2d, elementwise_add of the bias and the
activation, each a pass over the feature map: LeNet's first layer, [64, 20, 24, 24] at batch 64,
spends more time in the add and the relu than in the convolution. The rewrite runs them as one
`fused_conv2d` (Output = act(conv(Input, Filter) + Bias)), whose kernels add the bias and apply
the activation while the output is still in registers, and leaves the backward computing the
same values from the same inputs:

- the bias add's gradient op read the conv's output only for its dims: it now reads its own
  Out@GRAD there (the same dims);
- the conv's gradient reads the add's Out@GRAD directly where the add's X@GRAD was a copy of it
  (read by nothing else), and the add's gradient computes the bias's gradient only.

A conv is fused where the program would let go of the values it no longer computes: its output
and the add's output are temporaries of block 0, written once, read by nothing but those ops and
the add's gradient (not fetched, not named in `skip_opt_set`, not read by a sub-block); the
activation joins only where its gradient reads its Out, not its X (relu, sigmoid, tanh do), and
fused_conv2d computes it (inference_passes/activation.py). The bias is a [M] vector on the
channel axis; a conv without one (`bias_attr=False`) fuses with its activation alone. Results are
the same to float rounding (the plain kernels' are bitwise the same).

`fuse_fc_bias_act` does the same for a fully connected layer (`layers.fc(..., act=...)`: mul, the
bias add on its last axis, the activation) with Paddle's `fc` op (Out = act(X W + Bias), one pass
over Out after the GEMM where the ops made two), mul_grad reading the add's Out@GRAD. W is 2-D
(y_num_col_dims 1), the bias a [N] vector.
"""

from collections import namedtuple

from ..framework import Program
from .fuse_weight_updates import forget_var
from .inference_passes.activation import _ACTIVATIONS, _fused_activation

_ADD, _ADD_GRAD = "elementwise_add", "elementwise_add_grad"
_DELETE = "delete_var"  # memory_optimize's
_EMPTY = "@EMPTY@"


class _Uses:
    """Readers and writers of each name in block 0 (delete_var ops apart); names a sub-block
    touches are opaque."""

    def __init__(self, program, skip):
        block = program.global_block()
        self.ops = block.ops
        self.readers, self.writers, self.deleters = {}, {}, {}
        for op in self.ops:
            if op.type == _DELETE:
                for n in op.input_arg_names:
                    self.deleters.setdefault(n, []).append(op)
                continue
            for n in op.input_arg_names:
                self.readers.setdefault(n, []).append(op)
            for n in op.output_arg_names:
                self.writers.setdefault(n, []).append(op)
        self.opaque = set(skip)
        for b in program.blocks[1:]:
            for op in b.ops:
                self.opaque |= set(op.input_arg_names) | set(op.output_arg_names)
        self.vars = block.vars

    def written_once(self, name, writer):
        """`writer` alone writes `name`, once."""
        return self.writers.get(name, []) == [writer] and writer.output_arg_names.count(name) == 1

    def temporary(self, name, writer):
        """`name` is a temporary of block 0 that `writer` alone writes, once, and that nothing
        outside the ops of this block reads (a fetch, a sub-block)."""
        var = self.vars.get(name)
        if name in self.opaque or var is None or var.persistable:
            return False
        return self.written_once(name, writer)

    def index(self, op):
        return next(i for i, o in enumerate(self.ops) if o is op)

    def touched_between(self, names, first, last, writes_only=False):
        """Some op strictly between ops `first` and `last` writes (or reads) one of `names`."""
        names = set(names)
        for op in self.ops[self.index(first) + 1 : self.index(last)]:
            used = set(op.output_arg_names)
            if not writes_only:
                used |= set(op.input_arg_names)
            if used & names:
                return True
        return False


def _single(op, param, outputs=False):
    names = [n for n in (op.output(param) if outputs else op.input(param)) if n != _EMPTY]
    return names[0] if len(names) == 1 else None


def _cast_of_parameter(uses, name, layer):
    """The cast op writing `name` from a persistable variable, where it can run before `layer`
    instead (AMP's bfloat16 copy of a float32 bias, cast after the conv it is added to): `name`
    is its temporary and nothing between `layer` and it writes the parameter. Else None."""
    writers = uses.writers.get(name, [])
    if len(writers) != 1 or writers[0].type != "cast" or not uses.temporary(name, writers[0]):
        return None
    cast = writers[0]
    src = _single(cast, "X")
    if src is None or src not in uses.vars or not uses.vars[src].persistable:
        return None
    if uses.index(cast) > uses.index(layer) and uses.touched_between(
        [src], layer, cast, writes_only=True
    ):
        return None
    return cast


def _bias_add(uses, family, op, out):
    """(add, add_grad or None, bias, cast or None) where `out`'s readers are one elementwise_add
    of a bias the family's op takes (family.bias_fits) and its gradient op (reading `out` as X),
    else None. The bias is persistable, or a cast of a persistable one (_cast_of_parameter:
    mixed precision's), of `out`'s type."""
    adds = [o for o in uses.readers.get(out, []) if o.type == _ADD]
    grads = [o for o in uses.readers.get(out, []) if o.type == _ADD_GRAD]
    if len(adds) != 1 or len(grads) > 1 or len(adds) + len(grads) != len(uses.readers[out]):
        return None
    add = adds[0]
    bias = _single(add, "Y")
    if add.input("X") != [out] or bias is None or bias not in uses.vars:
        return None
    bias_var = uses.vars[bias]
    cast = None if bias_var.persistable else _cast_of_parameter(uses, bias, op)
    if (cast is None and not bias_var.persistable) or bias_var.dtype != uses.vars[out].dtype:
        return None
    if not family.bias_fits(uses, op, add, list(bias_var.shape)):
        return None
    add_grad = grads[0] if grads else None
    if add_grad is not None and (add_grad.input("X") != [out] or add_grad.input("Y") != [bias]):
        return None
    return add, add_grad, bias, cast


def _conv_bias_fits(uses, conv, add, bias_dims):
    """A [M] bias on the channel axis."""
    nhwc = conv.has_attr("data_format") and conv.attr("data_format") == "NHWC"
    filter_var = uses.vars[_single(conv, "Filter")]  # declared: _conv_fits
    if not filter_var.shape or bias_dims != [filter_var.shape[0]]:
        return False
    return add.attr("axis") in ((3, -1) if nhwc else (1, -3))


def _mul_bias_fits(uses, mul, add, bias_dims):
    """A [N] bias on the output's last axis (W is 2-D: _mul_fits)."""
    n = uses.vars[_single(mul, "Y")].shape[1]
    return bias_dims == [n] and add.attr("axis") in (mul.attr("x_num_col_dims"), -1)


def _conv_fits(uses, conv):
    """A declared Filter, and no Bias or ResidualData of its own yet."""
    inputs = conv.desc.inputs()
    return _single(conv, "Filter") in uses.vars and not (
        inputs.get("Bias") or inputs.get("ResidualData")
    )


def _mul_fits(uses, mul):
    """fc computes it: a 2-D W (y_num_col_dims 1), float32 or float64 (fc's plain kernels)."""
    w = uses.vars.get(_single(mul, "Y"))
    out = uses.vars.get(_single(mul, "Out", True))
    return (
        w is not None
        and len(w.shape) == 2
        and mul.attr("y_num_col_dims") == 1
        and out is not None
        and out.dtype in ("float32", "float64")
    )


def _conv_fused(conv):
    attrs = {n: conv.attr(n) for n in conv.attr_names}  # fused_conv2d declares all of conv2d's
    inputs = {"Input": conv.input("Input"), "Filter": conv.input("Filter")}
    return inputs, attrs


def _mul_fused(mul):
    attrs = {"in_num_col_dims": mul.attr("x_num_col_dims")}
    if mul.has_attr("use_mkldnn"):
        attrs["use_mkldnn"] = mul.attr("use_mkldnn")
    return {"Input": mul.input("X"), "W": mul.input("Y")}, attrs


# What differs between the layers fused: the ops, their gradients, the fused op and its names.
_Family = namedtuple("_Family", "types grads fused out grad_out fits bias_fits fused_op_args")
_CONV = _Family(
    types=("conv2d", "depthwise_conv2d"),
    grads=("conv2d_grad", "depthwise_conv2d_grad"),
    fused="fused_conv2d",
    out="Output",
    grad_out="Output@GRAD",
    fits=_conv_fits,
    bias_fits=_conv_bias_fits,
    fused_op_args=_conv_fused,
)
_MUL = _Family(
    types=("mul",),
    grads=("mul_grad",),
    fused="fc",
    out="Out",
    grad_out="Out@GRAD",
    fits=_mul_fits,
    bias_fits=_mul_bias_fits,
    fused_op_args=_mul_fused,
)


def _activation(uses, y):
    """(act op, (fuse_activation, alpha, beta)) where `y`'s one reader is an activation
    fused_conv2d computes, reading it as X, and no other op (its gradient) reads `y`."""
    readers = uses.readers.get(y, [])
    if len(readers) != 1 or readers[0].type not in _ACTIVATIONS or readers[0].input("X") != [y]:
        return None
    fused = _fused_activation(readers[0])
    return (readers[0], fused) if fused is not None else None


def _fuse_backward(uses, family, add_grad, out):
    """The layer's gradient op reads the add's Out@GRAD where it read the add's X@GRAD (a copy
    of it): returns whether it did."""
    dx, dout = _single(add_grad, "X@GRAD", True), _single(add_grad, "Out@GRAD")
    if dx is None or dout is None or not uses.temporary(dx, add_grad):
        return False
    readers = uses.readers.get(dx, [])
    if len(readers) != 1 or readers[0].type not in family.grads:
        return False
    grad = readers[0]
    if grad.input(family.grad_out) != [dx] or grad.input_arg_names.count(dx) != 1:
        return False
    if uses.touched_between([dout], add_grad, grad, writes_only=True):
        return False
    # memory_optimize lets go of Out@GRAD after its last reader, which the layer's grad now is
    for op in uses.ops[uses.index(add_grad) + 1 : uses.index(grad)]:
        if op.type == _DELETE and dout in op.input_arg_names:
            return False
    grad.desc.rename_input(dx, dout)
    add_grad.desc.set_output("X@GRAD", [])
    return True


def _fuse_one(block, uses, family, layer):
    """Fuses `layer` (a conv or mul) with its bias add and / or activation where it can; returns
    the fused op, else False."""
    if not family.fits(uses, layer):
        return False
    out = _single(layer, family.out, True)
    if out is None or not uses.temporary(out, layer):
        return False
    found = _bias_add(uses, family, layer, out)
    add = add_grad = bias = cast = None
    last, result = layer, out  # the last op fused, and the name the fused op writes
    if found is not None:
        add, add_grad, bias, cast = found
        result = _single(add, "Out", True)
        if result is None or not uses.written_once(result, add):
            return False
        last = add
    # The activation joins where its input need not exist (else the fused op writes it)
    act = _activation(uses, result) if uses.temporary(result, last) else None
    if act is not None and uses.written_once(act[0].output("Out")[0], act[0]):
        gone = [out] + ([result] if add else [])  # what is computed no more
        last, result = act[0], act[0].output("Out")[0]
    elif add is not None:
        act, gone = None, [out]
    else:
        return False
    # The fused op runs where the layer did: what it reads must not change before the add (the
    # activation), and what it writes must not be read or written before them. A bias cast
    # after the layer moves before it (_cast_of_parameter checked its input stays).
    reads = layer.input_arg_names + ([bias] if bias and cast is None else [])
    if result in reads or uses.touched_between(reads, layer, last, writes_only=True):
        return False
    if uses.touched_between([result], layer, last):
        return False

    inputs, attrs = family.fused_op_args(layer)
    if act is not None:
        attrs["fuse_activation"], attrs["fuse_alpha"], attrs["fuse_beta"] = act[1]
    if bias:
        inputs["Bias"] = [bias]
    if add_grad is not None:
        add_grad.desc.rename_input(out, add_grad.input("Out@GRAD")[0])
        dx = _single(add_grad, "X@GRAD", True)
        if _fuse_backward(uses, family, add_grad, out):
            gone.append(dx)
    if cast is not None and uses.index(cast) > uses.index(layer):
        attrs_cast = {n: cast.attr(n) for n in cast.attr_names}
        io = ({"X": cast.input("X")}, {"Out": cast.output("Out")})
        block._remove_op(uses.index(cast))
        block._insert_op(uses.index(layer), "cast", inputs=io[0], outputs=io[1], attrs=attrs_cast)
        uses.ops = block.ops
    at = uses.index(layer)
    fused_ops = [layer] + ([add] if add else []) + ([act[0]] if act else [])
    for op in sorted(fused_ops, key=uses.index, reverse=True):
        block._remove_op(uses.index(op))
        uses.ops = block.ops
    fused_op = block._insert_op(
        at, family.fused, inputs=inputs, outputs={family.out: [result]}, attrs=attrs
    )
    for name in gone:
        forget_var(block, name, uses.deleters.get(name, []))
    block.program._bump()
    return fused_op


def _fuse_all(program, skip_opt_set, family, what):
    if not isinstance(program, Program):
        raise TypeError("%s needs a Program, got %r" % (what, program))
    skip = {getattr(item, "name", item) for item in skip_opt_set or ()}
    block = program.global_block()
    fused = []
    i = 0
    while i < len(block.ops):
        op = block.ops[i]
        fused_op = op.type in family.types and _fuse_one(block, _Uses(program, skip), family, op)
        if fused_op:  # after the bias cast it moved before the layer, if any
            fused.append(fused_op.output(family.out)[0])
            i = next(j for j, o in enumerate(block.ops) if o is fused_op)
        i += 1
    return fused


def fuse_conv_bias_act(program, skip_opt_set=None):
    """Rewrites `program`'s global block in place (see the module's doc); returns the outputs of
    the fused convolutions."""
    return _fuse_all(program, skip_opt_set, _CONV, "fuse_conv_bias_act")


def fuse_fc_bias_act(program, skip_opt_set=None):
    """Rewrites `program`'s global block in place: each mul with its bias add and / or activation
    as one fc (see the module's doc); returns the outputs of the fused layers."""
    return _fuse_all(program, skip_opt_set, _MUL, "fuse_fc_bias_act")
