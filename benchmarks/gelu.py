"""gelu on float32 tensors, forward and forward + backward, the exact (erf) form and the tanh
approximation, at a Fourier neural operator's activation size [4, 128, 128, 32] and a BERT/GPT
FFN's [64, 128, 3072]: Tide's vectorized CPU kernels (plugins/ops_math/act_simd.cc: the gelu
and gelu_grad ops on tensors already in the scope, Out and X@GRAD reusing their memory) against
PyTorch eager as users call it (torch.nn.functional.gelu, torch.autograd.grad with a given dOut:
a new output tensor per call) and its kernels alone into preallocated outputs ("pytorch out="),
each in a process of its own, rounds interleaved. Each framework's Out and X@GRAD are checked against float64 first (on
a slice, to 1e-5 of the largest value: PyTorch's tail below -3 is not ulp-accurate, Tide's is).

    /work/venvs/peers/bin/python benchmarks/gelu.py [--rounds 3] [--threads 2] [--json out.json]
"""

import argparse
import json
import math
import statistics

import numpy as np
from common import (
    Table,
    cpu_flags,
    interleaved_rounds,
    machine_line,
    measure,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
    try_import,
)

SHAPES = {"fno": (4, 128, 128, 32), "ffn": (64, 128, 3072)}
FORMS = {"erf": False, "tanh": True}
PASSES = ["fwd", "fwd+bwd"]
CHECKED = 200_000  # elements of the float64 check


def inputs(shape):
    rng = np.random.RandomState(0)
    x = (2 * rng.standard_normal(shape)).astype(np.float32)
    dout = rng.standard_normal(shape).astype(np.float32)
    return x, dout


def reference(x, dout, approximate):
    """float64 Out and X@GRAD of the first CHECKED elements."""
    x = x.reshape(-1)[:CHECKED].astype(np.float64)
    dout = dout.reshape(-1)[:CHECKED].astype(np.float64)
    if approximate:
        c = math.sqrt(2 / math.pi)
        e = np.exp(-2 * c * (x + 0.044715 * x**3))
        s = 1 / (1 + e)
        grad = s + x * s * (1 - s) * 2 * c * (1 + 3 * 0.044715 * x**2)
        return x * s, dout * grad
    cdf = 0.5 * np.frompyfunc(math.erfc, 1, 1)(-x / math.sqrt(2)).astype(np.float64)
    return x * cdf, dout * (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))


def tide_fn(x, dout, approximate, backward):
    """Runs the ops on X and dOut set in the scope once; returns a function fetching the results."""
    import tide

    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        block = main.global_block()

        def var(name):
            return block.create_var(name=name, shape=x.shape, dtype="float32", persistable=True)

        xv, out = var("x"), var("out")
        attrs = {"approximate": approximate}
        block.append_op("gelu", inputs={"X": [xv]}, outputs={"Out": [out]}, attrs=attrs)
        if backward:
            g, dx = var("dout"), var("dx")
            block.append_op(
                "gelu_grad",
                inputs={"X": [xv], "Out@GRAD": [g]},
                outputs={"X@GRAD": [dx]},
                attrs=attrs,
            )
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    scope.var("x").get_tensor().set(x, tide.CPUPlace())
    scope.var("dout").get_tensor().set(dout, tide.CPUPlace())

    def run():
        exe.run(main, scope=scope)

    def results():
        names = ["out", "dx"] if backward else ["out"]
        return [np.array(scope.find_var(n).get_tensor()) for n in names]

    return run, results


def torch_fn(x, dout, approximate, backward):
    torch = try_import("torch")
    if not torch:
        return None
    xt, gt = torch.from_numpy(x), torch.from_numpy(dout)
    mode = "tanh" if approximate else "none"
    got = []

    def run():
        if backward:
            xr = xt.detach().requires_grad_()
            out = torch.nn.functional.gelu(xr, approximate=mode)
            (dx,) = torch.autograd.grad(out, xr, gt)
            got[:] = [out.detach(), dx]
        else:
            with torch.no_grad():
                got[:] = [torch.nn.functional.gelu(xt, approximate=mode)]

    return run, lambda: [t.numpy() for t in got]


def torch_out_fn(x, dout, approximate, backward):
    """PyTorch's kernels alone, into preallocated tensors (aten's gelu.out and
    gelu_backward.grad_input): no 100 MB allocation per call, no autograd."""
    torch = try_import("torch")
    if not torch:
        return None
    xt, gt = torch.from_numpy(x), torch.from_numpy(dout)
    out, dx = torch.empty_like(xt), torch.empty_like(xt)
    mode = "tanh" if approximate else "none"

    def run():
        torch.ops.aten.gelu.out(xt, approximate=mode, out=out)
        if backward:
            torch.ops.aten.gelu_backward.grad_input(gt, xt, approximate=mode, grad_input=dx)

    return run, lambda: [out.numpy(), dx.numpy()] if backward else [out.numpy()]


FRAMEWORKS = {"tide": tide_fn, "pytorch": torch_fn, "pytorch out=": torch_out_fn}


def worker(spec, args):
    """One framework, shape, form and pass in this process: results checked, then ms per call."""
    name, shape, form, which = spec.split(":")
    x, dout = inputs(SHAPES[shape])
    fns = FRAMEWORKS[name](x, dout, FORMS[form], which == "fwd+bwd")
    if fns is None:
        raise SystemExit("%s is not installed" % name)
    run, results = fns
    run()
    for got, want in zip(results(), reference(x, dout, FORMS[form])):
        got = got.reshape(-1)[:CHECKED]
        if not np.allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max()):
            raise SystemExit("%s computed something else for %s" % (name, spec))
    t = measure(run, reps=args.reps, warmup=2)
    print(json.dumps({"ms": [v * 1e3 for v in t]}))


def summary(results, spec):
    values = [r["ms"][0] for r in results.get(spec, [])]
    return (statistics.median(values), min(values), max(values)) if values else None


def main():
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per framework")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker:
        return worker(args.worker, args)
    extra = ["--reps", str(args.reps), "--threads", str(args.threads)]
    table = Table("gelu on float32 tensors", "ms per call")
    for shape in SHAPES:
        for form in FORMS:
            for which in PASSES:
                specs = ["%s:%s:%s:%s" % (f, shape, form, which) for f in FRAMEWORKS]
                results = interleaved_rounds(
                    args.rounds, specs, lambda s: run_isolated(__file__, s, extra)
                )
                peers = {s.split(":")[0]: summary(results, s) for s in specs[1:]}
                table.add(
                    "%s %s %s" % ("x".join(map(str, SHAPES[shape])), form, which),
                    summary(results, specs[0]),
                    {k: v for k, v in peers.items() if v},
                )
    isa = [f for f in ("avx512f", "avx2", "fma") if f in cpu_flags()]
    torch = try_import("torch")
    machine = machine_line(
        "%d threads, CPU flags %s, torch %s"
        % (args.threads, "/".join(isa) or "none of avx2/avx512f", torch and torch.__version__)
    )
    table.print(machine)
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
