"""Saving and loading: persistables round-trip bit-exactly (separate files and one combined
file); inference models reload and predict the same; bad files give clear errors."""

import os
import re

import numpy as np
import pytest

import tide
from tide import layers


def _model():
    x = layers.data(name="x", shape=[6])
    h = layers.fc(input=x, size=5, act="tanh")
    y = layers.fc(input=h, size=2)
    loss = layers.mean(y)
    tide.optimizer.Adam(0.01).minimize(loss)
    return x, y, loss


def _persistables(scope):
    out = {}
    for v in tide.default_main_program().list_vars():
        if v.persistable and v.type == "LOD_TENSOR":
            out[v.name] = np.array(scope.find_var(v.name).get_tensor()).copy()
    return out


@pytest.mark.parametrize("filename", [None, "all_params"])
def test_persistables_round_trip_bit_exact(tmp_path, exe, rng, filename):
    x, y, loss = _model()
    exe.run(tide.default_startup_program())
    exe.run(feed={"x": rng.rand(4, 6).astype("float32")})  # move optimizer state off its init
    before = _persistables(tide.global_scope())
    assert any(k.endswith("moment1_0") for k in before)
    tide.io.save_persistables(exe, str(tmp_path), filename=filename)
    fresh = tide.Scope()
    with tide.scope_guard(fresh):
        tide.io.load_persistables(exe, str(tmp_path), filename=filename)
        after = _persistables(fresh)
    assert before.keys() == after.keys()
    for k in before:
        assert before[k].dtype == after[k].dtype and before[k].tobytes() == after[k].tobytes(), k


def test_inference_model_round_trip(tmp_path, exe, rng):
    x, y, loss = _model()
    exe.run(tide.default_startup_program())
    xs = rng.rand(3, 6).astype("float32")
    (want,) = exe.run(
        tide.default_main_program().clone(for_test=True), feed={"x": xs}, fetch_list=[y]
    )
    tide.io.save_inference_model(str(tmp_path), ["x"], [y], exe)
    assert os.path.exists(tmp_path / "__model__")
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(str(tmp_path), exe)
        assert feeds == ["x"] and [v.name for v in fetches] == [y.name]
        types = [op.type for op in program.global_block().ops]
        assert "adam" not in types and not any(t.endswith("_grad") for t in types)
        (got,) = exe.run(program, feed={"x": xs}, fetch_list=fetches)
    assert got.tobytes() == want.tobytes()


def test_loaded_model_trains_with_a_label_it_did_not_have(tmp_path, exe, rng):
    """Fine-tuning a loaded model: a label variable added to its program is fed beside the
    model's own inputs (it gets a feed op after the model's); the model's inputs must still all
    be fed."""
    x = layers.data(name="x", shape=[6])
    y = layers.fc(input=x, size=2)
    exe.run(tide.default_startup_program())
    tide.io.save_inference_model(str(tmp_path), ["x"], [y], exe)
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(str(tmp_path), exe)
        startup = tide.Program()
        with tide.program_guard(program, startup):
            label = layers.data(name="label", shape=[2])
            loss = layers.reduce_mean(layers.square(layers.elementwise_sub(fetches[0], label)))
            tide.optimizer.SGD(learning_rate=0.2).minimize(loss)
        exe.run(startup)
        xs, ls = rng.rand(8, 6).astype("float32"), rng.rand(8, 2).astype("float32")
        losses = [
            exe.run(program, feed={"x": xs, "label": ls}, fetch_list=[loss])[0].item()
            for _ in range(5)
        ]
        assert losses[-1] < losses[0], losses
        with pytest.raises(tide.TideError, match="feed each of those.*Missing: 'x'"):
            exe.run(program, feed={"label": ls}, fetch_list=[loss])


def test_loaded_model_fetches_what_is_asked(tmp_path, exe, rng):
    """A loaded model's program has its own fetch ops; a fetch_list that differs (a subset,
    another order, an intermediate) is what the run returns, never the program's own targets in
    their order."""
    x = layers.data(name="x", shape=[6])
    h = layers.fc(input=x, size=5, act="tanh")
    y = layers.fc(input=h, size=2)
    z = layers.reduce_sum(y, dim=[1])
    exe.run(tide.default_startup_program())
    xs = rng.rand(3, 6).astype("float32")
    want_h, want_y, want_z = exe.run(feed={"x": xs}, fetch_list=[h, y, z])
    tide.io.save_inference_model(str(tmp_path), ["x"], [y, z], exe)
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(str(tmp_path), exe)
        assert [v.name for v in fetches] == [y.name, z.name]
        got_y, got_z = exe.run(program, feed={"x": xs}, fetch_list=fetches)
        np.testing.assert_allclose(got_y, want_y, rtol=1e-6)
        np.testing.assert_allclose(got_z, want_z, rtol=1e-6)
        got = exe.run(program, feed={"x": xs}, fetch_list=[fetches[1], fetches[0]])
        assert [a.shape for a in got] == [(3,), (3, 2)]
        np.testing.assert_allclose(got[0], want_z, rtol=1e-6)
        (only_z,) = exe.run(program, feed={"x": xs}, fetch_list=[fetches[1]])
        np.testing.assert_allclose(only_z, want_z, rtol=1e-6)
        (inner,) = exe.run(program, feed={"x": xs}, fetch_list=[h.name])
        np.testing.assert_allclose(inner, want_h, rtol=1e-6)
        again = exe.run(program, feed={"x": xs}, fetch_list=fetches)  # its own targets again
        np.testing.assert_allclose(again[0], want_y, rtol=1e-6)
        with pytest.raises(
            tide.TideError,
            match="feeds 'x' through its own feed ops.*Missing: 'x'; not its inputs: '%s'"
            % re.escape(h.name),
        ):
            exe.run(program, feed={h.name: np.zeros((3, 5), "float32")}, fetch_list=fetches)


def test_inference_model_flags(tmp_path, exe, rng):
    # Fluid 1.x's export_for_deployment and program_only.
    x, y, loss = _model()
    exe.run(tide.default_startup_program())
    main = tide.default_main_program()
    # program_only: the pruned program, no parameters; loading it needs them from elsewhere.
    names = tide.io.save_inference_model(str(tmp_path / "only"), ["x"], [y], exe, program_only=True)
    assert names == [y.name] and sorted(os.listdir(tmp_path / "only")) == ["__model__"]
    # export_for_deployment=False: the whole program as it is, in __model__.main_program, with
    # every persistable (the optimizer's state too).
    names = tide.io.save_inference_model(
        str(tmp_path / "whole"), ["x"], [y], exe, export_for_deployment=False
    )
    assert names == [y.name]
    files = set(os.listdir(tmp_path / "whole"))
    assert "__model__.main_program" in files and "__model__" not in files
    assert {v.name for v in main.list_vars() if v.persistable} <= files
    with open(tmp_path / "whole" / "__model__.main_program", "rb") as f:
        whole = tide.Program.parse_from_string(f.read())
    types = [op.type for op in whole.global_block().ops]
    assert types == [op.type for op in main.global_block().ops] and "adam" in types
    assert "feed" not in types and "fetch" not in types
    tide.io.save_inference_model(
        str(tmp_path / "whole"),
        ["x"],
        [y],
        exe,
        model_filename="net",
        export_for_deployment=False,
        program_only=True,
    )
    assert "net.main_program" in os.listdir(tmp_path / "whole")


def test_load_errors(tmp_path, exe):
    _model()
    with pytest.raises(ValueError, match="no saved value"):
        tide.io.load_persistables(exe, str(tmp_path))
    (tmp_path / "bad").write_bytes(b"garbage!")
    with pytest.raises(ValueError, match="not a Tide tensor file"):
        tide.io.load_vars(exe, str(tmp_path), vars=["bad"])
    with pytest.raises(ValueError, match="no inference model"):
        tide.io.load_inference_model(str(tmp_path / "missing"), exe)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "__model__").write_bytes(b"\xff\x00garbage")
    with pytest.raises(tide.InvalidArgumentError, match="ProgramDesc"):
        tide.io.load_inference_model(str(tmp_path / "model"), exe)


def test_save_needs_values(tmp_path, exe):
    _model()
    with pytest.raises(ValueError, match="run the startup program first"):
        tide.io.save_persistables(exe, str(tmp_path))


def _fc_params(exe, dirname, features, filename=None):
    """Saves an fc's parameters from a program whose input has `features` columns."""
    main, startup = tide.Program(), tide.Program()
    with (
        tide.program_guard(main, startup),
        tide.unique_name.guard(),
        tide.scope_guard(tide.Scope()),
    ):
        layers.fc(input=layers.data(name="x", shape=[features]), size=3)
        exe.run(startup)
        tide.io.save_params(exe, str(dirname), main, filename=filename)


@pytest.mark.parametrize("filename", [None, "params"])
def test_load_refuses_a_parameter_of_other_dims_naming_the_file(tmp_path, exe, filename):
    # It loaded, and the program failed later inside mul, naming neither file nor parameter.
    _fc_params(exe, tmp_path, 4, filename)
    x = layers.data(name="x", shape=[5])
    layers.fc(input=x, size=3)
    path = tmp_path / (filename or "fc_0.w_0")
    with pytest.raises(
        ValueError,
        match=r"%s: cannot load 'fc_0.w_0': the file holds float32 \[4, 3\], "
        r"the program declares float32 \[5, 3\]" % path,
    ):
        tide.io.load_params(exe, str(tmp_path), filename=filename)
    assert not tide.global_scope().find_var("fc_0.b_0")  # nothing loaded


def test_load_refuses_a_parameter_of_another_data_type_naming_the_file(tmp_path, exe):
    x = layers.data(name="x", shape=[4])
    layers.fc(input=x, size=3)
    path = tmp_path / "fc_0.w_0"
    with open(path, "wb") as f:
        tide.io._write_record(f, "fc_0.w_0", tide.LoDTensor(np.zeros((4, 3), "float64")))
    with pytest.raises(
        ValueError,
        match=r"%s: cannot load 'fc_0.w_0': the file holds float64 \[4, 3\], "
        r"the program declares float32 \[4, 3\]" % path,
    ):
        tide.io.load_vars(exe, str(tmp_path), vars=["fc_0.w_0"])
