"""A kernel may decline a run it does not implement (an attribute value, an optional input, a
layout) by failing with UNIMPLEMENTED before it writes anything: the core then never picks it for
that op again and runs the next candidate (the plain kernel for a library's, another place's
kernel, with copies, for a device's), logging the refusal once. The test-only 'sim' device's
fill_constant declines a ShapeTensor input; each case runs in a subprocess, since the device is
loaded at run time."""

import json
import os
import subprocess
import sys
import textwrap

from ctest_env import needs, path

SIM_PARTS = ("tests", "plugins", "sim_device", "libtide_device_sim.so")
SIM = path("TIDE_BUILD_DIR", *SIM_PARTS)
pytestmark = needs("TIDE_BUILD_DIR", *SIM_PARTS, what="the sim device plugin")

DECLINED = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tide
    tide.load_plugin(sys.argv[1])
    block = tide.default_main_program().global_block()
    shape = tide.layers.data(name="shape", shape=[2], dtype="int64", append_batch_size=False)
    out = block.create_var(name="out", dtype="float32")
    block.append_op(type="fill_constant", inputs={"ShapeTensor": [shape]}, outputs={"Out": [out]},
                    attrs={"shape": [1], "value": 2.5, "dtype": 5})
    plain = tide.layers.fill_constant(shape=[2], dtype="float32", value=1.5)
    exe = tide.Executor(tide.Place("sim", 0))
    results = []
    for dims in ([2, 3], [4, 1]):  # the second run keeps the other kernel
        got, again = exe.run(feed={"shape": np.array(dims, "int64")}, fetch_list=[out, plain])
        results.append({"out": got.tolist(), "plain": again.tolist(),
                        "kernels": [k for op, k in exe.last_run_info()["kernels"]
                                    if op == "fill_constant"]})
    print(json.dumps(results))
""")


def run(code, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code, SIM], env=e, capture_output=True, text=True, timeout=300
    )


def test_a_declined_run_goes_to_the_next_kernel():
    p = run(DECLINED)
    assert p.returncode == 0, p.stdout + p.stderr
    results = json.loads(p.stdout.strip().splitlines()[-1])
    for dims, r in zip(([2, 3], [4, 1]), results):
        assert r["out"] == [[2.5] * dims[1]] * dims[0]
        assert r["plain"] == [1.5, 1.5]
        declined_op, kept_op = r["kernels"]
        assert "cpu" in declined_op and "ops_math" in declined_op, r["kernels"]
        assert "sim" in kept_op, r["kernels"]  # fill_constant without ShapeTensor stays on sim
    # The refusal is logged once, naming the op, the kernel, its plugin and why.
    lines = [l for l in p.stderr.splitlines() if "declined" in l]
    assert len(lines) == 1, p.stderr
    assert "fill_constant" in lines[0] and "{sim, float32" in lines[0]
    assert "only the shape and value attributes" in lines[0] and "ops_math" in lines[0]


def test_strict_placement_names_the_refusal():
    p = run(DECLINED, env={"TIDE_STRICT_KERNEL_PLACEMENT": "1"})
    assert p.returncode != 0
    assert "only the shape and value attributes" in p.stderr, p.stderr
    assert "no other kernel can run it" in p.stderr and "strict" in p.stderr, p.stderr
