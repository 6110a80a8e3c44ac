"""bfloat16 mixed-precision (AMP) training steps: Tide's `decorate_bf16` (device_mkldnn's bfloat16
kernels: oneDNN with AVX-512 BF16 / AMX where the CPU has them) against PyTorch's
`torch.autocast("cpu", torch.bfloat16)`, same weights, data and threads, one process per framework,
rounds interleaved. Three nets, SGD: an MLP 784-1024-1024-10 (batch 128), LeNet-5 (batch 64,
28x28) and a ResNet-ish conv net (a 3x3 stem, two stages of two residual blocks of two 3x3 convs,
32 and 64 channels, global average pooling, fc 10; batch 32, 3x32x32; no batch norm, which neither
AMP puts in bfloat16 the same way). Float32 steps of both are shown for reference. Losses of the
first steps are compared between the two AMP runs at bfloat16's precision. Target (issue 32):
Tide bf16 >= 1.2x PyTorch autocast's throughput. The machine line says which ISA oneDNN ran
bfloat16 with (a CPU without AVX-512 BF16 / AMX is reported as such).

    benchmarks/.venv-peers/bin/python benchmarks/amp.py [--nets mlp,lenet,resnet] [--json out.json]
"""

import numpy as np
from common import (
    Table,
    cpu_flags,
    interleaved_rounds,
    machine_line,
    measure,
    median_of_rounds,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
)

LR = 0.01
CHECK_STEPS = 5


# ---- nets: parameter shapes, one definition per framework ----------------------------------------


def params(net, seed=0):
    rng = np.random.RandomState(seed)
    if net == "mlp":
        shapes = {"w1": (784, 1024), "w2": (1024, 1024), "w3": (1024, 10)}
        biases = {"b1": 1024, "b2": 1024, "b3": 10}
        x = rng.rand(128, 784).astype("float32")
        batch = 128
    elif net == "lenet":
        shapes = {"c1": (20, 1, 5, 5), "c2": (50, 20, 5, 5), "w1": (800, 500), "w2": (500, 10)}
        biases = {"c1b": 20, "c2b": 50, "b1": 500, "b2": 10}
        x = rng.rand(64, 1, 28, 28).astype("float32")
        batch = 64
    else:
        shapes = {"stem": (32, 3, 3, 3), "down": (64, 32, 3, 3), "fc": (64, 10)}
        biases = {"stemb": 32, "downb": 64, "fcb": 10}
        for s, c in (("s1", 32), ("s2", 64)):
            for b in range(2):
                for k in range(2):
                    shapes["%s%d%d" % (s, b, k)] = (c, c, 3, 3)
                    biases["%s%d%db" % (s, b, k)] = c
        x = rng.rand(32, 3, 32, 32).astype("float32")
        batch = 32
    w = {}
    for k, s in shapes.items():
        fan_in = np.prod(s[1:]) if len(s) == 4 else s[0]
        w[k] = (rng.randn(*s) * np.sqrt(2.0 / fan_in) * 0.5).astype("float32")
    for k, n in biases.items():
        w[k] = np.zeros(n, "float32")
    y = rng.randint(0, 10, size=(batch, 1)).astype("int64")
    return w, x, y


def tide_logits(net, L, img):
    def conv(h, name, filters, stride=1, act="relu"):
        return L.conv2d(
            h, filters, 3, stride=stride, padding=1, act=act, param_attr=name, bias_attr=name + "b"
        )

    if net == "mlp":
        h = L.fc(img, 1024, act="relu", param_attr="w1", bias_attr="b1")
        h = L.fc(h, 1024, act="relu", param_attr="w2", bias_attr="b2")
        return L.fc(h, 10, param_attr="w3", bias_attr="b3")
    if net == "lenet":
        h = L.conv2d(img, 20, 5, act="relu", param_attr="c1", bias_attr="c1b")
        h = L.pool2d(h, 2, "max", 2)
        h = L.conv2d(h, 50, 5, act="relu", param_attr="c2", bias_attr="c2b")
        h = L.pool2d(h, 2, "max", 2)
        h = L.fc(h, 500, act="relu", param_attr="w1", bias_attr="b1")
        return L.fc(h, 10, param_attr="w2", bias_attr="b2")
    h = conv(img, "stem", 32)
    for s, c in (("s1", 32), ("s2", 64)):
        if s == "s2":
            h = conv(h, "down", 64, stride=2)
        for b in range(2):
            r = conv(h, "%s%d0" % (s, b), c)
            r = conv(r, "%s%d1" % (s, b), c, act=None)
            h = L.relu(L.elementwise_add(r, h))
    h = L.pool2d(h, pool_type="avg", global_pooling=True)
    return L.fc(h, 10, param_attr="fc", bias_attr="fcb")


def tide_step(net, w, x, y, bf16):
    import tide

    tide.set_flags({"use_mkldnn": True})
    L = tide.layers
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup), tide.unique_name.guard():
        img = L.data(name="img", shape=list(x.shape[1:]))
        label = L.data(name="label", shape=[1], dtype="int64")
        loss = L.mean(L.softmax_with_cross_entropy(tide_logits(net, L, img), label))
        opt = tide.optimizer.SGD(LR)
        if bf16:
            from tide.contrib import mixed_precision as amp

            opt = amp.decorate_bf16(opt)
        opt.minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    for k, v in w.items():
        scope.var(k).get_tensor().set(v.copy(), tide.CPUPlace(), False)
    feed = {"img": tide.LoDTensor(x), "label": tide.LoDTensor(y)}
    return lambda: float(
        np.asarray(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]).reshape(-1)[0]
    )


def torch_step(net, w, x, y, bf16):
    import contextlib

    import torch
    import torch.nn.functional as F

    p = {k: torch.from_numpy(v.copy()).requires_grad_(True) for k, v in w.items()}
    opt = torch.optim.SGD(p.values(), lr=LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.reshape(-1))

    def conv(h, name, stride=1, act=True):
        h = F.conv2d(h, p[name], p[name + "b"], stride=stride, padding=1)
        return F.relu(h) if act else h

    def logits():
        if net == "mlp":
            h = F.relu(torch.addmm(p["b1"], xt, p["w1"]))
            h = F.relu(torch.addmm(p["b2"], h, p["w2"]))
            return torch.addmm(p["b3"], h, p["w3"])
        if net == "lenet":
            h = F.max_pool2d(F.relu(F.conv2d(xt, p["c1"], p["c1b"])), 2)
            h = F.max_pool2d(F.relu(F.conv2d(h, p["c2"], p["c2b"])), 2)
            h = F.relu(torch.addmm(p["b1"], h.flatten(1), p["w1"]))
            return torch.addmm(p["b2"], h, p["w2"])
        h = conv(xt, "stem")
        for s in ("s1", "s2"):
            if s == "s2":
                h = conv(h, "down", stride=2)
            for b in range(2):
                r = conv(conv(h, "%s%d0" % (s, b)), "%s%d1" % (s, b), act=False)
                h = F.relu(r + h)
        return torch.addmm(p["fcb"], h.mean(dim=(2, 3)), p["fc"])

    def step():
        opt.zero_grad()
        ctx = torch.autocast("cpu", torch.bfloat16) if bf16 else contextlib.nullcontext()
        with ctx:
            loss = F.cross_entropy(logits().float(), yt)
        loss.backward()
        opt.step()
        return float(loss)

    return step


def onednn_bf16_isa():
    """What oneDNN computes bfloat16 with here, as device_mkldnn's Bf16Isa() says it (from the
    CPU's flags and ONEDNN_MAX_CPU_ISA)."""
    import os

    flags = cpu_flags()
    limit = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    if "amx_bf16" in flags and limit in ("ALL", "AVX512_CORE_AMX"):
        return "AMX"
    if "avx512_bf16" in flags and limit in ("ALL", "AVX512_CORE_BF16", "AVX512_CORE_AMX"):
        return "AVX-512 BF16 (native bf16 dot products)"
    if "avx512bw" in flags and (limit == "ALL" or limit.startswith("AVX512")):
        return "AVX-512 without BF16 (oneDNN emulates bfloat16)"
    return "no bfloat16 jit kernels (AVX2 or below): Tide's bf16 kernels decline to float32"


CASES = ["tide bf16 AMP", "pytorch bf16 autocast", "tide float32", "pytorch float32"]


def worker(case, args):
    import json

    net = args.net
    w, x, y = params(net)
    bf16 = "bf16" in case
    if case.startswith("pytorch"):
        import torch

        torch.set_num_threads(args.threads)
        step = torch_step(net, w, x, y, bf16)
    else:
        import tide

        tide.set_flags({"cpu_threads": args.threads})
        step = tide_step(net, w, x, y, bf16)
    losses = [step() for _ in range(CHECK_STEPS)]
    t = measure(step, reps=args.reps, warmup=3, inner=3)
    print(json.dumps({"losses": losses, "steps_per_s": [1.0 / t[0], 1.0 / t[2], 1.0 / t[1]]}))


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--worker", default=None)
    ap.add_argument("--net", default="mlp")
    ap.add_argument("--nets", default="mlp,lenet,resnet")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker:
        return worker(args.worker, args)
    table = Table("bfloat16 AMP train steps (SGD)", "steps/s", lower_is_better=False)
    for net in args.nets.split(","):
        extra = ["--reps", str(args.reps), "--threads", str(args.threads), "--net", net]
        rounds = interleaved_rounds(
            args.rounds, CASES, lambda c, extra=extra: run_isolated(__file__, c, extra)
        )
        res = {c: median_of_rounds(v, "steps_per_s") for c, v in rounds.items()}
        if "tide bf16 AMP" in rounds and "pytorch bf16 autocast" in rounds:
            a = rounds["tide bf16 AMP"][0]["losses"]
            b = rounds["pytorch bf16 autocast"][0]["losses"]
            agree = np.allclose(a, b, rtol=0.05, atol=0.02)
            print(
                "%s: bf16 losses tide %s, pytorch %s%s"
                % (
                    net,
                    np.round(a, 4).tolist(),
                    np.round(b, 4).tolist(),
                    "" if agree else "  (DIFFER beyond bfloat16's precision)",
                )
            )
        for tide_case, peer in (
            ("tide bf16 AMP", "pytorch bf16 autocast"),
            ("tide float32", "pytorch float32"),
        ):
            if tide_case in res:
                peers = {peer: res[peer]} if peer in res else {}
                table.add("%s: %s" % (net, tide_case), res[tide_case], peers)
    machine = machine_line(
        "%d threads each, one process per framework, %d interleaved rounds; oneDNN bfloat16: %s; "
        "target >= 1.2x" % (args.threads, args.rounds, onednn_bf16_isa())
    )
    table.print(machine)
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
