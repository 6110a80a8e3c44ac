"""InferenceTranspiler: Fluid 1.x's inference optimisations of a loaded inference program, as
Paddle Inference's IR passes do them (conv_bn_fuse_pass, conv_elementwise_add_fuse_pass,
conv_activation / residual fuse passes):

- conv2d / depthwise_conv2d + batch_norm (is_test or use_global_stats): the normalisation is
  folded into the Filter and a Bias (computed in float64, stored as the parameters' dtype in new
  variables: the originals stay as they are for other programs of the scope);
- reshape2 / reshape / unsqueeze2 of a persistable (a conv's bias as Paddle 2.x's
  dygraph-to-static export writes it: reshape2(b, [1, M, 1, 1]) then elementwise_add, axis -1)
  is folded into a persistable holding the reshaped values;
- conv + elementwise_add of a persistable [M] vector on the channel axis, or of one shaped
  [1, M, 1, 1] ([1, 1, 1, M] in NHWC) broadcast from the last axis: that vector is the Bias;
- conv + elementwise_add of another tensor of the output's dims: ResidualData;
- conv (+ ...) + an activation fused_conv2d computes (relu, leaky_relu, relu6, clip, swish,
  hard_sigmoid, hard_swish with Fluid's defaults, sigmoid, tanh, abs, sqrt, gelu):
  fuse_activation / fuse_alpha / fuse_beta as Paddle's conv_activation_mkldnn_fuse_pass writes
  them (see _fused_activation);
- a fused conv whose ResidualData nothing reads afterwards writes its Output into ResidualData's
  variable (in place, as Paddle's oneDNN kernel reuses the residual's buffer): the sum then needs
  no copy of the residual. Later readers of the old Output name read that variable instead.

Each fused conv becomes Paddle's `fused_conv2d` op (Output = act(conv + Bias + ResidualData)),
whose plain CPU and oneDNN kernels implement exactly that; it has no gradient, so only inference
programs are rewritten. fused_conv2d has CPU kernels only: for another place (a GPU) the
transpiler does what Fluid's did there, batch_norm folded into the Filter and an elementwise_add
of the Bias on the channel axis, and fuses nothing else. A pattern is fused only when the
intermediate results are read by nothing else (no other op, no fetch op, no name in `keep`),
so every fetched value keeps its name and meaning, and never so that a fused op would write its
own Input, Filter or Bias (programs that reuse names).

On the CPU the transformer passes of inference_passes/ run next (Paddle's delete_dropout,
fc_fuse, multihead / self-attention and skip_layernorm fusions): grouped-query attention's
repeated keys / values folded, RMS normalisation written out into rms_norm, rotate_half rotary
embedding into fused_rotary_position_embedding, matmul_v2 (+ bias) (+ gelu, silu, ...) into fc,
the Q / K / V projections into one fc, the attention into fused_multihead_attention, a causal
mask written out + softmax into fused_softmax_mask_upper_triangle, a residual add + layer_norm into skip_layernorm (preln_skip_layernorm where later ops read the sum too:
pre-norm models) (docs/paddle_models.md); `skip_passes` names those not to run.

    t = tide.transpiler.InferenceTranspiler()
    t.transpile(program, place, scope)       # in place; returns the number of ops removed
    t.transpile(program, place, scope, keep=[conv_out])   # values fetched later stay computed

tide.io.load_inference_model applies it by default (`optimize=False` turns it off).
"""

import numpy as np

from .. import _C, unique_name
from ..core import CPUPlace
from ..executor import Executor, global_scope
from .constant_folding import fold_constants
from .inference_passes import PASSES, Graph
from .inference_passes.activation import _ACTIVATIONS, _fused_activation

__all__ = ["InferenceTranspiler"]

_CONVS = ("conv2d", "depthwise_conv2d")
_CONSTANT_RESHAPES = ("reshape2", "reshape", "unsqueeze2")
_FUSED = "fused_conv2d"


def _nhwc(op):
    return op.has_attr("data_format") and op.attr("data_format") == "NHWC"


def _activated(attrs):
    """Whether a conv's attributes already fuse an activation (a conv after it cannot fuse more)."""
    return bool(attrs.get("fuse_activation") or attrs.get("fuse_relu"))


class InferenceTranspiler:
    """Rewrites an inference program in place (see the module's docstring)."""

    def transpile(
        self,
        program,
        place=None,
        scope=None,
        keep=(),
        fuse_ops=None,
        skip_passes=(),
        plugin_passes=True,
    ):
        """Fuses in program's global block; the parameters folded are read and written in
        `scope` (the global scope by default) on `place` (the CPU by default). Variables named
        in `keep` (or Variables) are read outside the program (fetched later, without a fetch op
        in it) and keep their values. `fuse_ops` (default: whether `place` is a CPU) makes
        fused_conv2d ops and runs the transformer passes (inference_passes.PASSES: fc,
        fused_multihead_attention, skip_layernorm, preln_skip_layernorm, CPU kernels only), after
        folding the ops of constant inputs into parameters (constant_folding.fold_constants,
        "fold_constants" in `skip_passes`); without it batch_norm becomes a bias add. `skip_passes` names transformer passes not to run. Last, with
        `plugin_passes`, the program passes plugins registered for `place`'s kind (or for
        every place) run, in registration order (TideProgramPassDef; the names they changed
        the program with are in `self.plugin_passes_applied`). Returns the number of ops the
        program lost."""
        names = ["fold_constants"] + [name for name, _ in PASSES]
        unknown = set(skip_passes) - set(names)
        if unknown:
            raise ValueError(
                "InferenceTranspiler: no pass named %s (the passes: %s)"
                % (", ".join(sorted(unknown)), ", ".join(names))
            )
        self.program = program
        self.keep = [getattr(v, "name", v) for v in keep]
        self.scope = scope if scope is not None else global_scope()
        self.place = place if place is not None else CPUPlace()
        self.fuse = self.place.kind == "cpu" if fuse_ops is None else bool(fuse_ops)
        before = len(program.global_block().ops)
        rules = (
            (
                self._fold_constant_reshapes,
                self._fold_batch_norm,
                self._fuse_bias,
                self._fuse_residual,
                self._fuse_activation,
                self._residual_in_place,
            )
            if self.fuse
            else (self._fold_batch_norm,)
        )
        self._created = set()  # persistables _store made
        if self.fuse and "fold_constants" not in skip_passes:
            self._created.update(
                fold_constants(program, self.scope, Executor(self.place), self.keep)
            )
        for rule in rules:
            while rule():
                pass
        self._drop_unread_created()
        if self.fuse:
            for name, rewrite in PASSES:
                while name not in skip_passes and rewrite(
                    Graph(program, self.scope, self.place, self.keep)
                ):
                    pass
        self.plugin_passes_applied = self._run_plugin_passes() if plugin_passes else []
        return before - len(program.global_block().ops)

    def _run_plugin_passes(self):
        """The plugins' program passes for the place, over the serialized program (in the core,
        which refuses a result it cannot load, naming the pass and its plugin); returns the names
        of those that changed it."""
        data, changed = _C.run_program_passes(
            self.program.desc.serialize(), self.place.kind, self.keep
        )
        if changed:
            self.program._replace_desc(_C.ProgramDesc.parse(data))
        return changed

    # --- helpers ---------------------------------------------------------------------------

    def _value(self, name):
        var = self.scope.find_var(name)
        if var is None or not var.is_initialized():
            return None
        t = var.get_tensor()
        if not t._is_initialized():
            return None
        return t.numpy()

    def _persistable(self, name):
        block = self.program.global_block()
        return block.has_var(name) and block.var(name).persistable

    def _fresh_name(self, prefix):
        """A name no variable of the program or the scope has."""
        block = self.program.global_block()
        while True:
            name = unique_name.generate(prefix)
            if not block.has_var(name) and self.scope.find_var(name) is None:
                return name

    def _store(self, name, value, like):
        """Writes `value` into variable `name` (made persistable in block 0 when new)."""
        block = self.program.global_block()
        if not block.has_var(name):
            block.create_var(name=name, shape=list(value.shape), dtype=like.dtype, persistable=True)
            self._created.add(name)
        self.scope.var(name).get_tensor().set(np.ascontiguousarray(value), self.place, False)

    def _drop_unread_created(self):
        """Removes the persistables the rules made that a later rule folded further (a reshaped
        bias become a fused conv's Bias vector): from the program and the scope."""
        g = Graph(self.program, self.scope, self.place, self.keep)
        unread = sorted(n for n in self._created if n not in g.readers)
        for name in unread:
            g.block._remove_var(name)
        if unread:
            self.scope.erase_vars(unread)

    def _conv_parts(self, op):
        """The fused_conv2d view of a conv op: (inputs, attrs), or None when op is not a conv
        this pass can extend."""
        if op.type not in (_CONVS + (_FUSED,) if self.fuse else _CONVS):
            return None
        inputs = {"Input": op.input("Input"), "Filter": op.input("Filter")}
        attrs = {n: op.attr(n) for n in op.attr_names}  # fused_conv2d declares all of conv2d's
        if op.type == _FUSED:
            for p in ("Bias", "ResidualData"):
                if op.input(p):
                    inputs[p] = op.input(p)
        return inputs, attrs

    @staticmethod
    def _reads(inputs, name):
        """True when the conv would read `name` as Input, Filter or Bias (so it cannot be the
        fused op's Output: a program that reuses names, e.g. after memory_optimize)."""
        return any(name in inputs.get(p, []) for p in ("Input", "Filter", "Bias"))

    def _replace(self, old_ops, at, inputs, output, attrs):
        """Removes old_ops and inserts a fused_conv2d at the index `at` had."""
        block = self.program.global_block()
        g = Graph(self.program, self.scope, self.place, self.keep)
        index = g.index(at)
        removed_before = sum(1 for o in old_ops if g.index(o) < index)
        for o in sorted(old_ops, key=g.index, reverse=True):
            block._remove_op(g.index(o))
        block._insert_op(
            index - removed_before, _FUSED, inputs=inputs, outputs={"Output": [output]}, attrs=attrs
        )

    def _conv_writing(self, g, name):
        """The conv-like op writing `name`, or None."""
        for op in g.block.ops:
            if name in op.output_arg_names and self._conv_parts(op) is not None:
                return op
        return None

    def _convs_then(self, g, op_types, absent):
        """(conv, inputs, attrs, op) for each conv-like op with no fused activation and none of
        the inputs `absent`, whose output's one reader is an op of `op_types` (a type or a
        collection of them) reading it as X."""
        if isinstance(op_types, str):
            op_types = (op_types,)
        for conv in list(g.block.ops):
            parts = self._conv_parts(conv)
            if parts is None:
                continue
            inputs, attrs = parts
            if _activated(attrs) or any(p in inputs for p in absent):
                continue
            out = conv.output("Output")[0]
            op = g.only_reader(out)
            if op is not None and op.type in op_types and op.input("X") == [out]:
                yield conv, inputs, attrs, op

    # --- rules (each returns True after one rewrite) ---------------------------------------

    def _fold_batch_norm(self):
        g = Graph(self.program, self.scope, self.place, self.keep)
        for conv, inputs, attrs, bn in self._convs_then(g, "batch_norm", absent=("ResidualData",)):
            out = conv.output("Output")[0]
            test = bn.attr("is_test") and not (
                bn.has_attr("trainable_statistics") and bn.attr("trainable_statistics")
            )
            if not (test or bn.attr("use_global_stats")):
                continue
            if (bn.attr("data_layout") == "NHWC") != _nhwc(conv):
                continue
            if any(
                g.readers.get(n)
                for p in ("MeanOut", "VarianceOut", "SavedMean", "SavedVariance", "ReserveSpace")
                for n in bn.desc.outputs().get(p, [])
                if n not in bn.input("Mean") + bn.input("Variance")
            ):
                continue
            if self._reads(inputs, bn.output("Y")[0]):
                continue
            names = {p: bn.input(p)[0] for p in ("Scale", "Bias", "Mean", "Variance")}
            fname = inputs["Filter"][0]
            if not all(self._persistable(n) for n in list(names.values()) + [fname]):
                continue
            vals = {p: self._value(n) for p, n in names.items()}
            w = self._value(fname)
            old_b = self._value(inputs["Bias"][0]) if "Bias" in inputs else None
            if (
                w is None
                or any(v is None for v in vals.values())
                or ("Bias" in inputs and old_b is None)
            ):
                continue
            m = w.shape[0]
            if any(v.size != m for v in vals.values()) or (old_b is not None and old_b.size != m):
                continue
            inv = vals["Scale"].astype(np.float64).reshape(m) / np.sqrt(
                vals["Variance"].astype(np.float64).reshape(m) + float(bn.attr("epsilon"))
            )
            new_w = (w.astype(np.float64) * inv.reshape((m,) + (1,) * (w.ndim - 1))).astype(w.dtype)
            b0 = old_b.astype(np.float64).reshape(m) if old_b is not None else 0.0
            new_b = (
                (b0 - vals["Mean"].astype(np.float64).reshape(m)) * inv
                + vals["Bias"].astype(np.float64).reshape(m)
            ).astype(w.dtype)
            # New variables: the originals may be shared with other programs of the scope (a
            # training program, an earlier load of the same model), which must not change.
            fname = self._fresh_name(fname + "_bn_folded")
            self._store(fname, new_w, g.block.var(inputs["Filter"][0]))
            bname = self._fresh_name(names["Bias"] + "_conv_bias")
            self._store(bname, new_b, g.block.var(names["Bias"]))
            if not self.fuse:  # Fluid's form: conv (new Filter) + elementwise_add(Bias)
                if fname != inputs["Filter"][0]:
                    conv.desc.rename_input(inputs["Filter"][0], fname)
                i, y, axis = g.index(bn), bn.output("Y")[0], 3 if _nhwc(conv) else 1
                g.block._remove_op(i)
                g.block._insert_op(
                    i,
                    "elementwise_add",
                    inputs={"X": [out], "Y": [bname]},
                    outputs={"Out": [y]},
                    attrs={"axis": axis},
                )
                return True
            inputs["Filter"], inputs["Bias"] = [fname], [bname]
            self._replace([conv, bn], conv, inputs, bn.output("Y")[0], attrs)
            return True
        return False

    def _fold_constant_reshapes(self):
        """reshape2 / reshape / unsqueeze2 of a persistable (a conv's bias as Paddle 2.x's
        dygraph-to-static writes it: reshape2(b, [1, M, 1, 1]) + elementwise_add) becomes a
        persistable holding the reshaped values, so the fusions see the constant."""
        g = Graph(self.program, self.scope, self.place, self.keep)
        for i, op in enumerate(g.block.ops):
            if op.type not in _CONSTANT_RESHAPES:
                continue
            x, out = op.input("X")[0], op.output("Out")[0]
            value = self._value(x) if self._persistable(x) else None
            out_var = g.block.var(out) if g.block.has_var(out) else None
            shape = list(out_var.shape) if out_var is not None else []
            if value is None or not shape or any(d < 0 for d in shape):
                continue
            if out in self.keep or np.prod(shape) != value.size:
                continue
            written_elsewhere = [
                o for o in g.block.ops if out in o.output_arg_names and o is not op
            ]
            if written_elsewhere or any(n in g.readers for n in op.output("XShape")):
                continue
            folded = self._fresh_name(x + ".reshaped")
            self._store(folded, value.reshape(shape), g.block.var(x))
            for reader in g.readers.get(out, []):
                reader.desc.rename_input(out, folded)
            g.block._remove_op(i)
            return True
        return False

    def _fuse_bias(self):
        """conv + elementwise_add(Y = a persistable [M] vector on the channel axis, or one of
        the output's rank with M values on the channel axis and 1 elsewhere): Bias."""
        g = Graph(self.program, self.scope, self.place, self.keep)
        for conv, inputs, attrs, add in self._convs_then(
            g, "elementwise_add", absent=("Bias", "ResidualData")
        ):
            y = add.input("Y")[0]
            yv = g.block.var(y) if g.block.has_var(y) else None
            m = conv.block.var(inputs["Filter"][0]).shape[0]
            axis = add.attr("axis")
            channel_axis = 3 if _nhwc(conv) else 1
            if yv is None or not yv.persistable:
                continue
            if self._reads(dict(inputs, Bias=[y]), add.output("Out")[0]):
                continue
            if list(yv.shape) == [m]:
                if axis not in (channel_axis, channel_axis - 4):
                    continue
                if _nhwc(conv) and axis not in (3, -1):
                    continue
                bias = y
            else:  # [1, M, 1, 1] (NHWC: [1, 1, 1, M]) broadcast from the last axis
                want = [1, 1, 1, 1]
                want[channel_axis] = m
                value = self._value(y)
                if list(yv.shape) != want or axis not in (-1, 0) or value is None:
                    continue
                bias = self._fresh_name(y + ".vector")  # a new name: no op reads it yet
                self._store(bias, value.reshape(m), yv)
            inputs["Bias"] = [bias]
            self._replace([conv, add], conv, inputs, add.output("Out")[0], attrs)
            return True
        return False

    def _fuse_residual(self):
        """conv + elementwise_add(the conv's output, R of the same dims): ResidualData = R,
        the fused op placed where the add was (R is ready there)."""
        g = Graph(self.program, self.scope, self.place, self.keep)
        for add in list(g.block.ops):
            if add.type != "elementwise_add":
                continue
            x, y = add.input("X")[0], add.input("Y")[0]
            if not (g.block.has_var(x) and g.block.has_var(y)):
                continue
            sx, sy = list(g.block.var(x).shape), list(g.block.var(y).shape)
            if sx != sy or len(sx) != 4 or x == y:
                continue
            best = None
            for mine, other in ((x, y), (y, x)):
                conv = self._conv_writing(g, mine)
                if conv is None or g.only_reader(mine) is not add:
                    continue
                inputs, attrs = self._conv_parts(conv)
                if "ResidualData" in inputs or _activated(attrs):
                    continue
                i, j = g.index(conv), g.index(add)
                if g.writers_between(sum(inputs.values(), []) + [other], i, j):
                    continue
                if self._reads(inputs, add.output("Out")[0]):
                    continue
                if best is None or i > best[0]:
                    best = (i, conv, inputs, attrs, other)
            if best is None:
                continue
            _, conv, inputs, attrs, other = best
            inputs["ResidualData"] = [other]
            attrs["fuse_residual_connection"] = True
            self._replace([conv, add], add, inputs, add.output("Out")[0], attrs)
            return True
        return False

    def _fuse_activation(self):
        """conv (+ Bias, ResidualData) + an activation fused_conv2d computes as the op does."""
        g = Graph(self.program, self.scope, self.place, self.keep)
        for conv, inputs, attrs, act in self._convs_then(g, _ACTIVATIONS, absent=()):
            fused = _fused_activation(act)
            if fused is None or self._reads(inputs, act.output("Out")[0]):
                continue
            attrs["fuse_activation"], attrs["fuse_alpha"], attrs["fuse_beta"] = fused
            self._replace([conv, act], conv, inputs, act.output("Out")[0], attrs)
            return True
        return False

    def _residual_in_place(self):
        """fused_conv2d(ResidualData = R, Output = O) -> Output = R when R is a temporary that
        no op after it reads, and O is not read outside the program; O's later readers read R."""
        g = Graph(self.program, self.scope, self.place, self.keep)
        block = g.block
        for conv in list(block.ops):
            if conv.type != _FUSED or not conv.input("ResidualData"):
                continue
            r, o = conv.input("ResidualData")[0], conv.output("Output")[0]
            if r in sum((conv.input(p) for p in ("Input", "Filter", "Bias")), []):
                continue  # the conv reads it: writing it would change what it reads
            if (
                r == o
                or r in self.keep
                or o in self.keep
                or not block.has_var(r)
                or block.var(r).persistable
                or not block.has_var(o)
            ):
                continue
            if (
                list(block.var(r).shape) != list(block.var(o).shape)
                or block.var(r).dtype != block.var(o).dtype
            ):
                continue
            i = g.index(conv)
            readers_r = g.readers.get(r, [])
            if any(op is not conv and (op.block.idx != 0 or g.index(op) > i) for op in readers_r):
                continue
            if any(
                op.type in ("fetch", "feed") or op.block.idx != 0 for op in g.readers.get(o, [])
            ):
                continue
            if any(r in op.output_arg_names for op in block.ops[i + 1 :]) or any(
                o in op.output_arg_names for op in block.ops if op is not conv
            ):
                continue
            if any(op.type == "feed" and r in op.output_arg_names for op in block.ops):
                continue
            for op in block.ops[i + 1 :]:
                if o in op.input_arg_names:
                    op.desc.rename_input(o, r)
            conv.desc.set_output("Output", [r])
            self.program._bump()
            return True
        return False
