"""Streams with roles (issue 33): a device with a copy stream (TideDeviceDef.context_create_role)
gets the uploads of feeds, of tensors put on the place and of a DataLoader's batches there, so
they overlap the kernels queued before them; blocks the copy stream writes again wait for the kernels that read them last.
On the test-only 'sim' device, whose streams are worker threads with their own trace rows. Each
case runs in a subprocess, since the device reads its configuration when it is loaded."""

import json
import textwrap

from sim_scripts import SIM, needs_sim, trace_rows, with_counters, with_mlp
from sim_scripts import run_script as _run

pytestmark = needs_sim

BUSY_US = 3000
# x (4 MiB) through scale -> 3 x sim.busy -> relu on sim:0, 10 steps double-buffered as a
# DataLoader's thread does it: each step queued without a fetch (the host does not wait), the
# next batch made (3 ms) and put on the place while its kernels run, then the step's result read
# (h is kept: persistable); under the profiler. Prints the results and the sim's counters.
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
    h.persistable = True
    exe = tide.Executor(place)
    got = []
    nxt = tide.LoDTensor(np.zeros(n, "float32"), place)
    with tide.profiler.profile(profile_path=sys.argv[3]):
        for k in range(steps):
            exe.run(feed={"x": nxt}, fetch_list=[])
            if k + 1 < steps:  # the batch takes 3 ms to make (read, decode)
                time.sleep(0.003)
                nxt = tide.LoDTensor(np.full(n, k + 1, "float32"), place)
            got.append(float(np.array(tide.global_scope().find_var(h.name).get_tensor())[0]))
    c = lib.tide_sim_counters()
    print(json.dumps({"got": got, "bytes": n * 4, "role_contexts": c.role_contexts,
                      "role_priority": c.role_priority}))
""")
)


def _overlaps(a, b):
    return a["ts"] < b["ts"] + b["dur"] and b["ts"] < a["ts"] + a["dur"]


def _steps(kernels, first, last):
    """Each step's span on the compute stream: from a kernel named `first` to the last kernel
    named `last` before the next `first`. The sim's queue delays fall between kernels, so a copy
    engine working beside the kernels shows as a copy inside a span; a copy queued on the compute
    stream itself falls between two spans."""
    spans, start, end = [], None, None
    for k in sorted(kernels, key=lambda k: k["ts"]):
        if k["name"] == first and end is not None:
            spans.append({"ts": start, "dur": end - start})
            start, end = None, None
        if k["name"] == first and start is None:
            start = k["ts"]
        elif k["name"] == last and start is not None:
            end = k["ts"] + k["dur"]
    if start is not None and end is not None:
        spans.append({"ts": start, "dur": end - start})
    return spans


def _inside(copies, spans):
    return [c for c in copies if any(_overlaps(c, s) for s in spans)]


def test_uploads_go_on_the_copy_stream_and_overlap_the_kernels_queued_before(tmp_path):
    trace_path = tmp_path / "overlap.json"
    p = _run(OVERLAP, SIM, str(BUSY_US), str(trace_path), env={"TIDE_SIM_MAX_DELAY_US": "200"})
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["got"] == [2.0 * k for k in range(10)], r["got"]
    assert r["role_contexts"] == 1 and r["role_priority"] == -1, r
    rows, boxes = trace_rows(json.loads(trace_path.read_text()))
    assert {"stream 0", "stream 1"} <= set(rows), rows
    compute = [b for b in boxes if b["tid"] == rows["stream 0"]]
    copies = [b for b in boxes if b["tid"] == rows["stream 1"]]
    uploads = [c for c in copies if c["name"] == "memcpy HtoD" and c["args"]["bytes"] == r["bytes"]]
    # Every batch went up on the copy stream.
    assert len(uploads) >= 9, copies
    assert not [b for b in compute if b["name"] == "memcpy HtoD"], "an upload on the compute row"
    assert len([b for b in compute if b["name"] == "sim.busy"]) == 30
    spans = _steps(compute, "scale", "relu")
    # Batch k + 1 went up while step k's kernels ran (9 ms of them queued when it was issued).
    # (The first upload of each new block waits for the kernels queued before it, once.)
    assert len(spans) == 10 and len(_inside(uploads, spans)) >= 6, (spans, uploads)


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


# The MLP (sim_scripts.MLP_PROGRAM) trained on sim:0 for 12 steps under the profiler,
# double-buffered: each step queued without a fetch, the next batch made (3 ms) and put on the
# place while its kernels run, then the step's loss read (kept: persistable). Prints the losses.
MLP_DOUBLE_BUFFERED = with_mlp(
    textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    MLP_PROGRAM
    loss.persistable = True
    place = tide.Place("sim", 0)
    scope = tide.Scope()
    exe = tide.Executor(place)
    exe.run(startup, scope=scope)
    xs = rng.standard_normal((12, batch, 64), dtype="float32")
    ys = rng.integers(0, 10, (12, batch, 1)).astype("int64")
    def up(k):  # a batch takes 3 ms to make (read, decode), then goes on the place
        time.sleep(0.003)
        return {"x": tide.LoDTensor(xs[k], place), "label": tide.LoDTensor(ys[k], place)}
    losses, nxt = [], up(0)
    with tide.profiler.profile(profile_path=sys.argv[2]):
        for k in range(len(xs)):
            exe.run(main, feed=nxt, fetch_list=[], scope=scope)
            if k + 1 < len(xs):
                nxt = up(k + 1)
            losses.append(np.array(scope.find_var(loss.name).get_tensor()).tolist())
    print(json.dumps({"losses": losses, "x_bytes": batch * 64 * 4}))
""")
)


def test_the_mlps_trace_shows_its_next_batch_uploaded_while_its_kernels_run(tmp_path):
    runs = {}
    for name, env in (("copy", {}), ("compute", {"TIDE_COPY_STREAM": "0"})):
        trace_path = tmp_path / (name + ".json")
        # Kernels of 400 us and copies of 1 ms on the device, short queue delays between them.
        env = dict(
            env, TIDE_SIM_KERNEL_US="400", TIDE_SIM_COPY_US="1000", TIDE_SIM_MAX_DELAY_US="50"
        )
        p = _run(MLP_DOUBLE_BUFFERED, SIM, str(trace_path), env=env)
        runs[name] = (json.loads(p.stdout.strip().splitlines()[-1]), trace_path)
    (r, trace_path), (r_off, off_path) = runs["copy"], runs["compute"]
    # The same training either way, to the bit.
    assert r["losses"] == r_off["losses"], (r["losses"], r_off["losses"])
    rows, boxes = trace_rows(json.loads(trace_path.read_text()))
    kernels = [b for b in boxes if b["tid"] == rows["stream 0"] and b["cat"] == "kernel"]
    uploads = [
        b
        for b in boxes
        if b["tid"] == rows["stream 1"]
        and b["name"] == "memcpy HtoD"
        and b["args"]["bytes"] == r["x_bytes"]
    ]
    assert len(uploads) >= 10 and {"mul", "mul_grad", "sgd"} <= {k["name"] for k in kernels}
    # Each batch but the first went up while the step before it ran, beside its kernels.
    assert len(_inside(uploads, kernels)) >= 8, (kernels, uploads)
    # Without the copy stream the uploads are queued on the compute stream, between the steps.
    rows_off, boxes_off = trace_rows(json.loads(off_path.read_text()))
    assert "stream 1" not in rows_off, rows_off
    compute_off = [b for b in boxes_off if b["tid"] == rows_off["stream 0"]]
    uploads_off = [
        b for b in compute_off if b["name"] == "memcpy HtoD" and b["args"]["bytes"] == r["x_bytes"]
    ]
    kernels_off = [b for b in compute_off if b["cat"] == "kernel"]
    assert len(uploads_off) >= 11 and not _inside(uploads_off, kernels_off)
