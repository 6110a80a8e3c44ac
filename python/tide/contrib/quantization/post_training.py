"""Post-training int8 quantization of an inference program (issue 32; docs/mixed_precision.md,
"int8 inference"): calibrate the activations' ranges on sample batches, quantize the weights per
output channel, and rewrite the program so that its convolutions and fc ops compute in int8
(the kernels' rule: sdk/include/tide/ops/int8.hpp), as Paddle's cpu_quantize_pass marks them:

- each quantizable op keeps its type (conv2d / depthwise_conv2d become fused_conv2d, the op that
  has the int8 kernels) and gains Scale_in, Scale_weights (per output channel), Scale_out,
  Scale_in_eltwise (an int8 residual's), force_fp32_output and mkldnn_data_type = "int8"; its
  float32 weights stay as they are (the kernels quantize them once);
- its Input is u8 / s8: the int8 output of the op before it when that op is quantized too and
  only quantized ops read its output (u8 after relu / relu6, else s8), else a `quantize` op's
  (one per value: the border of an int8 region);
- its Output stays float32 (force_fp32_output) where anything but a quantized op reads it, or it
  may be fetched: no dequantize op is needed at an int8 region's exits.
"""

import logging
import warnings

import numpy as np

from ... import unique_name
from ...core import CPUPlace, dtype_code
from ...executor import Executor, global_scope
from ...plugins import plugins as _plugins
from ...transpiler.inference_passes import Graph
from ...transpiler.inference_passes.fc import fuse_fc
from ..mixed_precision.inference import _fetched
from ..mixed_precision.rewrite import kernel_types
from .calibration import ALGOS, Ranges

__all__ = ["QUANTIZABLE_OP_TYPES", "quantize_post_training"]

QUANTIZABLE_OP_TYPES = ("conv2d", "depthwise_conv2d", "fused_conv2d", "fc")
_CONVS = ("conv2d", "depthwise_conv2d", "fused_conv2d")
_WEIGHTS = {"fc": "W"}  # the others': Filter
_OUTPUTS = {"fc": "Out"}  # the others': Output
_INT8_INPUTS = ("Input", "ResidualData")  # what an int8 op reads as u8 / s8
_PRODUCTS = ("mul", "matmul_v2")  # made fc (with their bias add) to be quantized

_log = logging.getLogger("tide.quantization")


def _weight(op):
    return op.input(_WEIGHTS.get(op.type, "Filter"))[0]


def _output(op):
    return op.output(_OUTPUTS.get(op.type, "Output"))[0]


def _residual(op):
    if op.type != "fused_conv2d" or not op.attr("fuse_residual_connection"):
        return None
    return op.input("ResidualData")[0]


def _activation(op):
    """(name, alpha) of op's fused activation, as the int8 kernels read it."""
    if op.type not in ("fused_conv2d", "fc"):
        return "", 0.0
    act, alpha = op.attr("fuse_activation"), op.attr("fuse_alpha")
    if act in ("", "identity"):
        alpha = 0.0
        if op.type == "fused_conv2d" and op.attr("fuse_relu"):
            act = "relu"
        if op.type == "fc":
            act = op.attr("activation_type")
    return act, alpha


def _non_negative(op):
    """Whether op's output is never negative (its int8 output is u8)."""
    if op.type in ("relu", "relu6"):
        return True
    act, alpha = _activation(op)
    return (act == "relu" and alpha == 0.0) or act == "relu6"


def _why_not(op, block, scope):
    """Why `op` cannot be quantized ("" when it can)."""
    if op.has_attr("data_format") and op.attr("data_format") == "NHWC":
        return "data_format NHWC"
    x = block._find_var_recursive(op.input("Input")[0])
    if x is None or x.dtype != "float32":
        return "Input is not float32"
    w = _weight(op)
    var = scope.find_var(w)
    if var is None or not var.is_initialized() or not block._var_recursive(w).persistable:
        return "its weights '%s' are not a parameter in the scope" % w
    if block._var_recursive(w).dtype != "float32":
        return "its weights '%s' are not float32" % w
    return ""


def _check_feeds(block, feeds):
    """Each feed dict's arrays against the program's feed variables: a clear error naming the
    feed where its shape cannot be the variable's."""
    for i, feed in enumerate(feeds):
        if not isinstance(feed, dict) or not feed:
            raise ValueError(
                "quantize_post_training: calibration batch %d is %r, not a {feed name: array} dict"
                % (i, type(feed).__name__)
            )
        for name, value in feed.items():
            var = block._find_var_recursive(name)
            if var is None:
                raise ValueError(
                    "quantize_post_training: calibration batch %d feeds '%s', which the program "
                    "does not have" % (i, name)
                )
            shape = np.shape(value)
            want = list(var.shape or [])
            if want and (
                len(shape) != len(want) or any(w >= 0 and w != s for w, s in zip(want, shape))
            ):
                raise ValueError(
                    "quantize_post_training: calibration batch %d feeds '%s' of shape %s; the "
                    "program's '%s' is %s (-1: any)" % (i, name, list(shape), name, want)
                )


def _single_assignment(block, ops):
    """Gives each write of a temporary of block 0 a name of its own (later readers read it), so
    that each value is calibrated, typed and scaled apart: the InferenceTranspiler's in-place
    residuals write one variable block after block (a downsampling conv's s8 output, then each
    block's u8 one). Names a sub-block uses are left alone. Returns [(op, residual, output)] for
    the quantized ops that wrote their ResidualData's variable, for _rejoin_in_place."""
    program = block.program
    in_sub_blocks = {
        n
        for b in range(1, program.num_blocks)
        for op in program.block(b).ops
        for n in op.input_arg_names + op.output_arg_names
    }
    in_place = {id(op) for op in ops if _residual(op) is not None and _residual(op) == _output(op)}
    written, split = set(), []
    for i, op in enumerate(block.ops):
        for name in list(op.output_arg_names):
            var = block._find_var_recursive(name)
            if var is None or var.persistable or name in in_sub_blocks or op.type == "feed":
                continue
            if name not in written and name not in op.input_arg_names:
                written.add(name)
                continue
            fresh = block.create_var(
                name=unique_name.generate(name + ".ssa"), dtype=var.dtype, shape=var.shape
            )
            op.desc.rename_output(name, fresh.name)
            _rename_reads(block, i, name, fresh.name)
            written.add(fresh.name)
            if id(op) in in_place:  # its residual: the value it overwrote (renamed before)
                split.append((op, _residual(op), fresh.name))
    program._bump()
    return split


def _rename_reads(block, i, old, new):
    """The ops after block.ops[i] read `new` for `old`, until one writes `old` again."""
    for later in block.ops[i + 1 :]:
        if old in later.input_arg_names:
            later.desc.rename_input(old, new)
        if old in later.output_arg_names:
            break


def _rejoin_in_place(block, split, int8_values):
    """Where a residual and the output written in its place have one type (both u8, or both s8),
    the op writes the residual's variable again, as the transpiler had it: the int8 kernel's sum
    then reads the residual where it lies, with no copy. A chain of such blocks shares one
    variable, as before."""
    alias = {}
    for op, r, out in split:
        if r in int8_values and out in int8_values and int8_values[r][0] == int8_values[out][0]:
            target = alias.get(r, r)
            op.desc.rename_output(out, target)
            _rename_reads(block, block.ops.index(op), out, target)
            block._remove_var(out)
            alias[out] = target


def _calibrate(executor, program, scope, feeds, names, algo):
    # A program's own fetch ops set what a run returns: the copy that runs here has none.
    calib = program.clone()
    block = calib.global_block()
    for i in reversed(range(len(block.ops))):
        if block.ops[i].type == "fetch":
            block._remove_op(i)
    ranges = Ranges(names)
    passes = [ranges.observe_max] + ([ranges.observe_hist] if algo != "abs_max" else [])
    for observe in passes:
        for feed in feeds:
            values = executor.run(calib, feed=feed, fetch_list=list(names), scope=scope)
            observe(dict(zip(names, values)))
    return ranges


def _weight_scales(scope, op, per_channel):
    # A copy: a numpy view would mark the parameter's bytes as written unseen, and the kernels
    # would then quantize them again on every run instead of once.
    w = np.array(scope.find_var(_weight(op)).get_tensor(), np.float32, copy=True)
    axis = 1 if op.type == "fc" else 0
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    top = np.abs(moved).max(axis=1) if per_channel else np.full(w.shape[axis], np.abs(w).max())
    return [float(127.0 / t) if t > 0 else 1.0 for t in top]


def _as_fused_conv(block, op):
    """conv2d / depthwise_conv2d -> the same convolution as fused_conv2d (the op with the int8
    kernels; it declares all of conv2d's attributes)."""
    if op.type == "fused_conv2d":
        return op
    i = block.ops.index(op)
    attrs = {n: op.attr(n) for n in op.attr_names}
    inputs = {"Input": op.input("Input"), "Filter": op.input("Filter")}
    outputs = {"Output": op.output("Output")}
    block._remove_op(i)
    return block._insert_op(i, "fused_conv2d", inputs=inputs, outputs=outputs, attrs=attrs)


def quantize_post_training(
    program,
    executor=None,
    scope=None,
    calib_feeds=None,
    place=None,
    algo="abs_max",
    quantizable_op_type=QUANTIZABLE_OP_TYPES,
    per_channel=True,
    hist_percent=0.99999,
    fetch_list=None,
):
    """Quantizes inference `program` (block 0) to int8 in place (docs/mixed_precision.md, "int8
    inference"); returns it.

    Args:
        program (Program): an inference program, usually tide.io.load_inference_model's (after
            the InferenceTranspiler: fused_conv2d, fc).
        executor (Executor): runs the calibration (default: an Executor on `place`).
        scope (Scope): where the parameters are (default: the global scope).
        calib_feeds (iterable): calibration batches, each a {feed name: array} dict (a list, or
            a generator: it is read once into a list).
        place (Place): where the program will run (default: the executor's, else the CPU): the
            int8 ops use oneDNN's kernels where its plugin registers them (use_mkldnn).
        algo (str): how an activation's range is found: "abs_max" (the largest abs(x) seen),
            "hist" (the hist_percent quantile of abs(x)) or "KL" (the KL-divergence threshold).
        quantizable_op_type (list): op types to quantize, among QUANTIZABLE_OP_TYPES.
        per_channel (bool): weights scaled per output channel (else one scale per op).
        hist_percent (float): "hist"'s quantile.
        fetch_list (list): values to be fetched besides the program's fetch ops' and those no op
            reads: they stay float32.

    Returns:
        Program: `program`, rewritten. Where nothing is quantizable a RuntimeWarning says why
        and the program is unchanged.
    """
    if algo not in ALGOS:
        raise ValueError(
            "quantize_post_training: algo must be one of %s, got %r" % (list(ALGOS), algo)
        )
    unknown = [t for t in quantizable_op_type if t not in QUANTIZABLE_OP_TYPES]
    if unknown:
        raise ValueError(
            "quantize_post_training: quantizable_op_type %s: only %s have int8 kernels"
            % (unknown, list(QUANTIZABLE_OP_TYPES))
        )
    feeds = list(calib_feeds) if calib_feeds is not None else []
    if not feeds:
        raise ValueError(
            "quantize_post_training: no calibration data: calib_feeds must hold at least one "
            "{feed name: array} batch (the activations' scales come from running them)"
        )
    if place is None:
        place = executor.place if executor is not None else CPUPlace()
    executor = executor or Executor(place)
    scope = scope or global_scope()
    _check_feeds(program.global_block(), feeds)
    prepared = _prepare(program, scope, place, quantizable_op_type, fetch_list)
    if prepared is None:
        return program
    ops, split = prepared
    names = []
    for op in ops:
        for n in (op.input("Input")[0], _output(op), _residual(op)):
            if n is not None and n not in names:
                names.append(n)
    ranges = _calibrate(executor, program, scope, feeds, names, algo)
    _finish(program, ops, split, ranges, algo, hist_percent, per_channel, scope, place, fetch_list)
    return program


def _prepare(program, scope, place, quantizable_op_type, fetch_list, known=None):
    """The ops to quantize, as the int8 kernels' ops (mul / matmul_v2 + bias made fc, convs made
    fused_conv2d), block 0's temporaries in single assignment (_single_assignment): (ops, split);
    with `known`,
    only ops whose Input has a known range. None, with a warning saying why, when there is none."""
    block = program.global_block()
    if not any("uint8" in kernel_types(t, place.kind) for t in ("fused_conv2d", "fc")):
        warnings.warn(
            "int8 quantization: no loaded plugin registers int8 kernels on the %s device; the "
            "program stays float32" % place.kind,
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    if "fc" in quantizable_op_type:  # mul / matmul_v2 + bias (+ activation): fc, int8's op
        keep = _fetched(block, fetch_list)
        while fuse_fc(
            Graph(program, scope, place, keep), min_rank=2, op_types=_PRODUCTS, bias_free=False
        ):
            pass
    ops, skipped = [], []
    for op in block.ops:
        if op.type in quantizable_op_type:
            why = _why_not(op, block, scope)
            if not why and known is not None and op.input("Input")[0] not in known:
                why = "the model gives its Input no scale"
            (skipped.append("%s (%s)" % (op.type, why)) if why else ops.append(op))
    if not ops:
        why = (
            "every candidate was left float32: " + ", ".join(skipped)
            if skipped
            else "it has no op of the quantizable types %s" % list(quantizable_op_type)
        )
        warnings.warn(
            "int8 quantization: nothing in this program is quantizable: %s; it stays float32" % why,
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    for s in skipped:
        _log.info("int8: left float32: %s", s)
    ops = [_as_fused_conv(block, op) if op.type in _CONVS else op for op in ops]
    return ops, _single_assignment(block, ops)


def _finish(program, ops, split, ranges, algo, hist_percent, per_channel, scope, place, fetch_list):
    int8_values = _rewrite(
        program, ops, ranges, algo, hist_percent, per_channel, scope, place, fetch_list
    )
    _rejoin_in_place(program.global_block(), split, int8_values)
    program._bump()


def _scale(ranges, name, unsigned, algo, hist_percent):
    top = ranges.threshold(name, algo, unsigned, hist_percent)
    return (255.0 if unsigned else 127.0) / max(top, 1e-8)


def _rewrite(program, ops, ranges, algo, hist_percent, per_channel, scope, place, fetch_list):
    block = program.global_block()
    quantized = {id(op) for op in ops}
    fetched = _fetched(block, fetch_list)
    readers = {}
    for op in block.ops:
        for param, args in op.desc.inputs().items():
            for n in args:
                readers.setdefault(n, []).append((op, param))
    writer = {n: op for op in block.ops for n in op.output_arg_names}

    pools = _int8_pools(block, quantized, readers, writer, fetched, ranges, place)
    # Outputs read only by quantized ops, as their Input or ResidualData, or int8 pools: int8.
    int8_values = {}  # name -> (dtype, scale)
    for op in ops:
        out = _output(op)
        var = block._var_recursive(out)
        if (
            _int8_readers(readers.get(out), quantized, pools)
            and out in ranges.abs_max  # a range: calibrated, or the model's
            and out not in fetched
            and not var.persistable
        ):
            unsigned = _non_negative(op)
            dtype = "uint8" if unsigned else "int8"
            int8_values[out] = (dtype, _scale(ranges, out, unsigned, algo, hist_percent))
    # A pool of int8 data writes it in X's type and scale (max: its largest level; avg: the
    # mean, rounded): no dequantize before it, no quantize after it.
    onednn = "uint8" in kernel_types("fused_conv2d", place.kind) and _has_onednn_int8()
    for op in block.ops:
        if id(op) in pools and op.input("X")[0] in int8_values:
            out = op.output("Out")[0]
            int8_values[out] = int8_values[op.input("X")[0]]
            block._var_recursive(out).desc.dtype = dtype_code(int8_values[out][0])
            op._set_attr("use_mkldnn", onednn)

    entries = {}  # float32 value -> its quantize op's output
    for op in ops:
        x = op.input("Input")[0]
        if x in int8_values:
            x_scale = int8_values[x][1]
        else:
            producer = writer.get(x)
            unsigned = ranges.min[x] >= 0 and producer is not None and _non_negative(producer)
            x_scale = _scale(ranges, x, unsigned, algo, hist_percent)
            if x not in entries:
                entries[x] = _insert_quantize(block, op, x, x_scale, unsigned, onednn)
            op.desc.rename_input(x, entries[x])
        out = _output(op)
        attrs = {
            "Scale_in": x_scale,
            "Scale_weights": _weight_scales(scope, op, per_channel),
            "Scale_out": int8_values[out][1] if out in int8_values else 1.0,
            "force_fp32_output": out not in int8_values,
            "mkldnn_data_type": "int8",
            "use_mkldnn": onednn,
        }
        r = _residual(op)
        if r is not None and r in int8_values:
            attrs["Scale_in_eltwise"] = int8_values[r][1]
        for k, v in attrs.items():
            op._set_attr(k, v)
        if out in int8_values:
            block._var_recursive(out).desc.dtype = dtype_code(int8_values[out][0])
    block.program._bump()
    _log.info(
        "int8: %d ops quantized, %d quantize ops at the regions' entries, %d int8 values",
        len(ops),
        len(entries),
        len(int8_values),
    )
    return int8_values


def _int8_readers(rs, quantized, pools):
    """Whether readers `rs` ([(op, param)]) are some, each a quantized op's int8 input (Input,
    ResidualData) or an int8 pool's X."""
    return bool(rs) and all(
        (id(r) in quantized and p in _INT8_INPUTS) or (id(r) in pools and p == "X") for r, p in rs
    )


def _int8_pools(block, quantized, readers, writer, fetched, ranges, place):
    """The ids of the pool2d ops that stay in int8: max / avg, not adaptive, NCHW, between
    quantized ops (X written by one or by such a pool; X and Out read only by quantized ops'
    int8 inputs or such pools), where the place has int8 pool2d kernels. A range known on one
    side only is the other's too (Paddle's scale propagation: a pool keeps its input's scale)."""
    if "uint8" not in kernel_types("pool2d", place.kind):
        return set()
    pools = {}
    for op in block.ops:
        if (
            op.type == "pool2d"
            and op.attr("pooling_type") in ("max", "avg")
            and not op.attr("adaptive")
            and op.attr("data_format") != "NHWC"
            and op.output("Out")[0] not in fetched
            and op.input("X")[0] not in fetched
            and not block._var_recursive(op.output("Out")[0]).persistable
        ):
            pools[id(op)] = op
    changed = True
    while changed:  # drop the pools whose neighbours are not int8, until none is dropped
        changed = False
        for key, op in list(pools.items()):
            x, out = op.input("X")[0], op.output("Out")[0]
            w = writer.get(x)
            ok = w is not None and (id(w) in quantized or id(w) in pools)
            for name in (x, out):
                ok = ok and _int8_readers(readers.get(name), quantized, pools)
            if not ok:
                del pools[key]
                changed = True
    for op in pools.values():
        x, out = op.input("X")[0], op.output("Out")[0]
        for a, b in ((x, out), (out, x)):
            if ranges.abs_max.get(a, 0.0) <= 0.0 and ranges.abs_max.get(b, 0.0) > 0.0:
                ranges.abs_max[a], ranges.min[a] = ranges.abs_max[b], ranges.min[b]
    return set(pools)


def _has_onednn_int8():
    return any(p["name"] == "device_mkldnn" and p["status"] == "loaded" for p in _plugins())


def _insert_quantize(block, before, x, scale, unsigned, onednn):
    """A quantize op of float32 `x` before op `before`; returns its output's name."""
    var = block._var_recursive(x)
    out = block.create_var(
        name=unique_name.generate(x + ".quantized"),
        dtype="uint8" if unsigned else "int8",
        shape=var.shape,
    )
    block._insert_op(
        block.ops.index(before),
        "quantize",
        inputs={"Input": [x]},
        outputs={"Output": [out]},
        attrs={"Scale": scale, "is_negative_input": not unsigned, "use_mkldnn": onednn},
    )
    return out.name
