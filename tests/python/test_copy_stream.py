"""Streams with roles (issue 33): a device with a copy stream (TideDeviceDef.context_create_role)
gets the uploads of feeds and of a DataLoader's batches there, so they overlap the kernels of
the step before; blocks the copy stream writes again wait for the kernels that read them last.
On the test-only 'sim' device, whose streams are worker threads with their own trace rows. Each
case runs in a subprocess, since the device reads its configuration when it is loaded."""

import json
import textwrap

from sim_scripts import SIM, needs_sim, with_counters
from sim_scripts import run_script as _run

pytestmark = needs_sim

BUSY_US = 3000
# A DataLoader feeding x (4 MiB a batch, each taking the generator 4 ms to make, as reading and
# decoding data does) to scale -> 3 x sim.busy -> relu on sim:0, 10 steps fetching the result,
# under the profiler; prints what came back and the sim's counters.
OVERLAP = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys, time
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    busy_us, steps, n = int(sys.argv[2]), 10, 1 << 20
    place = tide.Place("sim", 0)
    x = layers.data(name="x", shape=[n], dtype="float32", append_batch_size=False)
    block = tide.default_main_program().global_block()
    h = layers.scale(x, 2.0)
    for i in range(3):
        out = block.create_var(name="busy%d" % i, shape=[n], dtype="float32")
        block.append_op(type="sim.busy", inputs={"X": [h]}, outputs={"Out": [out]},
                        attrs={"us": busy_us})
        h = out
    h = layers.relu(h)
    loader = tide.io.DataLoader.from_generator(feed_list=[x], capacity=2)
    def batches():
        for k in range(steps):
            time.sleep(0.004)
            yield [np.full(n, k, "float32")]
    loader.set_batch_generator(batches, places=[place])
    exe = tide.Executor(place)
    got = []
    with tide.profiler.profile(profile_path=sys.argv[3]):
        for data in loader():
            got.append(float(exe.run(feed=data[0], fetch_list=[h])[0][0]))
    c = lib.tide_sim_counters()
    print(json.dumps({"got": got, "bytes": n * 4, "role_contexts": c.role_contexts,
                      "role_priority": c.role_priority}))
""")
)


def _rows(trace, place="sim:0"):
    events = trace["traceEvents"]
    (pid,) = [
        e["pid"]
        for e in events
        if e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"] == place
    ]
    rows = {
        e["args"]["name"]: e["tid"]
        for e in events
        if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid
    }
    boxes = [e for e in events if e["ph"] == "X" and e["pid"] == pid]
    return rows, boxes


def test_a_loaders_uploads_go_on_the_copy_stream_and_overlap_the_kernels(tmp_path):
    trace_path = tmp_path / "overlap.json"
    p = _run(OVERLAP, SIM, str(BUSY_US), str(trace_path), env={"TIDE_SIM_MAX_DELAY_US": "200"})
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["got"] == [2.0 * k for k in range(10)], r["got"]
    assert r["role_contexts"] == 1 and r["role_priority"] == -1, r
    rows, boxes = _rows(json.loads(trace_path.read_text()))
    assert {"stream 0", "stream 1"} <= set(rows), rows
    compute = [b for b in boxes if b["tid"] == rows["stream 0"]]
    copies = [b for b in boxes if b["tid"] == rows["stream 1"]]
    uploads = [c for c in copies if c["name"] == "memcpy HtoD" and c["args"]["bytes"] == r["bytes"]]
    # Every batch went up on the copy stream (the profiler may have started after the first).
    assert len(uploads) >= 8, copies
    assert not [b for b in compute if b["name"] == "memcpy HtoD"], "an upload on the compute row"
    busy = [b for b in compute if b["name"] == "sim.busy"]
    assert len(busy) >= 24, busy

    def overlaps(a, b):
        return a["ts"] < b["ts"] + b["dur"] and b["ts"] < a["ts"] + a["dur"]

    overlapping = [u for u in uploads if any(overlaps(u, k) for k in busy)]
    # The loader's thread makes and uploads batch k + 2 while step k's kernels run.
    assert len(overlapping) >= 3, [(b["name"], b["tid"], b["ts"], b["dur"]) for b in uploads + busy]


# STEPS runs without a fetch (the host does not wait), each feeding a DataLoader batch of k's
# into acc += sim.busy(x); the batches' blocks come back to the copy stream while queued kernels
# still read them. acc is read at the end: any batch overwritten early changes it.
ACCUMULATE = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    steps, n = int(sys.argv[2]), 4096
    place = tide.Place("sim", 0)
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        x = layers.data(name="x", shape=[n], dtype="float32", append_batch_size=False)
        block = main.global_block()
        acc = block.create_var(name="acc", shape=[n], dtype="float32", persistable=True)
        busy = block.create_var(name="busy", shape=[n], dtype="float32")
        block.append_op(type="sim.busy", inputs={"X": [x]}, outputs={"Out": [busy]},
                        attrs={"us": 200})
        block.append_op(type="elementwise_add", inputs={"X": [acc], "Y": [busy]},
                        outputs={"Out": [acc]})
    scope = tide.Scope()
    scope.var("acc").get_tensor().set(np.zeros(n, "float32"), place)
    loader = tide.io.DataLoader.from_generator(feed_list=[x], capacity=3)
    loader.set_batch_generator(
        lambda: ([np.full(n, k, "float32")] for k in range(1, steps + 1)), places=[place])
    exe = tide.Executor(place)
    for data in loader():
        exe.run(main, feed=data[0], fetch_list=[], scope=scope)
    got = np.array(scope.find_var("acc").get_tensor())
    c = lib.tide_sim_counters()
    print(json.dumps({"acc": sorted(set(got.tolist())), "want": steps * (steps + 1) / 2,
                      "role_contexts": c.role_contexts}))
""")
)


def test_a_reused_block_waits_for_the_kernels_that_read_it_last():
    p = _run(ACCUMULATE, SIM, "40", env={"TIDE_SIM_MAX_DELAY_US": "300"})
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["role_contexts"] == 1, r
    assert r["acc"] == [r["want"]], r


def test_without_the_copy_stream_uploads_stay_on_the_compute_stream():
    for env in ({"TIDE_COPY_STREAM": "0"}, {"TIDE_SIM_NO_ROLE_CONTEXTS": "1"}):
        p = _run(ACCUMULATE, SIM, "12", env=dict(env, TIDE_SIM_MAX_DELAY_US="300"))
        r = json.loads(p.stdout.strip().splitlines()[-1])
        assert r["role_contexts"] == 0, (env, r)
        assert r["acc"] == [r["want"]], (env, r)
