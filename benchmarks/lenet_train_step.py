"""One training step of LeNet-5 (conv 5x5 20, max pool 2, conv 5x5 50, max pool 2, fc 500, fc 10;
softmax cross-entropy; SGD) on a batch of 64 28x28 images: Tide with the oneDNN plugin, Tide's
plain kernels, and PyTorch, same weights and data (every framework's loss checked at each of the
first CHECK_STEPS steps), one process per framework, rounds interleaved. Target (issue 17): Tide
>= 1.2x PyTorch's throughput.

    benchmarks/.venv-peers/bin/python benchmarks/lenet_train_step.py [--json out.json]
"""

import numpy as np
from common import (
    Table,
    best_of_blas_settings,
    check_losses,
    interleaved_rounds,
    machine_line,
    measure,
    median_of_rounds,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
)

BATCH, LR = 64, 0.01
CHECK_STEPS = 10  # steps whose losses every framework must agree on


def init(seed=0):
    rng = np.random.RandomState(seed)
    shapes = {"c1w": (20, 1, 5, 5), "c2w": (50, 20, 5, 5), "f1w": (800, 500), "f2w": (500, 10)}
    w = {
        k: (rng.randn(*s) * np.sqrt(2.0 / np.prod(s[1:] if k.startswith("c") else s[:1]))).astype(
            "float32"
        )
        for k, s in shapes.items()
    }
    for k, n in (("c1b", 20), ("c2b", 50), ("f1b", 500), ("f2b", 10)):
        w[k] = np.zeros(n, "float32")
    x = rng.rand(BATCH, 1, 28, 28).astype("float32")
    y = rng.randint(0, 10, size=(BATCH, 1)).astype("int64")
    return w, x, y


def tide_step(w, x, y, use_mkldnn):
    import tide

    tide.set_flags({"use_mkldnn": use_mkldnn})
    L = tide.layers
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup), tide.unique_name.guard():
        img = L.data(name="img", shape=[1, 28, 28])
        label = L.data(name="label", shape=[1], dtype="int64")
        h = L.conv2d(img, 20, 5, act="relu", param_attr="c1w", bias_attr="c1b")
        h = L.pool2d(h, 2, "max", 2)
        h = L.conv2d(h, 50, 5, act="relu", param_attr="c2w", bias_attr="c2b")
        h = L.pool2d(h, 2, "max", 2)
        h = L.fc(h, 500, act="relu", param_attr="f1w", bias_attr="f1b")
        h = L.fc(h, 10, param_attr="f2w", bias_attr="f2b")
        loss = L.mean(L.softmax_with_cross_entropy(h, label))
        tide.optimizer.SGD(LR).minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    for k, v in w.items():
        scope.var(k).get_tensor().set(v.copy(), tide.CPUPlace(), False)
    feed = {"img": tide.LoDTensor(x), "label": tide.LoDTensor(y)}
    return lambda: float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0][0])


def torch_step(w, x, y):
    import torch
    import torch.nn.functional as F

    p = {k: torch.from_numpy(v.copy()).requires_grad_(True) for k, v in w.items()}
    opt = torch.optim.SGD(p.values(), lr=LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.reshape(-1))

    def step():
        opt.zero_grad()
        h = F.max_pool2d(F.relu(F.conv2d(xt, p["c1w"], p["c1b"])), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["c2w"], p["c2b"])), 2)
        h = F.relu(torch.addmm(p["f1b"], h.flatten(1), p["f1w"]))
        loss = F.cross_entropy(torch.addmm(p["f2b"], h, p["f2w"]), yt)
        loss.backward()
        opt.step()
        return float(loss)

    return step


def worker(case, args):
    import json

    w, x, y = init()
    if case == "pytorch":
        import torch

        torch.set_num_threads(args.threads)
        step = torch_step(w, x, y)
    else:
        import tide

        tide.set_flags({"cpu_threads": args.threads})
        step = tide_step(w, x, y, case == "tide (oneDNN)")
    losses = [step() for _ in range(CHECK_STEPS)]
    t = measure(step, reps=args.reps, warmup=3, inner=5)
    print(json.dumps({"losses": losses, "steps_per_s": [1.0 / t[0], 1.0 / t[2], 1.0 / t[1]]}))


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--worker", default=None)
    ap.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds (one process per framework each)"
    )
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker:
        return worker(args.worker, args)
    extra = ["--reps", str(args.reps), "--threads", str(args.threads)]
    cases = ["tide (oneDNN)", "tide (plain)", "pytorch"]
    rounds = interleaved_rounds(
        args.rounds,
        cases,
        lambda c: (
            run_isolated(__file__, c, extra)
            if c.startswith("tide")
            else best_of_blas_settings(__file__, c, extra, "steps_per_s", args.threads)
        ),
    )
    check_losses(
        {c: v[0]["losses"] for c, v in rounds.items()},
        "pytorch" if "pytorch" in rounds else next(iter(rounds)),
    )
    res = {c: median_of_rounds(v, "steps_per_s") for c, v in rounds.items()}
    table = Table("LeNet-5, batch 64, one SGD train step", "steps/s", lower_is_better=False)
    peers = {"pytorch": res["pytorch"]} if "pytorch" in res else {}
    for name in ("tide (oneDNN)", "tide (plain)"):
        if name in res:
            table.add(name, res[name], peers)
    machine = machine_line(
        "%d threads each, one process per framework, %d interleaved rounds; target >= 1.2x"
        % (args.threads, args.rounds)
    )
    table.print(machine)
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
