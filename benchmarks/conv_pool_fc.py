"""Forward + backward time of conv2d, pool2d and fc (mul + bias) at LeNet and ResNet-like
shapes: Tide's plain CPU kernels, Tide's oneDNN kernels, and PyTorch (CPU), same inputs, one
process per framework. Target: the oneDNN kernels within 1.1x of PyTorch's time.

    benchmarks/.venv-peers/bin/python benchmarks/conv_pool_fc.py [--json out.json]
"""

import numpy as np
from common import (
    Table,
    best_of_blas_settings,
    machine_line,
    measure,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
)

# name: (kind, input shape, params)
CASES = {
    "LeNet conv 5x5 1->20, 64x28x28": (
        "conv",
        [64, 1, 28, 28],
        dict(filters=20, k=5, stride=1, pad=0),
    ),
    "LeNet conv 5x5 20->50, 64x12x12": (
        "conv",
        [64, 20, 12, 12],
        dict(filters=50, k=5, stride=1, pad=0),
    ),
    "LeNet max pool 2x2, 64x20x24x24": ("pool", [64, 20, 24, 24], dict(k=2, stride=2, pad=0)),
    "LeNet fc 800->500, batch 64": ("fc", [64, 800], dict(size=500)),
    "ResNet conv 3x3 64->64, 8x56x56": (
        "conv",
        [8, 64, 56, 56],
        dict(filters=64, k=3, stride=1, pad=1),
    ),
    "ResNet conv 3x3/2 128->256, 8x28x28": (
        "conv",
        [8, 128, 28, 28],
        dict(filters=256, k=3, stride=2, pad=1),
    ),
    "ResNet conv 1x1 256->1024, 8x14x14": (
        "conv",
        [8, 256, 14, 14],
        dict(filters=1024, k=1, stride=1, pad=0),
    ),
    "ResNet max pool 3x3/2, 8x64x112x112": ("pool", [8, 64, 112, 112], dict(k=3, stride=2, pad=1)),
    "ResNet fc 2048->1000, batch 8": ("fc", [8, 2048], dict(size=1000)),
}


def data(case):
    kind, shape, p = CASES[case]
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, shape).astype("float32")
    if kind == "conv":
        w = (rng.uniform(-1, 1, (p["filters"], shape[1], p["k"], p["k"])) * 0.1).astype("float32")
    elif kind == "fc":
        w = (rng.uniform(-1, 1, (shape[1], p["size"])) * 0.05).astype("float32")
    else:
        w = None
    return kind, p, x, w


def tide_fn(case, use_mkldnn):
    import tide

    tide.set_flags({"use_mkldnn": use_mkldnn})
    kind, p, x0, w0 = data(case)
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup), tide.unique_name.guard():
        x = tide.layers.data(
            name="x", shape=list(x0.shape), append_batch_size=False, stop_gradient=False
        )
        if kind == "conv":
            out = tide.layers.conv2d(
                x,
                p["filters"],
                p["k"],
                stride=p["stride"],
                padding=p["pad"],
                param_attr="w",
                bias_attr=False,
            )
        elif kind == "pool":
            out = tide.layers.pool2d(x, p["k"], "max", p["stride"], p["pad"])
        else:
            out = tide.layers.fc(x, p["size"], param_attr="w", bias_attr="b")
        loss = tide.layers.mean(out)
        tide.append_backward(loss)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    if w0 is not None:
        scope.var("w").get_tensor().set(w0, tide.CPUPlace(), False)
    feed = {"x": tide.LoDTensor(x0)}
    fetch = [out, "x@GRAD"]
    return lambda: exe.run(main, feed=feed, fetch_list=fetch, scope=scope)


def torch_fn(case):
    import torch

    kind, p, x0, w0 = data(case)
    x = torch.from_numpy(x0).requires_grad_(True)
    w = torch.from_numpy(w0.copy()).requires_grad_(True) if w0 is not None else None
    b = torch.zeros(p["size"], requires_grad=True) if kind == "fc" else None

    def step():
        x.grad = None
        if kind == "conv":
            out = torch.nn.functional.conv2d(x, w, stride=p["stride"], padding=p["pad"])
        elif kind == "pool":
            out = torch.nn.functional.max_pool2d(x, p["k"], p["stride"], p["pad"])
        else:
            out = torch.addmm(b, x, w)
        out.mean().backward()
        return [out.detach().numpy(), x.grad.numpy()]

    return step


def worker(spec, args):
    import json

    framework, case = spec.split("|", 1)
    if framework == "pytorch":
        import torch

        torch.set_num_threads(args.threads)
        fn = torch_fn(case)
    else:
        import tide

        tide.set_flags({"cpu_threads": args.threads})
        fn = tide_fn(case, framework == "tide oneDNN")
    out, dx = fn()
    t = measure(fn, reps=args.reps, warmup=2)
    print(
        json.dumps(
            {
                "ms": [v * 1e3 for v in t],
                "checksum": [float(np.asarray(out).sum()), float(np.asarray(dx).sum())],
            }
        )
    )


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--worker", default=None)
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker:
        return worker(args.worker, args)
    extra = ["--reps", str(args.reps), "--threads", str(args.threads)]
    table = Table(
        "conv2d / pool2d / fc forward + backward, float32, %d threads" % args.threads, "ms"
    )
    for case in CASES:
        torch_r = best_of_blas_settings(
            __file__, "pytorch|" + case, extra, "ms", args.threads, higher_is_better=False
        )
        peers = {"pytorch": tuple(torch_r["ms"])} if torch_r else {}
        for fw in ("tide oneDNN", "tide plain"):
            r = run_isolated(__file__, fw + "|" + case, extra)
            if not r:
                continue
            note = ""
            if torch_r and not np.allclose(
                r["checksum"], torch_r["checksum"], rtol=2e-3, atol=1e-2
            ):
                note = "checksums differ from PyTorch: %s vs %s" % (
                    r["checksum"],
                    torch_r["checksum"],
                )
            table.add("%s: %s" % (fw, case), tuple(r["ms"]), peers, note)
    machine = machine_line("target: tide oneDNN <= 1.1x PyTorch's time")
    table.print(machine)
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
