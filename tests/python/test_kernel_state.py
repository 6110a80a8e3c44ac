"""A kernel's state for an op (KernelContext::State / SetState, plugin_api.h's
KernelContext_State): one slot per op as prepared for running, kept across runs for the kernel that
set it, freed when the prepared program goes or another kernel runs the op. The test-only 'sim'
device's sim.state_probe outputs [runs its state has counted, probe states freed so far]; its sim
kernel declines an X of two elements (the cpu kernel then runs the op). Each case runs in a
subprocess, since the device is loaded at run time."""

import json
import subprocess
import sys
import textwrap

from ctest_env import needs, path

SIM_PARTS = ("tests", "plugins", "sim_device", "libtide_device_sim.so")
SIM = path("TIDE_BUILD_DIR", *SIM_PARTS)
pytestmark = needs("TIDE_BUILD_DIR", *SIM_PARTS, what="the sim device plugin")

PROBES = textwrap.dedent("""
    import gc, json, sys
    import numpy as np
    import tide
    tide.load_plugin(sys.argv[1])

    def probes(n):
        main = tide.Program()
        with tide.program_guard(main, tide.Program()):
            x = tide.layers.data(name="x", shape=[-1], dtype="float32", append_batch_size=False)
            block = main.global_block()
            outs = []
            for i in range(n):
                out = block.create_var(name="probe%d" % i, dtype="float32")
                block.append_op(type="sim.state_probe", inputs={"X": [x]}, outputs={"Out": [out]})
                outs.append(out)
        return main, outs

    def run(exe, program, outs, x):
        got = exe.run(program, feed={"x": np.array(x, "float32")}, fetch_list=outs)
        return [g.tolist() for g in got]

    log = {}
    first, first_outs = probes(2)
    exe = tide.Executor(tide.Place("sim", 0))
    log["first"] = [run(exe, first, first_outs, [1.0]) for _ in range(3)]
    other, other_outs = probes(1)
    other_exe = tide.Executor(tide.Place("sim", 0))
    log["other"] = run(other_exe, other, other_outs, [1.0])
    exe.close()  # drops the first program as prepared: its two ops' states are freed
    gc.collect()
    log["after_close"] = run(other_exe, other, other_outs, [1.0])
    # The sim kernel declines: the cpu kernel runs the op with a state of its own, and setting
    # it frees the sim kernel's.
    log["declined"] = [run(other_exe, other, other_outs, [1.0, 2.0]) for _ in range(2)]
    # One program run with two fetch lists in turn: each list is prepared once and kept, so
    # each op's state goes on counting.
    third, third_outs = probes(2)
    third_exe = tide.Executor(tide.Place("sim", 0))
    log["alternating"] = [run(third_exe, third, outs, [1.0])
                          for _ in range(2) for outs in (third_outs[:1], third_outs)]
    print(json.dumps(log))
""")


def test_state_lives_per_op_across_runs_and_is_freed():
    p = subprocess.run(
        [sys.executable, "-c", PROBES, SIM], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    log = json.loads(p.stdout.strip().splitlines()[-1])
    # Each op of the program keeps its own count across runs; nothing is freed yet.
    assert log["first"] == [[[r, 0.0], [r, 0.0]] for r in (1.0, 2.0, 3.0)]
    # Another program's op starts with no state.
    assert log["other"] == [[1.0, 0.0]]
    # Closing the first executor freed its two ops' states; the other op's state lives on.
    assert log["after_close"] == [[2.0, 2.0]]
    # After the decline the cpu kernel starts from no state, and the sim kernel's is freed.
    assert log["declined"] == [[[1.0, 3.0]], [[2.0, 3.0]]]
    # Alternating fetch lists re-prepare nothing: the second round counts on from the first.
    assert [[probe[0] for probe in run] for run in log["alternating"]] == [
        [1.0],
        [1.0, 1.0],
        [2.0],
        [2.0, 2.0],
    ]
