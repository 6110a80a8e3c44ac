"""Constant folding in InferenceTranspiler (python/tide/transpiler/constant_folding.py): the ops
whose inputs are all constants run once and their values become parameters; outputs are
unchanged; 0-D values stay 0-D; random ops, fetched values, values written twice and values over
the size cap are left alone; "fold_constants" in skip_passes turns it off; the LLM fixtures'
rotary tables are folded when loaded."""

import collections
import os

import numpy as np
import pytest

import tide
from tide.transpiler.constant_folding import fold_constants

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "paddle", "pir")


def counts(program):
    return collections.Counter(op.type for op in program.global_block().ops)


def op(block, op_type, inputs, attrs, shape=None, dtype="float32", outputs=("Out",)):
    names = {o: tide.unique_name.generate(op_type) for o in outputs}
    for n in names.values():
        block.create_var(name=n, dtype=dtype, shape=shape)
    block.append_op(op_type, inputs=inputs, outputs={o: [n] for o, n in names.items()}, attrs=attrs)
    return names[outputs[0]]


def rotary_like(main):
    """x [-1, 8] + cos(range(0, 8) * 0.5) + a 0-D constant; a random draw (in [0, 1e-30): below the sums' rounding) of the same shape."""
    b = main.global_block()
    x = tide.layers.data(name="x", shape=[-1, 8], append_batch_size=False)
    start = tide.layers.fill_constant([1], "float32", 0.0)
    end = tide.layers.fill_constant([1], "float32", 8.0)
    step = tide.layers.fill_constant([1], "float32", 1.0)
    r = op(b, "range", {"Start": [start.name], "End": [end.name], "Step": [step.name]}, {}, [8])
    s = op(b, "scale", {"X": [r]}, {"scale": 0.5}, [8])
    c = op(b, "cos", {"X": [s]}, {}, [8])
    zero_d = op(b, "fill_constant", {}, {"shape": [], "value": 3.0, "dtype": 5}, [])
    y = op(b, "elementwise_add", {"X": [x.name], "Y": [c]}, {"axis": -1}, [-1, 8])
    y = op(b, "elementwise_mul", {"X": [y], "Y": [zero_d]}, {"axis": -1}, [-1, 8])
    noise = op(b, "uniform_random", {}, {"shape": [8], "min": 0.0, "max": 1e-30, "seed": 1}, [8])
    out = op(b, "elementwise_add", {"X": [y], "Y": [noise]}, {"axis": -1}, [-1, 8])
    return out, c


def run(program, feed, fetch):
    return tide.Executor(tide.CPUPlace()).run(program, feed=feed, fetch_list=fetch)


def test_folded_and_equal(fresh_programs, rng):
    main, _ = fresh_programs
    out, _ = rotary_like(main)
    program = main.clone()
    tide.transpiler.InferenceTranspiler().transpile(program, keep=[out])
    after = counts(program)
    assert after["range"] == after["cos"] == after["scale"] == 0, after
    assert after["fill_constant"] == 0, after
    assert after["uniform_random"] == 1, after  # random: drawn on every run
    feed = {"x": rng.uniform(-1, 1, (3, 8)).astype("float32")}
    (want,) = run(main, feed, [out])
    np.testing.assert_array_equal(run(program, feed, [out])[0], want)
    np.testing.assert_allclose(want, (feed["x"] + np.cos(np.arange(8) * 0.5)) * 3, rtol=1e-6)
    # The 0-D constant stays 0-D (a [1] would change what broadcasts and what stack accepts).
    b = program.global_block()
    folded = [n for n in b.vars if n.startswith("folded.") and b.var(n).persistable]
    shapes = sorted(b.var(n).shape for n in folded)
    assert shapes == [(), (8,)], shapes
    for n in folded:
        assert np.asarray(tide.global_scope().find_var(n).get_tensor()).shape == b.var(n).shape


def test_switched_off(fresh_programs):
    main, _ = fresh_programs
    out, _ = rotary_like(main)
    program = main.clone()
    tide.transpiler.InferenceTranspiler().transpile(
        program, keep=[out], skip_passes=("fold_constants",)
    )
    assert counts(program)["cos"] == 1


def test_left_alone(fresh_programs, rng):
    main, _ = fresh_programs
    out, c = rotary_like(main)
    b = main.global_block()
    # Written twice: the second write makes `twice` a variable, not a constant.
    twice = op(b, "fill_constant", {}, {"shape": [8], "value": 1.0, "dtype": 5}, [8])
    b.append_op(
        "fill_constant", outputs={"Out": [twice]}, attrs={"shape": [8], "value": 2.0, "dtype": 5}
    )
    out2 = op(b, "elementwise_add", {"X": [out], "Y": [twice]}, {"axis": -1}, [-1, 8])
    program = main.clone()
    # cos's output is fetched: it stays computed (its producers with it).
    tide.transpiler.InferenceTranspiler().transpile(program, keep=[out2, c])
    after = counts(program)
    assert after["cos"] == 1 and after["fill_constant"] >= 2, after
    feed = {"x": rng.uniform(-1, 1, (2, 8)).astype("float32")}
    for got, want in zip(run(program, feed, [out2, c]), run(main, feed, [out2, c])):
        np.testing.assert_array_equal(got, want)


def test_size_cap(fresh_programs):
    main, _ = fresh_programs
    out, _ = rotary_like(main)
    program = main.clone()
    exe = tide.Executor(tide.CPUPlace())
    assert fold_constants(program, tide.global_scope(), exe, keep=[out], max_bytes=16) == []
    assert counts(program)["cos"] == 1  # nothing changed
    assert len(fold_constants(program, tide.global_scope(), exe, keep=[out])) == 2


@pytest.mark.parametrize("name", ["llm_llama", "llm_decode"])
def test_llm_rotary_tables_folded(name):
    path = os.path.join(FIXTURES, name, "inference")
    exe = tide.Executor(tide.CPUPlace())
    raw = counts(tide.io.load_inference_model(path, exe, optimize=False, scope=tide.Scope())[0])
    after = counts(tide.io.load_inference_model(path, exe, scope=tide.Scope())[0])
    assert raw["cos"] >= 1 and raw["sin"] >= 1, raw
    if name == "llm_decode":  # the tables over every position: constant
        assert after["cos"] == after["sin"] == 0, after
