"""Transport throughput on loopback: a send + recv of one tensor through Tide's send/recv ops and a
pserver (listen_and_serv, async mode, in another process) against raw pyzmq moving the same bytes
(DEALER -> ROUTER echo in another process; pyzmq with and without copies, the faster counts).
MB/s counts the bytes both ways.

    PYTHONPATH=build/python TIDE_PLUGIN_PATH=build/lib/tide/plugins \\
        .venv/bin/python benchmarks/zmq_bench.py [--reps 7] [--sizes 4K,1M,64M] [--json out.json]
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from common import machine_line, parser, setup_paths

SIZES = {"4K": 4 << 10, "1M": 1 << 20, "64M": 64 << 20}


def free_port():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --- servers (run in their own processes) --------------------------------------------------
def serve_tide(endpoint):
    import tide

    prog = tide.Program()
    gb = prog.global_block()
    gb.create_var(name="x", shape=[1], dtype="float32")
    empty = prog._create_block(parent_idx=0)  # nothing to optimize: the transport alone
    prog._rollback()
    gb.append_op(
        "listen_and_serv",
        attrs={
            "endpoint": endpoint,
            "Fanin": 1,
            "sync_mode": False,
            "optimize_blocks": [empty.desc],
            "grad_to_block_id": ["x:%d" % empty.idx],
            "served_vars": ["x"],
        },
    )
    tide.Executor(tide.CPUPlace()).run(prog, scope=tide.Scope())


def raw_socket(kind, copy):
    import zmq

    s = zmq.Context.instance().socket(kind)
    s.setsockopt(zmq.LINGER, 0)
    for opt in (zmq.SNDBUF, zmq.RCVBUF):  # as Tide's sockets
        s.setsockopt(opt, 4 << 20)
    return s


def serve_raw(endpoint, copy):
    import zmq

    s = raw_socket(zmq.ROUTER, copy)
    s.bind("tcp://" + endpoint)
    while True:
        frames = s.recv_multipart(copy=copy)
        if len(frames) == 2 and (frames[1] if copy else frames[1].bytes) == b"stop":
            return
        s.send_multipart(frames, copy=copy)


# --- clients -----------------------------------------------------------------------------
def tide_client(endpoint):
    import tide

    prog = tide.Program()
    gb = prog.global_block()
    gb.create_var(name="x", shape=[1], dtype="float32", persistable=True)
    gb.create_var(name="y", shape=[1], dtype="float32", persistable=True)
    common = {"rpc_deadline": 60000, "sync_mode": False}
    gb.append_op("send", inputs={"X": ["x"]}, attrs=dict(common, epmap=[endpoint]))
    gb.append_op(
        "recv", outputs={"Out": ["y"]}, attrs=dict(common, epmap=[endpoint], varnames=["x"])
    )
    done = tide.Program()
    done.global_block().append_op("send_complete", attrs={"endpoints": [endpoint]})
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()

    def prepare(arr):
        scope.var("x").get_tensor().set(arr, tide.CPUPlace(), False)

    def run():
        exe.run(prog, scope=scope)

    def result():
        return np.array(scope.find_var("y").get_tensor())

    return prepare, run, result, lambda: exe.run(done, scope=scope)


def raw_client(endpoint, copy):
    import zmq

    s = raw_socket(zmq.DEALER, copy)
    s.connect("tcp://" + endpoint)
    state = {}

    def prepare(arr):
        state["arr"] = arr

    def run():
        s.send(state["arr"], copy=copy)
        got = s.recv(copy=copy)
        state["out"] = np.frombuffer(got if copy else got.buffer, dtype=state["arr"].dtype)

    return prepare, run, lambda: state["out"], lambda: s.send(b"stop")


def bench(clients, sizes, reps):
    """MB/s per client and size. The clients take turns within every rep, so a load change on
    the machine hits them alike."""
    out = {name: {} for name in clients}
    for size, nbytes in sizes:
        arr = np.random.RandomState(0).rand(nbytes // 4).astype("float32")
        inner = max(1, (8 << 20) // nbytes)  # >= 8 MB per timed rep
        times = {name: [] for name in clients}
        for name, (prepare, run, result, _) in clients.items():
            prepare(arr)
            run()
            if not np.array_equal(result().reshape(-1), arr):
                raise SystemExit("the %s round trip changed the data" % name)
            for _ in range(2 * inner):  # warm-up
                run()
        for _ in range(reps):
            for name, (_, run, _, _) in clients.items():
                t0 = time.perf_counter()
                for _ in range(inner):
                    run()
                times[name].append((time.perf_counter() - t0) / inner)
        for name in clients:
            out[name][size] = 2 * nbytes / statistics.median(times[name]) / 1e6  # both directions
        out.setdefault("_times", {})[size] = times
    for _, _, _, stop in clients.values():
        stop()
    return out


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="4K,1M,64M", help="of " + ",".join(SIZES))
    ap.add_argument("--serve", nargs=2, metavar=("KIND", "ENDPOINT"), help=argparse_hidden())
    ap.add_argument(
        "--raw_copy",
        choices=["both", "copy", "zerocopy"],
        default="both",
        help="pyzmq send/recv mode of the baseline; both: the faster per size",
    )
    args = ap.parse_args()
    setup_paths()
    if args.serve:
        kind, ep = args.serve
        return serve_tide(ep) if kind == "tide" else serve_raw(ep, copy=kind == "copy")
    sizes = [(s, SIZES[s]) for s in args.sizes.split(",")]
    modes = ["copy", "zerocopy"] if args.raw_copy == "both" else [args.raw_copy]
    servers, clients = [], {}
    try:
        for kind in modes + ["tide"]:
            ep = "127.0.0.1:%d" % free_port()
            servers.append(
                subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", kind, ep])
            )
            clients[kind] = (
                tide_client(ep) if kind == "tide" else raw_client(ep, copy=kind == "copy")
            )
        results = bench(clients, sizes, args.reps)
        for server in servers:
            server.wait(30)
    finally:
        for server in servers:
            if server.poll() is None:
                server.kill()
    results["raw zmq"] = {n: max(results[m][n] for m in modes) for n, _ in sizes}
    best_mode = {n: max(modes, key=lambda m: results[m][n]) for n, _ in sizes}
    # tide/raw from each rep's adjacent timings (robust to the load changing between reps).
    times = results.pop("_times")
    ratio = {
        n: statistics.median(r / t for r, t in zip(times[n][best_mode[n]], times[n]["tide"]))
        for n, _ in sizes
    }
    import tide

    machine = machine_line(
        "tide %s, loopback TCP, libzmq %s" % (tide.__version__, __import__("zmq").zmq_version())
    )
    print(
        "\nsend + recv of one float32 tensor, MB/s both ways (median of %d reps; higher is better; "
        "tide/raw: median of the per-rep ratios)" % args.reps
    )
    head = "%-8s | %12s | %12s | %8s | %s" % (
        "case",
        "tide MB/s",
        "raw zmq MB/s",
        "tide/raw",
        "raw mode",
    )
    print(head)
    print("-" * len(head))
    rows = []
    for name, _ in sizes:
        t, r = results["tide"][name], results["raw zmq"][name]
        rows.append(
            {
                "case": name,
                "tide_MBps": t,
                "raw_zmq_MBps": r,
                "ratio": ratio[name],
                "raw_mode": best_mode[name],
                "raw_by_mode": {m: results[m][name] for m in modes},
            }
        )
        print("%-8s | %12.1f | %12.1f | %8.2f | %s" % (name, t, r, ratio[name], best_mode[name]))
    print(machine)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "title": "zmq send+recv throughput",
                    "unit": "MB/s",
                    "machine": machine,
                    "reps": args.reps,
                    "rows": rows,
                },
                f,
                indent=1,
            )


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
