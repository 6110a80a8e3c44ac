"""0-D tensors (shape [], Paddle 2.5+): a variable declared with shape [] is 0-D, not a variable
whose dims are unknown and not [1]. Feeds of numpy scalars and 0-D arrays, fetches of 0-D
numpy arrays, the ops that reduce or index to one element (their output 0-D where the program
declares [], [1] where it declares [1], as Fluid), element-wise ops with a 0-D operand, backward
from a 0-D loss, save/load of a 0-D persistable, and models saved by Paddle 2.6 and 3.x whose
output is 0-D (tests/fixtures/paddle/zero_d and pir/zero_d, by tools/paddle_export.py)."""

import json
import os
import shutil

import numpy as np
import pytest

import tide

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "paddle")


@pytest.fixture
def exe():
    with tide.scope_guard(tide.Scope()):
        yield tide.Executor(tide.CPUPlace())


def run_op(exe, op, inputs, out_shape, attrs=None, out_dtype="float32", fetch_param="Out"):
    """`op` on the numpy `inputs` ({param: array}), its output declared `out_shape`; returns
    the fetched output and the program."""
    prog = tide.Program()
    block = prog.global_block()
    feed, ins = {}, {}
    for param, arr in inputs.items():
        name = param.lower()
        ins[param] = [block.create_var(name=name, shape=arr.shape, dtype=arr.dtype.name)]
        feed[name] = arr
    out = block.create_var(name="out", shape=out_shape, dtype=out_dtype)
    block.append_op(type=op, inputs=ins, outputs={fetch_param: [out]}, attrs=attrs or {})
    (got,) = exe.run(prog, feed=feed, fetch_list=[out])
    return got, out


X = np.arange(1, 13, dtype=np.float32).reshape(3, 4)


def test_variable_shape_zero_d_is_not_unknown():
    block = tide.Program().global_block()
    s = block.create_var(name="s", shape=[], dtype="float32")
    u = block.create_var(name="u", dtype="float32")
    one = block.create_var(name="one", shape=[1], dtype="float32")
    assert s.shape == () and s.desc.zero_dim
    assert u.shape == () and not u.desc.zero_dim
    assert one.shape == (1,) and not one.desc.zero_dim
    # Printed apart too: a 0-D tensor is [], dims not known yet are said to be so.
    assert s.summary().endswith("s : LOD_TENSOR float32 []")
    assert u.summary().endswith("u : LOD_TENSOR float32 [dims unknown]")
    assert one.summary().endswith("one : LOD_TENSOR float32 [1]")


def test_program_round_trip_keeps_zero_d():
    prog = tide.Program()
    block = prog.global_block()
    block.create_var(name="s", shape=(), dtype="float32")
    block.create_var(name="u", dtype="float32")
    back = tide.Program.parse_from_string(prog.serialize_to_string())
    assert back.global_block().var("s").desc.zero_dim
    assert not back.global_block().var("u").desc.zero_dim


@pytest.mark.parametrize(
    "value", [np.float32(2.5), np.array(2.5, dtype=np.float32)], ids=["scalar", "array0d"]
)
def test_feed_and_fetch_zero_d(exe, value):
    prog = tide.Program()
    block = prog.global_block()
    s = block.create_var(name="s", shape=[], dtype="float32")
    out = block.create_var(name="out", shape=[], dtype="float32")
    block.append_op(type="scale", inputs={"X": [s]}, outputs={"Out": [out]}, attrs={"scale": 2.0})
    assert out.shape == ()
    (got,) = exe.run(prog, feed={"s": value}, fetch_list=[out])
    assert got.shape == () and got.dtype == np.float32 and got == np.float32(5.0)


def test_feed_of_rank_one_to_zero_d_is_refused(exe):
    prog = tide.Program()
    s = prog.global_block().create_var(name="s", shape=[], dtype="float32")
    with pytest.raises(Exception, match=r"feed 's'.*\[\] \(0-D"):
        exe.run(prog, feed={"s": np.ones([1], np.float32)}, fetch_list=[s])


@pytest.mark.parametrize(
    "op, ref",
    [
        ("reduce_sum", np.sum),
        ("reduce_mean", np.mean),
        ("reduce_max", np.max),
        ("reduce_min", np.min),
        ("reduce_prod", np.prod),
    ],
)
@pytest.mark.parametrize("how", ["reduce_all", "every_axis"])
def test_reduce_to_zero_d(exe, op, ref, how):
    attrs = {"keep_dim": False}
    attrs.update({"reduce_all": True} if how == "reduce_all" else {"dim": [0, 1]})
    got, out = run_op(exe, op, {"X": X}, [], attrs)
    want = ref(X)
    assert out.shape == () and got.shape == want.shape == ()
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_reduce_declared_one_keeps_fluid_shape(exe):
    got, _ = run_op(exe, "reduce_sum", {"X": X}, [1], {"reduce_all": True})
    assert got.shape == (1,) and got[0] == X.sum()
    # Fluid's layers (compile-time inference declares [1]).
    prog = tide.Program()
    with tide.program_guard(prog, tide.Program()):
        x = tide.layers.data("x", shape=[3, 4], append_batch_size=False)
        m, r = tide.layers.mean(x), tide.layers.reduce_sum(x)
    assert m.shape == (1,) and r.shape == (1,)
    got = exe.run(prog, feed={"x": X}, fetch_list=[m, r])
    assert [g.shape for g in got] == [(1,), (1,)]


def test_mean_to_zero_d(exe):
    got, _ = run_op(exe, "mean", {"X": X}, [])
    assert got.shape == () and got == np.float32(X.mean())


def test_reduce_of_zero_d_inferred_at_compile_time():
    prog = tide.Program()
    block = prog.global_block()
    x = block.create_var(name="x", shape=[3, 4], dtype="float32")
    s = block.create_var(name="s", dtype="float32")  # no shape: inferred
    block.append_op(
        type="reduce_sum", inputs={"X": [x]}, outputs={"Out": [s]}, attrs={"reduce_all": True}
    )
    assert s.shape == (1,) and not s.desc.zero_dim  # Fluid's inference where none is declared


def test_slice_decreasing_every_dim(exe):
    v = np.arange(5, dtype=np.float32) * 1.5
    attrs = {"axes": [0], "starts": [3], "ends": [4], "decrease_axis": [0]}
    got, _ = run_op(exe, "slice", {"Input": v}, [], attrs)
    assert got.shape == v[3].shape == () and got == v[3]
    # x[1][2] of a matrix: both dims dropped in one slice
    attrs = {"axes": [0, 1], "starts": [1, 2], "ends": [2, 3], "decrease_axis": [0, 1]}
    got, _ = run_op(exe, "slice", {"Input": X}, [], attrs)
    assert got.shape == () and got == X[1][2]
    # declared [1] (Fluid): stays [1]
    got, _ = run_op(
        exe,
        "slice",
        {"Input": v},
        [1],
        {"axes": [0], "starts": [3], "ends": [4], "decrease_axis": [0]},
    )
    assert got.shape == (1,)


def test_fill_constant_zero_d(exe):
    prog = tide.Program()
    out = prog.global_block().create_var(name="c", shape=[], dtype="float32")
    prog.global_block().append_op(
        type="fill_constant", outputs={"Out": [out]}, attrs={"shape": [], "value": 7.0, "dtype": 5}
    )
    (got,) = exe.run(prog, fetch_list=[out])
    assert got.shape == () and got == 7.0


@pytest.mark.parametrize(
    "op, ref",
    [
        ("elementwise_add", np.add),
        ("elementwise_mul", np.multiply),
        ("elementwise_sub", np.subtract),
    ],
)
def test_elementwise_broadcasts_zero_d(exe, op, ref):
    y = np.array(2.5, dtype=np.float32)
    got, _ = run_op(exe, op, {"X": X, "Y": y}, [3, 4], {"axis": -1})
    assert got.shape == (3, 4)
    np.testing.assert_allclose(got, ref(X, y))
    got, _ = run_op(exe, op, {"X": np.array(4.0, np.float32), "Y": y}, [], {"axis": -1})
    assert got.shape == () and got == ref(np.float32(4.0), y)


def test_backward_from_zero_d_loss(exe):
    prog, startup = tide.Program(), tide.Program()
    with tide.program_guard(prog, startup):
        x = tide.layers.data("x", shape=[3, 4], append_batch_size=False)
        w = tide.layers.create_parameter(
            [3, 4], "float32", name="w", default_initializer=tide.initializer.Constant(0.5)
        )
        block = prog.global_block()
        prod = block.create_var(name="prod", shape=[3, 4], dtype="float32")
        block.append_op(
            type="elementwise_mul", inputs={"X": [x], "Y": [w]}, outputs={"Out": [prod]}
        )
        loss = block.create_var(name="loss", shape=[], dtype="float32")
        block.append_op(
            type="reduce_mean",
            inputs={"X": [prod]},
            outputs={"Out": [loss]},
            attrs={"reduce_all": True},
        )
        ((_, w_grad),) = tide.backward.append_backward(loss, parameter_list=["w"])
    assert block.var("loss@GRAD").desc.zero_dim
    exe.run(startup)
    got_loss, got_grad = exe.run(prog, feed={"x": X}, fetch_list=[loss, w_grad])
    assert got_loss.shape == () and got_loss == np.float32((X * 0.5).mean())
    np.testing.assert_allclose(got_grad, X / X.size, rtol=1e-6)


def test_save_and_load_zero_d_persistable(exe, tmp_path):
    prog = tide.Program()
    block = prog.global_block()
    s = block.create_var(name="s", shape=[], dtype="float32", persistable=True)
    scope = tide.global_scope()
    scope.var("s").get_tensor().set(np.array(3.25, np.float32), tide.CPUPlace(), False)
    tide.io.save_vars(exe, str(tmp_path), prog, vars=[s])
    scope.var("s").get_tensor().set(np.array(0.0, np.float32), tide.CPUPlace(), False)
    tide.io.load_vars(exe, str(tmp_path), prog, vars=[s])
    got = np.array(scope.find_var("s").get_tensor())
    assert got.shape == () and got == np.float32(3.25)


def _paddle_fixture(tmp_path, sub):
    d = os.path.join(FIXTURES, sub)
    info = json.load(open(os.path.join(d, "info.json")))
    if "params" in info:  # a PIR fixture sharing the legacy one's parameters
        t = tmp_path / "m"
        shutil.copytree(d, t)
        shutil.copy(os.path.join(d, info["params"]), t / "inference.pdiparams")
        d = str(t)
    return d, info


@pytest.mark.parametrize("sub, paddle", [("zero_d", "2.6"), ("pir/zero_d", "3.")])
def test_paddle_model_with_zero_d_output(exe, tmp_path, sub, paddle):
    d, info = _paddle_fixture(tmp_path, sub)
    assert info["paddle"].startswith(paddle) and info["output_shape"] == []
    program, feeds, fetches = tide.io.load_inference_model(os.path.join(d, "inference"), exe)
    assert [v.shape for v in fetches] == [()]
    expected = np.load(os.path.join(d, "expected.npy"))
    (out,) = exe.run(
        program, feed={feeds[0]: np.load(os.path.join(d, "input.npy"))}, fetch_list=fetches
    )
    assert out.shape == expected.shape == ()
    np.testing.assert_allclose(out, expected, rtol=1e-5)
