"""Bad input never crashes Tide: shapes that overflow, numpy arrays numpy cannot copy or that are
big-endian, bad DLPack capsules, truncated plugin files, corrupt feed/fetch columns, non-UTF-8
names, tensor files holding the wrong variable, and out-of-range flags each give a clear error
(naming the op, feed, file or flag) instead of a crash or a silently wrong result."""

import ctypes
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from ctest_env import plugin_file

import tide
from tide import _C, layers


def _run(exe, fetch, feed=None):
    return exe.run(feed=feed or {}, fetch_list=[fetch])


# --- 1. shapes whose element count or byte size overflows ---------------------------------------


# A fill value an integer dtype cannot hold (a fuzzer finding: float -> int32 was undefined).
@pytest.mark.parametrize(
    "dtype,kwargs,shown",
    [
        ("int32", dict(value=5.7e17), "value 5.7"),
        ("int32", dict(value=float("nan")), "value nan"),
        ("int64", dict(value=1e19), "value 1e+19"),
        ("int32", dict(str_value="99999999999"), "str_value 99999999999"),
    ],
)
def test_fill_constant_value_outside_the_integer_dtype_is_refused(exe, dtype, kwargs, shown):
    out = tide.default_main_program().current_block().create_var(name="filled", dtype=dtype)
    layers.fill_constant(shape=[2], dtype=dtype, value=0.0, out=out)
    op = tide.default_main_program().current_block().ops[-1]
    for k, v in kwargs.items():
        op._set_attr(k, v)
    with pytest.raises(tide.TideError) as e:
        _run(exe, out)
    msg = str(e.value)
    assert "fill_constant" in msg and shown in msg and "does not fit " + dtype in msg, msg


def test_fill_constant_integer_values_in_range_are_exact(exe):
    a = layers.fill_constant(shape=[2], dtype="int32", value=-2147483648.0)
    b = layers.fill_constant(shape=[1], dtype="int64", value=0.0)
    tide.default_main_program().current_block().ops[-1]._set_attr(
        "str_value", "9223372036854775807"
    )
    got_a, got_b = exe.run(fetch_list=[a, b])
    assert got_a.tolist() == [-(2**31)] * 2 and got_b.tolist() == [2**63 - 1]


@pytest.mark.parametrize("shape", [[2**40, 2**40], [2**31, 2**31, 4], [-5, 3]])
def test_fill_constant_with_an_impossible_shape_is_refused(exe, shape):
    out = layers.fill_constant(shape=shape, dtype="float32", value=1.0)
    with pytest.raises(tide.InvalidArgumentError) as e:
        _run(exe, out)
    msg = str(e.value)
    assert "fill_constant" in msg and str(shape[0]) in msg, msg


def test_uniform_random_with_an_overflowing_shape_is_refused(exe):
    out = layers.uniform_random(shape=[2**33, 2**33], dtype="float32")
    with pytest.raises(
        tide.InvalidArgumentError, match=r"uniform_random.*\[8589934592, 8589934592\]"
    ):
        _run(exe, out)


def test_a_shape_whose_bytes_overflow_is_refused_at_allocation(exe):
    # 2^62 elements fit in int64; their 2^64 bytes do not.
    out = layers.fill_constant(shape=[2**31, 2**31], dtype="float32", value=1.0)
    with pytest.raises(tide.InvalidArgumentError, match=r"\[2147483648, 2147483648\].*bytes"):
        _run(exe, out)


def test_a_huge_but_representable_shape_is_out_of_memory_not_a_crash(exe):
    out = layers.fill_constant(shape=[2**20, 2**20, 2**10], dtype="float32", value=1.0)
    with pytest.raises(MemoryError, match="fill_constant"):
        _run(exe, out)


# --- 1b. sub-blocks that run themselves ----------------------------------------------------------


def _conditional_block(block, cond, sub):
    if not _C.has_op("conditional_block"):  # a partial tree (scripts/sanitize.sh's targets)
        pytest.skip("no conditional_block: the ops_control plugin is not built")
    scope = block.create_var(name=tide.unique_name.generate("cb.scope"), type="STEP_SCOPES")
    return block.append_op(
        "conditional_block",
        inputs={"Cond": [cond]},
        outputs={"Scope": [scope]},
        attrs={"sub_block": sub, "is_scalar_condition": True},
    )


def test_a_sub_block_that_runs_itself_is_refused(exe):
    # It used to recurse until the stack overflowed (SIGSEGV), from a saved program too.
    main = tide.default_main_program()
    cond = layers.fill_constant(shape=[1], dtype="bool", value=True)
    body = main._create_block()
    _conditional_block(body, cond, body)
    main._rollback()
    _conditional_block(main.global_block(), cond, body)
    why = "op 'conditional_block' in block 1: its sub_block is block 1, its own block"
    with pytest.raises(tide.InvalidArgumentError, match=why):
        exe.run(main)
    with pytest.raises(tide.InvalidArgumentError, match=why):
        tide.Program.parse_from_string(main.serialize_to_string())


def test_sub_block_runs_nested_past_the_limit_are_an_error(exe):
    # The backstop: 70 blocks, each run by its parent (a valid program, but past 64 deep).
    main = tide.default_main_program()
    cond = layers.fill_constant(shape=[1], dtype="bool", value=True)
    blocks = [main.global_block()]
    for _ in range(70):
        blocks.append(main._create_block())
    main.current_block_idx = 0
    for parent, child in zip(blocks, blocks[1:]):
        _conditional_block(parent, cond, child)
    with pytest.raises(
        tide.TideError,
        match="block 64 runs sub-block 65 nested 65 deep, past the "
        "limit of 64 nested sub-block runs",
    ):
        exe.run(main)


# --- 2. numpy conversion -------------------------------------------------------------------------


def test_big_endian_arrays_are_byte_swapped(exe):
    for dtype in (">f4", ">f8", ">i4", ">i8"):
        a = np.arange(6, dtype=dtype).reshape(2, 3)
        np.testing.assert_array_equal(
            np.array(tide.LoDTensor(a)), a.astype(a.dtype.newbyteorder("="))
        )
    x = layers.data(name="x", shape=[3], dtype="float32")
    y = layers.scale(x, scale=2.0)
    (got,) = exe.run(feed={"x": np.arange(6, dtype=">f4").reshape(2, 3)}, fetch_list=[y])
    np.testing.assert_array_equal(got, 2 * np.arange(6, dtype="float32").reshape(2, 3))


def test_a_view_numpy_cannot_copy_is_a_memory_error_naming_the_feed(exe):
    huge = np.broadcast_to(np.zeros(1, "float32"), (2**40, 3))  # zero strides: 12 TiB as a copy
    with pytest.raises(MemoryError, match=r"\[1099511627776, 3\]"):
        tide.LoDTensor(huge)
    x = layers.data(name="x", shape=[3], dtype="float32")
    y = layers.scale(x, scale=2.0)
    with pytest.raises(MemoryError, match="feed 'x'"):
        exe.run(feed={"x": huge}, fetch_list=[y])


def test_a_feed_of_rank_above_9_names_the_feed(exe):
    x = layers.data(name="x", shape=[1], dtype="float32")
    y = layers.scale(x, scale=2.0)
    with pytest.raises(tide.InvalidArgumentError, match="feed 'x'.*rank 10.*at most 9"):
        exe.run(feed={"x": np.zeros([1] * 10, "float32")}, fetch_list=[y])


# --- 2b. DLPack capsules, built by hand -------------------------------------------------------------


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", _DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


_keep = []  # what the hand-made capsules point into (no deleter frees it)


def _capsule(shape, data=None, dtype=(2, 32, 1), device=(1, 0), ndim=None, strides=None):
    """An unused "dltensor" capsule: float32 CPU by default, data from a small numpy array."""
    buf = np.arange(6, dtype="float32")
    shape_arr = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    stride_arr = (ctypes.c_int64 * len(strides))(*strides) if strides else None
    m = _DLManagedTensor()
    m.dl_tensor.data = buf.ctypes.data if data is None else data
    m.dl_tensor.device = _DLDevice(*device)
    m.dl_tensor.ndim = len(shape) if ndim is None else ndim
    m.dl_tensor.dtype = _DLDataType(*dtype)
    m.dl_tensor.shape = shape_arr
    m.dl_tensor.strides = stride_arr
    _keep.extend([buf, shape_arr, stride_arr, m])
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = (
        ctypes.py_object,
        [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p],
    )
    return new(ctypes.addressof(m), b"dltensor", None)


def test_a_well_formed_hand_made_capsule_is_adopted():
    t = _C.from_dlpack(_capsule([2, 3]))
    np.testing.assert_array_equal(np.array(t), np.arange(6, dtype="float32").reshape(2, 3))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(shape=[2**40, 2**40]), r"\[1099511627776, 1099511627776\] hold more than 2\^63"),
        (dict(shape=[2**31, 2**31]), r"need more than 2\^63 bytes"),
        (dict(shape=[2, -3]), "negative dim -3"),
        (dict(shape=[1] * 10), "ndim 10 is outside"),
        (dict(shape=[2], ndim=-1), "ndim -1 is outside"),
        (dict(shape=[2, 3], data=0), r"null data for 6 element\(s\)"),
        (dict(shape=[2], dtype=(99, 32, 1)), "DLPack data type"),
        (dict(shape=[2], dtype=(2, 32, 4)), "vector lanes"),
        (dict(shape=[2], device=(99, 0)), "device type 99"),
        (dict(shape=[2], device=(1, -2)), "negative device id"),
        (dict(shape=[2, 3], strides=[1, 2]), "C-contiguous"),
    ],
)
def test_a_bad_capsule_is_refused(kwargs, match):
    with pytest.raises(tide.TideError, match=match):
        _C.from_dlpack(_capsule(**kwargs))


def test_an_empty_capsule_may_have_null_data():
    t = _C.from_dlpack(_capsule([0, 3], data=0))
    assert np.array(t).shape == (0, 3)


# --- 3. plugin files -----------------------------------------------------------------------------


def _plugin_dir():
    return os.path.dirname(plugin_file("ops_math"))


@pytest.fixture
def truncated_plugin(tmp_path):
    src = os.path.join(_plugin_dir(), "libtide_ops_math.so")
    data = open(src, "rb").read()
    d = tmp_path / "plugins"
    d.mkdir()
    path = d / "libtide_truncated.so"
    path.write_bytes(
        data[: len(data) // 3]
    )  # cut inside its loadable segments: dlopen would SIGBUS
    return path


def test_a_truncated_plugin_on_the_path_is_a_failed_record_not_a_crash(truncated_plugin):
    env = dict(
        os.environ,
        TIDE_PLUGIN_PATH=os.pathsep.join(
            [p for p in [os.environ.get("TIDE_PLUGIN_PATH"), str(truncated_plugin.parent)] if p]
        ),
    )
    code = (
        "import tide; r = [p for p in tide.plugins() if p['file'].endswith('libtide_truncated.so')][0]; "
        "print(r['status'], '|', r['error'])"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.startswith("failed | truncated or corrupt shared object"), p.stdout
    assert str(truncated_plugin) in p.stderr  # the warning names the file


def test_load_plugin_of_a_truncated_file_names_it(truncated_plugin):
    with pytest.raises(tide.TideError, match=str(truncated_plugin) + ".*truncated"):
        tide.load_plugin(str(truncated_plugin))


def test_load_plugin_of_an_empty_directory_says_so(tmp_path):
    with pytest.raises(tide.PluginError, match=str(tmp_path) + ".*holds no plugin file"):
        tide.load_plugin(str(tmp_path))


def test_a_fifo_named_like_a_plugin_is_a_failed_record_not_a_hang(tmp_path):
    # Opening a FIFO to read its ELF header blocked until a writer came: `import tide` hung.
    d = tmp_path / "plugins"
    d.mkdir()
    fifo = d / "libtide_fifo.so"
    os.mkfifo(fifo)
    env = dict(
        os.environ,
        TIDE_PLUGIN_PATH=os.pathsep.join(
            [p for p in [os.environ.get("TIDE_PLUGIN_PATH"), str(d)] if p]
        ),
    )
    code = (
        "import tide\n"
        "r = [p for p in tide.plugins() if p['file'].endswith('libtide_fifo.so')][0]\n"
        "print(r['status'], '|', r['error'])\n"
        "try:\n"
        "    tide.load_plugin(%r)\n"
        "except tide.PluginError as e:\n"
        "    print('load_plugin:', e)\n" % str(fifo)
    )
    p = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    assert lines[0] == "failed | not a regular file: it is a FIFO (named pipe)", p.stdout
    assert lines[1].startswith("load_plugin: cannot load plugin %s: not a regular file" % fifo), (
        p.stdout
    )


def test_a_plugin_built_for_another_machine_says_so(tmp_path):
    # glibc's dlopen says "No such file or directory" for another machine's ELF file.
    data = bytearray(open(os.path.join(_plugin_dir(), "libtide_ops_math.so"), "rb").read())
    ours = int.from_bytes(data[18:20], "little")
    data[18:20] = (183 if ours != 183 else 62).to_bytes(2, "little")  # EM_AARCH64, or EM_X86_64
    path = tmp_path / "libtide_other_machine.so"
    path.write_bytes(bytes(data))
    names = {62: "x86-64", 183: r"AArch64 \(arm64\)"}
    with pytest.raises(
        tide.PluginError,
        match=r"%s: built for another machine: the file is for %s, this "
        r"Tide runs on %s" % (path, names[183 if ours != 183 else 62], names[ours]),
    ):
        tide.load_plugin(str(path))


# --- 4. errors that name what is wrong -------------------------------------------------------------


def _program_with_io_ops():
    main = tide.default_main_program()
    x = layers.data(name="x", shape=[3])
    y = layers.scale(x, scale=2.0)
    b = main.global_block()
    feed = b.create_var(name="feed", type="FEED_MINIBATCH", persistable=True)
    feed_op = b._prepend_op("feed", inputs={"X": feed}, outputs={"Out": "x"}, attrs={"col": 0})
    fetch = b.create_var(name="fetch", type="FETCH_LIST", persistable=True)
    fetch_op = b.append_op("fetch", inputs={"X": y.name}, outputs={"Out": fetch}, attrs={"col": 0})
    return feed_op, fetch_op


@pytest.mark.parametrize("which", ["feed", "fetch"])
def test_a_huge_feed_or_fetch_column_names_the_op(exe, which):
    ops = dict(zip(("feed", "fetch"), _program_with_io_ops()))
    ops[which]._set_attr("col", 2**31 - 1)
    with pytest.raises(tide.TideError, match="op '%s'.*column 2147483647" % which):
        exe.run(feed={"x": np.ones((2, 3), "float32")})


@pytest.mark.parametrize("which", ["feed", "fetch"])
def test_a_feed_or_fetch_column_of_another_type_names_the_op(exe, which):
    # A saved program whose col is not an int (used to be "std::get: wrong index for variant").
    ops = dict(zip(("feed", "fetch"), _program_with_io_ops()))
    ops[which]._set_attr("col", "zero")
    with pytest.raises(tide.TideError, match="op '%s'.*'col' must be an int" % which):
        exe.run(feed={"x": np.ones((2, 3), "float32")})


def test_a_kernel_dtype_attribute_that_is_no_data_type_names_the_op(exe):
    # Found by the program fuzzer: fill_constant's dtype picks its kernel; 126 is no data type.
    out = layers.fill_constant(shape=[2], dtype="float32", value=1.0)
    out.op._set_attr("dtype", 126)
    with pytest.raises(
        tide.TideError,
        match="op 'fill_constant'.*attribute 'dtype' is 126, which is not a data type",
    ):
        exe.run(fetch_list=[out])


def test_a_non_utf8_name_keeps_the_real_error():
    x = layers.data(name="zzqq", shape=[3])
    layers.scale(x, scale=2.0)
    raw = tide.default_main_program().serialize_to_string().replace(b"zzqq", b"zz\xffq")
    core = _C.Executor(tide.CPUPlace())
    with pytest.raises(tide.PreconditionError, match=r"variable 'zz\\xffq' holds no data"):
        core.run(core.prepare(_C.ProgramDesc.parse(raw), 0, [], []), _C.Scope(), [])


def test_a_non_utf8_name_read_from_python_is_an_error_naming_its_bytes():
    # It was a bare UnicodeDecodeError from Program.parse_from_string.
    x = layers.data(name="zzqq", shape=[3])
    layers.scale(x, scale=2.0)
    raw = tide.default_main_program().serialize_to_string().replace(b"zzqq", b"zz\xffq")
    with pytest.raises(
        tide.InvalidArgumentError, match=r"variable name 'zz\\xffq' is not valid UTF-8"
    ):
        tide.Program.parse_from_string(raw)
    op = _C.ProgramDesc.parse(raw).block(0).op(0)  # the core holds it as it is
    assert op.type == "scale"
    with pytest.raises(
        tide.InvalidArgumentError, match=r"variable name 'zz\\xffq' is not valid UTF-8"
    ):
        op.input("X")


def test_a_float_attribute_beyond_float_range_is_refused_naming_the_op():
    # 1e40 became inf silently.
    x = layers.data(name="x", shape=[3])
    with pytest.raises(
        tide.InvalidArgumentError,
        match=r"op 'scale' attribute 'scale' must be float, got "
        r"float64 1.*e\+40: beyond float's range",
    ):
        layers.scale(x, scale=1e40)
    y = layers.scale(x, scale=float("inf"))  # inf as given is inf
    assert y.op.attr("scale") == float("inf")


def _saved_params(exe, tmp_path):
    x = layers.data(name="x", shape=[4])
    layers.fc(input=x, size=3)
    exe.run(tide.default_startup_program())
    tide.io.save_params(exe, str(tmp_path))
    return sorted(p.name for p in tide.default_main_program().all_parameters())


def test_load_params_refuses_a_file_holding_another_variable(exe, tmp_path):
    w, b = [n for n in _saved_params(exe, tmp_path)]
    shutil.copy(tmp_path / b, tmp_path / w)  # w's file now holds b's record
    with pytest.raises(
        ValueError, match="%s: holds the value of '%s', not of '%s'" % (tmp_path / w, b, w)
    ):
        tide.io.load_params(exe, str(tmp_path))


@pytest.mark.parametrize("damage", ["truncate", "huge_length", "bad_utf8", "wrong_nbytes"])
def test_a_corrupt_tensor_file_error_names_the_file(exe, tmp_path, damage):
    name = _saved_params(exe, tmp_path)[0]
    path = tmp_path / name
    data = bytearray(path.read_bytes())
    head = 8 + 4  # magic, version
    if damage == "truncate":
        data = data[:-5]
    elif damage == "huge_length":
        data[head : head + 4] = (2**31).to_bytes(4, "little")  # the name's length
    elif damage == "bad_utf8":
        data[head + 4] = 0xFF
    else:  # a size field that disagrees with the dims (the data is still all there)
        size = np.array(tide.global_scope().find_var(name).get_tensor()).nbytes
        at = len(data) - size - 8  # the u64 data size sits right before the data
        data[at : at + 8] = (size + 4).to_bytes(8, "little")
        data += b"\0" * 4
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=str(path)):
        tide.io.load_params(exe, str(tmp_path))


# --- 4a. descs the Python side still holds after the core dropped them ---------------------------


def _churn(block):
    """Allocates and frees op and variable descs, so freed memory gets written over."""
    for i in range(64):
        d = block.desc.append_op()
        d.type = "churn_op_with_a_long_type_name_%d" % i
        d.set_input("X", ["churn_variable_with_a_long_name_%d" % i] * 4)
    block.desc.remove_ops(len(block.ops), block.desc.op_size())


def _frames(tb):
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def test_an_operator_append_op_refused_stays_readable():
    # The core freed the refused op's desc; the Operator in the traceback read freed memory
    # (valgrind: 67 invalid reads in its repr).
    x = layers.data(name="x", shape=[3])
    block = tide.default_main_program().global_block()
    with pytest.raises(tide.TideError) as info:
        block.append_op("mul", inputs={"X": x}, outputs={"Out": "y"})  # no Y
    ops = [
        f.f_locals["self"]
        for f in _frames(info.value.__traceback__)
        if isinstance(f.f_locals.get("self"), tide.framework.Operator)
    ]
    assert ops, "the refused Operator is not in the traceback"
    _churn(block)
    assert repr(ops[0]).startswith("Operator(mul(X=[x]) -> (Out=[y])"), repr(ops[0])
    assert ops[0].input("X") == ["x"] and len(block.ops) == block.desc.op_size()


def test_an_operator_and_variable_removed_from_their_block_stay_readable():
    x = layers.data(name="x", shape=[3])
    y = layers.scale(x, scale=2.0)
    block = tide.default_main_program().global_block()
    op, desc = block.ops[-1], block.ops[-1].desc
    block._remove_op(len(block.ops) - 1)
    block._remove_var(y.name)
    _churn(block)
    assert op.type == "scale" and desc.input("X") == ["x"] and op.output("Out") == [y.name]
    assert repr(op).startswith("Operator(scale(X=[x]) -> (Out=[%s])" % y.name), repr(op)
    assert y.name in repr(y) and y.shape == (-1, 3)


# --- 4b. flags ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, value, match",
    [
        ("cpu_threads", -5, "outside"),
        ("initial_cpu_memory_in_mb", 2**44, "does not fit"),
        ("initial_cpu_memory_in_mb", -1, "negative"),
        ("fraction_of_cpu_memory_to_use", 0, r"outside \(0, 1\]"),
        ("fraction_of_cpu_memory_to_use", 1.5, r"outside \(0, 1\]"),
        # OpenMP could not make 65536 threads and called exit(1) inside a kernel.
        (
            "cpu_threads",
            65536,
            r"65536 is outside \[0, \d+\] \(0: the number of cores; at most 4 per "
            r"hardware thread, and never less than 64\)",
        ),
        # gflags would have set "2", the value cut at the NUL.
        ("cpu_threads", "2\0junk", r"it holds a NUL byte \(at byte 1\)"),
    ],
)
def test_bad_flag_values_are_refused_naming_the_flag(name, value, match):
    before = _C.get_flag(name)
    with pytest.raises(tide.InvalidArgumentError, match="flag '%s'.*%s" % (name, match)):
        tide.set_flags({name: value})
    assert _C.get_flag(name) == before


@pytest.mark.skipif(
    os.environ.get("TIDE_USE_SYSTEM_ALLOCATOR", "").lower() in ("1", "true", "yes"),
    reason="use_system_allocator: no allocator reads the memory flags",
)
def test_a_memory_flag_set_after_the_first_allocation_is_refused(exe):
    exe.run(feed={}, fetch_list=[layers.fill_constant(shape=[2], dtype="float32", value=1.0)])
    current = _C.get_flag("fraction_of_cpu_memory_to_use")
    with pytest.raises(
        tide.PreconditionError, match="fraction_of_cpu_memory_to_use' was already read"
    ):
        tide.set_flags({"fraction_of_cpu_memory_to_use": 0.5})
    tide.set_flags({"fraction_of_cpu_memory_to_use": current})  # the same value is fine


def test_cpu_threads_up_to_the_bound_are_accepted():
    before = _C.get_flag("cpu_threads")
    try:
        tide.set_flags({"cpu_threads": 64})  # the bound is never below 64
        assert _C.get_flag("cpu_threads") == "64"
    finally:
        tide.set_flags({"cpu_threads": before})


def test_a_flag_name_with_a_nul_is_no_flag():
    with pytest.raises(
        tide.InvalidArgumentError, match=r"flag name 'cpu_threads\\0\.\.\.' holds a NUL byte"
    ):
        _C.set_flag("cpu_threads\0x", "2")


def test_plugin_path_set_after_the_core_started_is_refused():
    # Discovery ran at import: a new plugin_path used to be taken and do nothing.
    current = _C.get_flag("plugin_path")
    with pytest.raises(
        tide.PreconditionError,
        match=r"flag 'plugin_path' was already read by plugin "
        r"discovery when the core started .*tide.load_plugin",
    ):
        tide.set_flags({"plugin_path": "/somewhere/else"})
    assert _C.get_flag("plugin_path") == current
    tide.set_flags({"plugin_path": current})  # the same value is fine


@pytest.mark.skipif(
    os.environ.get("TIDE_USE_SYSTEM_ALLOCATOR", "").lower() in ("1", "true", "yes"),
    reason="use_system_allocator: no allocator reads the memory flags",
)
def test_out_of_memory_under_a_tiny_memory_fraction_names_the_flag():
    env = dict(os.environ, TIDE_FRACTION_OF_CPU_MEMORY_TO_USE="1e-300")
    code = (
        "import tide\n"
        "out = tide.layers.fill_constant(shape=[4], dtype='float32', value=1.0)\n"
        "try:\n"
        "    tide.Executor(tide.CPUPlace()).run(fetch_list=[out])\n"
        "except tide.ResourceExhaustedError as e:\n"
        "    print(e)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert re.search(
        r"out of memory on cpu.*the budget is 0 B: fraction_of_cpu_memory_to_use=1e-300 of "
        r"\d+ B on cpu",
        p.stdout,
    ), p.stdout


# --- check_nan_inf (Fluid's flag) -------------------------------------------------------------------


@pytest.fixture
def nan_inf_checked():
    tide.set_flags({"check_nan_inf": True})
    yield
    tide.set_flags({"check_nan_inf": False})


def test_check_nan_inf_names_the_first_op_and_variable(exe, nan_inf_checked):
    x = layers.data(name="x", shape=[4], dtype="float32", append_batch_size=False)
    y = layers.log(x)  # log(0) = -inf: the first non-finite value
    z = layers.sqrt(y)
    with pytest.raises(
        tide.PreconditionError,
        match=r"check_nan_inf: op 'log' .* wrote Inf into output Out \('%s'\) at "
        r"element 2 of \[4\]" % y.name,
    ):
        exe.run(feed={"x": np.array([1, 2, 0, 3], "float32")}, fetch_list=[z])
    (got,) = exe.run(feed={"x": np.array([1, 2, 4, 3], "float32")}, fetch_list=[z])  # finite: runs
    np.testing.assert_allclose(got, np.sqrt(np.log([1, 2, 4, 3])), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_check_nan_inf_reads_float16_and_bfloat16_outputs(exe, nan_inf_checked, dtype):
    np_dtype = tide.core.bfloat16_dtype() if dtype == "bfloat16" else np.float16
    x = layers.data(name="x", shape=[4], dtype=dtype, append_batch_size=False)
    y = layers.log(x)  # run widened: the float32 kernel, the result rounded back
    with pytest.raises(
        tide.PreconditionError,
        match=r"check_nan_inf: op 'log' .* wrote NaN into output Out \('%s'\) at element 1 of "
        r"\[4\]" % y.name,
    ):
        exe.run(feed={"x": np.array([1, -1, 0, 3]).astype(np_dtype)}, fetch_list=[y])
    with pytest.raises(tide.PreconditionError, match=r"wrote Inf into output Out .* element 2 "):
        exe.run(feed={"x": np.array([1, 2, 0, 3]).astype(np_dtype)}, fetch_list=[y])
    (got,) = exe.run(feed={"x": np.array([1, 2, 4, 3]).astype(np_dtype)}, fetch_list=[y])
    np.testing.assert_allclose(got.astype("float32"), np.log([1, 2, 4, 3]), rtol=1e-2)


def test_without_check_nan_inf_the_values_pass_through(exe):
    x = layers.data(name="x", shape=[2], dtype="float64", append_batch_size=False)
    (got,) = exe.run(feed={"x": np.array([0.0, 1.0])}, fetch_list=[layers.log(x)])
    assert np.isneginf(got[0]) and got[1] == 0


def test_a_prepared_program_runs_again_after_its_variables_were_erased():
    # The executor's cached bindings used to point at the erased variables (use after free).
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[3], dtype="float32", append_batch_size=False)
        w = layers.create_parameter(
            shape=[3],
            dtype="float32",
            name="w_erased",
            default_initializer=tide.initializer.Constant(2.0),
        )
        y = layers.elementwise_mul(x, w)
    scope = tide.Scope()
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(scope):
        exe.run(startup)
        feed = {"x": np.array([1, 2, 3], "float32")}
        (got,) = exe.run(main, feed=feed, fetch_list=[y], use_program_cache=True)
        np.testing.assert_allclose(got, [2, 4, 6])
        scope.erase_vars(["w_erased"])
        with pytest.raises(tide.PreconditionError, match="'w_erased' holds no data"):
            exe.run(main, feed=feed, fetch_list=[y], use_program_cache=True)
        exe.run(startup)  # made again: the same prepared program sees the new variable
        (got,) = exe.run(main, feed=feed, fetch_list=[y], use_program_cache=True)
        np.testing.assert_allclose(got, [2, 4, 6])


def test_a_kernel_that_fails_after_its_output_grew_leaves_no_short_buffer_behind():
    # Shape inference resized the output to 1000 rows; the kernel then failed before allocating.
    # The old 2-row buffer must not stay under the new dims (numpy read past it).
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        ids = layers.data(name="ids", shape=[1], dtype="int64")
        y = layers.embedding(ids, size=[10, 4])
        y.persistable = True
    scope = tide.Scope()
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(scope):
        exe.run(startup)
        exe.run(main, feed={"ids": np.zeros((2, 1), "int64")}, fetch_list=[y])
        with pytest.raises(tide.TideError, match="out of range"):
            exe.run(main, feed={"ids": np.full((1000, 1), 70, "int64")}, fetch_list=[y])
        t = scope.find_var(y.name).get_tensor()
        assert t.shape() == [1000, 4] and not t._is_initialized()
        with pytest.raises(tide.TideError, match="holds no data"):
            np.array(t)


# An int attribute naming a data type that is none (a fuzzer finding: cast's shape inference
# made an out-of-range TideDataType, undefined behaviour).
@pytest.mark.parametrize("op,attr", [("cast", "out_dtype"), ("fill_constant", "dtype")])
def test_a_dtype_attribute_that_is_no_data_type_is_refused(op, attr):
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        x = b.create_var(name="x", shape=[2], dtype="float32")
        out = b.create_var(name="out", dtype="float32")
        attrs = (
            {"in_dtype": 5, "out_dtype": 50}
            if op == "cast"
            else {"shape": [2], "dtype": 50, "value": 1.0}
        )
        with pytest.raises(
            tide.TideError,
            match=r"op '%s': attribute '%s' is 50, which is not a data type" % (op, attr),
        ):
            b.append_op(
                op, inputs={"X": x} if op == "cast" else {}, outputs={"Out": out}, attrs=attrs
            )


# scale of an integer X by a value its type cannot hold (a fuzzer finding: NaN cast to int64 was
# undefined behaviour); a finite one is cast as Fluid casts it (2.5 -> 2).
@pytest.mark.parametrize(
    "scale,bias,shown",
    [(float("nan"), 0.0, "scale nan"), (1e30, 0.0, "scale 1e+30"), (1.0, float("inf"), "bias inf")],
)
def test_scale_of_an_integer_tensor_by_a_value_it_cannot_hold_is_refused(exe, scale, bias, shown):
    x = layers.data(name="xi", shape=[3], dtype="int64", append_batch_size=False)
    out = layers.scale(x, scale=scale, bias=bias)
    with pytest.raises(
        tide.TideError, match=r"op 'scale': %s has no int64 value" % re.escape(shown)
    ):
        exe.run(feed={"xi": np.array([1, 2, 3], "int64")}, fetch_list=[out])


def test_scale_of_an_integer_tensor_casts_the_factor_as_fluid(exe):
    x = layers.data(name="xi", shape=[3], dtype="int64", append_batch_size=False)
    out = layers.scale(x, scale=2.5, bias=1.0)
    (got,) = exe.run(feed={"xi": np.array([1, 2, -3], "int64")}, fetch_list=[out])
    assert got.tolist() == [3, 5, -5]
