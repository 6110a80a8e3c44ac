"""Capture and replay of a frozen plan (issue 34's CUDA graphs, through the device ABI's
TideDeviceGraphs): on the test-only 'sim' device, whose stream records the tasks queued while
capturing and queues them again at each launch (as CUDA graphs do), a FrozenModel with capture on
runs the second run at a batch size under a capture and replays it afterwards, with no kernel
called on the host, and every output stays bit-identical to the executor's; a batch change, a
feed already on the device, an op the device cannot capture and a device without graphs are each
handled as docs/aot.md says. Each case runs in a subprocess (the sim's counters are per process,
its configuration read when it is loaded)."""

import json
import textwrap

from sim_scripts import SIM, needs_sim, run_script, with_counters

pytestmark = needs_sim

# An MLP (fc, relu, fc, and an elementwise_add of a second feed) on sim:0, frozen for batches 1 to
# 16; `runs` is a list of (batch, seed) run in order, each compared with the executor's run of
# the same feeds. Prints, per run, whether it matched, the sim's kernel launches, captures and
# graph launches after it, and the model's capture_note and replays.
SCRIPT = with_counters(
    textwrap.dedent("""
    import ctypes, json, os, sys, tempfile
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    runs, extra, on_place = json.loads(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
    place = tide.Place("sim", 0)
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 7
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[64], dtype="float32")
        b = layers.data(name="b", shape=[10], dtype="float32")
        h = layers.fc(x, size=32, act="relu")
        y = layers.elementwise_add(layers.fc(h, size=10), b)
        if extra == "softmax":  # no sim kernel: runs on the CPU with copies
            y = layers.softmax(y)
        elif extra == "probe":  # its sim kernel copies from the host and waits: no capture
            out = main.global_block().create_var(name="probe", shape=[2], dtype="float32")
            main.global_block().append_op(type="sim.state_probe", inputs={"X": [y]},
                                          outputs={"Out": [out]})
            y = out
    exe = tide.Executor(place)
    exe.run(startup)
    path = os.path.join(tempfile.mkdtemp(), "mlp.tideaot")
    tide.aot.freeze(main, ["x", "b"], [y], place, {"x": [(1, 16), 64], "b": [(1, 16), 10]}, path)
    model = tide.aot.FrozenModel(path, place, capture=True)
    feeds, wants = [], []  # the executor's runs first: the counters then count the model's
    for batch, seed in runs:
        rng = np.random.default_rng(seed)
        feeds.append({"x": rng.standard_normal((batch, 64)).astype("float32"),
                      "b": rng.standard_normal((batch, 10)).astype("float32")})
        wants.append(exe.run(main, feed=feeds[-1], fetch_list=[y])[0] if extra != "probe" else None)
    report = []
    for feed, want in zip(feeds, wants):
        if on_place:  # feeds already on the device: the model copies them into its own slots
            feed = {k: tide.LoDTensor(v, place) for k, v in feed.items()}
        got = model.run(feed)[0]
        c = lib.tide_sim_counters()
        report.append({"equal": want is None or bool(np.array_equal(got, want)),
                       "launches": c.kernel_launches, "captures": c.captures,
                       "graph_launches": c.graph_launches, "note": model.capture_note,
                       "replays": model.replays})
    print(json.dumps(report))
""")
)


def _run(runs, extra="", on_place=False, env=None):
    p = run_script(SCRIPT, SIM, json.dumps(runs), extra, "1" if on_place else "0", env=env)
    return json.loads(p.stdout.strip().splitlines()[-1]), p


def test_the_second_run_is_captured_and_later_runs_replay_it_bit_identically():
    report, _ = _run([[8, 1], [8, 2], [8, 3], [8, 4]])
    assert all(r["equal"] for r in report), report
    assert [r["captures"] for r in report] == [0, 1, 1, 1], report
    # The capturing run launches its graph too; each later run only launches it.
    assert [r["graph_launches"] for r in report] == [0, 1, 2, 3], report
    assert [r["replays"] for r in report] == [0, 1, 2, 3], report
    assert [r["note"] for r in report] == ["warming up", "captured", "captured", "captured"]
    # Replays call no kernel on the host: the sim counts kernels queued by its kernels.
    launches = [r["launches"] for r in report]
    assert launches[1] > launches[0] and launches[3] == launches[2] == launches[1], launches


def test_a_batch_change_drops_the_graph_and_captures_again_at_the_new_size():
    report, _ = _run([[8, 1], [8, 2], [3, 3], [3, 4], [3, 5], [8, 6], [8, 7]])
    assert all(r["equal"] for r in report), report
    assert [r["captures"] for r in report] == [0, 1, 1, 2, 2, 2, 3], report
    assert [r["replays"] for r in report] == [0, 1, 1, 2, 3, 3, 4], report
    assert report[2]["note"] == "warming up" and report[4]["note"] == "captured"


def test_feeds_already_on_the_device_are_copied_into_the_models_slots():
    # The caller's device tensors are new blocks each run: a graph reading them in place would
    # read the first run's blocks forever.
    report, _ = _run([[8, 1], [8, 2], [8, 3], [8, 4]], on_place=True)
    assert all(r["equal"] for r in report), report
    assert report[-1]["replays"] == 3, report


def test_an_op_that_runs_on_the_cpu_keeps_the_plan_op_by_op_and_says_which():
    report, _ = _run([[8, 1], [8, 2], [8, 3]], extra="softmax")
    assert all(r["equal"] for r in report), report
    assert all(r["captures"] == 0 and r["replays"] == 0 for r in report), report
    note = report[0]["note"]
    assert note.startswith("runs op by op: op 'softmax'") and "{cpu, float32" in note, note


def test_a_kernel_the_device_cannot_record_fails_the_capture_once_and_runs_op_by_op():
    report, p = _run([[8, 1], [8, 2], [8, 3], [8, 4]], extra="probe")
    assert [r["captures"] for r in report] == [0, 1, 1, 1], report
    assert all(r["replays"] == 0 for r in report), report
    note = report[-1]["note"]
    assert note.startswith("runs op by op: capturing its run failed"), note
    assert "sim.state_probe" in note and "while the stream is capturing" in note, note
    assert "capturing its run failed" in p.stderr


def test_a_device_without_graphs_runs_op_by_op_and_says_why():
    report, _ = _run([[8, 1], [8, 2], [8, 3]], env={"TIDE_SIM_NO_GRAPHS": "1"})
    assert all(r["equal"] for r in report), report
    assert all(r["captures"] == 0 and r["graph_launches"] == 0 for r in report), report
    assert "cannot capture and replay (it has no TideDeviceGraphs)" in report[0]["note"]


def test_capture_is_off_by_default_and_the_cpu_has_none(tmp_path):
    import numpy as np

    import tide
    from tide import layers

    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[4], dtype="float32")
        y = layers.relu(x)
    path = str(tmp_path / "relu.tideaot")
    tide.aot.freeze(main, ["x"], [y], tide.CPUPlace(), {"x": [(1, 4), 4]}, path)
    model = tide.aot.FrozenModel(path)
    assert model.capture is False and model.capture_note == ""
    model.capture = True
    assert model.capture_note.startswith("runs op by op: the device of cpu:0")
    xs = np.arange(-4, 4, dtype="float32").reshape(2, 4)
    assert np.array_equal(model.run({"x": xs})[0], np.maximum(xs, 0))
    assert model.replays == 0


# The same MLP compiled (tide.aot.compile) and built: model_main --capture replays from its second
# run and writes the last run's outputs; with nvcc on the machine, built by nvcc too (the way a
# plan for the CUDA place is built; run on a GPU when one is lent).
COMPILED = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    out_dir = sys.argv[2]
    place = tide.Place("sim", 0)
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 7
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[64], dtype="float32")
        y = layers.fc(layers.fc(x, size=32, act="relu"), size=10)
    exe = tide.Executor(place)
    exe.run(startup)
    xs = np.random.default_rng(3).standard_normal((4, 64)).astype("float32")
    np.save(os.path.join(out_dir, "x.npy"), xs)
    np.save(os.path.join(out_dir, "want.npy"), exe.run(main, feed={"x": xs}, fetch_list=[y])[0])
    plan = os.path.join(out_dir, "mlp.tideaot")
    tide.aot.freeze(main, ["x"], [y], place, {"x": [(1, 8), 64]}, plan)
    tide.aot.compile(plan, os.path.join(out_dir, "src"))
    print(json.dumps(tide.plugin_search_path()))
""")


def _run_compiled(tmp_path, nvcc):
    """Freezes and compiles the MLP, builds it (with nvcc when asked), runs model_main --capture
    on the executor's input and compares the last run's output with the executor's."""
    import os
    import subprocess

    import numpy as np
    from test_aot_compile import cmake_build

    p = run_script(COMPILED, SIM, str(tmp_path))
    search = json.loads(p.stdout.strip().splitlines()[-1])
    build = str(tmp_path / "build")
    cmake_build(str(tmp_path / "src"), build, ["-DTIDE_MODEL_NVCC=ON"] if nvcc else [])
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run(
        [
            os.path.join(build, "model_main"),
            "--plugins",
            ":".join([os.path.dirname(SIM)] + search),
            "--batch",
            "4",
            "--repeat",
            "3",
            "--capture",
            "--quiet",
            "--out",
            str(out),
            str(tmp_path / "x.npy"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    # Four runs: the first warms up, the second is captured and launched, two more replay.
    assert "capture: captured; 3 replay(s)" in p.stdout, p.stdout
    got, want = np.load(out / "output_0.npy"), np.load(tmp_path / "want.npy")
    assert got.shape == want.shape and np.array_equal(got, want), np.abs(got - want).max()


def test_a_compiled_model_captures_and_replays_with_model_main_capture(tmp_path):
    _run_compiled(tmp_path, nvcc=False)


def test_a_compiled_model_built_by_nvcc_captures_and_replays(tmp_path):
    import shutil

    import pytest

    if not shutil.which("nvcc"):
        pytest.skip("nvcc is not on PATH: the nvcc build of a compiled model needs it")
    _run_compiled(tmp_path, nvcc=True)
