"""bfloat16 and float16 as data types (docs/data_types.md): numpy in and out (bfloat16 as
ml_dtypes'), feed and fetch, DLPack, tide.io, printing; casts with every type; ops in either type
against a float64 numpy reference at the type's tolerance (the copying ops bit-exact, the others
through their float32 kernel with the outputs rounded back to the declared type, logged once);
an MLP trained forward and backward in bfloat16 close to float32."""

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import tide
from tide import layers
from tide.testing.op_test import make

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
LOW = {"bfloat16": BF16, "float16": F16}
# Half an ulp at 1 (the rounding of one result) twice over: the float32 computation inside and
# the rounding of the inputs' products and sums add a little.
RTOL = {"bfloat16": 2.0**-7, "float16": 2.0**-10}


def low(x, dtype):
    return np.asarray(x, np.float64).astype(np.float32).astype(LOW[dtype])


def f64(x):
    return np.asarray(x).astype(np.float64)


def bits(x):
    return np.asarray(x).view(np.uint16)


# --- numpy, feed and fetch, DLPack, files, printing ---------------------------------------------


@pytest.mark.parametrize("dtype", sorted(LOW))
def test_a_tensor_round_trips_through_numpy_bit_for_bit(dtype):
    a = low(np.linspace(-3, 3, 12).reshape(3, 4), dtype)
    a.reshape(-1).view(np.uint16)[0] = 0x7FC1 if dtype == "bfloat16" else 0x7E01  # a NaN payload
    t = tide.LoDTensor()
    t.set(a, tide.CPUPlace())
    assert t.dtype() == dtype
    back = np.array(t)
    assert back.dtype == LOW[dtype]
    np.testing.assert_array_equal(bits(back), bits(a))
    assert tide.core.convert_dtype(LOW[dtype]) == dtype
    assert tide.core.convert_dtype(ml_dtypes.bfloat16) == "bfloat16"
    assert tide.framework.to_numpy_dtype(dtype) == LOW[dtype]


def test_another_extensions_bfloat16_is_not_taken_for_ours():
    # A structured dtype named like it is refused, not read as bfloat16.
    t = tide.LoDTensor()
    with pytest.raises(tide.core.InvalidArgumentError, match="has no Tide data type"):
        t.set(np.zeros(2, np.dtype([("bfloat16", np.uint8)])), tide.CPUPlace())


@pytest.mark.parametrize("dtype", sorted(LOW))
def test_feed_and_fetch_keep_the_type(dtype):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data("x", shape=[3], dtype=dtype)
        assert x.dtype == dtype
        y = layers.reshape(x, [-1])  # a copying op: its own kernel
        z = layers.relu(x)  # float32 inside, rounded back
    a = low([[-1.5, 0.25, 3.0], [2.0, -0.0, 7.5]], dtype)
    exe = tide.Executor(tide.CPUPlace())
    out_y, out_z = exe.run(main, feed={"x": a}, fetch_list=[y, z])
    assert out_y.dtype == LOW[dtype] and out_z.dtype == LOW[dtype]
    np.testing.assert_array_equal(bits(out_y), bits(a.reshape(-1)))
    np.testing.assert_array_equal(f64(out_z), np.maximum(f64(a), 0))


def test_dlpack_round_trip():
    a = low(np.arange(6).reshape(2, 3) / 3, "bfloat16")
    t = tide.LoDTensor()
    t.set(a, tide.CPUPlace())
    assert t.__dlpack_device__()[0] == 1  # kDLCPU
    back = tide.from_dlpack(t)
    assert back.dtype() == "bfloat16"
    np.testing.assert_array_equal(bits(np.array(back)), bits(a))
    h = tide.from_dlpack(tide.LoDTensor(low([1.5, -2], "float16")))
    assert h.dtype() == "float16"


@pytest.mark.parametrize("dtype", sorted(LOW))
def test_save_and_load_persistables(tmp_path, dtype):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        w = layers.create_global_var([2, 3], 0.0, dtype, persistable=True, name="w")
    a = low([[1.0, -2.5, 3.25], [1e-3, 65504 if dtype == "float16" else 1e30, -0.0]], dtype)
    scope = tide.Scope()
    with tide.scope_guard(scope):
        exe = tide.Executor(tide.CPUPlace())
        exe.run(startup)
        scope.find_var("w").get_tensor().set(a, tide.CPUPlace())
        tide.io.save_persistables(exe, str(tmp_path), main)
    scope2 = tide.Scope()
    with tide.scope_guard(scope2):
        exe = tide.Executor(tide.CPUPlace())
        tide.io.load_persistables(exe, str(tmp_path), main)
        got = np.array(scope2.find_var("w").get_tensor())
    assert got.dtype == LOW[dtype] and w.dtype == dtype
    np.testing.assert_array_equal(bits(got), bits(a))


def _paddle_tensor(code, arr):
    """One tensor as Paddle serialises it: u32 version 0, u64 LoD levels 0, u32 version 0, i32
    TensorDesc size, the TensorDesc (data_type = `code`, dims: non-packed int64s), the data."""
    desc = bytes([0x08, code]) + b"".join(bytes([0x10, d]) for d in arr.shape)
    return struct.pack("<IQIi", 0, 0, 0, len(desc)) + desc + arr.tobytes()


@pytest.mark.parametrize("dtype", sorted(LOW))
def test_a_paddle_parameter_file_of_the_type_loads(tmp_path, dtype):
    code = tide.core.dtype_code(dtype)  # Paddle's VarType: BF16 = 22, FP16 = 4
    assert code == {"bfloat16": 22, "float16": 4}[dtype]
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data("x", shape=[3], dtype=dtype)
        w = layers.create_parameter([3], dtype, name="w")
        out = layers.elementwise_mul(x, w)
    with tide.scope_guard(tide.Scope()):
        exe = tide.Executor(tide.CPUPlace())
        exe.run(startup)
        tide.io.save_inference_model(str(tmp_path), ["x"], [out], exe, main)
    w_values = low([0.5, -3.0, 1.0 / 3.0], dtype)
    (tmp_path / "w").write_bytes(_paddle_tensor(code, w_values))  # now a Paddle model directory
    scope = tide.Scope()
    with tide.scope_guard(scope):
        exe = tide.Executor(tide.CPUPlace())
        program, feeds, fetches = tide.io.load_inference_model(str(tmp_path), exe, optimize=False)
        got_w = np.array(scope.find_var("w").get_tensor())
        a = low([[2.0, 1.0, 3.0]], dtype)
        (y,) = exe.run(program, feed={feeds[0]: a}, fetch_list=fetches)
    assert got_w.dtype == LOW[dtype]
    np.testing.assert_array_equal(bits(got_w), bits(w_values))
    assert y.dtype == LOW[dtype]
    np.testing.assert_array_equal(f64(y), f64(low(f64(a) * f64(w_values), dtype)))


def test_print_shows_the_values(capfd):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data("x", shape=[3], dtype="bfloat16", append_batch_size=False)
        layers.Print(x, message="bf16")
    tide.Executor(tide.CPUPlace()).run(main, feed={"x": low([1.5, -2, 0.375], "bfloat16")})
    err = capfd.readouterr().err
    assert "1.5, -2, 0.375" in err and "bfloat16" in err


# --- casts --------------------------------------------------------------------------------------

OTHER = ["float32", "float64", "int32", "int64", "int16", "int8", "uint8", "bool"]


def run_cast(arr, out_dtype):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data("x", shape=list(arr.shape), dtype=arr.dtype.name, append_batch_size=False)
        y = layers.cast(x, out_dtype)
    (out,) = tide.Executor(tide.CPUPlace()).run(main, feed={"x": arr}, fetch_list=[y])
    return out


@pytest.mark.parametrize("dtype", sorted(LOW))
@pytest.mark.parametrize("other", OTHER + ["bfloat16", "float16"])
def test_cast_both_ways(dtype, other):
    values = np.array([0, 1, -2, 3.75, 100, 0.5])
    src = low(values, dtype)
    out = run_cast(src, other)
    want_dtype = LOW[other] if other in LOW else np.dtype(other)
    assert out.dtype == want_dtype
    if other == "bool":
        np.testing.assert_array_equal(out, values != 0)
    elif other in ("float32", "float64") or other in LOW:
        np.testing.assert_array_equal(f64(out), f64(f64(src).astype(np.float32).astype(want_dtype)))
    else:  # to an integer: truncate toward 0, saturate
        info = np.iinfo(want_dtype)
        want = np.clip(np.trunc(f64(src)), info.min, info.max).astype(want_dtype)
        np.testing.assert_array_equal(out, want)
    if other in ("float32", "float64", "int32", "int64"):  # and back: exact for these values
        back = run_cast(np.asarray(out), dtype)
        assert back.dtype == LOW[dtype]
        np.testing.assert_array_equal(f64(back), f64(low(f64(out), dtype)))


def test_casts_round_to_nearest_even_keep_nan_and_saturate():
    # 1 + 2^-8 is halfway between two bfloat16s: to the even one (1); 1 + 3 * 2^-8 up to 1 + 2^-6.
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, np.nan, -np.nan, 3.4e38, -np.inf], np.float32)
    out = run_cast(x, "bfloat16")
    np.testing.assert_array_equal(f64(out[:2]), [1.0, 1 + 2**-6])
    assert np.isnan(f64(out[2])) and np.isnan(f64(out[3]))
    assert np.signbit(f64(out[3]))
    assert f64(out[4]) == np.inf and f64(out[5]) == -np.inf
    ints = run_cast(low([np.nan, 1e10, -1e10, -2.75], "bfloat16"), "int32")
    np.testing.assert_array_equal(ints, [0, 2**31 - 1, -(2**31), -2])
    # float16's range ends at 65504: past it, infinity.
    np.testing.assert_array_equal(
        f64(run_cast(np.array([7e4, 65504], np.float32), "float16")), [np.inf, 65504]
    )


def _bf16_bits_reference(u32):
    """float32 bits -> bfloat16 bits, rounding to nearest even; a NaN -> the quiet NaN of its sign."""
    u = u32.astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    nan = ((u >> 16) & 0x8000) | 0x7FC0
    return np.where((u & 0x7FFFFFFF) > 0x7F800000, nan, rounded).astype(np.uint16)


def test_large_casts_between_float32_and_bfloat16_are_exact_bit_for_bit():
    # Every class of float32 (normals, subnormals, ties, infinities, NaNs with payloads), in an
    # array large enough to be split over the CPU pool and run through the vectorized loops.
    bits = np.random.default_rng(7).integers(0, 2**32, size=200_003, dtype=np.uint64)
    bits[:6] = [0x3F808000, 0x3F818000, 0x7F800000, 0xFF800001, 0x00008000, 0x7F7FFFFF]
    x = bits.astype(np.uint32).view(np.float32)
    out = run_cast(x, "bfloat16")
    np.testing.assert_array_equal(out.view(np.uint16), _bf16_bits_reference(bits))
    back = run_cast(out, "float32")  # widening is exact, NaN payloads included
    np.testing.assert_array_equal(back.view(np.uint32), out.view(np.uint16).astype(np.uint32) << 16)


# --- ops ----------------------------------------------------------------------------------------

rng = np.random.RandomState(0)


def _rand(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _pool_max(x):  # 2x2 stride 2, NCHW
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def _conv(x, w):  # stride 1, no padding
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(h - kh + 1):
        for j in range(wd - kw + 1):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", x[:, :, i : i + kh, j : j + kw], w)
    return out


def _layer_norm(x, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


# (op, inputs {param: float64 array}, attrs, float64 reference of the rounded inputs {param: fn})
OPS = [
    ("relu", {"X": _rand(4, 5)}, {}, lambda X: {"Out": np.maximum(X, 0)}),
    ("sigmoid", {"X": _rand(4, 5)}, {}, lambda X: {"Out": 1 / (1 + np.exp(-X))}),
    ("tanh", {"X": _rand(4, 5)}, {}, lambda X: {"Out": np.tanh(X)}),
    ("exp", {"X": _rand(4, 5)}, {}, lambda X: {"Out": np.exp(X)}),
    ("sqrt", {"X": _rand(4, 5, lo=0.1)}, {}, lambda X: {"Out": np.sqrt(X)}),
    ("square", {"X": _rand(4, 5)}, {}, lambda X: {"Out": X * X}),
    ("abs", {"X": _rand(4, 5)}, {}, lambda X: {"Out": np.abs(X)}),
    ("gelu", {"X": _rand(4, 5)}, {}, None),
    ("scale", {"X": _rand(4, 5)}, {"scale": 3.0, "bias": 0.5}, lambda X: {"Out": 3 * X + 0.5}),
    ("elementwise_add", {"X": _rand(3, 4), "Y": _rand(3, 4)}, {}, lambda X, Y: {"Out": X + Y}),
    ("elementwise_sub", {"X": _rand(3, 4), "Y": _rand(4)}, {}, lambda X, Y: {"Out": X - Y}),
    ("elementwise_mul", {"X": _rand(3, 4), "Y": _rand(3, 4)}, {}, lambda X, Y: {"Out": X * Y}),
    (
        "elementwise_div",
        {"X": _rand(3, 4), "Y": _rand(3, 4, lo=0.5)},
        {},
        lambda X, Y: {"Out": X / Y},
    ),
    (
        "elementwise_max",
        {"X": _rand(3, 4), "Y": _rand(3, 4)},
        {},
        lambda X, Y: {"Out": np.maximum(X, Y)},
    ),
    ("mul", {"X": _rand(5, 8), "Y": _rand(8, 3)}, {}, lambda X, Y: {"Out": X @ Y}),
    ("matmul", {"X": _rand(2, 5, 8), "Y": _rand(2, 8, 3)}, {}, lambda X, Y: {"Out": X @ Y}),
    (
        "matmul_v2",
        {"X": _rand(5, 8), "Y": _rand(3, 8)},
        {"trans_y": True},
        lambda X, Y: {"Out": X @ Y.T},
    ),
    ("softmax", {"X": _rand(4, 6)}, {}, lambda X: {"Out": _softmax(X)}),
    ("reduce_sum", {"X": _rand(4, 6)}, {"dim": [1]}, lambda X: {"Out": X.sum(1)}),
    ("reduce_mean", {"X": _rand(4, 6)}, {"dim": [0]}, lambda X: {"Out": X.mean(0)}),
    ("reduce_max", {"X": _rand(4, 6)}, {"dim": [1]}, lambda X: {"Out": X.max(1)}),
    ("mean", {"X": _rand(4, 6)}, {}, lambda X: {"Out": np.array(X.mean()).reshape(())}),
    ("sum", {"X": [("a", _rand(3, 4)), ("b", _rand(3, 4))]}, {}, None),
    # Three inputs, large enough to be split over the CPU pool.
    (
        "sum",
        {"X": [("a", _rand(300, 200)), ("b", _rand(300, 200)), ("c", _rand(300, 200))]},
        {},
        None,
    ),
    (
        "clip",
        {"X": _rand(4, 5)},
        {"min": -0.5, "max": 0.5},
        lambda X: {"Out": np.clip(X, -0.5, 0.5)},
    ),
    (
        "pool2d",
        {"X": _rand(2, 3, 4, 4)},
        {"pooling_type": "max", "ksize": [2, 2], "strides": [2, 2]},
        lambda X: {"Out": _pool_max(X)},
    ),
    (
        "conv2d",
        {"Input": _rand(1, 2, 5, 5), "Filter": _rand(3, 2, 3, 3)},
        {"strides": [1, 1], "paddings": [0, 0]},
        lambda Input, Filter: {"Output": _conv(Input, Filter)},
    ),
    ("layer_norm", {"X": _rand(3, 8)}, {"begin_norm_axis": 1}, None),
    (
        "transpose2",
        {"X": _rand(2, 3, 4)},
        {"axis": [2, 0, 1]},
        lambda X: {"Out": X.transpose(2, 0, 1)},
    ),
    ("concat", {"X": [("a", _rand(2, 3)), ("b", _rand(2, 2))]}, {"axis": 1}, None),
    (
        "slice",
        {"Input": _rand(4, 5)},
        {"axes": [0, 1], "starts": [1, 0], "ends": [3, 4]},
        lambda Input: {"Out": Input[1:3, 0:4]},
    ),
    ("cumsum", {"X": _rand(3, 5)}, {"axis": 1}, lambda X: {"Out": np.cumsum(X, 1)}),
]


def _inputs(inputs, dtype):
    out = {}
    for p, v in inputs.items():
        out[p] = [(n, low(a, dtype)) for n, a in v] if isinstance(v, list) else low(v, dtype)
    return out


def _reference(op, ins, ref):
    as64 = {p: ([f64(a) for _, a in v] if isinstance(v, list) else f64(v)) for p, v in ins.items()}
    if ref is not None:
        return ref(**as64)
    if op == "gelu":
        from math import erf

        x = as64["X"]
        return {"Out": 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))}
    if op == "sum":
        return {"Out": sum(as64["X"])}
    if op == "concat":
        return {"Out": np.concatenate(as64["X"], axis=1)}
    if op == "layer_norm":
        return {"Y": _layer_norm(as64["X"])}
    raise AssertionError(op)


@pytest.mark.parametrize("dtype", sorted(LOW))
@pytest.mark.parametrize("case", OPS, ids=[c[0] for c in OPS])
def test_op_against_a_float64_reference(case, dtype):
    op, inputs, attrs, ref = case
    ins = _inputs(inputs, dtype)
    want = _reference(op, ins, ref)
    outs = {p: v.astype(LOW[dtype]) for p, v in want.items()}
    if op == "layer_norm":
        n = inputs["X"].shape[0]
        outs.update(Mean=np.zeros(n, np.float32), Variance=np.zeros(n, np.float32))
        outs["Mean"], outs["Variance"] = None, None
    if op == "softmax" or op == "conv2d" or op == "pool2d":
        attrs = dict(attrs, use_cudnn=False)
    got = make(op, ins, outs, attrs).forward()
    for p, w in want.items():
        g = got[p]
        assert g.dtype == LOW[dtype], "%s %s: %s, declared %s" % (op, p, g.dtype, dtype)
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(
            f64(g), w, rtol=RTOL[dtype], atol=RTOL[dtype] * scale, err_msg="%s %s" % (op, p)
        )


@pytest.mark.parametrize("dtype", sorted(LOW))
def test_copying_ops_move_bits(dtype):
    a = low(_rand(2, 3), dtype)
    a.reshape(-1).view(np.uint16)[1] = 0x7FC3 if dtype == "bfloat16" else 0x7E03  # NaN payload
    a.reshape(-1).view(np.uint16)[2] = 0x8000  # -0
    for op, attrs, fn in [
        ("assign", {}, lambda x: x),
        ("reshape2", {"shape": [3, 2]}, lambda x: x.reshape(3, 2)),
        ("transpose2", {"axis": [1, 0]}, lambda x: x.T),
        ("slice", {"axes": [1], "starts": [0], "ends": [3]}, lambda x: x),
        (
            "cast",
            {"in_dtype": tide.core.dtype_code(dtype), "out_dtype": tide.core.dtype_code(dtype)},
            lambda x: x,
        ),
    ]:
        param = "Input" if op == "slice" else "X"
        outs = {"Out": fn(a)}
        if op.endswith("2"):
            outs["XShape"] = None
        got = make(op, {param: a}, outs, attrs).forward()["Out"]
        np.testing.assert_array_equal(bits(got), bits(np.ascontiguousarray(fn(a))), err_msg=op)
    fill = make(
        "fill_constant",
        {},
        {"Out": low(np.full([2], 0.1), dtype)},
        {"shape": [2], "value": 0.1, "dtype": tide.core.dtype_code(dtype)},
    ).forward()["Out"]
    np.testing.assert_array_equal(bits(fill), bits(low([0.1, 0.1], dtype)))


def test_outputs_the_program_declares_float32_stay_float32():
    # batch_norm on bfloat16 X: Y is bfloat16 as declared; the running statistics stay float32.
    x = low(_rand(4, 3, 2, 2), "bfloat16")
    ones, zeros = np.ones(3, np.float32), np.zeros(3, np.float32)
    t = make(
        "batch_norm",
        {"X": x, "Scale": ones, "Bias": zeros, "Mean": zeros, "Variance": ones},
        {"Y": x, "MeanOut": zeros, "VarianceOut": ones, "SavedMean": zeros, "SavedVariance": zeros},
        {"is_test": False, "momentum": 0.9, "epsilon": 1e-5},
    )
    got = t.forward()
    assert got["Y"].dtype == BF16
    assert got["MeanOut"].dtype == np.float32 and got["SavedMean"].dtype == np.float32
    xs = f64(x)
    m = xs.mean(axis=(0, 2, 3))
    np.testing.assert_allclose(got["SavedMean"], m, rtol=1e-5, atol=1e-6)
    y = (xs - m[None, :, None, None]) / np.sqrt(xs.var(axis=(0, 2, 3))[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(f64(got["Y"]), y, rtol=2.0**-7, atol=2.0**-7 * np.abs(y).max())


def test_the_float32_fallback_is_logged_once_per_op_type():
    code = """
import numpy as np, ml_dtypes, tide
from tide import layers
main, startup = tide.Program(), tide.Program()
with tide.program_guard(main, startup):
    x = layers.data("x", shape=[3], dtype="bfloat16")
    y = layers.exp(layers.exp(layers.reshape(x, [-1, 3])))  # exp: no bfloat16 kernel anywhere
exe = tide.Executor(tide.CPUPlace())
for _ in range(2):
    (out,) = exe.run(main, feed={"x": np.ones((2, 3), ml_dtypes.bfloat16)}, fetch_list=[y])
assert out.dtype == np.dtype(ml_dtypes.bfloat16), out.dtype
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "has no bfloat16 kernel" in line]
    assert len(lines) == 1, r.stderr  # two exp ops, two runs: one line
    assert "op 'exp' has no bfloat16 kernel on cpu" in lines[0]
    assert "float32" in lines[0] and "rounded back" in lines[0]
    assert "reshape" not in r.stderr  # its own bfloat16 kernel


# --- training -----------------------------------------------------------------------------------


def _mlp(dtype, seed=3):
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = seed
    with tide.program_guard(main, startup):
        x = layers.data("x", shape=[8], dtype=dtype)
        label = layers.data("label", shape=[1], dtype="int64")
        h = layers.fc(x, 16, act="relu")
        logits = layers.fc(h, 4)
        loss = layers.mean(layers.softmax_with_cross_entropy(logits, label))
        tide.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return main, startup, loss


def test_mlp_trains_in_bfloat16_close_to_float32():
    data_rng = np.random.RandomState(1)
    xs = data_rng.uniform(-1, 1, (32, 8))
    labels = (xs[:, :4].argmax(1)).reshape(-1, 1).astype(np.int64)
    results = {}
    params = None
    for dtype in ("bfloat16", "float32"):
        main, startup, loss = _mlp(dtype)
        scope = tide.Scope()
        with tide.scope_guard(scope):
            exe = tide.Executor(tide.CPUPlace())
            exe.run(startup)
            # The two programs' parameters, paired by their order (their names differ).
            names = sorted(p.name for p in main.global_block().all_parameters())
            if params is None:  # the bfloat16 weights, exactly, for both runs
                params = [f64(np.array(scope.find_var(n).get_tensor())) for n in names]
                for n in names:
                    assert np.array(scope.find_var(n).get_tensor()).dtype == BF16, n
            for n, value in zip(names, params):
                as_type = value.astype(np.float32).astype(LOW.get(dtype, np.float32))
                scope.find_var(n).get_tensor().set(as_type, tide.CPUPlace())
            losses = []
            feed_x = xs.astype(np.float32).astype(LOW.get(dtype, np.float32))
            for _ in range(20):
                (lv,) = exe.run(main, feed={"x": feed_x, "label": labels}, fetch_list=[loss])
                losses.append(float(f64(lv).reshape(-1)[0]))
            results[dtype] = (
                losses,
                [f64(np.array(scope.find_var(n).get_tensor())) for n in names],
            )
            if dtype == "bfloat16":
                for n in names:  # the update kept the parameters bfloat16
                    assert np.array(scope.find_var(n).get_tensor()).dtype == BF16, n
    bl, bp = results["bfloat16"]
    fl, fp = results["float32"]
    assert fl[-1] < fl[0] * 0.9  # it learns
    assert bl[-1] < bl[0] * 0.9
    np.testing.assert_allclose(bl, fl, rtol=0.03, atol=0.02)
    for i, (b, f) in enumerate(zip(bp, fp)):
        np.testing.assert_allclose(b, f, rtol=0.05, atol=0.02, err_msg="parameter %d" % i)
