"""Matrix multiply rate: Tide's mul and matmul ops (float32) at 1024^3 and 2048^3 against the
raw libraries: oneDNN's dnnl_sgemm (ctypes) and OpenBLAS (numpy's / PyTorch's matmul).

    benchmarks/.venv-peers/bin/python benchmarks/gemm.py [--json out.json]
"""

import ctypes
import ctypes.util

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
    try_import,
)

SIZES = [1024, 2048]


def tide_case(op, n, a, b):
    import tide

    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data(name="x", shape=[n, n], append_batch_size=False)
        y = tide.layers.data(name="y", shape=[n, n], append_batch_size=False)
        out = tide.layers.mul(x, y) if op == "mul" else tide.layers.matmul(x, y)
    exe = tide.Executor(tide.CPUPlace())
    feed = {"x": tide.LoDTensor(a), "y": tide.LoDTensor(b)}
    scope = tide.Scope()
    return lambda: exe.run(main, feed=feed, fetch_list=[out], scope=scope, return_numpy=False)[0]


def dnnl_case(n, a, b):
    lib = ctypes.util.find_library("dnnl") or "libdnnl.so.2"
    try:
        dnnl = ctypes.CDLL(lib)
    except OSError:
        return None
    c = np.empty((n, n), np.float32)
    fp = ctypes.POINTER(ctypes.c_float)
    args = [
        ctypes.c_char(b"N"),
        ctypes.c_char(b"N"),
        ctypes.c_int64(n),
        ctypes.c_int64(n),
        ctypes.c_int64(n),
        ctypes.c_float(1.0),
        a.ctypes.data_as(fp),
        ctypes.c_int64(n),
        b.ctypes.data_as(fp),
        ctypes.c_int64(n),
        ctypes.c_float(0.0),
        c.ctypes.data_as(fp),
        ctypes.c_int64(n),
    ]
    return lambda: (dnnl.dnnl_sgemm(*args), c)[1]


def worker(case, args):
    import json

    name, n = case.rsplit(":", 1)
    n = int(n)
    rng = np.random.RandomState(0)
    a, b = rng.rand(n, n).astype("float32"), rng.rand(n, n).astype("float32")
    if name.startswith("tide"):
        import tide

        tide.set_flags({"cpu_threads": args.threads})
        fn = tide_case(name.split()[1], n, a, b)
    elif name == "oneDNN sgemm":
        fn = dnnl_case(n, a, b)
    elif name == "numpy (OpenBLAS)":
        fn = lambda: a @ b  # noqa: E731
    else:
        torch = try_import("torch")
        if torch is None:
            raise SystemExit(2)
        torch.set_num_threads(args.threads)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        fn = lambda: torch.mm(ta, tb)  # noqa: E731
    if fn is None:
        raise SystemExit(2)
    got = np.asarray(fn())
    want = a.astype(np.float64) @ b.astype(np.float64)
    if np.max(np.abs(got - want)) > 1e-3 * np.max(np.abs(want)):
        raise SystemExit("%s computed something else" % name)
    t = measure(fn, reps=args.reps, warmup=2)
    gflops = 2.0 * n**3 / 1e9
    print(json.dumps({"gflops": [gflops / t[0], gflops / t[2], gflops / t[1]]}))


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
        "matrix multiply, float32, %d threads" % args.threads, "GFLOP/s", lower_is_better=False
    )
    for n in SIZES:
        peers = {}
        for peer in ("oneDNN sgemm", "numpy (OpenBLAS)", "pytorch mm"):
            r = best_of_blas_settings(__file__, "%s:%d" % (peer, n), extra, "gflops", args.threads)
            if r:
                peers[peer] = tuple(r["gflops"])
        for op in ("mul", "matmul"):
            r = run_isolated(__file__, "tide %s:%d" % (op, n), extra)
            if r:
                table.add("%s %d^3" % (op, n), tuple(r["gflops"]), peers)
    machine = machine_line("target: tide >= 0.9x the library's rate")
    table.print(machine)
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
