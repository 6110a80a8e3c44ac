"""The program rewrite of mixed precision (Fluid's fp16_utils.rewrite_program): each forward op
of block 0 is given a precision by the lists and the device, and casts are inserted at the
borders: a low-precision op reads float32 values (parameters included: they stay float32, the
master weights) through a cast to the low type, a float32 op reads low values through a cast
back. Backward, appended afterwards, mirrors the casts, so every parameter's gradient arrives
in float32.

For inference (bf16_inference) an op needs no gradient kernel in the low type, and no cast op
reads a parameter each run: an input the op declares float32 (`float32_param` in its proto:
fused_conv2d's and fc's weights and biases, which the oneDNN kernels reorder into bfloat16 once;
batch_norm's statistics) stays float32, and any other parameter is cast once, before the first
run, into a persistable copy in the low type (`param_casts`)."""

import functools
import logging

from ... import _C, unique_name
from ...core import dtype_code
from ...framework import OP_ROLE_BACKWARD, OP_ROLE_OPTIMIZE

LOW_TYPES = ("float16", "bfloat16")
_FLOATS = ("float32",) + LOW_TYPES
_log = logging.getLogger("tide.amp")


def kernel_types(op_type, place_kind):
    """The data types `op_type` has kernels for on devices of kind `place_kind` ("cpu", "gpu",
    a plugin's device type), from the loaded plugins' kernel keys."""
    types = set()
    for key in _C.op_kernels(op_type):  # "{cpu, float32, ANY, plain}"
        fields = [f.strip() for f in key.strip("{}").split(",")]
        if len(fields) >= 2 and fields[0] == place_kind:
            types.add(fields[1])
    return types


@functools.lru_cache(maxsize=None)
def _float32_params(op_type):
    """The inputs of `op_type` its low-precision kernels read in float32 (AsFloat32Param)."""
    return {v["name"] for v in _C.op_proto(op_type)["inputs"] if v.get("float32_param")}


def _runs_low(op_type, dtype, place_kind, inference=False):
    """Whether the device runs `op_type` (and, unless for `inference`, its gradient op, where it
    has one) in `dtype`."""
    if dtype not in kernel_types(op_type, place_kind):
        return False
    if inference:
        return True
    grad = op_type + "_grad"
    return not _C.has_op(grad) or dtype in kernel_types(grad, place_kind)


def _float_args(block, names):
    out = []
    for name in names:
        var = block._find_var_recursive(name)
        if var is not None and var.type == "LOD_TENSOR" and var.dtype in _FLOATS:
            out.append(var)
    return out


class _Rewriter:
    def __init__(self, block, amp_lists, dtype, place_kind, inference=False, float32_outputs=()):
        self.block, self.lists, self.dtype, self.kind = block, amp_lists, dtype, place_kind
        self.inference = inference
        self.float32_outputs = set(float32_outputs)  # values whose writers compute in float32
        self.param_casts = []  # inference: (float32 parameter, its persistable low copy)
        self.casts = {}  # (name, dtype) -> the variable holding name cast to dtype
        self.low_ops = []
        self.declined = set()  # allow-listed op types the device has no low kernel for
        self.made_by = {}  # value -> "black", "low" or "float32": the kind of op that wrote it

    def pinned_float32(self, op):
        """Control flow, and ops reading or writing a black-listed variable: float32 whatever."""
        names = op.input_arg_names + op.output_arg_names
        return op.has_attr("sub_block") or bool(self.lists.black_varnames & set(names))

    def writes_float32_output(self, op):
        return bool(self.float32_outputs & set(op.output_arg_names))

    def forced_float32(self, op):
        return self.pinned_float32(op) or self.writes_float32_output(op)

    def low_with_float32_output(self, op):
        """Inference's fc writing a value that stays float32 (a fetched one: an LLM's logits):
        it computes in the low type and writes Out in float32, its float32 sums not rounded
        (force_fp32_output, as Paddle's cpu_bfloat16_pass), instead of computing in float32."""
        return (
            self.inference
            and op.type == "fc"
            and op.has_attr("force_fp32_output")
            and not self.pinned_float32(op)
            and self.writes_float32_output(op)
            and op.type in self.lists.white_list
            and _runs_low(op.type, self.dtype, self.kind, True)
        )

    def precision(self, op):
        if self.forced_float32(op):
            return "float32"
        if self.inference and any(
            v.desc.zero_dim for v in _float_args(self.block, op.input_arg_names)
        ):
            # A 0-D value (the scalars of Paddle's `where`, shape arithmetic) stays float32:
            # oneDNN's bfloat16 kernels take no rank 0, and a scalar gains nothing in them.
            return "float32"
        if op.type in self.lists.white_list:
            if _runs_low(op.type, self.dtype, self.kind, self.inference):
                return self.dtype
            self.declined.add(op.type)
            return "float32"
        if op.type in self.lists.gray_list:
            # Fluid's rule: a gray op follows the ops that wrote its inputs (parameters and feeds,
            # which no op wrote, do not count): float32 after a black op, else low after a low op.
            made_by = {
                self.made_by.get(v.name) for v in _float_args(self.block, op.input_arg_names)
            }
            if "black" not in made_by and "low" in made_by:
                if _runs_low(op.type, self.dtype, self.kind, self.inference):
                    return self.dtype
                self.declined.add(op.type)
        return "float32"

    def cast_input(self, index, op, var, dtype):
        """Renames op's input `var` to its value cast to dtype (one cast per value); returns how
        many ops were inserted before `index`."""
        key = (var.name, dtype)
        inserted = 0
        once = self.inference and var.persistable  # cast before the first run, not in each
        if key not in self.casts:
            suffix = dtype.replace("float", "fp")  # x.cast_fp16, x.cast_bfp16, x.cast_fp32
            out = self.block.create_var(
                name=unique_name.generate("%s.cast_%s" % (var.name, suffix)),
                dtype=dtype,
                shape=var.shape if var.shape else None,
                lod_level=var.lod_level,
                stop_gradient=var.stop_gradient,
                persistable=once,
            )
            if once:
                self.param_casts.append((var, out))
            else:
                self.block._insert_op(
                    index,
                    "cast",
                    inputs={"X": var},
                    outputs={"Out": out},
                    attrs={"in_dtype": dtype_code(var.dtype), "out_dtype": dtype_code(dtype)},
                )
                inserted = 1
            self.casts[key] = out
        op.desc.rename_input(var.name, self.casts[key].name)
        return inserted

    def run(self):
        i = 0
        while i < len(self.block.ops):
            op = self.block.ops[i]
            role = op.attr("op_role") if op.has_attr("op_role") else 0
            if op.type == "cast" or role & (OP_ROLE_BACKWARD | OP_ROLE_OPTIMIZE):
                self._wrote(op, None)
                i += 1
                continue
            float32_out = self.low_with_float32_output(op)
            want = self.dtype if float32_out else self.precision(op)
            if float32_out:
                op.desc.set_attr("force_fp32_output", True)
            keep = _float32_params(op.type) if self.inference and want != "float32" else ()
            kept = {n for p, names in op.desc.inputs().items() if p in keep for n in names}
            for var in _float_args(self.block, op.input_arg_names):
                if var.dtype != want and var.name not in kept:
                    i += self.cast_input(i, op, var, want)
            op.desc.infer_shape(self.block.desc)  # outputs take the type the op now computes in
            if want != "float32":  # also where an op's shape rule leaves the type as declared
                self.low_ops.append(op.type)
                for var in _float_args(self.block, op.output_arg_names):
                    if not var.persistable and not float32_out:
                        var.desc.dtype = dtype_code(want)
            self._wrote(op, want)
            i += 1
        self.block.program._bump()

    def _wrote(self, op, precision):
        """Records what wrote op's outputs (precision None: a cast, or backward, by its types)."""
        black = op.type in self.lists.black_list or self.forced_float32(op)
        for name in op.output_arg_names:
            for dtype in _FLOATS:  # a value written again is not the one cast before
                self.casts.pop((name, dtype), None)
            var = self.block._find_var_recursive(name)
            if var is None or var.persistable:
                continue
            if black:
                self.made_by[name] = "black"
            elif (precision or var.dtype) == self.dtype:
                self.made_by[name] = "low"
            else:
                self.made_by[name] = "float32"


def rewrite_program(program, amp_lists, dtype="float16", place=None):
    """Rewrites block 0's forward ops of `program` for mixed precision, in place.

    Args:
        program (Program): the program, before backward is appended.
        amp_lists (AutoMixedPrecisionLists): which ops may run in the low type.
        dtype (str): "float16" or "bfloat16".
        place (Place): where the program will run; an op runs in the low type only where this
            kind of device has a kernel for it in that type (default: the CPU).

    Returns:
        list: the types of the ops that now compute in `dtype`, in program order.
    """
    return run_rewriter(program, amp_lists, dtype, place).low_ops


def run_rewriter(program, amp_lists, dtype, place, inference=False, float32_outputs=()):
    """rewrite_program's work; returns the _Rewriter (for inference, see the module's note: its
    `param_casts` are the casts the caller runs once). The ops writing `float32_outputs` (names)
    compute in float32; unlike black_varnames, the ops reading them need not."""
    if dtype not in LOW_TYPES:
        raise ValueError("rewrite_program: dtype must be one of %s, got %r" % (LOW_TYPES, dtype))
    kind = place.kind if place is not None else "cpu"
    rewriter = _Rewriter(program.global_block(), amp_lists, dtype, kind, inference, float32_outputs)
    rewriter.run()
    for op_type in sorted(rewriter.declined):
        _log.info(
            "mixed precision: '%s' stays float32: no %s kernel for it on the %s device",
            op_type,
            dtype,
            kind,
        )
    return rewriter
