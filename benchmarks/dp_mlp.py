"""Data-parallel MLP training on this machine: Tide's fleet collective mode (Gloo) against
PyTorch's DistributedDataParallel (Gloo backend), 1, 2 and 4 processes, the same model
(784-512-512-10, ReLU, softmax cross-entropy on logits, SGD 0.01), the same initial weights, the
same global batch (128, each rank fed its rank::n share), the same data and one thread per process
in both. Examples per second of the whole job, and the losses compared: rank 0's loss at every
step of the first pass (the same shard and the same parameters in both) must agree.

    benchmarks/.venv-peers/bin/python benchmarks/dp_mlp.py [--nprocs 1,2,4] [--steps 20]
        [--reps 5] [--json out.json]

Each case is one job of n processes started by Tide's launcher (the torch one reads the same
TIDE_RANK / TIDE_MASTER variables and meets on the next port). With n processes above the core
count the processes share cores: the figures then measure that sharing, as they say.
"""

import json
import os
import subprocess
import sys

import numpy as np
from common import Table, check_losses, machine_line, measure, parser, setup_paths

BATCH = 128  # global
SIZES = [784, 512, 512, 10]
LR = 0.01


def weights():
    """The initial weights, the same in both: [(W [in, out], b [out])] per layer."""
    rng = np.random.RandomState(1)
    return [
        (
            (rng.randn(a, b) * np.sqrt(2.0 / a)).astype("float32"),
            (rng.randn(b) * 0.01).astype("float32"),
        )
        for a, b in zip(SIZES[:-1], SIZES[1:])
    ]


def batches(steps):
    """`steps` global batches (x, y)."""
    rng = np.random.RandomState(0)
    xs = rng.rand(steps, BATCH, SIZES[0]).astype("float32")
    ys = rng.randint(0, SIZES[-1], (steps, BATCH, 1)).astype("int64")
    return xs, ys


def worker_tide(steps, reps):
    import tide
    from tide.distributed import fleet

    fleet.init(is_collective=True)
    rank, n = fleet.worker_index(), fleet.worker_num()
    main, startup = tide.Program(), tide.Program()
    names = []
    with tide.program_guard(main, startup), tide.unique_name.guard():
        x = tide.layers.data(name="x", shape=[SIZES[0]])
        y = tide.layers.data(name="y", shape=[1], dtype="int64")
        h = x
        for i, size in enumerate(SIZES[1:]):
            w, b = "w%d" % i, "b%d" % i
            names.append((w, b))
            act = "relu" if i < len(SIZES) - 2 else None
            h = tide.layers.fc(
                h,
                size,
                act=act,
                param_attr=tide.ParamAttr(name=w),
                bias_attr=tide.ParamAttr(name=b),
            )
        loss = tide.layers.mean(tide.layers.softmax_with_cross_entropy(h, y))
        fleet.distributed_optimizer(tide.optimizer.SGD(LR)).minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    exe.run(startup)
    scope = tide.global_scope()
    for (w, b), (wv, bv) in zip(names, weights()):
        scope.find_var(w).get_tensor().set(wv, tide.CPUPlace())
        scope.find_var(b).get_tensor().set(bv, tide.CPUPlace())
    xs, ys = batches(steps)
    feeds = [{"x": xs[s][rank::n], "y": ys[s][rank::n]} for s in range(steps)]

    def run_steps(losses=None):
        for feed in feeds:
            (v,) = exe.run(main, feed=feed, fetch_list=[loss])
            if losses is not None:
                losses.append(float(np.array(v).reshape(-1)[0]))

    losses = []
    run_steps(losses)  # the checked pass, from the same weights as torch's
    t = measure(run_steps, reps=reps, warmup=1)
    return rank, {"rate": [BATCH * steps / v for v in t], "losses": losses}


def worker_torch(steps, reps):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    from tide.distributed import world

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    w = world()
    rank, n = w.rank, w.world_size
    host, port = w.master.rsplit(":", 1)
    dist.init_process_group(
        "gloo", init_method="tcp://%s:%d" % (host, int(port) + 1), rank=rank, world_size=n
    )
    layers = []
    for wv, bv in weights():
        lin = torch.nn.Linear(wv.shape[0], wv.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(wv.T.copy()))
            lin.bias.copy_(torch.from_numpy(bv))
        layers += [lin, torch.nn.ReLU()]
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(*layers[:-1]))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    xs, ys = batches(steps)
    feeds = [
        (torch.from_numpy(xs[s][rank::n].copy()), torch.from_numpy(ys[s][rank::n, 0].copy()))
        for s in range(steps)
    ]

    def run_steps(losses=None):
        for xb, yb in feeds:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            v = loss.item()  # as Tide fetches its loss every step
            if losses is not None:
                losses.append(v)

    losses = []
    run_steps(losses)
    t = measure(run_steps, reps=reps, warmup=1)
    dist.destroy_process_group()
    return rank, {"rate": [BATCH * steps / v for v in t], "losses": losses}


def job(nprocs, worker, steps, reps, timeout=1800):
    cmd = [sys.executable, "-m", "tide.distributed.launch", "--nproc_per_node", str(nprocs)]
    cmd += [os.path.abspath(__file__), "--worker", worker, "--steps", str(steps)]
    cmd += ["--reps", str(reps)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    lines = [l.split("] ", 1)[1] for l in proc.stdout.splitlines() if "] {" in l]
    if proc.returncode != 0 or not lines:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        print("dp_mlp: %s with %d processes failed: %s" % (worker, nprocs, " | ".join(tail)))
        return None
    return json.loads(lines[-1])


def main():
    ap = parser(__doc__)
    ap.add_argument("--nprocs", default="1,2,4")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--worker", default=None)
    ap.set_defaults(reps=5)  # each rep is a pass of --steps steps
    args = ap.parse_args()
    setup_paths()
    if args.worker:
        rank, out = (worker_tide if args.worker == "tide" else worker_torch)(args.steps, args.reps)
        if rank == 0:
            print(json.dumps(out), flush=True)
        return
    for var in ("OMP_NUM_THREADS", "TIDE_CPU_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"  # one thread per process, in both
    table = Table(
        "data-parallel MLP training, global batch %d, %d steps per rep" % (BATCH, args.steps),
        "examples/s",
        lower_is_better=False,
    )
    for n in [int(x) for x in args.nprocs.split(",")]:
        tide_res = job(n, "tide", args.steps, args.reps)
        torch_res = job(n, "torch", args.steps, args.reps)
        note = ""
        if tide_res and torch_res:
            check_losses(
                {"tide": tide_res["losses"], "torch DDP": torch_res["losses"]}, "torch DDP"
            )
            note = "rank 0's first-pass losses agree (%.4f -> %.4f)" % (
                tide_res["losses"][0],
                tide_res["losses"][-1],
            )
        table.add(
            "%d process(es) x 1 thread, Gloo" % n,
            tide_res and tide_res["rate"],
            {"torch DDP gloo": torch_res and torch_res["rate"]},
            note,
        )
    machine = machine_line("1 thread per process")
    table.print(machine)
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
