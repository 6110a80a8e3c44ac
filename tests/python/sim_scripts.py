"""What the tests of the test-only 'sim' device share: the plugin's path and marker, its counters
as ctypes sees them (for scripts that load the plugin with ctypes), and running a script in a
subprocess of its own (the device reads its configuration when it is loaded)."""

import os
import subprocess
import sys

from ctest_env import needs, path

SIM_PARTS = ("tests", "plugins", "sim_device", "libtide_device_sim.so")
SIM = path("TIDE_BUILD_DIR", *SIM_PARTS)
needs_sim = needs("TIDE_BUILD_DIR", *SIM_PARTS, what="the sim device plugin")

# TideSimCounters (sim_context.h) as ctypes sees it: every field, in order (the C function returns
# the whole struct by value, so a shorter definition would let it write past ctypes' buffer).
# A script writes COUNTERS on a line of its own and runs with_counters() over its text.
COUNTERS = """\
class Counters(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t)] + [(n, ctypes.c_uint64) for n in (
        "h2d", "d2h", "d2d", "allocs", "frees", "h2d_bytes", "d2h_bytes", "contexts_created",
        "contexts_destroyed", "finalized", "allocator_errors", "live_blocks", "peer",
        "pinned_allocs", "pinned_frees", "memsets", "event_records", "event_waits",
        "wrong_kind", "synchronizes", "event_synchronizes", "kernel_launches", "compiles",
        "compile_declines", "fused_launches", "compiled_releases", "role_contexts")] + [
        ("role_priority", ctypes.c_int64)] + [
        (n, ctypes.c_uint64) for n in ("captures", "graph_launches", "host_funcs",
                                       "host_funcs_run", "kernels_run")]
lib.tide_sim_counters.restype = Counters
"""


def with_counters(script):
    """`script` with its COUNTERS line replaced by the Counters definition."""
    return script.replace("COUNTERS\n", COUNTERS)


# A digits-sized MLP (fc = mul + elementwise_add, relu, softmax_with_cross_entropy, mean, SGD)
# whose training step sim:0's kernels cover: `batch`, `main`, `startup`, `loss`, `test_program`
# and `rng` for a script that imports numpy as np, tide and tide's layers. A script writes
# MLP_PROGRAM on a line of its own and runs with_mlp() over its text.
MLP_PROGRAM = """\
batch = 16
main, startup = tide.Program(), tide.Program()
main.random_seed = startup.random_seed = 7
with tide.program_guard(main, startup):
    x = layers.data(name="x", shape=[64], dtype="float32")
    label = layers.data(name="label", shape=[1], dtype="int64")
    h = layers.fc(x, size=32, act="relu")
    logits = layers.fc(h, size=10)
    loss = layers.mean(layers.softmax_with_cross_entropy(logits, label))
    test_program = main.clone(for_test=True)
    tide.optimizer.SGD(learning_rate=0.5).minimize(loss)
rng = np.random.default_rng(0)
"""


def with_mlp(script):
    """`script` with its MLP_PROGRAM line replaced by the MLP's programs."""
    return script.replace("MLP_PROGRAM\n", MLP_PROGRAM)


def run_script(code, *args, env=None, check=True):
    """Runs `code` with `args` in a new Python process, `env` added to this one's; with `check`,
    asserts it succeeded. Returns the CompletedProcess."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(
        [sys.executable, "-c", code, *args], env=e, capture_output=True, text=True, timeout=300
    )
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


def trace_rows(trace, place="sim:0"):
    """A Chrome trace's rows of `place` (its process): {row name: tid}, and its boxes ("X" events)."""
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
    return rows, [e for e in events if e["ph"] == "X" and e["pid"] == pid]
