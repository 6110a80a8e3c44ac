"""LSTM forward + backward on variable-length sequences: hidden 512, input 512, batch 64, lengths
uniform in 10..100. Tide's `lstm` op (SequenceToBatch over a LoDTensor, no padding; the input
projection x W_x an fc in front of it) against PyTorch nn.LSTM on a PackedSequence and on a padded
batch (outputs past a sequence's end masked out of the loss). Same weights, data and loss
(mean of hidden * R over the real steps) on every side; the hidden states and the gradients of
the recurrent weights are compared between them. Prints iterations/s (one forward + backward each).

    benchmarks/.venv-peers/bin/python benchmarks/lstm.py --threads 1 [--reps 5] [--json out.json]
"""

import json
import os
import statistics
import tempfile

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

HIDDEN, INPUT, BATCH, MIN_LEN, MAX_LEN = 512, 512, 64, 10, 100


def init(seed=0):
    """Lengths, x per sequence [len, INPUT], R per sequence [len, HIDDEN], PyTorch-layout weights
    (gate rows i, f, g, o)."""
    rng = np.random.RandomState(seed)
    lengths = rng.randint(MIN_LEN, MAX_LEN + 1, size=BATCH)
    xs = [rng.uniform(-1, 1, (n, INPUT)).astype("float32") for n in lengths]
    rs = [rng.uniform(0.5, 1.5, (n, HIDDEN)).astype("float32") for n in lengths]
    k = 1.0 / np.sqrt(HIDDEN)
    w = {
        name: rng.uniform(-k, k, shape).astype("float32")
        for name, shape in (
            ("w_ih", (4 * HIDDEN, INPUT)),
            ("w_hh", (4 * HIDDEN, HIDDEN)),
            ("b_ih", (4 * HIDDEN,)),
            ("b_hh", (4 * HIDDEN,)),
        )
    }
    return lengths, xs, rs, w


def fluid_gate_order(m):
    """PyTorch's gate blocks (i, f, g, o) along axis 0 -> Fluid's (c~ = g, i, f, o)."""
    i, f, g, o = np.split(m, 4, axis=0)
    return np.concatenate([g, i, f, o], axis=0)


def tide_case(lengths, xs, rs, w):
    import tide

    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup), tide.unique_name.guard():
        x = tide.layers.data(name="x", shape=[INPUT], dtype="float32", lod_level=1)
        r = tide.layers.data(name="r", shape=[HIDDEN], dtype="float32", lod_level=1)
        proj = tide.layers.fc(input=x, size=4 * HIDDEN, param_attr="wx", bias_attr=False)
        hidden, _ = tide.layers.dynamic_lstm(
            proj, size=4 * HIDDEN, param_attr="wh", bias_attr="b", use_peepholes=False
        )
        loss = tide.layers.mean(tide.layers.elementwise_mul(hidden, r))
        tide.append_backward(loss)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    params = {
        "wx": fluid_gate_order(w["w_ih"]).T,
        "wh": fluid_gate_order(w["w_hh"]).T,
        "b": fluid_gate_order(w["b_ih"] + w["b_hh"]).reshape(1, -1),
    }
    for name, value in params.items():
        scope.var(name).get_tensor().set(np.ascontiguousarray(value), tide.CPUPlace(), False)

    def lod(arrs):
        t = tide.LoDTensor(np.concatenate(arrs))
        t.set_recursive_sequence_lengths([[len(a) for a in arrs]])
        return t

    feed = {"x": lod(xs), "r": lod(rs)}

    def step():
        return float(
            np.asarray(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]).reshape(-1)[0]
        )

    def outputs():
        h, g = exe.run(main, feed=feed, fetch_list=[hidden, "wh@GRAD"], scope=scope)
        i = np.asarray(g).T  # rows: Fluid's gate blocks (c~, i, f, o) -> PyTorch's (i, f, g, o)
        c, ig, fg, og = np.split(i, 4, axis=0)
        return np.asarray(h), np.concatenate([ig, fg, c, og], axis=0)

    return step, outputs


def torch_case(lengths, xs, rs, w, packed):
    torch = try_import("torch")
    if not torch:
        return None
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    lstm = torch.nn.LSTM(INPUT, HIDDEN)
    with torch.no_grad():
        for name in ("w_ih", "w_hh", "b_ih", "b_hh"):
            getattr(lstm, name.replace("w_", "weight_").replace("b_", "bias_") + "_l0").copy_(
                torch.from_numpy(w[name])
            )
    total = float(sum(lengths) * HIDDEN)
    max_len = int(max(lengths))
    pad_x = torch.zeros(max_len, BATCH, INPUT)
    pad_r = torch.zeros(max_len, BATCH, HIDDEN)  # zero past each sequence's end: masks the loss
    for b, (x, r) in enumerate(zip(xs, rs)):
        pad_x[: len(x), b] = torch.from_numpy(x)
        pad_r[: len(r), b] = torch.from_numpy(r)
    lens = torch.tensor(lengths)
    if packed:
        inp = torch.nn.utils.rnn.pack_padded_sequence(pad_x, lens, enforce_sorted=False)
        r_data = torch.nn.utils.rnn.pack_padded_sequence(pad_r, lens, enforce_sorted=False).data

        def forward():
            out, _ = lstm(inp)
            return out, (out.data * r_data).sum() / total
    else:

        def forward():
            out, _ = lstm(pad_x)
            return out, (out * pad_r).sum() / total

    def step():
        lstm.zero_grad(set_to_none=True)
        _, loss = forward()
        loss.backward()
        return float(loss)

    def outputs():
        lstm.zero_grad(set_to_none=True)
        out, loss = forward()
        loss.backward()
        if packed:
            out, _ = torch.nn.utils.rnn.pad_packed_sequence(out)
        h = np.concatenate([out[:n, b].detach().numpy() for b, n in enumerate(lengths)])
        return h, lstm.weight_hh_l0.grad.numpy().copy()

    return step, outputs


CASES = {
    "tide lstm": tide_case,
    "pytorch packed": lambda *a: torch_case(*a, packed=True),
    "pytorch padded": lambda *a: torch_case(*a, packed=False),
}


def worker(case, args):
    """Times one framework in this process; prints {"loss", "iters_per_s"} and dumps its
    outputs for the comparison."""
    if case.startswith("tide"):
        import tide

        tide.set_flags({"cpu_threads": args.threads})
    made = CASES[case](*init())
    if made is None:
        raise SystemExit(2)
    step, outputs = made
    loss = step()
    t = measure(step, reps=args.inner_reps, warmup=1)
    if args.dump:
        h, gw = outputs()
        np.savez(args.dump, hidden=h, grad_w_hh=gw)
    print(json.dumps({"loss": loss, "iters_per_s": 1.0 / t[0]}))


def compare(dumps, ref):
    """Each case's hidden states and W_hh gradient against the reference case's."""
    base = np.load(dumps[ref])
    for name, path in dumps.items():
        got = np.load(path)
        for key, tol in (("hidden", 1e-4), ("grad_w_hh", 1e-4)):
            err = np.max(np.abs(got[key] - base[key])) / max(1e-6, np.max(np.abs(base[key])))
            print("  %-16s %-10s max |diff| / max |ref| = %.2e" % (name, key, err))
            if err > tol:
                raise SystemExit(
                    "%s's %s differs from %s's by %.3g: not the same computation"
                    % (name, key, ref, err)
                )


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--worker", default=None, help="==SUPPRESS==")
    ap.add_argument("--dump", default=None, help="==SUPPRESS==")
    ap.add_argument(
        "--inner_reps", type=int, default=2, help="timed iterations per process (median)"
    )
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker:
        return worker(args.worker, args)
    import tide

    tmp = tempfile.mkdtemp(prefix="tide_lstm_bench_")
    extra = ["--threads", str(args.threads), "--inner_reps", str(args.inner_reps)]
    runs = {c: [] for c in CASES}
    dumps, losses = {}, {}
    # Rounds interleave the frameworks (A B C A B C ...), so drift on a shared machine hits all.
    for rnd in range(args.reps):
        for case in CASES:
            dump = os.path.join(tmp, case.replace(" ", "_") + ".npz") if rnd == 0 else None
            r = run_isolated(__file__, case, extra + (["--dump", dump] if dump else []))
            if r:
                runs[case].append(r["iters_per_s"])
                losses[case] = r["loss"]
                if dump:
                    dumps[case] = dump
    runs = {c: v for c, v in runs.items() if v}
    print("outputs against pytorch packed:" if "pytorch packed" in dumps else "outputs:")
    for case, loss in losses.items():
        print("  %-16s loss %.7f" % (case, loss))
    if len(dumps) > 1:
        compare(dumps, "pytorch packed" if "pytorch packed" in dumps else next(iter(dumps)))
    results = {c: (statistics.median(v), min(v), max(v)) for c, v in runs.items()}
    table = Table(
        "LSTM h%d in%d b%d lengths %d..%d, forward + backward"
        % (HIDDEN, INPUT, BATCH, MIN_LEN, MAX_LEN),
        "iterations/s",
        lower_is_better=False,
    )
    table.add(
        "tide lstm",
        results["tide lstm"],
        {k: v for k, v in results.items() if not k.startswith("tide")},
    )
    torch = try_import("torch")
    machine = machine_line(
        "tide %s, %d thread(s) each (one process per framework, %d interleaved rounds), torch %s"
        % (tide.__version__, args.threads, args.reps, getattr(torch, "__version__", "n/a"))
    )
    table.print(machine)
    for peer, target in (("pytorch packed", 1.2), ("pytorch padded", 2.0)):
        if peer in results:
            print(
                "tide / %s throughput = %.2f (target >= %.1f)"
                % (peer, results["tide lstm"][0] / results[peer][0], target)
            )
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
