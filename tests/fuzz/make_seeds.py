"""Writes the committed seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/ (run
from a build tree: PYTHONPATH=<build>/python python tests/fuzz/make_seeds.py). Small on purpose:
the fuzzers grow their own corpora in build-fuzz/."""

import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))


def out(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def programs():
    import tide
    from tide import layers

    def build(name, body):
        main, startup = tide.Program(), tide.Program()
        with tide.program_guard(main, startup), tide.unique_name.guard():
            body()
        out("program_fuzzer", name, main.serialize_to_string())
        out("model_fuzzer", name, main.serialize_to_string())

    def arith():
        a = layers.fill_constant(shape=[2, 3], dtype="float32", value=1.5)
        b = layers.fill_constant(shape=[3], dtype="float32", value=-2.0)
        c = layers.elementwise_add(layers.scale(a, scale=3.0), b)
        layers.mean(layers.softmax(c))

    def matmul():
        a = layers.uniform_random(shape=[4, 3], dtype="float32", min=-1.0, max=1.0)
        b = layers.fill_constant(shape=[3, 2], dtype="float32", value=0.5)
        layers.reduce_sum(layers.matmul(a, b), dim=[1])

    def cast_and_compare():
        a = layers.fill_constant(shape=[5], dtype="int64", value=7)
        f = layers.cast(a, "float32")
        layers.less_than(f, layers.fill_constant(shape=[5], dtype="float32", value=3.0))

    def training():
        x = layers.fill_constant(shape=[4, 3], dtype="float32", value=0.3)
        loss = layers.mean(layers.fc(input=x, size=2, act="relu"))
        tide.optimizer.SGD(0.1).minimize(loss)

    for name, body in [("arith", arith), ("matmul", matmul), ("cast_compare", cast_and_compare)]:
        build(name + ".pb", body)
    # A training step needs its parameters: the startup program and the main one, concatenated
    # is not a program, so only the startup one (it runs alone).
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup), tide.unique_name.guard():
        training()
    out("program_fuzzer", "startup.pb", startup.serialize_to_string())
    out("model_fuzzer", "training_main.pb", main.serialize_to_string())


def record(name, arr, lod=(), version=1):
    b = b"TIDETNSR" + struct.pack("<I", version)
    for s in (name.encode(), str(arr.dtype).encode()):
        b += struct.pack("<I", len(s)) + s
    b += struct.pack("<I", arr.ndim) + struct.pack("<%dq" % arr.ndim, *arr.shape)
    b += struct.pack("<I", len(lod))
    for level in lod:
        b += struct.pack("<Q", len(level)) + struct.pack("<%dQ" % len(level), *level)
    data = np.ascontiguousarray(arr).tobytes()
    return b + struct.pack("<Q", len(data)) + data


def tensor_files():
    rnd = record("@TIDE_PSERVER_ROUND@", np.array([3], dtype="int64"))
    w, b = np.arange(6, dtype="float32").reshape(2, 3), np.ones(3, dtype="float32")
    out("tensor_file_fuzzer", "checkpoint", rnd + record("w", w) + record("b", b))
    out("tensor_file_fuzzer", "with_lod", rnd + record("w", w, lod=[[0, 1, 2]]) + record("b", b))
    out("tensor_file_fuzzer", "no_round", record("w", w))


def transport():
    from test_bad_input import request, var_message

    def frames(*fs):  # the fuzzer's framing: [u8 count - 1] then [u16 len][bytes]..., the last bare
        b = bytes([len(fs) - 1])
        for f in fs[:-1]:
            b += struct.pack("<H", len(f)) + f
        return b + fs[-1]

    data = np.arange(10, dtype="float32").tobytes()
    out(
        "transport_fuzzer",
        "send_one",
        frames(request(1, 1, [var_message("w@GRAD", [10, 1], 40)]), data),
    )
    two = [var_message("a", [2, 2], 16), var_message("b", [4], 16, dtype=2)]
    out("transport_fuzzer", "send_two", frames(request(1, 2, two), data[:16], data[:16]))
    out("transport_fuzzer", "get", frames(request(2, 3, names=["w"], round=5)))
    out("transport_fuzzer", "barrier", frames(request(3, 4, trainer_id=1)))
    # found by the fuzzer: no elements, but a row of it overflows int64
    out(
        "transport_fuzzer",
        "empty_huge_rows",
        frames(request(1, 5, [var_message("e", [0, 1 << 40, 1 << 40], 0)]), b""),
    )


def dlpack():
    def tensor(code, bits, lanes, dev, dev_id, ndim, flags, shape):
        b = struct.pack("<BBHBbbB", code, bits, lanes, dev, dev_id, ndim, flags)
        shape = list(shape) + [0] * (16 - len(shape))
        return b + struct.pack("<16q", *shape) + struct.pack("<16q", *([0] * 16))

    out("dlpack_fuzzer", "float32_2x3", tensor(2, 32, 1, 1, 0, 2, 0, [2, 3]))
    out("dlpack_fuzzer", "int64_scalar", tensor(0, 64, 1, 1, 0, 0, 0, []))
    out("dlpack_fuzzer", "bool_null_empty", tensor(6, 8, 1, 1, 0, 1, 8, [0]))


if __name__ == "__main__":
    tensor_files()
    transport()
    dlpack()
    programs()
