"""Profiling an asynchronous device and its memory statistics (issue 33), on the test-only 'sim'
device: op times from its events instead of a sync after every op, its own tracer's records in
tide.profiler's Chrome trace under its rows, its allocator's figures in tide.memory.stats, and
the conformance kit's checks of those optional entries. Each case runs in a subprocess, since the
device reads its configuration when it is loaded."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from sim_scripts import SIM, needs_sim, with_counters, with_mlp
from sim_scripts import run_script as _run

pytestmark = needs_sim

# The waits the core asks of the sim device (sim_context.h's last two counters).
WAITS = """\
def waits():
    c = lib.tide_sim_counters()
    return c.synchronizes + c.event_synchronizes
"""


# A chain of sim.busy ops (each keeps the stream busy for BUSY_US) between a scale and a relu,
# profiled over a few runs; prints the device's waits per profiled run, the op events, and how
# the profile says each place was timed.
BUSY_US = 4000
CHAIN = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import _C, layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    WAITS
    busy_us, n_busy, runs = int(sys.argv[2]), 5, 3
    x = layers.data(name="x", shape=[64], dtype="float32", append_batch_size=False)
    block = tide.default_main_program().global_block()
    h = layers.scale(x, 2.0)
    for i in range(n_busy):
        out = block.create_var(name="busy%d" % i, shape=[64], dtype="float32")
        block.append_op(type="sim.busy", inputs={"X": [h]}, outputs={"Out": [out]},
                        attrs={"us": busy_us})
        h = out
    h = layers.relu(h)
    exe = tide.Executor(tide.Place("sim", 0))
    feed = {"x": np.ones(64, "float32")}
    exe.run(feed=feed, fetch_list=[h])  # kernels chosen, memory made
    per_run = []
    with tide.profiler.profile(profile_path=sys.argv[3]):
        for _ in range(runs):
            before = waits()
            got, = exe.run(feed=feed, fetch_list=[h])
            per_run.append(waits() - before)
    assert np.array_equal(got, np.full(64, 2, "float32"))
    print(json.dumps({"waits": per_run, "ops": n_busy + 2, "events": tide.profiler.events(),
                      "timings": _C.op_timings(),
                      "table": {p["name"].split(" ")[0]: p for p in tide.profiler.profiles()}}))
""").replace("WAITS\n", WAITS)
)


def test_a_profiled_run_times_ops_with_device_events_not_a_sync_per_op(tmp_path):
    trace = tmp_path / "trace.json"
    p = _run(CHAIN, SIM, str(BUSY_US), str(trace), env={"TIDE_SIM_MAX_DELAY_US": "300"})
    r = json.loads(p.stdout.strip().splitlines()[-1])
    # No wait per op: the fetch's, the end-of-run resolution's and, in the first run, the
    # anchor's (a sync and an event wait), however many ops the run has.
    assert all(w <= 4 for w in r["waits"]), r["waits"]
    assert sum(r["waits"]) < r["ops"] * len(r["waits"]), r["waits"]
    assert {"place": "sim:0", "method": "events"} == {
        k: v for k, v in r["timings"][0].items() if k != "alignment_us"
    }, r["timings"]
    # The op times are the device's: each sim.busy took BUSY_US on the stream, while the host
    # only queued it.
    busy = [e for e in r["events"] if e["name"] == "sim.busy"]
    assert len(busy) == 5 * 3
    for e in busy:
        assert e["place"] == "sim:0"
        assert e["device_dur_us"] >= BUSY_US * 0.95, e
        assert e["dur_us"] < e["device_dur_us"] / 2, e
    row = r["table"]["sim.busy"]
    assert row["calls"] == 15 and row["total_ms"] >= 15 * BUSY_US / 1000 * 0.95, row
    # On the device's row the ops follow one another, in the order they ran.
    starts = [e["device_start_us"] for e in busy]
    assert starts == sorted(starts)
    meta = json.loads(trace.read_text())["otherData"]
    assert meta["op_timing"]["sim:0"]["method"] == "events"


def test_sync_ops_keeps_the_wait_after_every_op_and_the_hosts_times(tmp_path):
    p = _run(
        CHAIN,
        SIM,
        str(BUSY_US),
        str(tmp_path / "trace.json"),
        env={"TIDE_SIM_MAX_DELAY_US": "300", "TIDE_SYNC_OPS": "1"},
    )
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert all(w >= r["ops"] for w in r["waits"]), r["waits"]
    assert [t["method"] for t in r["timings"]] == ["synchronised"], r["timings"]
    busy = [e for e in r["events"] if e["name"] == "sim.busy"]
    assert busy and all(e["device_start_us"] == -1 and e["place"] == "" for e in busy)
    # The host waited for each: its time holds the device's.
    assert all(e["dur_us"] >= BUSY_US * 0.95 for e in busy), busy


# The MLP (sim_scripts.MLP_PROGRAM) trained on sim:0 under the profiler, written as a Chrome
# trace.
MLP = with_mlp(
    textwrap.dedent("""
    import json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    MLP_PROGRAM
    scope = tide.Scope()
    exe = tide.Executor(tide.Place("sim", 0))
    exe.run(startup, scope=scope)
    xs = rng.standard_normal((batch, 64), dtype="float32")
    ys = rng.integers(0, 10, (batch, 1)).astype("int64")
    exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss], scope=scope)
    with tide.profiler.profile(profile_path=sys.argv[2]):
        for _ in range(4):
            exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss], scope=scope)
    print(json.dumps({"feed_bytes": [batch * 64 * 4, batch * 8]}))
""")
)


def test_the_mlps_trace_has_the_devices_rows_with_its_kernels_inside_their_ops(tmp_path):
    trace_path = tmp_path / "mlp.json"
    # Delays of up to 1 ms before each task on the stream keep each op's work apart.
    p = _run(MLP, SIM, str(trace_path), env={"TIDE_SIM_MAX_DELAY_US": "1000"})
    r = json.loads(p.stdout.strip().splitlines()[-1])
    trace = json.loads(trace_path.read_text())
    events, meta = trace["traceEvents"], trace["otherData"]
    names = {
        e["pid"]: e["args"]["name"]
        for e in events
        if e["ph"] == "M" and e["name"] == "process_name"
    }
    (sim_pid,) = [pid for pid, name in names.items() if name == "sim:0"]
    rows = {
        e["tid"]: e["args"]["name"]
        for e in events
        if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == sim_pid
    }
    # The compute stream's row and the copy streams' (uploads: test_copy_stream.py; the loss's
    # downloads: test_copy_out_stream.py), under the ops' row.
    assert rows == {0: "ops (device time)", 1: "stream 0", 2: "stream 1", 3: "stream 2"}, rows
    boxes = [e for e in events if e["ph"] == "X" and e["pid"] == sim_pid]
    ops = [e for e in boxes if e["tid"] == 0]
    kernels = [e for e in boxes if e["tid"] == 1 and e["cat"] == "kernel"]
    copies = [e for e in boxes if e["tid"] == 2 and e["cat"] == "copy"]
    assert {"mul", "mul_grad", "relu", "sgd"} <= {k["name"] for k in kernels}
    # The feeds' uploads, with their bytes, on the copy stream.
    uploads = sorted(c["args"]["bytes"] for c in copies if c["name"] == "memcpy HtoD")
    assert uploads.count(r["feed_bytes"][0]) >= 4 and uploads.count(r["feed_bytes"][1]) >= 4
    downloads = [e for e in boxes if e["tid"] == 3 and e["name"] == "memcpy DtoH"]
    assert [d["args"]["bytes"] for d in downloads] == [4] * 4, downloads
    # Both clocks are mapped onto the host's within the bounds the trace states; each kernel
    # record lies inside a box of the op that launched it (its name), to within those bounds.
    slack = (
        meta["op_timing"]["sim:0"]["alignment_us"] + meta["device_clocks"]["sim"]["uncertainty_us"]
    )
    assert slack < 2000, meta
    for k in kernels:
        inside = [
            o
            for o in ops
            if o["name"] == k["name"]
            and o["ts"] - slack - 1 <= k["ts"]
            and k["ts"] + k["dur"] <= o["ts"] + o["dur"] + slack + 1
        ]
        assert inside, (k, slack)


# tide.memory.stats(place): the core's allocator figures and, beside them, the device's own.
MEMORY = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tide
    tide.load_plugin(sys.argv[1])
    place = tide.Place("sim", 0)
    before = tide.memory.stats(place)
    t = tide.LoDTensor(np.ones((1024, 1024), "float32"), place)  # 4 MiB on the device
    during = tide.memory.stats(place)
    print(json.dumps({"before": before, "during": during,
                      "cpu": tide.memory.stats(tide.Place("cpu", 0))}))
""")


def test_memory_stats_show_the_devices_own_allocator_beside_the_cores():
    p = _run(MEMORY, SIM)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    dev = r["during"]["device"]
    assert dev["bytes_limit"] == 1 << 30
    assert dev["bytes_in_use"] <= dev["bytes_reserved"] <= dev["bytes_limit"]
    assert dev["peak_bytes_in_use"] >= dev["bytes_in_use"]
    # The core's allocator took the tensor's memory from the device: the device counts it.
    assert dev["bytes_in_use"] >= r["before"]["device"]["bytes_in_use"] + 4 * (1 << 20)
    assert dev["bytes_in_use"] >= r["during"]["reserved"]
    assert "used" in r["during"] and "reserved" in r["during"]
    assert "device" not in r["cpu"]  # the CPU device reports no statistics of its own


def _entries(env=None):
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "tide.testing.device_contracts",
            "--place",
            "sim:0",
            "--plugin",
            SIM,
        ],
        env=dict(os.environ, **(env or {})),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return p


def test_the_conformance_checks_pass_the_sims_optional_entries():
    p = _entries()
    assert p.returncode == 0, p.stdout + p.stderr
    for name in (
        "copy",
        "free",
        "event_timing",
        "memory_stats",
        "tracer",
        "copy_stream",
        "graphs",
        "host_func",
    ):
        assert "pass %s" % name in p.stdout, p.stdout


@pytest.mark.parametrize(
    "bug, entry, why, passing",
    [
        # A graph that does not redo its work at every launch.
        ("graph_once", "graphs", "launch 2 of a captured copy", ("copy", "free", "copy_stream")),
        # A host function run before the work queued ahead of it.
        (
            "host_func_early",
            "host_func",
            "ran before the copy landed",
            ("copy", "free", "copy_stream", "graphs"),
        ),
    ],
)
def test_a_planted_fault_of_an_entry_is_caught_and_the_others_pass(bug, entry, why, passing):
    p = _entries({"TIDE_SIM_PLANT_BUG": bug})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL " + entry in p.stdout, p.stdout
    assert why in p.stdout, p.stdout
    for name in passing:
        assert "pass %s" % name in p.stdout, p.stdout


def test_a_copy_stream_whose_events_do_not_order_the_compute_stream_is_caught():
    p = _entries({"TIDE_SIM_PLANT_BUG": "wait_ignored"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL copy_stream" in p.stdout, p.stdout
    assert "before the copy stream's upload landed" in p.stdout, p.stdout


def test_a_planted_negative_elapsed_time_is_caught_and_named():
    p = _entries({"TIDE_SIM_PLANT_BUG": "elapsed_negative"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL event_timing" in p.stdout, p.stdout
    assert "event_elapsed_ms around" in p.stdout and "not a finite, non-negative time" in p.stdout
    for name in ("copy", "free", "memory_stats", "tracer"):
        assert "pass %s" % name in p.stdout, p.stdout


def test_the_profiler_refuses_a_negative_elapsed_time_naming_the_plugin(tmp_path):
    # The profiled run goes on; the ops' device times are dropped with a warning naming the
    # plugin and the value.
    p = _run(
        CHAIN,
        SIM,
        "100",
        str(tmp_path / "trace.json"),
        env={"TIDE_SIM_PLANT_BUG": "elapsed_negative"},
    )
    assert "libtide_device_sim.so timed two events on sim:0" in p.stderr, p.stderr
    assert "must be finite and >= 0" in p.stderr
