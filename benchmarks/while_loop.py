"""Time per iteration of a loop in the program: a while loop of 10,000 iterations whose body is
3 ops (s = s + x; i += 1; cond = i < n), in Tide (layers.While), PaddlePaddle's static
while_loop and a PyTorch eager Python loop doing the same; each in a process of its own. Then
memory: resident size after 100,000 forward-only (is_test) iterations against after 10,000.

    benchmarks/.venv-peers/bin/python benchmarks/while_loop.py [--iters 10000] [--json out.json]
"""

import json
import os
import sys

import numpy as np
from common import (
    Table,
    machine_line,
    measure,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
    try_import,
)

WIDTH = 16


def tide_loop(iters, x0, is_test=True):
    import tide
    from tide import layers

    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[WIDTH], append_batch_size=False)
        s = layers.fill_constant([WIDTH], "float32", 0.0)
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", iters)
        cond = layers.less_than(i, n)
        loop = layers.While(cond, is_test=is_test)
        with loop.block():
            main.current_block().append_op(
                "elementwise_add", inputs={"X": s, "Y": x}, outputs={"Out": s}
            )  # s += x, in place
            layers.increment(i, in_place=True)
            layers.less_than(i, n, cond=cond)
    exe = tide.Executor(tide.CPUPlace())
    feed = {"x": tide.LoDTensor(x0)}
    scope = tide.Scope()
    return lambda: exe.run(main, feed=feed, fetch_list=[s], scope=scope)[0]


def paddle_loop(iters, x0):
    paddle = try_import("paddle")
    if not paddle:
        return None
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [WIDTH], "float32")
        s = paddle.full([WIDTH], 0.0, "float32")
        i = paddle.full([1], 0, "int64")
        n = paddle.full([1], iters, "int64")
        _, out = paddle.static.nn.while_loop(
            lambda i, s: i < n, lambda i, s: [i + 1, s + x], [i, s]
        )
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    return lambda: exe.run(main, feed={"x": x0}, fetch_list=[out])[0]


def torch_loop(iters, x0):
    torch = try_import("torch")
    if not torch:
        return None
    x = torch.from_numpy(x0.copy())

    def run():
        with torch.no_grad():
            s, i, n = torch.zeros(WIDTH), torch.tensor(0), torch.tensor(iters)
            while bool(i < n):
                s = s + x
                i = i + 1
        return s.numpy()

    return run


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def worker(case, iters, reps):
    x0 = np.random.RandomState(0).rand(WIDTH).astype("float32")
    make = {
        "tide": tide_loop,
        "paddle static while_loop": paddle_loop,
        "pytorch eager": torch_loop,
    }[case]
    run = make(iters, x0)
    if run is None:
        sys.exit(1)
    got = np.asarray(run())
    if not np.allclose(got, x0 * iters, rtol=1e-3):
        raise SystemExit(
            "%s computed something else (%s vs %s)" % (case, got[:3], (x0 * iters)[:3])
        )
    t = measure(run, reps=reps, warmup=1)
    out = {"us_per_iter": [v / iters * 1e6 for v in t]}
    if case == "tide":  # with the step scopes kept for a backward pass (is_test=False)
        out["us_per_iter_kept"] = [
            v / iters * 1e6 for v in measure(tide_loop(iters, x0, False), reps=reps)
        ]
    if case == "tide":  # memory: 100,000 forward-only iterations against 10,000
        small, big = tide_loop(10000, x0), tide_loop(100000, x0)
        small()
        before = rss_mib()
        big()
        big()
        out["rss_growth_mib"] = rss_mib() - before
    print(json.dumps(out))


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=10000)
    ap.add_argument("--worker", default=None)
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker:
        return worker(args.worker, args.iters, args.reps)
    extra = ["--iters", str(args.iters), "--reps", str(args.reps), "--threads", str(args.threads)]
    results = {
        c: run_isolated(os.path.abspath(__file__), c, extra)
        for c in ("tide", "paddle static while_loop", "pytorch eager")
    }
    tide_r = results.pop("tide")
    peers = {k: tuple(v["us_per_iter"]) for k, v in results.items() if v}
    table = Table(
        "while loop, %d iterations of a 3-op body (s += x; i += 1; i < n), %d floats"
        % (args.iters, WIDTH),
        "us per iteration",
    )
    table.add("while x%d" % args.iters, tuple(tide_r["us_per_iter"]) if tide_r else None, peers)
    import tide

    machine = machine_line("tide %s, %d threads" % (tide.__version__, args.threads))
    table.print(machine)
    if tide_r:
        best = min((v[0] for v in peers.values()), default=None)
        if best:
            print(
                "tide / best peer = %.2f (target <= 0.5); tide %.2f us per iteration (target < 3)"
                % (tide_r["us_per_iter"][0] / best, tide_r["us_per_iter"][0])
            )
        print(
            "tide keeping every iteration's scope for a backward pass (is_test=False): %.2f us per "
            "iteration" % tide_r["us_per_iter_kept"][0]
        )
        print(
            "resident memory growth, 100,000 forward-only iterations after 10,000: %+.1f MiB"
            % tide_r["rss_growth_mib"]
        )
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
