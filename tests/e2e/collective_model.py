"""The collective e2e tests' training script: an MLP (dense gradients) or an embedding model
(sparse SelectedRows gradients) trained with tide.distributed.fleet, or alone on the global batch
when no world is set. Rank r of n feeds rows r::n of every global batch, so the data-parallel run
equals the local one (to float rounding). Writes a JSON result per rank.

    python collective_model.py --out result{rank}.json [--model mlp|embedding] [--steps 8]
        [--fuse_mb 32] [--die_rank R --die_step S [--die_signal KILL|STOP]]
        [--checkpoint_dir D] [--plugin libtide_device_sim.so --place sim] [--sigmoid_rank R]

--sigmoid_rank R: rank R's first layer is sigmoid, the others' relu (ranks that built different
models by mistake). --plugin loads a device plugin first; --place trains on that place kind's device: the rank's
local rank for gpu, else 0 (the sim device is host memory, so every process has its own).

With --checkpoint_dir rank 0 saves the persistables after every step (tide.io.save_persistables)
and a started job resumes from the last one; --die_* act only in the first attempt
(TIDE_RESTART_COUNT 0 or unset), so a restarted job finishes.
"""

import argparse
import json
import os
import signal
import sys

import numpy as np

import tide
from tide.distributed import fleet

GLOBAL_BATCH = 24


def data(model, steps):
    rng = np.random.RandomState(0)
    n = GLOBAL_BATCH * steps
    if model == "mlp":
        x = rng.normal(size=(n, 16)).astype("float32")
        y = (np.sin(x[:, :4]).sum(1, keepdims=True) + 0.1 * x[:, 4:5]).astype("float32")
    else:
        x = rng.randint(0, 50, size=(n, 1)).astype("int64")
        y = (np.cos(x.astype("float32")) * 0.5).astype("float32")
    return x, y


def build(model, act="relu"):
    layers = tide.layers
    if model == "mlp":
        x = layers.data(name="x", shape=[16])
        h = layers.fc(input=x, size=32, act=act)
        h = layers.fc(input=h, size=32, act="tanh")
        pred = layers.fc(input=h, size=1)
        opt = tide.optimizer.Momentum(learning_rate=0.05, momentum=0.9)
    else:
        x = layers.data(name="x", shape=[1], dtype="int64")
        emb = layers.embedding(input=x, size=[50, 8], is_sparse=True)
        pred = layers.fc(input=emb, size=1)
        opt = tide.optimizer.SGD(learning_rate=0.5)
    y = layers.data(name="y", shape=[1])
    loss = layers.mean(layers.square_error_cost(input=pred, label=y))
    return loss, opt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", choices=["mlp", "embedding"], default="mlp")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--fuse_mb", type=float, default=32)
    ap.add_argument("--die_rank", type=int, default=-1)
    ap.add_argument("--die_step", type=int, default=-1)
    ap.add_argument("--die_signal", default="KILL")
    ap.add_argument("--checkpoint_dir", default="")
    ap.add_argument("--sigmoid_rank", type=int, default=-1)  # a rank building another model
    ap.add_argument("--plugin", default="")
    ap.add_argument("--place", default="cpu")
    args = ap.parse_args()
    if args.plugin:
        tide.load_plugin(args.plugin)
    first_attempt = os.environ.get("TIDE_RESTART_COUNT", "0") == "0"

    fleet.init(is_collective=True)
    rank, nranks = fleet.worker_index(), fleet.worker_num()
    x, y = data(args.model, args.steps)
    main_prog, startup = tide.Program(), tide.Program()
    # Different seeds per rank: the broadcast from rank 0 must make the parameters equal (the
    # local run, rank 0 of 1, starts from rank 0's values).
    main_prog.random_seed = startup.random_seed = 7 + rank
    with tide.program_guard(main_prog, startup), tide.unique_name.guard():
        loss, opt = build(args.model, "sigmoid" if rank == args.sigmoid_rank else "relu")
        strategy = fleet.DistributedStrategy()
        strategy.fuse_all_reduce_ops = args.fuse_mb > 0
        strategy.fuse_grad_size_in_MB = args.fuse_mb
        fleet.distributed_optimizer(opt, strategy).minimize(loss)
    device = int(os.environ.get("TIDE_LOCAL_RANK", "0")) if args.place == "gpu" else 0
    exe, scope = tide.Executor(tide.Place(args.place, device)), tide.Scope()
    result = {
        "rank": rank,
        "nranks": nranks,
        "losses": [],
        "ops": [op.type for op in main_prog.global_block().ops],
    }
    with tide.scope_guard(scope):
        exe.run(startup)
        begin = 0
        latest = os.path.join(args.checkpoint_dir, "latest")
        if args.checkpoint_dir and os.path.exists(latest):
            with open(latest) as f:
                begin = int(f.read()) + 1
            tide.io.load_persistables(
                exe,
                os.path.join(args.checkpoint_dir, "step%d" % (begin - 1)),
                main_program=main_prog,
            )
            print("rank %d resumes at step %d" % (rank, begin), flush=True)
        result["first_step"] = begin
        for step in range(begin, args.steps):
            if rank == args.die_rank and step == args.die_step and first_attempt:
                print("rank %d dies at step %d" % (rank, step), flush=True)
                os.kill(os.getpid(), getattr(signal, "SIG" + args.die_signal))
            b = slice(step * GLOBAL_BATCH, (step + 1) * GLOBAL_BATCH)
            xb, yb = x[b][rank::nranks], y[b][rank::nranks]
            (value,) = exe.run(main_prog, feed={"x": xb, "y": yb}, fetch_list=[loss])
            result["losses"].append(float(np.array(value).reshape(-1)[0]))
            print("rank %d step %d loss %.6f" % (rank, step, result["losses"][-1]), flush=True)
            if args.checkpoint_dir and rank == 0:
                tide.io.save_persistables(
                    exe, os.path.join(args.checkpoint_dir, "step%d" % step), main_program=main_prog
                )
                with open(latest + ".tmp", "w") as f:
                    f.write(str(step))
                os.replace(latest + ".tmp", latest)
        result["params"] = {
            p.name: np.array(scope.find_var(p.name).get_tensor()).tolist()
            for p in main_prog.all_parameters()
        }
    with open(args.out.format(rank=rank), "w") as f:
        json.dump(result, f)
    print("rank %d done" % rank, flush=True)


if __name__ == "__main__":
    sys.exit(main())
