"""oneDNN kernels against Tide's plain kernels for the same op and shape (issue 17's rule: a oneDNN
kernel is never slower; where it was, it declines that shape class): layer_norm, prelu, reduce_*,
bilinear_interp / nearest_interp, mul, hard_swish, relu, elementwise_add, skip_layernorm and
preln_skip_layernorm, forward alone and forward + grad, small and large shapes, and rnn's
inference (LSTM and GRU, 50 steps, bidirectional; its weights kept in the scope, as a model's),
one process per thread count. The two kernels' runs alternate and the medians of single runs are
reported, as this machine is shared. The ratio column is oneDNN / plain (< 1:
oneDNN faster); the last column says which kernels the oneDNN run used ("declined": the oneDNN
kernel declined the shape and the plain one ran).

    TIDE_BUILD=build python benchmarks/mkldnn_vs_plain.py [--threads 1] [--seconds 1] [--only prelu]
"""

import statistics
import sys
import time

import numpy as np
from common import machine_line, parser, set_threads, setup_paths


# (case name, op, {input: shape}, attrs, with grad)
def _ln(rows, cols):
    return (
        "layer_norm %dx%d" % (rows, cols),
        "layer_norm",
        {"X": [rows, cols]},
        {"begin_norm_axis": 1},
        True,
    )


def _prelu(mode, x):
    alpha = {"all": [1], "channel": [x[1]], "element": x[1:]}[mode]
    return (
        "prelu %s %s" % (mode, "x".join(map(str, x))),
        "prelu",
        {"X": x, "Alpha": alpha},
        {"mode": mode},
        True,
    )


def _reduce(op, x, attrs, what):
    return ("%s %s %s" % (op, "x".join(map(str, x)), what), op, {"X": x}, attrs, False)


def _interp(op, x, out):
    attrs = {"out_h": out, "out_w": out, "align_corners": False}
    if op == "bilinear_interp":
        attrs["align_mode"] = 0
    return (
        "%s %s -> %dx%d" % (op.split("_")[0], "x".join(map(str, x)), out, out),
        op,
        {"X": x},
        attrs,
        True,
    )


def _rnn(mode, hidden, batch, layers, steps=50, lengths=0):
    """Paddle's nn.LSTM / nn.GRU for inference, bidirectional, input width = hidden; `lengths`
    distinct sequence lengths (SequenceLength, evenly over [1, steps], each row one of them; 0:
    none given): oneDNN runs the rows of each length as a sub-batch."""
    return (
        "rnn %s h%d b%d %dL bi%s"
        % (mode, hidden, batch, layers, " %d lengths" % lengths if lengths else ""),
        "rnn",
        {"Input": [steps, batch, hidden], "SequenceLength": lengths},
        {
            "mode": mode,
            "hidden_size": hidden,
            "input_size": hidden,
            "num_layers": layers,
            "is_bidirec": True,
            "is_test": True,
        },
        False,
    )


# (case name, op, {input: shape}, attrs, with grad)
CASES = (
    [
        _ln(r, c)
        for r, c in [
            (16, 64),
            (32, 64),
            (32, 128),
            (128, 32),
            (256, 16),
            (64, 128),
            (1024, 8),
            (4096, 16),
            (256, 768),
            (8, 4096),
        ]
    ]
    + [
        _prelu(m, x)
        for m in ("channel", "all", "element")
        for x in ([1, 16, 8, 8], [2, 16, 8, 8], [1, 16, 16, 16], [2, 16, 16, 16], [8, 64, 56, 56])
    ]
    + [
        _reduce("reduce_sum", x, {"dim": [1]}, "dim 1")
        for x in (
            [16, 64],
            [64, 64],
            [16, 1024],
            [64, 256],
            [256, 64],
            [1024, 16],
            [64, 512],
            [8, 1024],
            [32, 1000],
            [64, 1024],
            [4096, 64],
        )
    ]
    + [
        _reduce("reduce_sum", [64, 1024], {"dim": [0]}, "dim 0"),
        _reduce("reduce_sum", [64, 64], {"reduce_all": True}, "all"),
        _reduce("reduce_sum", [128, 128], {"reduce_all": True}, "all"),
        _reduce("reduce_mean", [8, 64, 56, 56], {"dim": [2, 3]}, "dim 2,3"),
        _reduce("reduce_max", [8, 64, 56, 56], {"dim": [1]}, "dim 1"),
        _reduce("reduce_max", [32, 1000], {"dim": [1]}, "dim 1"),
        _reduce("reduce_min", [256, 768], {"reduce_all": True}, "all"),
        _reduce("reduce_prod", [64, 1024], {"dim": [1]}, "dim 1"),
    ]
    + [
        _interp(op, x, o)
        for op in ("bilinear_interp", "nearest_interp")
        for x, o in (
            ([1, 3, 8, 8], 16),
            ([1, 8, 16, 16], 32),
            ([1, 16, 32, 32], 64),
            ([4, 64, 56, 56], 112),
        )
    ]
    + [
        (
            "nearest NHWC 4x56x56x64 -> 112x112",
            "nearest_interp",
            {"X": [4, 56, 56, 64]},
            {"out_h": 112, "out_w": 112, "align_corners": False, "data_layout": "NHWC"},
            True,
        )
    ]
    + [
        ("mul %dx%d * %dx%d" % (m, k, k, n), "mul", {"X": [m, k], "Y": [k, n]}, {}, True)
        for m, k, n in (
            (1, 2048, 1000),
            (8, 2048, 1000),
            (64, 800, 500),
            (64, 784, 512),
            (256, 1024, 1024),
        )
    ]
    + [
        (
            "mul after conv 64x16x8x8 * 1024x500",
            "mul",
            {"ConvInput": [64, 8, 8, 8], "ConvFilter": [16, 8, 3, 3], "Y": [1024, 500]},
            {},
            True,
        )
    ]
    + [
        ("hard_swish %d" % n, "hard_swish", {"X": [n]}, {}, True)
        for n in (1000, 4096, 16384, 65536, 262144)
    ]
    + [("hard_swish 8x64x56x56", "hard_swish", {"X": [8, 64, 56, 56]}, {}, True)]
    +
    # X blocked: a oneDNN conv2d's output (16 channels) feeds the op
    [
        (
            "hard_swish after conv %s" % "x".join(map(str, x)),
            "hard_swish",
            {"ConvInput": x, "ConvFilter": [16, x[1], 3, 3]},
            {},
            False,
        )
        for x in ([1, 8, 8, 8], [1, 8, 32, 32], [1, 8, 64, 64], [4, 8, 64, 64])
    ]
    +
    # relu and elementwise_add: on plain data (an MLP's, a plain kernel's output), then on a
    # oneDNN conv2d's blocked output
    [
        ("relu %s" % "x".join(map(str, x)), "relu", {"X": x}, {}, True)
        for x in ([64, 512], [64, 1024], [64, 20, 24, 24], [8, 64, 56, 56])
    ]
    + [
        (
            "relu after conv 8x64x56x56",
            "relu",
            {"ConvInput": [8, 64, 56, 56], "ConvFilter": [64, 64, 3, 3]},
            {},
            False,
        )
    ]
    + [
        (
            "add %s + %s" % ("x".join(map(str, x)), "x".join(map(str, y))),
            "elementwise_add",
            {"X": x, "Y": y},
            {"axis": a},
            True,
        )
        for x, y, a in (
            ([64, 512], [512], -1),
            ([64, 512], [64, 512], -1),
            ([8, 64, 56, 56], [8, 64, 56, 56], -1),
            ([8, 64, 56, 56], [64], 1),
        )
    ]
    +
    # a transformer's residual + layer_norm: small rows, and BERT-base's (batch 1 and 8, seq 128)
    [
        (
            "%s %dx%d" % (op, rows, cols),
            op,
            {"X": [rows, cols], "Y": [rows, cols], "Scale": [cols], "Bias": [cols]},
            {"begin_norm_axis": 1},
            False,
        )
        for op in ("skip_layernorm", "preln_skip_layernorm")
        for rows, cols in (
            (16, 64),
            (64, 64),
            (64, 256),
            (128, 256),
            (32, 768),
            (128, 768),
            (1024, 768),
        )
    ]
    + [
        _rnn(mode, hidden, batch, layers)
        for mode in ("LSTM", "GRU")
        for hidden in (256, 512)
        for batch in (1, 64)
        for layers in (1, 2)
    ]
    + [_rnn("LSTM", 256, 64, 1, lengths=n) for n in (4, 16, 50)]
)

OUTS = {"layer_norm": ["Y", "Mean", "Variance"], "preln_skip_layernorm": ["Out_0", "Out_1"]}


def build_rnn(shapes, attrs, use_mkldnn):
    """rnn on a fed Input and initial states, its WeightList persistable (set in the scope once,
    as a loaded model's: the oneDNN kernel keeps them reordered). Returns (program, feed, the op
    types that must run oneDNN, {parameter: value})."""
    import tide

    main = tide.Program()
    rng = np.random.RandomState(0)
    steps, batch, width = shapes["Input"]
    h, dirs, layers = attrs["hidden_size"], 2 if attrs["is_bidirec"] else 1, attrs["num_layers"]
    gates = {"LSTM": 4, "GRU": 3}.get(attrs["mode"], 1)
    k = h**-0.5  # Paddle's initialisation
    params, weights, biases = {}, [], []
    for layer in range(layers):
        for d in range(dirs):
            cell = "l%d_d%d" % (layer, d)
            weights += [
                ("w_ih_" + cell, [gates * h, width if layer == 0 else dirs * h]),
                ("w_hh_" + cell, [gates * h, h]),
            ]
            biases += [("b_ih_" + cell, [gates * h]), ("b_hh_" + cell, [gates * h])]
    block = main.global_block()
    feed = {}

    def fed(name, shape):
        feed[name] = tide.LoDTensor(rng.uniform(-1, 1, shape).astype("float32"))
        return block.create_var(name=name, shape=shape, dtype="float32")

    x = fed("x", [steps, batch, width])
    inputs = {"Input": [x]}
    n = shapes["SequenceLength"]
    if n:
        lengths = np.linspace(1, steps, n).round().astype("int64")[np.arange(batch) % n]
        feed["lengths"] = tide.LoDTensor(rng.permutation(lengths))
        inputs["SequenceLength"] = [block.create_var(name="lengths", shape=[batch], dtype="int64")]
    states = [fed(n, [layers * dirs, batch, h]) for n in ("h0", "c0")[: 2 if gates == 4 else 1]]
    wl = []
    for name, shape in weights + biases:
        params[name] = rng.uniform(-k, k, shape).astype("float32")
        wl.append(block.create_var(name=name, shape=shape, dtype="float32", persistable=True))
    out = block.create_var(name="out", dtype="float32")
    last = [block.create_var(name="last_%d" % i, dtype="float32") for i in range(len(states))]
    inputs.update(PreState=states, WeightList=wl)
    block.append_op(
        type="rnn",
        inputs=inputs,
        outputs={"Out": [out], "State": last},
        attrs=dict(attrs, use_mkldnn=use_mkldnn),
    )
    return main, feed, ("rnn",), params


def build(op, shapes, attrs, grad, use_mkldnn):
    """The op (use_mkldnn on it and its grad op) on fed inputs; with grad, mean(Out) and its
    backward. Returns (program, feed, the op types that must run oneDNN, {parameter: value} to
    set in the scope)."""
    import tide

    if op == "rnn":
        return build_rnn(shapes, attrs, use_mkldnn)

    main, startup = tide.Program(), tide.Program()
    rng = np.random.RandomState(0)
    feed = {}
    with tide.program_guard(main, startup), tide.unique_name.guard():
        block = main.global_block()
        ins, data = {}, {}
        for param, shape in shapes.items():
            v = tide.layers.data(
                name=param.lower(),
                shape=shape,
                dtype="float32",
                append_batch_size=False,
                stop_gradient=False,
            )
            data[param] = v
            feed[v.name] = tide.LoDTensor(
                rng.uniform(0.5 if op == "reduce_prod" else -1, 1, shape).astype("float32")
            )
        if "ConvInput" in data:  # X is a oneDNN conv2d's (blocked) output
            x = block.create_var(name="conv_out", dtype="float32")
            block.append_op(
                type="conv2d",
                inputs={"Input": [data.pop("ConvInput")], "Filter": [data.pop("ConvFilter")]},
                outputs={"Output": [x]},
                attrs={"paddings": [1, 1], "use_mkldnn": True},
            )
            data["X"] = x
        ins = {param: [v] for param, v in data.items()}
        outs = {}
        for param in OUTS.get(op, ["Out"]):
            outs[param] = [block.create_var(name=param.lower(), dtype="float32")]
        block.append_op(type=op, inputs=ins, outputs=outs, attrs=attrs)
        out = outs[OUTS.get(op, ["Out"])[0]][0]
        if grad:
            tide.append_backward(tide.layers.mean(out))
    marked = (op, op + "_grad")
    for o in main.global_block().ops:
        if o.type in marked:
            o._set_attr("use_mkldnn", use_mkldnn)
    return main, feed, marked if grad else (op,), {}


def ran(exe, types):
    """Which kernel each of `types` ran: "oneDNN", "declined" (the plain one), or both per op."""
    used = {
        t: all("mkldnn" in k for op, k in exe.last_run_info()["kernels"] if op == t) for t in types
    }
    if len(set(used.values())) == 1:
        return "oneDNN" if used[types[0]] else "declined"
    return ", ".join("%s %s" % (t, "oneDNN" if u else "plain") for t, u in used.items())


def time_case(case, seconds):
    """{pass: (plain us, oneDNN us, kernels used)}: the medians of single runs, the two kernels'
    runs alternating, as many as fit in about `seconds` per kernel (20 to 5000)."""
    import tide

    _, op, shapes, attrs, grad = case
    results = {}
    for with_grad in [False, True] if grad else [False]:
        runs = {}
        for use in (False, True):
            main, feed, types, params = build(op, shapes, attrs, with_grad, use)
            exe = tide.Executor(tide.CPUPlace())
            scope = tide.Scope()
            for name, value in params.items():  # a copy: the core sees its writes
                scope.var(name).get_tensor().set(value, tide.CPUPlace(), False)

            def fn(e=exe, m=main, f=feed, s=scope):
                return e.run(m, feed=f, fetch_list=[], scope=s)

            fn()
            runs[use] = (fn, ran(exe, types) if use else "")
        t0 = time.perf_counter()
        for _ in range(3):
            runs[False][0]()
            runs[True][0]()
        reps = int(min(5000, max(20, seconds / ((time.perf_counter() - t0) / 6))))
        times = {False: [], True: []}
        for _ in range(reps):  # alternating: drift on a shared machine hits both alike
            for use in (False, True):
                t0 = time.perf_counter()
                runs[use][0]()
                times[use].append((time.perf_counter() - t0) * 1e6)
        plain, onednn = statistics.median(times[False]), statistics.median(times[True])
        results["fwd+grad" if with_grad else "fwd"] = (plain, onednn, runs[True][1])
    return results


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("--seconds", type=float, default=0.5, help="time per case and kernel")
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    import tide  # noqa: F401  (after the thread settings)

    print(
        "%-34s | %-8s | %10s | %10s | %6s | %s"
        % ("case", "pass", "plain us", "oneDNN us", "ratio", "kernel")
    )
    for case in CASES:
        if args.only not in case[0]:
            continue
        for kind, (plain, onednn, used) in time_case(case, args.seconds).items():
            print(
                "%-34s | %-8s | %10.1f | %10.1f | %6.2f | %s"
                % (case[0], kind, plain, onednn, onednn / plain, used)
            )
            sys.stdout.flush()
    print(machine_line("%d threads" % args.threads))


if __name__ == "__main__":
    main()
