"""Host-memory kernel inputs (issue 33): a kernel registration names inputs it reads in host memory
(TideKernelDef.host_inputs), and the core hands them over on the CPU place. The test-only 'sim'
device's scale kernel declares ScaleTensor so and refuses it anywhere else (sim_device.cc). Fed
from the host, the factor stays there (no upload); written on the device by earlier sim ops (queued
on its stream, with random delays), the core copies it down after them on every run. Each case
runs in a subprocess, since the device reads its configuration when it is loaded."""

import json
import textwrap

import pytest
from sim_scripts import SIM, needs_sim, with_counters
from sim_scripts import run_script as _run

pytestmark = needs_sim

# Out = X * ScaleTensor on sim:0, `runs` times with fresh X; the factor fed (`fed`) or computed on
# the device (fill_constant 1.5, then scale by 2: 3.0). Prints every run's result against numpy's
# and the device's copies over the runs after the first (the first also prepares).
SCRIPT = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    fed, runs = sys.argv[2] == "fed", int(sys.argv[3])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS

    block = tide.default_main_program().global_block()
    x = layers.data(name="x", shape=[4], dtype="float32", append_batch_size=False)
    if fed:
        s = layers.data(name="s", shape=[1], dtype="float32", append_batch_size=False)
    else:
        s = layers.scale(layers.fill_constant(shape=[1], dtype="float32", value=1.5), 2.0)
    out = block.create_var(name="out", dtype="float32")
    block.append_op(type="scale", inputs={"X": [x], "ScaleTensor": [s]}, outputs={"Out": [out]},
                    attrs={"scale": 1.0, "bias": 0.0, "bias_after_scale": True})
    exe = tide.Executor(tide.Place("sim", 0))
    rng = np.random.default_rng(0)
    same, before = True, None
    for run in range(runs):
        feed = {"x": rng.standard_normal(4, dtype="float32")}
        factor = np.float32(rng.uniform(1, 4)) if fed else np.float32(3.0)
        if fed:
            feed["s"] = np.array([factor], "float32")
        got = exe.run(feed=feed, fetch_list=[out])[0]
        same = same and np.array_equal(got, feed["x"] * factor)
        if run == 0:
            before = lib.tide_sim_counters()
    c = lib.tide_sim_counters()
    kernels = [k for op, k in exe.last_run_info()["kernels"] if op == "scale"]
    print(json.dumps({"same": bool(same), "kernels": kernels,
                      "h2d": c.h2d - before.h2d, "h2d_bytes": c.h2d_bytes - before.h2d_bytes,
                      "d2h": c.d2h - before.d2h, "d2h_bytes": c.d2h_bytes - before.d2h_bytes,
                      "allocator_errors": c.allocator_errors}))
""")
)

RUNS = 50


def run(source, host_accessible="0"):
    p = _run(
        SCRIPT,
        SIM,
        source,
        str(RUNS),
        env={"TIDE_SIM_MAX_DELAY_US": "200", "TIDE_SIM_HOST_ACCESSIBLE": host_accessible},
    )
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_fed_host_input_stays_on_the_host():
    r = run("fed")
    assert r["same"], r  # the sim kernel read the factor on the host (it refuses it elsewhere)
    assert all("sim" in k for k in r["kernels"]), r
    # Per run: X (16 bytes) up, Out (16 bytes) down; the factor is never uploaded.
    assert (r["h2d"], r["h2d_bytes"]) == (RUNS - 1, 16 * (RUNS - 1)), r
    assert (r["d2h"], r["d2h_bytes"]) == (RUNS - 1, 16 * (RUNS - 1)), r
    assert r["allocator_errors"] == 0


def test_a_host_input_written_on_the_device_is_copied_down_after_its_writer():
    # The factor comes from two sim ops queued (with random delays) before the scale that reads
    # it: a copy not ordered after them reads a stale or unwritten factor.
    r = run("device")
    assert r["same"], r
    assert all("sim" in k for k in r["kernels"]), r
    # Per run: X up; the factor (4 bytes, rewritten every run) and Out down.
    assert (r["h2d"], r["h2d_bytes"]) == (RUNS - 1, 16 * (RUNS - 1)), r
    assert (r["d2h"], r["d2h_bytes"]) == (2 * (RUNS - 1), 20 * (RUNS - 1)), r
    assert r["allocator_errors"] == 0


@pytest.mark.parametrize("source", ["fed", "device"])
def test_host_inputs_on_a_host_accessible_device(source):
    # The sim's memory is host-readable: the factor still reaches the kernel on the CPU place.
    r = run(source, host_accessible="1")
    assert r["same"], r
    assert r["allocator_errors"] == 0
