"""Downloads on a copy-out stream (issue 33): a run that fetches a device's values downloads each on
the place's copy-out stream (TIDE_STREAM_COPY_OUT) as soon as the op that writes it last has run,
through pinned memory that a host function (launch_host_func) empties, and returns once they are
on the host, while the ops queued after them (a training step's backward and optimizer) still run
on the device. On the test-only 'sim' device, whose streams are worker threads with their own
trace rows; each case runs in a subprocess, since the device reads its configuration when it is
loaded."""

import json
import textwrap

from sim_scripts import SIM, needs_sim, trace_rows, with_counters, with_mlp
from sim_scripts import run_script as _run

pytestmark = needs_sim

STEPS = 8
# The MLP (sim_scripts.MLP_PROGRAM) trained on sim:0: STEPS steps fetching the loss, counting the
# kernels still queued when each run returned; then two steps fetching the loss and the first
# weight (written by the optimizer: fetched after it), compared with the weight the scope holds;
# then two steps under the profiler. Prints the results and the sim's counters.
FETCHING = with_counters(
    with_mlp(
        textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    MLP_PROGRAM
    steps = int(sys.argv[2])
    place = tide.Place("sim", 0)
    scope = tide.Scope()
    exe = tide.Executor(place)
    exe.run(startup, scope=scope)
    xs = rng.standard_normal((steps + 4, batch, 64), dtype="float32")
    ys = rng.integers(0, 10, (steps + 4, batch, 1)).astype("int64")
    feed = lambda k: {"x": xs[k], "label": ys[k]}
    losses, queued = [], []
    for k in range(steps):
        (got,) = exe.run(main, feed=feed(k), fetch_list=[loss], scope=scope)
        c = lib.tide_sim_counters()
        queued.append(c.kernel_launches - c.kernels_run)
        losses.append(np.asarray(got).tolist())
    w = main.global_block().all_parameters()[0].name
    weights = []
    for k in range(steps, steps + 2):
        got_loss, got_w = exe.run(main, feed=feed(k), fetch_list=[loss, w], scope=scope)
        losses.append(np.asarray(got_loss).tolist())
        weights.append(np.array_equal(got_w, np.array(scope.find_var(w).get_tensor())))
    c = lib.tide_sim_counters()
    counted = {"role_contexts": c.role_contexts, "host_funcs": c.host_funcs,
               "host_funcs_run": c.host_funcs_run, "d2h": c.d2h}
    with tide.profiler.profile(profile_path=sys.argv[3]):
        for k in range(steps + 2, steps + 4):
            exe.run(main, feed=feed(k), fetch_list=[loss], scope=scope)
    print(json.dumps(dict(counted, losses=losses, queued=queued, weights=weights)))
""")
    )
)

# Kernels of 1.5 ms on the device: a step's backward and optimizer take tens of milliseconds after
# its loss is computed.
SLOW = {"TIDE_SIM_KERNEL_US": "1500", "TIDE_SIM_MAX_DELAY_US": "50"}


def _fetching(tmp_path, name, env):
    trace = tmp_path / (name + ".json")
    p = _run(FETCHING, SIM, str(STEPS), str(trace), env=dict(SLOW, **env))
    return json.loads(p.stdout.strip().splitlines()[-1]), json.loads(trace.read_text())


def test_a_fetched_loss_comes_down_while_the_rest_of_the_step_runs(tmp_path):
    r, trace = _fetching(tmp_path, "copy_out", {})
    off, _ = _fetching(tmp_path, "compute", {"TIDE_COPY_STREAM": "0"})
    # The same training either way, to the bit; a fetched weight is the one the step left.
    assert r["losses"] == off["losses"], (r["losses"], off["losses"])
    assert r["weights"] == [True, True] and off["weights"] == [True, True]
    # A copy-in and a copy-out stream; each download emptied by its host function.
    assert r["role_contexts"] == 2 and off["role_contexts"] == 0, (r, off)
    downloads = STEPS + 2 * 2
    assert r["host_funcs"] == r["host_funcs_run"] == downloads, r
    # The run returned with the step's backward and optimizer still queued on the device...
    assert sum(q > 0 for q in r["queued"]) >= STEPS // 2, r["queued"]
    # ...where a fetch on the compute stream waits for all of it.
    assert off["queued"] == [0] * STEPS, off["queued"]
    # On the copy-out stream's row, each loss's download ended before its step's sgd kernels ran.
    rows, boxes = trace_rows(trace)
    assert {"stream 0", "stream 2"} <= set(rows), rows
    kernels = sorted(
        (b for b in boxes if b["tid"] == rows["stream 0"] and b["cat"] == "kernel"),
        key=lambda b: b["ts"],
    )
    loss_downloads = [
        b
        for b in boxes
        if b["tid"] == rows["stream 2"] and b["name"] == "memcpy DtoH" and b["args"]["bytes"] == 4
    ]
    assert len(loss_downloads) == 2, loss_downloads
    assert not [b for b in boxes if b["tid"] == rows["stream 0"] and b["name"] == "memcpy DtoH"]
    sgd_starts = [k["ts"] for k in kernels if k["name"] == "sgd"]
    assert len(sgd_starts) >= 2 * 4, [k["name"] for k in kernels]
    for d in loss_downloads:
        later = [t for t in sgd_starts if t > d["ts"]]
        assert later and d["ts"] + d["dur"] <= min(later), (d, sgd_starts)


def test_downloads_without_host_functions_or_pinned_memory_land_all_the_same(tmp_path):
    want, _ = _fetching(tmp_path, "compute", {"TIDE_COPY_STREAM": "0"})
    for name, env in (
        ("no_host_func", {"TIDE_SIM_NO_HOST_FUNC": "1"}),
        ("no_pinned", {"TIDE_SIM_NO_PINNED": "1"}),
    ):
        r, _ = _fetching(tmp_path, name, env)
        assert r["losses"] == want["losses"], (name, r["losses"], want["losses"])
        assert r["weights"] == [True, True], (name, r)
        assert r["role_contexts"] == 2 and r["host_funcs"] == 0, (name, r)
