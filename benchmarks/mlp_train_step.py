"""One training step (forward, backward, SGD update) of an MLP 784-512-512-10 with batch 64,
in Tide, PyTorch and PaddlePaddle (static graph), on the CPU with the same initial weights and
data (every framework's loss is checked at each of the first CHECK_STEPS steps). Each framework
runs in a process of its own, rounds interleaved. Prints steps/s and tide/peer. "tide" runs as
users do: the Executor computes each weight's gradient straight into its SGD update (it is never
stored; --fuse_weight_updates, docs/memory.md); "tide (every gradient stored)" turns that off.

    benchmarks/.venv-peers/bin/python benchmarks/mlp_train_step.py [--json out.json]
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
    try_import,
)

SIZES = [784, 512, 512, 10]
BATCH = 64
LR = 0.01
CHECK_STEPS = 10  # steps whose losses every framework must agree on


def init(seed=0):
    rng = np.random.RandomState(seed)
    ws, bs = [], []
    for i, o in zip(SIZES[:-1], SIZES[1:]):
        ws.append((rng.randn(i, o) * np.sqrt(2.0 / i)).astype("float32"))
        bs.append(np.zeros(o, "float32"))
    x = rng.rand(BATCH, SIZES[0]).astype("float32")
    y = rng.randint(0, SIZES[-1], size=(BATCH, 1)).astype("int64")
    return ws, bs, x, y


def tide_step(ws, bs, x, y, use_mkldnn, fuse=True):
    import tide

    tide.set_flags({"use_mkldnn": use_mkldnn, "fuse_weight_updates": fuse})
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup), tide.unique_name.guard():
        img = tide.layers.data(name="img", shape=[SIZES[0]])
        label = tide.layers.data(name="label", shape=[1], dtype="int64")
        h = img
        for k in range(len(ws)):
            act = "relu" if k < len(ws) - 1 else None
            h = tide.layers.fc(
                input=h, size=SIZES[k + 1], act=act, param_attr="w%d" % k, bias_attr="b%d" % k
            )
        loss = tide.layers.mean(tide.layers.softmax_with_cross_entropy(h, label))
        tide.optimizer.SGD(learning_rate=LR).minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    for k in range(len(ws)):
        scope.var("w%d" % k).get_tensor().set(ws[k].copy(), tide.CPUPlace(), False)
        scope.var("b%d" % k).get_tensor().set(bs[k].copy(), tide.CPUPlace(), False)
    feed = {"img": tide.LoDTensor(x), "label": tide.LoDTensor(y)}

    def step():
        return float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0][0])

    return step


def torch_step(ws, bs, x, y):
    torch = try_import("torch")
    if not torch:
        return None
    layers = []
    for k, (w, b) in enumerate(zip(ws, bs)):
        lin = torch.nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w.T.copy()))
            lin.bias.copy_(torch.from_numpy(b))
        layers.append(lin)
        if k < len(ws) - 1:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    loss_fn = torch.nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.reshape(-1))

    def step():
        opt.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        opt.step()
        return float(loss)

    return step


def paddle_step(ws, bs, x, y):
    paddle = try_import("paddle")
    if not paddle:
        return None
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        img = paddle.static.data("img", [BATCH, SIZES[0]], "float32")
        label = paddle.static.data("label", [BATCH, 1], "int64")
        h = img
        for k in range(len(ws)):
            h = paddle.static.nn.fc(
                h,
                SIZES[k + 1],
                activation="relu" if k < len(ws) - 1 else None,
                weight_attr=paddle.ParamAttr(
                    name="pw%d" % k, initializer=paddle.nn.initializer.Assign(ws[k])
                ),
                bias_attr=paddle.ParamAttr(
                    name="pb%d" % k, initializer=paddle.nn.initializer.Assign(bs[k])
                ),
            )
        loss = paddle.mean(paddle.nn.functional.cross_entropy(h, label))
        paddle.optimizer.SGD(learning_rate=LR).minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feed = {"img": x, "label": y}
    return lambda: float(np.asarray(exe.run(main, feed=feed, fetch_list=[loss])[0]).reshape(-1)[0])


CASES = {
    "tide": lambda ws, bs, x, y: tide_step(ws, bs, x, y, False),
    "tide (oneDNN)": lambda ws, bs, x, y: tide_step(ws, bs, x, y, True),
    "tide (every gradient stored)": lambda ws, bs, x, y: tide_step(ws, bs, x, y, False, False),
    "pytorch": torch_step,
    "paddle static": paddle_step,
}


def worker(case, args):
    """Measures one framework in this process; prints {"losses": [the first CHECK_STEPS steps'],
    "steps_per_s": [...]}."""
    import json

    if case.startswith("tide"):
        import tide

        tide.set_flags({"cpu_threads": args.threads})
    ws, bs, x, y = init()
    step = CASES[case](ws, bs, x, y)
    if step is None:
        raise SystemExit(2)
    losses = [step() for _ in range(CHECK_STEPS)]
    t = measure(step, reps=args.reps, warmup=3, inner=10)
    print(json.dumps({"losses": losses, "steps_per_s": [1.0 / t[0], 1.0 / t[2], 1.0 / t[1]]}))


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--worker", default=None, help=argparse_hide)
    ap.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds (one process per framework each)"
    )
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker:
        return worker(args.worker, args)
    import tide

    cases = ["tide", "tide (every gradient stored)", "pytorch", "paddle static"]
    if any(p["name"] == "device_mkldnn" and p["status"] == "loaded" for p in tide.plugins()):
        cases.insert(1, "tide (oneDNN)")
    extra = ["--reps", str(args.reps), "--threads", str(args.threads)]
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
        {c: v[0]["losses"] for c, v in rounds.items()}, "pytorch" if "pytorch" in rounds else "tide"
    )
    results = {c: median_of_rounds(v, "steps_per_s") for c, v in rounds.items()}
    table = Table(
        "MLP 784-512-512-10, batch 64, one SGD train step", "steps/s", lower_is_better=False
    )
    peers = {k: v for k, v in results.items() if not k.startswith("tide")}
    for name in [k for k in results if k.startswith("tide")]:
        table.add(name, results[name], peers)
    machine = machine_line(
        "tide %s, %d threads each (one process per framework, %d interleaved rounds), torch %s"
        % (
            tide.__version__,
            args.threads,
            args.rounds,
            getattr(try_import("torch"), "__version__", "n/a"),
        )
    )
    table.print(machine)
    if "pytorch" in results:
        print(
            "tide / pytorch throughput = %.2f (target >= 1.2)"
            % (results["tide"][0] / results["pytorch"][0])
        )
    table.dump(args.json, machine)


argparse_hide = "==SUPPRESS=="

if __name__ == "__main__":
    main()
