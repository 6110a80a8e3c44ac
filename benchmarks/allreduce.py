"""Allreduce on loopback: Tide's c_allreduce_sum (plugins/collective, Gloo) against
torch.distributed's Gloo backend, the same sizes and the same number of processes; bus bandwidth
(GB/s) = 2 (n - 1) / n * bytes / time, as nccl-tests count it, and Tide's over torch's as a ratio.
(Data-parallel training throughput against torch DDP: dp_mlp.py.)

    benchmarks/.venv-peers/bin/python benchmarks/allreduce.py [--nprocs 2,4]
        [--sizes 4K,64K,1M,16M,64M] [--reps 7] [--json out.json]

Without torch the peer column says n/a. Each case is one job of n processes started by Tide's
launcher (the torch one reads the same TIDE_RANK / TIDE_MASTER variables); rank 0 prints the
median, min and max of its repetitions.
"""

import json
import os
import subprocess
import sys

import numpy as np
from common import Table, machine_line, measure, parser, setup_paths

SIZES = {"4K": 4 << 10, "64K": 64 << 10, "1M": 1 << 20, "16M": 16 << 20, "64M": 64 << 20}


def inner_for(nbytes):
    return max(1, min(200, (8 << 20) // max(nbytes, 1)))


def worker_tide(sizes, reps):
    import tide
    from tide.distributed import world

    w = world()
    startup = tide.Program()
    startup.global_block().append_op(
        "c_comm_init",
        attrs={"ring_id": 0, "rank": w.rank, "nranks": w.world_size, "store": w.store},
    )
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    out = {}
    with tide.scope_guard(scope):
        exe.run(startup)
        for name in sizes:
            n = SIZES[name] // 4
            prog = tide.Program()
            b = prog.global_block()
            x = b.create_var(name="x", shape=[n], dtype="float32", persistable=True)
            b.append_op(
                "c_allreduce_sum",
                inputs={"X": x},
                outputs={"Out": x},
                attrs={"ring_id": 0, "use_calc_stream": True},
            )  # blocking, as torch's
            scope.var("x").get_tensor().set(np.ones(n, "float32"), tide.CPUPlace())
            exe.run(prog)
            got = np.array(scope.find_var("x").get_tensor())
            assert got[0] == w.world_size, got[0]  # correct before timed
            out[name] = measure(
                lambda prog=prog: exe.run(prog), reps=reps, inner=inner_for(SIZES[name])
            )
    return w.rank, out


def worker_torch(sizes, reps):
    import torch
    import torch.distributed as dist

    from tide.distributed import world

    w = world()
    host, port = w.master.rsplit(":", 1)
    dist.init_process_group(
        "gloo",
        init_method="tcp://%s:%d" % (host, int(port) + 1),
        rank=w.rank,
        world_size=w.world_size,
    )
    out = {}
    for name in sizes:
        t = torch.ones(SIZES[name] // 4)
        dist.all_reduce(t)
        assert t[0].item() == w.world_size
        out[name] = measure(lambda t=t: dist.all_reduce(t), reps=reps, inner=inner_for(SIZES[name]))
    dist.destroy_process_group()
    return w.rank, out


def job(nprocs, worker, sizes, reps, timeout=900, env=None):
    cmd = [
        sys.executable,
        "-m",
        "tide.distributed.launch",
        "--nproc_per_node",
        str(nprocs),
        os.path.abspath(__file__),
        "--worker",
        worker,
        "--sizes",
        ",".join(sizes),
        "--reps",
        str(reps),
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=dict(os.environ, **(env or {}))
    )
    lines = [l.split("] ", 1)[1] for l in proc.stdout.splitlines() if "] {" in l or "] [" in l]
    if proc.returncode != 0 or not lines:
        print(
            "allreduce: %s with %d processes failed: %s"
            % (worker, nprocs, " | ".join(proc.stdout.strip().splitlines()[-3:]))
        )
        return None
    return json.loads(lines[-1])


def busbw(nbytes, n, t):
    return 2.0 * (n - 1) / n * nbytes / t / 1e9


def main():
    ap = parser(__doc__)
    ap.add_argument("--nprocs", default="2,4")
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--worker", default=None)
    args = ap.parse_args()
    setup_paths()
    sizes = [s for s in args.sizes.split(",") if s]
    if args.worker:
        rank, out = (worker_tide if args.worker == "tide" else worker_torch)(sizes, args.reps)
        if rank == 0:
            print(json.dumps(out), flush=True)
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    table = Table("allreduce bus bandwidth on loopback", "GB/s", lower_is_better=False)
    for n in [int(x) for x in args.nprocs.split(",")]:
        # collective_check (on by default) adds one small allgather per collective.
        tide_res = {
            check: job(n, "tide", sizes, args.reps, env={"TIDE_COLLECTIVE_CHECK": check})
            for check in ("1", "0")
        }
        torch_res = job(n, "torch", sizes, args.reps)
        for name in sizes:
            p = torch_res and torch_res[name]
            pv = [busbw(SIZES[name], n, x) for x in p] if p else None
            for check, res in tide_res.items():
                t = res and res[name]
                tv = [busbw(SIZES[name], n, x) for x in t] if t else None
                table.add(
                    "%s x %d processes, check %s" % (name, n, "on" if check == "1" else "off"),
                    tv,
                    {"torch.distributed gloo": pv},
                )
    machine = machine_line("OMP_NUM_THREADS=%s" % os.environ["OMP_NUM_THREADS"])
    table.print(machine)
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
