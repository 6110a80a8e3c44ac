"""bfloat16 inference of a loaded program (issue 32): `bf16_inference(program, place)` rewrites an
inference program, in place, so that the ops the place computes in bfloat16 run in it. It is the
mixed-precision rewrite (rewrite_program, in its inference mode) with the bfloat16 lists plus the
inference transpiler's fused ops: casts only at the borders, parameters left float32 (converted
once by the kernels or the core, not by a cast op each run), feeds and fetched values float32.

Where the place computes nothing in bfloat16 (no plugin registers a bfloat16 kernel for any listed
op, as without device_mkldnn; or its bfloat16 kernels decline on this CPU, as oneDNN's do without
AVX-512) it warns, naming why, and leaves the program float32."""

import logging
import warnings

from ... import _C, layers
from ...core import CPUPlace, Scope, dtype_code
from ...executor import Executor, global_scope
from ...framework import Program, program_guard
from .amp_lists import AutoMixedPrecisionListsBF16Inference
from .rewrite import kernel_types, run_rewriter

_log = logging.getLogger("tide.amp")
_probed = {}  # str(place) -> why the place runs no bfloat16 kernel ("" when it runs them)


def _probe(place):
    """Runs one bfloat16 matmul_v2 on `place`: "" when its bfloat16 kernel ran, else why not (the
    kernel that ran instead). A device's kernels may decline at run time where the CPU lacks the
    instructions (oneDNN's without AVX-512), which the kernel keys cannot say."""

    main = Program()
    with program_guard(main, Program()):
        x = layers.cast(layers.fill_constant([2, 2], "float32", 1.0), "bfloat16")
        out = main.global_block().create_var(name="bf16_probe_out", dtype="bfloat16")
        main.global_block().append_op(
            type="matmul_v2", inputs={"X": [x], "Y": [x]}, outputs={"Out": [out]}
        )
    exe = Executor(place)
    exe.run(main, fetch_list=[out], scope=Scope(), use_program_cache=False)
    ran = [k for t, k in exe.last_run_info()["kernels"] if t == "matmul_v2"]
    if ran and all("bfloat16" in k for k in ran):
        return ""
    return (
        "its bfloat16 kernels decline on this CPU (a bfloat16 matmul_v2 ran %s; oneDNN needs "
        "AVX-512 for bfloat16)" % (ran[0] if ran else "nothing")
    )


def _why_no_bf16(place, lists):
    """Why `place` computes none of the listed ops in bfloat16; "" when it computes some."""
    kind = place.kind
    # Gray ops (reshapes, concat, ...) only follow the white ones: it takes a white op.
    if not any("bfloat16" in kernel_types(t, kind) for t in lists.white_list):
        return "no loaded plugin registers a bfloat16 kernel on the %s device for any op" % kind + (
            " (device_mkldnn, oneDNN's kernels, is not loaded)" if kind == "cpu" else ""
        )
    if "bfloat16" not in kernel_types("matmul_v2", kind):
        return ""  # the kernel keys are all there is to ask
    key = str(place)
    if key not in _probed:
        _probed[key] = _probe(place)
    return _probed[key]


def _cast_params_once(param_casts, place, scope):
    """Writes each parameter's bfloat16 copy into `scope` (one run of their casts on `place`)."""

    once = Program()
    block = once.global_block()
    for src, dst in param_casts:
        x = block.create_var(name=src.name, dtype=src.dtype, shape=src.shape, persistable=True)
        y = block.create_var(name=dst.name, dtype=dst.dtype, shape=dst.shape, persistable=True)
        block.append_op(
            type="cast",
            inputs={"X": [x]},
            outputs={"Out": [y]},
            attrs={"in_dtype": dtype_code(src.dtype), "out_dtype": dtype_code(dst.dtype)},
        )
    Executor(place).run(once, scope=scope, use_program_cache=False)


def _results(op, read):
    """op's outputs no op reads, less its intermediate ones (reshape2's XShape, dropout's Mask,
    layer_norm's Mean: nobody fetches them, and they must not keep the op float32)."""
    proto = _C.op_proto(op.type) if _C.has_op(op.type) else {"outputs": []}
    intermediate = {o["name"] for o in proto["outputs"] if o["intermediate"]}
    return {
        n
        for param, names in op.desc.outputs().items()
        if param not in intermediate
        for n in names
        if n not in read
    }


def _fetched(block, fetch_list):
    """What the user may fetch: the values fetch ops read, those no op reads (a program's
    results), and `fetch_list` (names or Variables)."""
    read = {n for op in block.ops for n in op.input_arg_names}
    names = {n for op in block.ops if op.type == "fetch" for n in op.input_arg_names}
    for op in block.ops:
        names |= _results(op, read)
    names |= {getattr(v, "name", v) for v in fetch_list or ()}
    return names


def bf16_inference(program, place=None, scope=None, amp_lists=None, fetch_list=None):
    """Rewrites inference `program` (block 0; no backward) in place so that the ops `place`
    computes in bfloat16 run in it (docs/mixed_precision.md, "bf16 inference").

    Args:
        program (Program): an inference program, usually tide.io.load_inference_model's (after
            the InferenceTranspiler: fused_conv2d, fc, ...).
        place (Place): where it will run (default: the CPU); only the ops this place has
            bfloat16 kernels for are rewritten, each listed op left float32 is logged (logger
            `tide.amp`).
        scope (Scope): where the program's parameters are (default: the global scope): a
            parameter a bfloat16 op reads is cast there once, into a new variable (the float32
            one stays, for other programs), unless the op reads it in float32.
        amp_lists (AutoMixedPrecisionLists): the lists (default:
            AutoMixedPrecisionListsBF16Inference()).
        fetch_list (list): values to be fetched (names or Variables) besides those the program's
            fetch ops read and those no op reads: all of them stay float32 (the ops writing
            them compute in float32).

    Returns:
        list: the types of the ops now computing in bfloat16, in program order; empty (with a
        warning saying why) where the place computes none in bfloat16.
    """
    place = place if place is not None else CPUPlace()
    lists = amp_lists if amp_lists is not None else AutoMixedPrecisionListsBF16Inference()
    why = _why_no_bf16(place, lists)
    if why:
        warnings.warn(
            "bf16 inference: no op runs in bfloat16 on %s: %s; the program runs in float32"
            % (place, why),
            RuntimeWarning,
            stacklevel=2,
        )
        return []
    block = program.global_block()
    fetched = _fetched(block, fetch_list)  # stays float32: the ops writing it compute in it
    rewriter = run_rewriter(program, lists, "bfloat16", place, True, fetched)
    low = rewriter.low_ops
    if rewriter.param_casts:
        _cast_params_once(rewriter.param_casts, place, scope or global_scope())
    if not low:
        warnings.warn(
            "bf16 inference: no op runs in bfloat16 on %s: none of the program's ops has a "
            "bfloat16 kernel there; the program runs in float32" % place,
            RuntimeWarning,
            stacklevel=2,
        )
    else:
        _log.info("bf16 inference: %d ops in bfloat16 on %s", len(low), place)
    return low
