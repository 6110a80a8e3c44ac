"""A model with slice assignments (tools/paddle_nn_models.py's SetValue: x[:, 0] = t,
x[1:5:2, ::3] = 0.5, x[..., -1] = t, a broadcast vector, x[0, None, 2] = c, a backwards step, an
int64 tensor's slices) saved by Paddle 2.6.2 (legacy set_value ops, op version 4, the constants in
`values`) and by Paddle 3.3.1 (PIR's set_value_ / set_value_with_tensor_ in place, their bounds
from pd_op.full_int_array): both load, translate to set_value, and match Paddle's output on the
plain kernels and with oneDNN. PaddlePaddle itself is not needed."""

import json
import os
import shutil

import numpy as np
import pytest
from kernel_libraries import LIBS

import tide

FIXTURES = os.path.join(
    os.environ.get("TIDE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
    "tests",
    "fixtures",
    "paddle",
)
LEGACY = os.path.join(FIXTURES, "set_value")
PIR = os.path.join(FIXTURES, "pir", "set_value")


def pir_prefix(tmp_path):
    """The PIR program with the parameters it shares with the legacy fixture beside it."""
    info = json.load(open(os.path.join(PIR, "info.json")))
    d = tmp_path / "pir_set_value"
    shutil.copytree(PIR, d)
    shutil.copy(os.path.join(PIR, info["params"]), d / "inference.pdiparams")
    return str(d / "inference")


def run(prefix, d, lib, optimize):
    feed = dict(np.load(os.path.join(d, "inputs.npz")))
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    program, feeds, fetches = tide.io.load_inference_model(
        prefix, exe, scope=scope, optimize=optimize
    )
    assert sorted(feeds) == ["ids", "x"] and len(fetches) == 1
    tide.set_flags({"use_mkldnn": lib == "mkldnn"})
    try:
        (out,) = exe.run(program, feed=feed, fetch_list=fetches, scope=scope)
    finally:
        tide.set_flags({"use_mkldnn": False})
    expected = np.load(os.path.join(d, "expected.npy"))
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    return program


def set_value_ops(program):
    return [op for op in program.global_block().ops if op.type == "set_value"]


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", LIBS)
def test_pir_fixture_matches_paddle(tmp_path, lib, optimize):
    program = run(pir_prefix(tmp_path), PIR, lib, optimize)
    ops = set_value_ops(program)
    # 8 assignments: 5 of a tensor (set_value_with_tensor_), 3 of a constant (set_value_).
    assert len(ops) == 8
    assert sum(bool(op.input("ValueTensor")) for op in ops) == 5
    # Each in-place PIR op writes a fresh variable; the bounds were folded into attributes.
    assert all(op.input("Input") != op.output("Out") for op in ops)
    assert all(not op.input("StartsTensorList") for op in ops)
    constants = [op for op in ops if not op.input("ValueTensor")]
    half = [op for op in constants if list(op.attr("values")) == [0.5]]
    assert len(half) == 1 and list(half[0].attr("steps")) == [2, 3]


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", LIBS)
def test_legacy_fixture_matches_paddle(lib, optimize):
    # Paddle 2.6 records set_value at version 4 (the constant in `values`, Scalars, in place of the
    # typed lists; Tide's op declares both), which the loader's known versions list.
    assert tide._C.paddle_op_versions().get("set_value", 0) >= 4
    program = run(os.path.join(LEGACY, "inference"), LEGACY, lib, optimize)
    ops = set_value_ops(program)
    assert len(ops) == 8 and sum(bool(op.input("ValueTensor")) for op in ops) == 5


def test_both_fixtures_saved_the_same_model():
    a, b = (
        json.load(open(os.path.join(LEGACY, "info.json"))),
        json.load(open(os.path.join(PIR, "info.json"))),
    )
    assert a["paddle"].startswith("2.6") and b["paddle"].startswith("3.")
    for name in ("x", "ids"):
        np.testing.assert_array_equal(
            np.load(os.path.join(LEGACY, "inputs.npz"))[name],
            np.load(os.path.join(PIR, "inputs.npz"))[name],
        )
    np.testing.assert_allclose(
        np.load(os.path.join(LEGACY, "expected.npy")),
        np.load(os.path.join(PIR, "expected.npy")),
        rtol=1e-5,
        atol=1e-6,
    )
