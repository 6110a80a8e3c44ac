"""A vendor's mistakes are loud: an op without a gradient that a parameter's gradient must pass,
a kernel that never writes its output, one that declines after writing it, an op with kernels but
no shape inference, an op without a vendor prefix, a kernel for an op no plugin defines, a grad
maker misspelling a parameter, and two ops of one layer name (tests/sdk/sloppy_ops)."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from ctest_env import path, require

import tide
from tide import layers

SLOPPY = path("TIDE_TEST_PLUGIN_DIR", "libtide_test_sloppy_ops.so")
NOINFER = path("TIDE_TEST_PLUGIN_DIR", "libtide_test_noinfer_ops.so")


@pytest.fixture(scope="module", autouse=True)
def sloppy_loaded():
    require("TIDE_TEST_PLUGIN_DIR", "libtide_test_sloppy_ops.so", what="the sloppy_ops test plugin")
    if not tide._C.has_op("sloppy.twice"):
        with pytest.warns(UserWarning, match="unprefixed_twice"):  # checked below
            tide.load_plugin(SLOPPY)


def _net_through_twice(op_type="sloppy.twice"):
    x = layers.data(name="x", shape=[3], dtype="float32")
    h = layers.fc(input=x, size=3, param_attr="w", bias_attr=False)
    block = tide.default_main_program().current_block()
    out = block.create_var(name="twice_out", dtype="float32")
    block.append_op(op_type, inputs={"X": h}, outputs={"Out": out})
    return h, layers.mean(out)


def test_an_op_without_a_gradient_on_the_way_to_a_parameter_is_an_error():
    _, loss = _net_through_twice()
    with pytest.raises(
        tide.TideError,
        match=r"op 'sloppy.twice' \(plugin .*sloppy_ops.so\) has no gradient.*"
        r"input 'X'.*stop_gradient",
    ):
        tide.optimizer.SGD(0.1).minimize(loss)


def test_stop_gradient_is_the_way_out(exe):
    h, loss = _net_through_twice()
    h.stop_gradient = True
    assert tide.append_backward(loss) == []  # nothing to train, and said so by the user


def test_a_grad_maker_asking_for_an_output_the_op_lacks_names_it():
    _, loss = _net_through_twice("sloppy.typo_grad")
    with pytest.raises(
        tide.TideError,
        match=r"op 'sloppy.typo_grad' grad maker "
        r"\(plugin .*sloppy_ops.so\): OutputGrad\(\"Outt\"\): op 'sloppy.typo_grad' has no output "
        r"parameter 'Outt' \(its outputs are: Out\)",
    ):
        tide.append_backward(loss)


def test_a_kernel_that_never_writes_its_output_is_named(exe):
    x = layers.data(name="x", shape=[3], dtype="float32")
    block = tide.default_main_program().current_block()
    out = block.create_var(name="forgotten", dtype="float32")
    block.append_op("sloppy.forgetful", inputs={"X": x}, outputs={"Out": out})
    with pytest.raises(
        tide.TideError,
        match=r"op 'sloppy.forgetful'.*did not write its output 'Out' "
        r"\(variable 'forgotten'\).*sloppy_ops.so",
    ):
        exe.run(feed={"x": np.ones((2, 3), "float32")}, fetch_list=[out])


def _run_one(exe, op_type, out_name):
    x = layers.data(name="x", shape=[3], dtype="float32")
    block = tide.default_main_program().current_block()
    out = block.create_var(name=out_name, dtype="float32")
    block.append_op(op_type, inputs={"X": x}, outputs={"Out": out})
    xs = np.arange(6, dtype="float32").reshape(2, 3)
    return xs, lambda: exe.run(feed={"x": xs}, fetch_list=[out])[0]


def test_a_kernel_that_declines_after_writing_its_output_is_named(exe):
    # Its "halfway" library kernel would run next, on the half it wrote: the core fails instead.
    _, run = _run_one(exe, "sloppy.half_written", "half")
    with pytest.raises(
        tide.TideError,
        match=r"op 'sloppy.half_written' \(block 0, #\d+\) kernel \{cpu, float32, ANY, plain\} "
        r"\(.*sloppy_ops.so\) declined this run after it gave output 'Out' \('half'\) data; "
        r"a kernel may decline \(TIDE_UNIMPLEMENTED\) only before it writes an output.*"
        r"declined after writing half of Out",
    ):
        run()


def test_a_kernel_that_declines_after_only_a_scratch_tensor_falls_back(exe):
    xs, run = _run_one(exe, "sloppy.scratch_first", "scratch_out")
    np.testing.assert_array_equal(run(), 2 * xs)  # the "halfway" library's kernel
    kernels = [k for op, k in exe.last_run_info()["kernels"] if op == "sloppy.scratch_first"]
    assert len(kernels) == 1 and "halfway" in kernels[0], kernels


def test_an_op_with_kernels_but_no_shape_inference_is_refused_at_load():
    with pytest.raises(tide.TideError, match=r"noinfer.copy.*no shape inference"):
        tide.load_plugin(NOINFER)
    assert not tide._C.has_op("noinfer.copy")


@pytest.mark.parametrize("strict,code", [(False, 0), (True, 1)])
def test_tide_plugins_warns_of_kernels_for_undefined_ops(strict, code):
    tool = require("TIDE_PLUGINS_TOOL", what="the tide-plugins tool")
    r = subprocess.run(
        [tool, "--plugin_path=" + SLOPPY] + (["--strict"] if strict else []),
        capture_output=True,
        text=True,
    )
    assert (
        "kernel sloppy.twise" in r.stderr
        and "no loaded plugin defines op 'sloppy.twise'" in r.stderr
    )
    assert "op 'unprefixed_twice' has no vendor prefix" in r.stderr
    assert r.returncode == code, r.stderr


def _warnings_of(code, **env):
    """The UserWarnings a fresh process prints running `code` (after `import tide`)."""
    code = (
        "import warnings\nwarnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    import tide\n"
        + "".join("    " + line + "\n" for line in code.splitlines())
        + "for w in seen:\n    print('WARNED', w.category.__name__, w.message)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, **env),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return [line for line in r.stdout.splitlines() if line.startswith("WARNED")]


ORPHAN = "kernel sloppy.twise {cpu, float32, ANY, plain} (%s): no loaded plugin defines op 'sloppy.twise'"


def test_tide_load_plugin_warns_of_kernels_for_undefined_ops():
    seen = _warnings_of("tide.load_plugin(%r)" % SLOPPY)
    assert "WARNED UserWarning tide: " + ORPHAN % SLOPPY in seen, seen


def test_import_tide_warns_of_kernels_for_undefined_ops_on_the_plugin_path():
    seen = _warnings_of("", TIDE_PLUGIN_PATH=os.environ["TIDE_PLUGIN_PATH"] + ":" + SLOPPY)
    assert "WARNED UserWarning tide: " + ORPHAN % SLOPPY in seen, seen
    # The build tree's own plugins alone leave no kernel without its op.
    assert not [w for w in _warnings_of("") if "no loaded plugin defines" in w]


def test_two_ops_of_one_layer_name_are_named_and_both_reachable(exe):
    # "sloppy.dup_twice" and "sloppy_dup.twice" are both tide.layers.sloppy_dup_twice.
    both = (
        r"tide.layers.sloppy_dup_twice is ambiguous: ops 'sloppy.dup_twice' "
        r"\(plugin 'sloppy_ops', .*sloppy_ops.so\) and 'sloppy_dup.twice' \(plugin 'sloppy_ops', .*sloppy_ops.so\)"
    )
    with pytest.raises(layers.generated.AmbiguousLayerError, match=both + ".*op_layer"):
        _ = layers.sloppy_dup_twice
    x = layers.data(name="x", shape=[3], dtype="float32")
    outs = [layers.op_layer(t)(x) for t in ("sloppy.dup_twice", "sloppy_dup.twice")]
    assert [op.type for op in tide.default_main_program().global_block().ops[-2:]] == [
        "sloppy.dup_twice",
        "sloppy_dup.twice",
    ]
    xs = np.arange(6, dtype="float32").reshape(2, 3)
    for got in exe.run(feed={"x": xs}, fetch_list=outs):
        np.testing.assert_array_equal(got, 2 * xs)
    with pytest.raises(ValueError, match="no loaded plugin registers op 'sloppy.nope'"):
        layers.op_layer("sloppy.nope")
    # tide.load_plugin warns of it at once.
    seen = _warnings_of("tide.load_plugin(%r)" % SLOPPY)
    assert any(re.search(both, w) for w in seen), seen


def test_an_op_without_a_vendor_prefix_outside_tides_directory_is_a_warning():
    sloppy = [r for r in tide.plugins() if r["name"] == "sloppy_ops"]
    assert len(sloppy) == 1
    (warning,) = sloppy[0]["warnings"]
    assert (
        "op 'unprefixed_twice' has no vendor prefix" in warning
        and "'<vendor>.unprefixed_twice'" in warning
    )
    assert "sloppy_ops.so" in warning
    # Tide's own packs, in the default directory, define Fluid's names without a word.
    own = [r for r in tide.plugins() if r["name"] == "ops_math"]
    assert own and "relu" in own[0]["ops"] and own[0]["warnings"] == []
    # tide.load_plugin says it as a UserWarning.
    code = (
        "import warnings, tide\nwarnings.simplefilter('error')\n"
        "try:\n    tide.load_plugin(%r)\nexcept UserWarning as w:\n    print('WARNED', w)\n"
        % SLOPPY
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "WARNED tide: op 'unprefixed_twice' has no vendor prefix" in r.stdout, (
        r.stdout + r.stderr
    )


def test_a_vendor_op_named_like_one_of_tides_fails_the_vendor_plugin_not_tides():
    """A plugin on TIDE_PLUGIN_PATH registers before Tide's own directory would in path order; an
    op name it shares with Tide's relu (another schema) must fail it, not ops_math."""
    clash = path("TIDE_TEST_PLUGIN_DIR", "libtide_test_clash_ops.so")
    require("TIDE_TEST_PLUGIN_DIR", "libtide_test_clash_ops.so", what="the clash_ops test plugin")
    code = (
        "import tide, numpy as np\n"
        "rec = {p['name']: p for p in tide.plugins()}\n"
        "print('ops_math', rec['ops_math']['status'])\n"
        "print('clash', rec['clash_ops']['status'], rec['clash_ops']['error'])\n"
        "x = tide.layers.data(name='x', shape=[3], dtype='float32')\n"
        "y = tide.layers.relu(x)\n"
        "out, = tide.Executor(tide.CPUPlace()).run(\n"
        "    feed={'x': np.array([[-1, 0, 2]], 'float32')}, fetch_list=[y])\n"
        "print('relu', out.tolist())\n"
    )
    env = dict(os.environ, TIDE_PLUGIN_PATH=clash)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ops_math loaded" in p.stdout, p.stdout
    assert re.search(r"clash failed op 'relu' is already registered by \S*ops_math", p.stdout)
    assert "relu [[0.0, 0.0, 2.0]]" in p.stdout, p.stdout


@pytest.fixture(scope="module")
def sloppy_load_warnings():
    """The UserWarnings tide.load_plugin of the sloppy pack gives in a fresh process."""
    return _warnings_of("tide.load_plugin(%r)" % SLOPPY)


def test_a_vendor_op_whose_layer_name_is_one_of_tides_layers_is_a_warning(sloppy_load_warnings):
    """sequence.conv's layer name is Tide's own sequence_conv layer, which wins: load_plugin says
    so and names the way to the op."""
    seen = sloppy_load_warnings
    assert any(
        "op 'sequence.conv' is not tide.layers.sequence_conv, which is Tide's own layer" in w
        and "tide.layers.op_layer('sequence.conv')" in w
        for w in seen
    ), seen
    assert layers.sequence_conv.__module__.startswith("tide.layers")  # still Tide's
    assert layers.op_layer("sequence.conv") is not layers.sequence_conv


def test_a_missing_op_pack_leaves_one_warning_per_plugin_file_not_one_per_kernel():
    """Without ops_math, the device plugins' kernels for its ops have no op: hundreds of kernels,
    said once per file (with examples), so they do not bury what went wrong."""
    own = os.environ["TIDE_PLUGIN_PATH"].split(":")[-1]
    files = [
        os.path.join(own, f)
        for f in sorted(os.listdir(own))
        if f.endswith(".so") and "ops_math" not in f
    ]
    seen = [w for w in _warnings_of("", FLAGS_plugin_path=":".join(files)) if "kernels of" in w]
    assert seen, "expected a summary of the orphaned kernels"
    for w in seen:
        assert re.search(
            r"\d+ kernels of \S+\.so never run: no loaded plugin provides their ops \(ops '", w
        ), w
    assert len(seen) <= len(files)


def test_op_test_names_what_shape_inference_declared_and_the_kernel_did_not_write():
    """Ops after this one are built on its declared dtype and dims: OpTest compares them with
    what the kernel wrote (as PyTorch's opcheck), naming each."""
    from tide.testing.op_test import OpTest

    x = np.arange(6, dtype="float32").reshape(2, 3)

    class Misdeclared(OpTest):
        op_type = "sloppy.misdeclared"

        def setup(self, dtype):
            self.inputs = {"X": x}
            self.outputs = {"Out": 2 * x}

    t = Misdeclared()
    t.setup("float32")
    with pytest.raises(
        AssertionError, match="the kernel wrote float32, shape inference declared int64"
    ):
        t.check_output()


def test_a_kernel_for_a_place_kind_no_device_provides_is_a_warning_and_never_chosen(
    exe, sloppy_load_warnings
):
    seen = sloppy_load_warnings
    assert any(
        "kernel sloppy.elsewhere {npuu, float32, ANY, plain}" in w
        and "no loaded device plugin provides place kind 'npuu'" in w
        for w in seen
    ), seen
    x = layers.data(name="x", shape=[3], dtype="float32")
    out = layers.op_layer("sloppy.elsewhere")(x)
    with pytest.raises(
        tide.TideError,
        match=r"op 'sloppy.elsewhere'.*no kernel for \{cpu, float32.*registered: "
        r"\{npuu, float32, ANY, plain\} \(no loaded device plugin provides 'npuu'\)",
    ):
        exe.run(feed={"x": np.ones((2, 3), "float32")}, fetch_list=[out])


def test_a_plugin_file_rebuilt_after_it_failed_says_a_new_process_is_needed(tmp_path):
    """dlopen of a path this process opened before hands back the old image: a file changed
    since would not be what runs, and saying the old error again would mislead."""
    require("TIDE_TEST_PLUGIN_DIR", "libtide_test_noinfer_ops.so", what="the noinfer test plugin")
    copy = tmp_path / "libnoinfer_copy.so"
    shutil.copy(NOINFER, copy)
    with pytest.raises(tide.PluginError, match="shape inference"):
        tide.load_plugin(str(copy))
    with pytest.raises(tide.PluginError, match="shape inference"):  # unchanged: the same reason
        tide.load_plugin(str(copy))
    later = os.stat(copy).st_mtime + 10
    os.utime(copy, (later, later))  # "rebuilt"
    with pytest.raises(
        tide.PluginError,
        match=r"this process opened the file before \(it failed: .*shape inference.*\) and it "
        r"has changed on disk since;.*start a new one \(restart Python\)",
    ):
        tide.load_plugin(str(copy))


def test_python_m_plugins_cli_runs_the_lister():
    """`python -m tide.utils.plugins_cli` is the tide-plugins script (a build tree has no script
    on PATH): it lists the search path and the plugins it loaded."""
    require("TIDE_PLUGINS_TOOL", what="the tide-plugins tool")
    r = subprocess.run(
        [sys.executable, "-m", "tide.utils.plugins_cli", "--plugin_path=" + SLOPPY],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "Tide plugin ABI" in r.stdout and "search path:" in r.stdout, r.stdout
    assert "no loaded plugin defines op 'sloppy.twise'" in r.stderr
