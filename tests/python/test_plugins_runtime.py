"""Plugins from Python: what loaded, loading one at run time and training through its op, and
clear errors for missing or broken plugin files."""

import os

import numpy as np
import pytest
from ctest_env import needs, path, plugin_file

import tide

ACME = path("TIDE_TEST_PLUGIN_DIR", "libtide_test_acme_ops.so")
needs_acme = needs(
    "TIDE_TEST_PLUGIN_DIR", "libtide_test_acme_ops.so", what="the acme_ops test plugin"
)


def test_installed_plugins_loaded_on_import():
    records = {p["name"]: p for p in tide.plugins()}
    for name in ("device_cpu", "ops_math", "ops_optimizers"):
        assert records[name]["status"] == "loaded", records[name]
    assert "cpu" in records["device_cpu"]["devices"]
    assert "mul" in records["ops_math"]["ops"]
    assert any(k.startswith("mul {cpu, float32") for k in records["ops_math"]["kernels"])
    assert records["ops_math"]["abi"] == "1.1"  # plugin_api.h TIDE_ABI_MAJOR.TIDE_ABI_MINOR


def test_op_of_unloaded_plugin_is_a_clear_error():
    assert not tide._C.has_op("acme.never_registered")
    with pytest.raises(
        tide.NotFoundError, match="acme.never_registered.*no loaded plugin provides it"
    ):
        tide.default_main_program().global_block().append_op("acme.never_registered")
    with pytest.raises(AttributeError, match="no loaded plugin registers an op"):
        _ = tide.layers.acme_never_registered


def test_missing_plugin_file():
    with pytest.raises(tide.PluginError, match="no such file"):
        tide.load_plugin("/nonexistent/libnothing.so")


def test_broken_plugin_file(tmp_path):
    bad = tmp_path / "libbroken.so"
    bad.write_bytes(b"this is not an ELF file at all")
    with pytest.raises(tide.PluginError, match="not a shared object") as e:
        tide.load_plugin(str(bad))
    assert str(bad) in str(e.value)
    failed = [p for p in tide.plugins() if p["file"] == str(bad)]
    assert failed and failed[0]["status"] == "failed"


@needs_acme
def test_load_plugin_and_train_through_its_op(exe):
    record = tide.load_plugin(ACME)
    assert record["name"] == "acme_ops" and record["status"] == "loaded"
    assert "acme.axpb" in record["ops"]
    # Usable at once as a generated layer, its grad maker and kernels included.
    x = tide.layers.data(name="x", shape=[3])
    y = tide.layers.data(name="y", shape=[1])
    h = tide.layers.fc(input=x, size=1)
    out = tide.layers.acme_axpb(h, a=2.0, b=0.5)
    loss = tide.layers.mean(tide.layers.square_error_cost(out, y))
    tide.optimizer.SGD(learning_rate=0.05).minimize(loss)
    exe.run(tide.default_startup_program())
    rng = np.random.RandomState(0)
    xs = rng.rand(64, 3).astype("float32")
    ys = (2.0 * (xs @ np.array([[1.0], [-2.0], [0.5]], dtype="float32") + 0.3) + 0.5).astype(
        "float32"
    )
    losses = [float(exe.run(feed={"x": xs, "y": ys}, fetch_list=[loss])[0][0]) for _ in range(300)]
    assert losses[-1] < 1e-3 < losses[0], (losses[0], losses[-1])
    w = np.array(tide.global_scope().find_var("fc_0.w_0").get_tensor())
    np.testing.assert_allclose(w.reshape(-1), [1.0, -2.0, 0.5], atol=0.05)
    # Loading it again is a no-op that returns the same record.
    assert tide.load_plugin(ACME)["name"] == "acme_ops"


def test_vendor_layer_names_with_underscores(monkeypatch):
    # "my_lab.fast_gelu" is reached as tide.layers.my_lab_fast_gelu: every '_' is tried as the dot.
    from tide.layers import generated

    ops = {"my_lab.fast_gelu", "acme.axpb"}
    monkeypatch.setattr(generated._C, "has_op", lambda name: name in ops)
    assert generated.op_type_for("my_lab_fast_gelu") == "my_lab.fast_gelu"
    assert generated.op_type_for("acme_axpb") == "acme.axpb"
    assert generated.op_type_for("my_lab_slow_gelu") is None


@needs_acme
def test_float64_attributes_are_exact(exe):
    # acme.scale64 declares k as float64: 0.1 reaches its kernel exactly, survives serialization,
    # while acme.axpb's float attribute a gets float32's 0.1.
    if not tide._C.has_op("acme.scale64"):
        tide.load_plugin(ACME)
    x = tide.layers.data(name="x", shape=[3], dtype="float64")
    y = tide.layers.acme_scale64(x, k=0.1)
    op = tide.default_main_program().global_block().ops[-1]
    assert op.attr("k") == 0.1
    xs = np.array([[1.0, 3.0, 7.0]])
    (got,) = exe.run(feed={"x": xs}, fetch_list=[y])
    np.testing.assert_array_equal(got, 0.1 * xs)
    again = tide.Program.parse_from_string(tide.default_main_program().serialize_to_string())
    assert [o.attr("k") for o in again.global_block().ops if o.type == "acme.scale64"] == [0.1]
    tide.layers.acme_axpb(x, a=0.1)
    assert tide.default_main_program().global_block().ops[-1].attr("a") == float(np.float32(0.1))


def test_feed_and_fetch_are_the_cores_own_ops():
    # With only the CPU device loaded (no op pack), a program of feeds and fetches runs: the
    # core defines feed, fetch and delete_var itself, and device_compiled_group (the node of a
    # group of ops a device compiled, issue 33).
    import subprocess
    import sys

    cpu = plugin_file("device_cpu")
    code = (
        "import numpy as np, tide\n"
        "from tide import layers\n"
        "x = layers.data(name='x', shape=[3], dtype='float32')\n"
        "feed = {'x': np.arange(6, dtype='float32').reshape(2, 3)}\n"
        "got, = tide.Executor(tide.Place('cpu', 0)).run(feed=feed, fetch_list=[x])\n"
        "print(float(got.sum()), OPS)\n"
    )
    env = dict(os.environ, TIDE_PLUGIN_PATH=cpu, TIDE_PLUGIN_PATH_ONLY="1")
    p = subprocess.run(
        [sys.executable, "-c", code.replace("OPS", "sorted(tide._C.registered_ops())")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.split(" ", 1) == [
        "15.0",
        "['delete_var', 'device_compiled_group', 'feed', 'fetch']\n",
    ], p.stdout
