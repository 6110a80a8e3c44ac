"""FFT throughput: |rfft(x)| and irfft(rfft(x)) over the last axis of a [64, n] float32 batch, for
lengths that are powers of two (1024, 4096), smooth (1000) and a prime over 64 (4099: Tide's
Bluestein path), in Tide (plugins/ops_fft on Eigen's FFT) and its peers: numpy.fft (pocketfft),
PaddlePaddle's static executor (paddle.fft) and PyTorch (torch.fft), each in a process of its own,
rounds interleaved. Every framework's output is checked against numpy in float64 first.

    benchmarks/.venv-peers/bin/python benchmarks/fft.py [--rounds 3] [--json out.json]
"""

import statistics

import numpy as np
from common import (
    Table,
    interleaved_rounds,
    machine_line,
    measure,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
    try_import,
)

BATCH = 64
LENGTHS = [1024, 4096, 1000, 4099]
CASES = ["abs_rfft", "irfft_rfft"]  # |rfft(x)|, and the round trip irfft(rfft(x), n)


def reference(case, x):
    spec = np.fft.rfft(x.astype(np.float64))
    return np.abs(spec) if case == "abs_rfft" else np.fft.irfft(spec, n=x.shape[-1])


def tide_fn(case, x):
    import tide

    n = x.shape[-1]
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        xv = tide.layers.data(name="x", shape=list(x.shape), append_batch_size=False)
        block = main.global_block()
        spec = block.create_var(name="spec", dtype="complex64", shape=[BATCH, n // 2 + 1])
        block.append_op(
            type="fft_r2c",
            inputs={"X": [xv]},
            outputs={"Out": [spec]},
            attrs={"axes": [-1], "normalization": "backward", "forward": True, "onesided": True},
        )
        out_shape = [BATCH, n // 2 + 1] if case == "abs_rfft" else list(x.shape)
        out = block.create_var(name="out", dtype="float32", shape=out_shape)
        if case == "abs_rfft":
            block.append_op(type="abs", inputs={"X": [spec]}, outputs={"Out": [out]})
        else:
            block.append_op(
                type="fft_c2r",
                inputs={"X": [spec]},
                outputs={"Out": [out]},
                attrs={
                    "axes": [-1],
                    "normalization": "backward",
                    "forward": False,
                    "last_dim_size": n,
                },
            )
    exe = tide.Executor(tide.CPUPlace())
    feed = {"x": tide.LoDTensor(x)}
    scope = tide.Scope()
    return lambda: exe.run(main, feed=feed, fetch_list=[out], scope=scope)[0]


def numpy_fn(case, x):
    if case == "abs_rfft":
        return lambda: np.abs(np.fft.rfft(x))
    return lambda: np.fft.irfft(np.fft.rfft(x), n=x.shape[-1])


def paddle_fn(case, x):
    paddle = try_import("paddle")
    if not paddle:
        return None
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        xv = paddle.static.data("x", list(x.shape), "float32")
        spec = paddle.fft.rfft(xv)
        out = paddle.abs(spec) if case == "abs_rfft" else paddle.fft.irfft(spec, n=x.shape[-1])
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    return lambda: exe.run(main, feed={"x": x}, fetch_list=[out])[0]


def torch_fn(case, x):
    torch = try_import("torch")
    if not torch:
        return None
    t = torch.from_numpy(x.copy())

    def run():
        with torch.no_grad():
            spec = torch.fft.rfft(t)
            out = spec.abs() if case == "abs_rfft" else torch.fft.irfft(spec, n=x.shape[-1])
        return out.numpy()

    return run


FRAMEWORKS = {"tide": tide_fn, "numpy": numpy_fn, "paddle static": paddle_fn, "pytorch": torch_fn}


def worker(spec, args):
    """One framework, one case and length in this process: output checked, then ms per call."""
    import json

    name, case, n = spec.split(":")
    x = np.random.RandomState(0).standard_normal((BATCH, int(n))).astype(np.float32)
    run = FRAMEWORKS[name](case, x)
    if run is None:
        raise SystemExit("%s is not installed" % name)
    got, want = np.asarray(run()), reference(case, x)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-3, atol=1e-3):
        raise SystemExit("%s computed something else for %s" % (name, spec))
    t = measure(run, reps=args.reps, warmup=2)
    print(json.dumps({"ms": [v * 1e3 for v in t]}))


def summary(results, spec):
    """(median, min, max) over the rounds' medians of one framework's case; None if it failed."""
    values = [r["ms"][0] for r in results.get(spec, [])]
    return (statistics.median(values), min(values), max(values)) if values else None


def main():
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per framework")
    ap.add_argument("--worker", default=None, help=argparse_hidden())
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker:
        return worker(args.worker, args)
    extra = ["--reps", str(args.reps), "--threads", str(args.threads)]
    table = Table("FFT over the last axis of a [%d, n] float32 batch" % BATCH, "ms per call")
    for case in CASES:
        for n in LENGTHS:
            specs = ["%s:%s:%d" % (f, case, n) for f in FRAMEWORKS]
            results = interleaved_rounds(
                args.rounds, specs, lambda s: run_isolated(__file__, s, extra)
            )
            tide = summary(results, specs[0])
            peers = {s.split(":")[0]: summary(results, s) for s in specs[1:]}
            peers = {k: v for k, v in peers.items() if v}
            note = "Bluestein (a prime over 64)" if n == 4099 else ""
            table.add("%s n=%d" % (case, n), tide, peers, note)
    machine = machine_line("%d threads" % args.threads)
    table.print(machine)
    table.dump(args.json, machine)


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
