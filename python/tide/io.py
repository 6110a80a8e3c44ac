"""Saving and loading: persistable variables (one file each, or one combined file) and
inference models (the pruned program with feed/fetch ops, plus its parameters).
load_inference_model also reads models saved by PaddlePaddle (docs/paddle_models.md).
DataLoader and PyReader (Fluid 1.5+'s input pipeline) live in data_loader.py; they are here too,
where Fluid has them.

Tensor file format (little-endian), one record per variable:
  b"TIDETNSR", u32 version (1), u32 len + name (utf-8), u32 len + dtype name,
  u32 ndim, i64 dims[ndim], u32 lod levels, per level: u64 count + u64 offsets[count],
  u64 nbytes, the data in C order.
"""

import os
import pickle
import struct
import warnings
import weakref

import numpy as np

from .contrib.mixed_precision.inference import bf16_inference
from .core import _C, CPUPlace, LoDTensor
from .data_loader import DataLoader, PyReader  # noqa: F401  (Fluid's fluid.io.DataLoader, ...)
from .executor import Executor, global_scope
from .framework import (
    Parameter,
    Program,
    Variable,
    _mark_loaded_parameters,
    default_main_program,
    to_numpy_dtype,
)
from .transpiler.inference_transpiler import InferenceTranspiler

MAGIC = b"TIDETNSR"
VERSION = 1
MODEL_FILENAME = "__model__"
_SKIP_TYPES = ("FEED_MINIBATCH", "FETCH_LIST", "RAW")


def _write_record(f, name, tensor):
    arr = tensor.numpy()
    enc = lambda s: s.encode("utf-8")  # noqa: E731
    f.write(MAGIC + struct.pack("<I", VERSION))
    for s in (enc(name), enc(tensor.dtype())):
        f.write(struct.pack("<I", len(s)) + s)
    f.write(struct.pack("<I", arr.ndim) + struct.pack("<%dq" % arr.ndim, *arr.shape))
    lod = tensor.lod()
    f.write(struct.pack("<I", len(lod)))
    for level in lod:
        f.write(struct.pack("<Q", len(level)) + struct.pack("<%dQ" % len(level), *level))
    data = np.ascontiguousarray(arr).tobytes()
    f.write(struct.pack("<Q", len(data)) + data)


def _read_exact(f, n, what):
    # A corrupt length must not make us allocate it: compare with what the file has left.
    try:
        pos = f.tell()
        left = os.fstat(f.fileno()).st_size - pos
    except (AttributeError, OSError, ValueError):
        left = None
    if left is not None and n > left:
        raise ValueError(
            "%s: file ends early while reading %s (%d bytes needed, %d left)"
            % (getattr(f, "name", "?"), what, n, left)
        )
    b = f.read(n)
    if len(b) != n:
        raise ValueError("%s: file ends early while reading %s" % (getattr(f, "name", "?"), what))
    return b


def _read_record(f):
    """(name, ndarray, lod) or None at the end of the file; a ValueError naming the file when the
    record is malformed."""
    try:
        return _parse_record(f)
    except (
        struct.error,
        UnicodeDecodeError,
        TypeError,
        ValueError,
        MemoryError,
        OverflowError,
    ) as e:
        path = getattr(f, "name", "?")
        if str(e).startswith(str(path)):
            raise
        raise ValueError("%s: corrupt Tide tensor file: %s" % (path, e)) from e


def _parse_record(f):
    head = f.read(len(MAGIC))
    if not head:
        return None
    if head != MAGIC:
        raise ValueError("%s: not a Tide tensor file (bad magic)" % getattr(f, "name", "?"))
    (version,) = struct.unpack("<I", _read_exact(f, 4, "the version"))
    if version != VERSION:
        raise ValueError(
            "%s: tensor format version %d, this Tide reads %d"
            % (getattr(f, "name", "?"), version, VERSION)
        )
    strs = []
    for what in ("the name", "the dtype"):
        (n,) = struct.unpack("<I", _read_exact(f, 4, what))
        strs.append(_read_exact(f, n, what).decode("utf-8"))
    name, dtype = strs
    (ndim,) = struct.unpack("<I", _read_exact(f, 4, "the rank"))
    dims = struct.unpack("<%dq" % ndim, _read_exact(f, 8 * ndim, "the dims"))
    (levels,) = struct.unpack("<I", _read_exact(f, 4, "the LoD"))
    lod = []
    for _ in range(levels):
        (n,) = struct.unpack("<Q", _read_exact(f, 8, "the LoD"))
        lod.append(list(struct.unpack("<%dQ" % n, _read_exact(f, 8 * n, "the LoD"))))
    if any(d < 0 for d in dims):
        raise ValueError("%s: record '%s' has negative dims %s" % (f.name, name, list(dims)))
    np_dtype = to_numpy_dtype(dtype)
    (nbytes,) = struct.unpack("<Q", _read_exact(f, 8, "the data size"))
    expect = int(np.prod(dims, dtype=object)) * np_dtype.itemsize
    if nbytes != expect:
        raise ValueError(
            "%s: record '%s' holds %d data bytes, its dims %s of %s need %d"
            % (f.name, name, nbytes, list(dims), dtype, expect)
        )
    arr = np.frombuffer(_read_exact(f, nbytes, "the data"), dtype=np_dtype)
    return name, arr.reshape(dims), lod


def _persistables(program):
    return [v for v in program.list_vars() if v.persistable and v.type not in _SKIP_TYPES]


def save_vars(
    executor, dirname, main_program=None, vars=None, predicate=None, filename=None, scope=None
):
    """Writes the variables' current values from the scope: one file per variable in dirname,
    or all of them in dirname/filename."""
    program = main_program or default_main_program()
    scope = scope or global_scope()
    if vars is None:
        vars = [v for v in program.list_vars() if predicate is None or predicate(v)]
    os.makedirs(dirname, exist_ok=True)
    names = [v.name if isinstance(v, Variable) else v for v in vars]

    def tensor_of(name):
        var = scope.find_var(name)
        if var is None or not var.is_initialized():
            raise ValueError(
                "cannot save '%s': it has no value in the scope (run the startup "
                "program first?)" % name
            )
        t = var.get_tensor()
        if not t._is_initialized():
            raise ValueError("cannot save '%s': it holds no data" % name)
        return t

    if filename is not None:
        with open(os.path.join(dirname, filename), "wb") as f:
            for n in names:
                _write_record(f, n, tensor_of(n))
    else:
        for n in names:
            with open(os.path.join(dirname, n), "wb") as f:
                _write_record(f, n, tensor_of(n))


def _check_against_program(src, name, var, arr):
    """A saved value must be what the program declares (else it fails later, inside an op that
    names neither the file nor the parameter): the same data type, and dims the declared ones
    match (-1 matches any size; none declared: any; a 0-D variable: a 0-D value)."""
    if var is None or var.type != "LOD_TENSOR":
        return
    want = tuple(var.shape)
    same_dims = (not want and not var.desc.zero_dim) or (
        len(want) == arr.ndim and all(w < 0 or w == d for w, d in zip(want, arr.shape))
    )
    if to_numpy_dtype(var.dtype) != arr.dtype or not same_dims:
        raise ValueError(
            "%s: cannot load '%s': the file holds %s %s, the program declares %s %s"
            % (src, name, arr.dtype.name, list(arr.shape), var.dtype, list(want))
        )


def load_vars(
    executor, dirname, main_program=None, vars=None, predicate=None, filename=None, scope=None
):
    """Reads variables saved by save_vars into the scope (on the executor's place). Each value
    must have the data type and dims the program declares for its variable."""
    program = main_program or default_main_program()
    scope = scope or global_scope()
    if vars is None:
        vars = [v for v in program.list_vars() if predicate is None or predicate(v)]
    names = [v.name if isinstance(v, Variable) else v for v in vars]
    declared = {v.name: v for v in program.list_vars()}
    declared.update((v.name, v) for v in vars if isinstance(v, Variable))
    place = executor.place
    if filename is not None:
        path = os.path.join(dirname, filename)
        records = {}
        with open(path, "rb") as f:
            while True:
                r = _read_record(f)
                if r is None:
                    break
                records[r[0]] = r
        missing = [n for n in names if n not in records]
        if missing:
            raise ValueError("%s has no saved value for %s" % (path, missing))
        items = [records[n] for n in names]
    else:
        items = []
        for n in names:
            path = os.path.join(dirname, n)
            if not os.path.exists(path):
                raise ValueError("no saved value for '%s': %s does not exist" % (n, path))
            with open(path, "rb") as f:
                r = _read_record(f)
            if r is None:
                raise ValueError("%s: empty file, no saved value for '%s'" % (path, n))
            if r[0] != n:
                raise ValueError("%s: holds the value of '%s', not of '%s'" % (path, r[0], n))
            items.append(r + (path,))
    if filename is not None:
        items = [r + (path,) for r in items]
    for name, arr, _lod, src in items:
        _check_against_program(src, name, declared.get(name), arr)
    for name, arr, lod, src in items:
        t = scope.var(name).get_tensor()
        try:
            t.set(np.array(arr), place, False)
            if lod:
                t.set_lod(lod)
        except (ValueError, TypeError, MemoryError, RuntimeError) as e:
            msg = "%s: cannot load '%s': %s" % (src, name, e)
            try:
                named = type(e)(msg)
            except Exception:
                named = ValueError(msg)
            raise named from e


def save_params(executor, dirname, main_program=None, filename=None, scope=None):
    """Saves every parameter of the program (not the optimizer's state).

    Args:
        executor (Executor): the executor whose place the tensors go to and come from.
        dirname (str): the directory.
        main_program (Program): the program whose variables are meant; None: the default main program.
        filename (str): one file holding them all; None: a file per variable.
        scope (Scope): where the variables live; None: the global scope.
    """
    save_vars(
        executor,
        dirname,
        main_program,
        predicate=lambda v: isinstance(v, Parameter),
        filename=filename,
        scope=scope,
    )


def load_params(executor, dirname, main_program=None, filename=None, scope=None):
    """Loads every parameter of the program saved by save_params.

    Args:
        executor (Executor): the executor whose place the tensors go to and come from.
        dirname (str): the directory.
        main_program (Program): the program whose variables are meant; None: the default main program.
        filename (str): one file holding them all; None: a file per variable.
        scope (Scope): where the variables live; None: the global scope.
    """
    load_vars(
        executor,
        dirname,
        main_program,
        predicate=lambda v: isinstance(v, Parameter),
        filename=filename,
        scope=scope,
    )


def save_persistables(executor, dirname, main_program=None, filename=None, scope=None):
    """Saves every persistable variable (parameters, optimizer state, learning rates)."""
    program = main_program or default_main_program()
    save_vars(
        executor, dirname, program, vars=_persistables(program), filename=filename, scope=scope
    )


def load_persistables(executor, dirname, main_program=None, filename=None, scope=None):
    """Loads every persistable variable (parameters, optimizer state, learning rates) saved by save_persistables.

    Args:
        executor (Executor): the executor whose place the tensors go to and come from.
        dirname (str): the directory.
        main_program (Program): the program whose variables are meant; None: the default main program.
        filename (str): one file holding them all; None: a file per variable.
        scope (Scope): where the variables live; None: the global scope.
    """
    program = main_program or default_main_program()
    load_vars(
        executor, dirname, program, vars=_persistables(program), filename=filename, scope=scope
    )


def save_inference_model(
    dirname,
    feeded_var_names,
    target_vars,
    executor,
    main_program=None,
    model_filename=None,
    params_filename=None,
    export_for_deployment=True,
    program_only=False,
    scope=None,
):
    """Saves the program pruned to what computes target_vars from the feeds (inference mode,
    with feed and fetch ops), and the parameters it uses; returns the target names.

    As Fluid 1.x: export_for_deployment=False saves the whole program as it is instead (no
    pruning, no feed/fetch ops) in `<model_filename>.main_program`, with every persistable
    variable; program_only=True saves the program and no parameters."""
    program = main_program or default_main_program()
    if isinstance(target_vars, Variable):
        target_vars = [target_vars]
    if isinstance(feeded_var_names, str):
        feeded_var_names = [feeded_var_names]
    for n in feeded_var_names:
        if not isinstance(n, str):
            raise TypeError("feeded_var_names must be names, got %r" % (n,))
    os.makedirs(dirname, exist_ok=True)
    model_basename = os.path.join(dirname, model_filename or MODEL_FILENAME)
    if not export_for_deployment:
        with open(model_basename + ".main_program", "wb") as f:
            f.write(program.serialize_to_string())
        if not program_only:
            save_persistables(executor, dirname, program, params_filename, scope)
        return [v.name for v in target_vars]
    pruned = program._prune(target_vars)
    block = pruned.global_block()
    feed = block.create_var(name="feed", type="FEED_MINIBATCH", persistable=True)
    for i, name in reversed(list(enumerate(feeded_var_names))):
        if name not in block.vars:
            raise ValueError("save_inference_model: '%s' is not used to compute the targets" % name)
        block._prepend_op("feed", inputs={"X": feed}, outputs={"Out": name}, attrs={"col": i})
    fetch = block.create_var(name="fetch", type="FETCH_LIST", persistable=True)
    for i, v in enumerate(target_vars):
        block.append_op("fetch", inputs={"X": v.name}, outputs={"Out": fetch}, attrs={"col": i})
    with open(model_basename, "wb") as f:
        f.write(pruned.serialize_to_string())
    if not program_only:
        save_persistables(executor, dirname, pruned, params_filename, scope)
    return [v.name for v in target_vars]


def _sniff(path):
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC))
    except OSError:
        return None


def _is_paddle_model(dirname, model_filename, params_filename):
    """Paddle's layouts: a prefix of .pdmodel/.pdiparams, a .pdmodel file, or a directory whose
    parameter files are Paddle tensors (they start with a zero version, Tide's with MAGIC)."""
    if (
        dirname.endswith(".pdmodel")
        or (dirname.endswith(".json") and os.path.isfile(dirname))
        or any(os.path.isfile(dirname + e) for e in (".pdmodel", ".pdiparams"))
        # Paddle 3.x's PIR program alone: a model without parameters has no .pdiparams
        or (os.path.isfile(dirname + ".json") and not os.path.isdir(dirname))
    ):
        return True
    if not os.path.isdir(dirname):
        return False
    model = os.path.join(dirname, model_filename or MODEL_FILENAME)
    if not os.path.exists(model):
        return model_filename is None and any(n.endswith(".pdmodel") for n in os.listdir(dirname))
    if params_filename is not None:
        head = _sniff(os.path.join(dirname, params_filename))
        return head is not None and head != MAGIC
    if model_filename is None and os.path.isfile(os.path.join(dirname, "__params__")):
        return True
    for n in sorted(os.listdir(dirname)):
        p = os.path.join(dirname, n)
        if p != model and os.path.isfile(p) and not n.endswith((".npy", ".json", ".md", ".info")):
            head = _sniff(p)
            if head:
                return head != MAGIC
    return False


def _pir_without_params(path):
    """(directory, model file name) for a PIR program `prefix.json` (named by its prefix or
    itself) with no `prefix.pdiparams` and no `prefix.pdmodel` beside it: Paddle 3.x writes no
    parameter file for a model without parameters, and the loader's prefix rule wants one. Named
    as Fluid's model_filename instead, the program loads (a program that has parameters then gets
    the loader's error listing those without a file). None for any other path."""
    prefix = path[: -len(".json")] if path.endswith(".json") else path
    if not os.path.isfile(prefix + ".json") or os.path.isdir(prefix):
        return None
    if any(os.path.isfile(prefix + e) for e in (".pdmodel", ".pdiparams")):
        return None
    return os.path.dirname(prefix) or ".", os.path.basename(prefix) + ".json"


# Per scope, the model file each parameter a Paddle model loaded into it came from. Paddle names
# parameters by layer counters (linear_0.w_0, conv2d_0.w_0, ...), so two models usually share
# names: a second model loaded into the same scope replaces the first one's values, and the
# program loaded first then computes with them.
_LOADED_FROM = weakref.WeakKeyDictionary()


def _warn_replaced(scope, before, params, model):
    """A warning where this load replaced variables of the scope that another model (or anything
    but an earlier load of the same file) put there; reloading a model is quiet."""
    model = os.path.abspath(model)
    try:
        owners = _LOADED_FROM.setdefault(scope, {})
    except TypeError:  # a scope that takes no weak reference: not tracked
        return
    replaced = sorted(n for n in params if n in before and owners.get(n) != model)
    owners.update((n, model) for n in params)
    if replaced:
        warnings.warn(
            "load_inference_model(%s): %d of its %d parameters replaced variables of the same "
            "names already in the scope (%s%s), which another model or program put there: a "
            "program loaded before that reads them now computes with this model's values. Load "
            "each model into its own scope (scope=tide.Scope(), and exe.run(..., scope=it))"
            % (
                model,
                len(replaced),
                len(params),
                ", ".join(replaced[:5]),
                ", ..." if len(replaced) > 5 else "",
            ),
            stacklevel=4,
        )


class _DataUnpickler(pickle.Unpickler):
    """Plain data only (dicts, lists, strings, numbers, booleans): a pickle naming any class or
    function is refused, so reading one runs no code from the file."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError("it names %s.%s, not plain data" % (module, name))


def _read_params_info(params_file):
    """`<params file>.info`, which Paddle's paddle.jit.save writes beside a legacy model's
    .pdiparams (PaddleOCR's, PaddleDetection's and PaddleSeg's release models ship it): per
    persistable variable {"stop_gradient": bool, "trainable": bool (parameters only),
    "structured_name": its layer attribute}. {} without one; a file that is not such a pickle of
    plain data is ignored with a warning."""
    path = params_file + ".info" if params_file else ""
    if not path or not os.path.isfile(path):
        return {}
    try:
        with open(path, "rb") as f:
            info = _DataUnpickler(f).load()
    except Exception as e:  # noqa: BLE001 (any unreadable file: the model loads without it)
        warnings.warn(
            "%s: not read (%s): its variables' stop_gradient are not applied" % (path, e),
            stacklevel=4,
        )
        return {}
    if not isinstance(info, dict):
        return {}
    return {k: v for k, v in info.items() if isinstance(k, str) and isinstance(v, dict)}


def _apply_params_info(program, info):
    """A legacy Paddle program declares its layers' buffers (register_buffer, tensors a forward
    made once: a Swin's attention mask and relative position index, a blur kernel) persistable
    as it does their parameters; the .info file tells them apart: they are stop_gradient (and so
    untrainable Parameters once loaded), as a frozen parameter is."""
    block = program.global_block()
    for name, entry in info.items():
        if block.has_var(name) and (
            entry.get("stop_gradient") is True or entry.get("trainable") is False
        ):
            block.var(name).stop_gradient = True


def _load_paddle_inference_model(path, executor, model_filename, params_filename, scope):
    place = executor.place if executor is not None else CPUPlace()
    scope = scope or global_scope()
    alone = None if model_filename or params_filename else _pir_without_params(path)
    if alone:
        path, model_filename = alone
    before = set(scope.local_var_names())
    desc, feeds, fetches, params, files = _C.load_paddle_inference_model(
        path, scope, place, model_filename or "", params_filename or ""
    )
    _warn_replaced(scope, before, params, files["model"])
    program = Program._from_desc(desc)
    _apply_params_info(program, _read_params_info(files["params"]))
    block = program.global_block()
    return [program, list(feeds), [block.var(n) for n in fetches]]


def _optimize_inference(
    program,
    executor,
    scope,
    created,
    skip_passes=(),
    precision="float32",
    transpile=True,
    calibration=None,
):
    """InferenceTranspiler on a just-loaded program (with `transpile`), then the rewrite into
    `precision` ("bf16": tide.contrib.mixed_precision.bf16_inference; "int8":
    tide.contrib.quantization.quantize_post_training on `calibration`); then the parameters this
    load created (`created`: not in the scope before) that the program no longer reads (a folded
    filter's original, a folded batch_norm's statistics, a parameter cast to bfloat16) are
    dropped from the scope and the program."""
    place = executor.place if executor is not None else CPUPlace()
    scope = scope or global_scope()
    own_scales = precision == "int8" and calibration is None
    if transpile and not own_scales:  # quantize_qdq transpiles once its quant ops are gone
        InferenceTranspiler().transpile(program, place, scope, skip_passes=skip_passes)
    if precision == "bf16":
        bf16_inference(program, place, scope)
    if precision == "int8":
        from .contrib import quantization  # breaks the cycle io -> quantization.ptq_class -> io

        if own_scales:  # a QDQ or fake-quant model: its own scales
            quantization.quantize_qdq(program, scope, place, skip_passes=skip_passes)
        else:
            quantization.quantize_post_training(program, executor, scope, calibration, place)
    block = program.global_block()
    read = set()
    for b in range(program.num_blocks):
        for op in program.block(b).ops:
            read.update(op.input_arg_names)
            read.update(op.output_arg_names)
    unused = [
        v.name
        for v in list(block.vars.values())
        if v.persistable and v.name in created and v.name not in read
    ]
    if unused:
        scope.erase_vars(unused)
        for n in unused:
            block._remove_var(n)


def _local_names(scope):
    return set((scope or global_scope()).local_var_names())


PRECISIONS = ("float32", "bf16", "int8")  # load_inference_model's `precision`


def set_training(program, training=True, freeze_batch_norm=False):
    """Puts a loaded model's program in training mode, or back (training=False) in inference
    mode, as the model's own `train()` / `eval()` did before Paddle saved it: every op's is_test
    becomes `not training`, so dropout drops (a fresh mask each run), an rnn applies its dropout
    between layers and a loop keeps its iterations; and batch norm normalizes by the batch's
    statistics and updates its running ones (use_global_stats off), unless `freeze_batch_norm`
    keeps it on the running statistics, unchanged (a detector's frozen norms). Models are saved
    in inference mode, so a loaded program fine-tunes as in `model.eval()` until this is called.

    Paddle's own TranslatedLayer.train() does less: it flips is_test only, so a legacy model's
    batch norms keep their running statistics (Paddle saves use_global_stats on), and a PIR
    model's train() changes nothing (checked with Paddle 3.3.1). Returns the program."""
    is_test, frozen = not training, bool(freeze_batch_norm or not training)
    for block in program.blocks:
        for op in block.ops:
            if op.has_attr("is_test"):
                op._set_attr("is_test", is_test)
            if op.has_attr("use_global_stats"):
                op._set_attr("use_global_stats", frozen)
    program._bump()
    return program


def load_inference_model(
    dirname,
    executor=None,
    model_filename=None,
    params_filename=None,
    scope=None,
    optimize=True,
    skip_passes=(),
    precision="float32",
    calibration=None,
):
    """Returns [program, feed names, fetch target Variables]; the parameters are loaded into
    the scope (on the executor's place; the CPU without one).

    Reads Tide's own models (save_inference_model) and those saved by PaddlePaddle: a path prefix
    of `prefix.pdmodel` + `prefix.pdiparams` or Paddle 3.x's PIR program `prefix.json` +
    `prefix.pdiparams`, a `.pdmodel` or `.json` file, or a directory with Fluid 1.x's `__model__`
    and `__params__` or one file per parameter (docs/paddle_models.md).

    With `optimize` (the default), tide.transpiler.InferenceTranspiler rewrites the program:
    batch_norm folded into the convolutions before it, bias / residual / activation fused into
    fused_conv2d (the folded parameters are written into the scope); transformers' matmul + bias
    (+ gelu), attention and residual + layer_norm fused into fc, fused_multihead_attention and
    skip_layernorm (preln_skip_layernorm in pre-norm models). `skip_passes` names transformer
    passes not to run (tide.transpiler.inference_passes.PASSES; docs/paddle_models.md).

    `precision="bf16"` then puts the ops the executor's place computes in bfloat16 in it
    (tide.contrib.mixed_precision.bf16_inference: feeds and fetched values stay float32; where
    the place computes no op in bfloat16 a warning says why and the program stays float32;
    docs/mixed_precision.md, "bf16 inference"). `precision="int8"` quantizes its convolutions
    and fc ops to int8 after calibrating on `calibration`, a list of {feed name: array} batches
    (tide.contrib.quantization.quantize_post_training with algo "abs_max"); a model Paddle's
    quantization tools saved in QDQ form or with their fake-quant ops needs no calibration: its
    own scales are used (tide.contrib.quantization.quantize_qdq; docs/mixed_precision.md, "int8
    inference")."""
    if precision not in PRECISIONS:
        raise ValueError(
            "load_inference_model: precision must be one of %s, got %r" % (PRECISIONS, precision)
        )
    if calibration is not None and precision != "int8":
        raise ValueError(
            "load_inference_model: calibration (the {feed name: array} batches int8 calibrates "
            "on) goes with precision='int8', got precision=%r" % precision
        )
    dirname = os.fspath(dirname)
    rewrite = optimize or precision != "float32"
    before = _local_names(scope) if rewrite else None
    if _is_paddle_model(dirname, model_filename, params_filename):
        result = _load_paddle_inference_model(
            dirname, executor, model_filename, params_filename, scope
        )
        if rewrite:
            created = _local_names(scope) - before
            _optimize_inference(
                result[0], executor, scope, created, skip_passes, precision, optimize, calibration
            )
        _mark_loaded_parameters(result[0])
        return result
    if executor is None:
        executor = Executor(CPUPlace())
    path = os.path.join(dirname, model_filename or MODEL_FILENAME)
    if not os.path.exists(path):
        raise ValueError(
            "no inference model at %s (nor a Paddle model: %s.pdmodel)" % (path, dirname)
        )
    with open(path, "rb") as f:
        program = Program.parse_from_string(f.read())
    load_persistables(executor, dirname, program, params_filename, scope)
    if rewrite:
        created = _local_names(scope) - before
        _optimize_inference(
            program, executor, scope, created, skip_passes, precision, optimize, calibration
        )
    _mark_loaded_parameters(program)
    block = program.global_block()
    feeds = sorted((op.attr("col"), op.output("Out")[0]) for op in block.ops if op.type == "feed")
    fetches = sorted((op.attr("col"), op.input("X")[0]) for op in block.ops if op.type == "fetch")
    return [program, [n for _, n in feeds], [block.var(n) for _, n in fetches]]


del LoDTensor
