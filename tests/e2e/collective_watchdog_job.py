"""A device collective that one rank never joins: rank 1 connects the ring on the sim device and
then sleeps; rank 0 runs c_allreduce_sum on a sim:0 tensor (collective_check off, so nothing on
the host waits for rank 1 first: the collective is queued on the device's stream and the host
waits only when it fetches the result). The op pack's watchdog must abort it within the
collective timeout; rank 0 writes the error, the time it took, and the error of a second
collective on the aborted ring as JSON, then exits 3 (the launcher then stops rank 1).

    python collective_watchdog_job.py out.json SIM_PLUGIN"""

import json
import sys
import time

import numpy as np

import tide
from tide.distributed import world


def main():
    w = world()
    tide.load_plugin(sys.argv[2])
    startup, prog = tide.Program(), tide.Program()
    startup.global_block().append_op(
        "c_comm_init",
        attrs={"ring_id": 0, "rank": w.rank, "nranks": w.world_size, "store": w.store},
    )
    b = prog.global_block()
    x = b.create_var(name="x", shape=[4, 3], dtype="float32", persistable=True)
    on_sim = b.create_var(name="x_on_sim", dtype="float32", persistable=True)
    b.append_op("assign", inputs={"X": x}, outputs={"Out": on_sim})
    b.append_op(
        "c_allreduce_sum",
        inputs={"X": on_sim},
        outputs={"Out": on_sim},
        attrs={"ring_id": 0, "use_calc_stream": True},
    )
    exe = tide.Executor(tide.Place("sim", 0))
    exe.run(startup)
    if w.rank != 0:
        time.sleep(600)  # never joins; the launcher stops it once rank 0 exits
        return
    feed = {"x": np.ones([4, 3], "float32")}
    result = {}
    start = time.monotonic()
    try:
        exe.run(prog, feed=feed, fetch_list=[on_sim])
        result["error"] = ""
    except Exception as e:  # noqa: BLE001 - the error is what the test checks
        result["error"] = str(e)
    result["seconds"] = time.monotonic() - start
    start = time.monotonic()
    try:
        exe.run(prog, feed=feed, fetch_list=[on_sim])
        result["again"] = ""
    except Exception as e:  # noqa: BLE001
        result["again"] = str(e)
    result["again_seconds"] = time.monotonic() - start
    with open(sys.argv[1], "w") as f:
        json.dump(result, f)
    sys.exit(3)


if __name__ == "__main__":
    main()
