"""Runs every collective op once on this rank's inputs (rank-dependent, see inputs()) and writes
the outputs as JSON; test_collective_ops.py checks them against numpy.

    python collective_ops_job.py out{rank}.json [PLUGIN|- PLACE_KIND]

With a device plugin to load (- for none: the CUDA plugin is on the plugin path) and a place kind
(the sim device: device 0; gpu: the rank's local rank) the inputs are first assigned on that
place, so the collectives move the device's tensors; "_places" lists where each output is, and
on the sim "_comm_stream_collectives" how many collectives ran on its communication stream."""

import ctypes
import json
import sys

import numpy as np

import tide
from tide.distributed import world


def inputs(rank):
    base = np.arange(24, dtype="float32").reshape(8, 3)
    return {
        "f32": base * (rank + 1) - 3 * rank,
        "f64": (base.astype("float64") / (rank + 2)),
        "i64": (np.arange(8, dtype="int64").reshape(8, 1) + 10 * rank),
    }


def main():
    w = world()
    rank, nranks = w.rank, w.world_size
    place_kind = "cpu"
    if len(sys.argv) > 3:
        if sys.argv[2] != "-":
            tide.load_plugin(sys.argv[2])
        place_kind = sys.argv[3]
    device = w.local_rank if place_kind == "gpu" else 0
    startup, prog = tide.Program(), tide.Program()
    sb, b = startup.global_block(), prog.global_block()
    sb.append_op(
        "c_comm_init", attrs={"ring_id": 0, "rank": rank, "nranks": nranks, "store": w.store}
    )
    feeds = inputs(rank)
    v = {
        n: b.create_var(name=n, shape=a.shape, dtype=str(a.dtype), persistable=True)
        for n, a in feeds.items()
    }
    if place_kind != "cpu":  # the feeds are host tensors: copies of them on the device
        for n, fed in list(v.items()):
            v[n] = b.create_var(name=n + "_on_device", dtype=fed.dtype, persistable=True)
            b.append_op("assign", inputs={"X": fed}, outputs={"Out": v[n]})
    outs = {}

    def op(typ, x, name, **attrs):
        out = b.create_var(name=name, dtype=x.dtype, persistable=True)
        b.append_op(typ, inputs={"X": x}, outputs={"Out": out}, attrs=dict(ring_id=0, **attrs))
        outs[name] = out

    # use_calc_stream: max reduces before its op returns; the others on the ring's thread, waited
    # for by the next collective (c_broadcast below) or c_sync_comm_stream.
    for kind in ("sum", "max", "min", "prod"):
        op("c_allreduce_" + kind, v["f32"], "allreduce_" + kind, use_calc_stream=kind == "max")
    op("c_allreduce_sum", v["f64"], "allreduce_sum_f64")
    op("c_allreduce_max", v["i64"], "allreduce_max_i64")
    op("c_broadcast", v["f32"], "broadcast_root1", root=min(1, nranks - 1))  # rank 0 of 1
    op("c_allgather", v["f32"], "allgather", nranks=nranks)
    op("c_reducescatter", v["f32"], "reducescatter", nranks=nranks)
    b.append_op("barrier", attrs={"ring_id": 0})
    # A fused bucket: two tensors, one allreduce.
    fa = b.create_var(name="fused_a", dtype="float32", persistable=True)
    fb = b.create_var(name="fused_b", dtype="float32", persistable=True)
    b.append_op("assign", inputs={"X": v["f32"]}, outputs={"Out": fa})
    b.append_op("scale", inputs={"X": v["f32"]}, outputs={"Out": fb}, attrs={"scale": 2.0})
    b.append_op(
        "c_allreduce_sum", inputs={"X": [fa, fb]}, outputs={"Out": [fa, fb]}, attrs={"ring_id": 0}
    )
    b.append_op(
        "c_sync_comm_stream",
        inputs={"X": [fa, fb]},
        outputs={"Out": [fa, fb]},
        attrs={"ring_id": 0},
    )
    outs["fused_a"], outs["fused_b"] = fa, fb

    exe, scope = tide.Executor(tide.Place(place_kind, device)), tide.Scope()
    with tide.scope_guard(scope):
        exe.run(startup)
        got = exe.run(prog, feed=feeds, fetch_list=list(outs.values()))
        places = {n: str(scope.find_var(n).get_tensor().place()) for n in outs}
    result = {n: np.array(g).tolist() for n, g in zip(outs, got)}
    result["_places"] = places
    if place_kind == "sim":  # the collectives the sim ran on its communication stream
        sim = ctypes.CDLL(sys.argv[2])
        sim.tide_sim_comm_stream_collectives.restype = ctypes.c_uint64
        result["_comm_stream_collectives"] = sim.tide_sim_comm_stream_collectives()
    with open(sys.argv[1].format(rank=rank), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
