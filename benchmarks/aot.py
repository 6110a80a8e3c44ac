"""Programs compiled ahead of time (issue 34): the frozen plan (tide.aot.FrozenModel) and the
compiled executable (tide.aot.compile, built with the system compiler: model_main, C++ only)
against the executor running the same program on the same kernels.

1. Framework time per op on op_overhead.py's 1,000-op chain of 64-element elementwise_add: the
   executor, the frozen plan, the compiled executable (its own timing of `--repeat` runs, no
   Python), and ONNX Runtime (default optimisations) beside them.
2. Start-up time for ResNet-50 (process start to first result, `import tide` included for the
   Python cases): the executor (load_inference_model + first run) against the frozen plan
   (FrozenModel + first run) and the compiled executable (tide_model_create, which loads only the
   plan's plugins, + first run); the plan is frozen, compiled and built once beforehand.
3. Peak memory on ResNet-50: the plan's arena against the executor's peak (tide.memory.stats,
   the allocator's peak_used over a run, parameters excluded), both on the program as saved
   (load_inference_model's optimisations peak higher while folding than the run does).

Every case runs in a process of its own, the rounds interleaved. ResNet-50 comes from
tools/paddle_export.py --big (Paddle needed once, from --paddle-python); without it the resnet18
fixture (1/8 width, 32x32) stands in, and the table says so.

    benchmarks/.venv-peers/bin/python benchmarks/aot.py [--ops 1000] [--rounds 3] [--json out.json]
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from common import (
    ROOT,
    Table,
    cpu_flags,
    machine_line,
    measure,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
    try_import,
)
from op_overhead import onnxruntime_chain, tide_chain, tide_chain_program

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "paddle", "resnet18", "inference")


def isa():
    """The widest vector ISA the CPU offers (the plain kernels' Eigen and oneDNN pick theirs)."""
    flags = cpu_flags()
    if not flags:
        return "unknown ISA"
    for name in ("avx512f", "avx2", "avx", "sse4_2"):
        if name in flags:
            return name
    return "no AVX"


def frozen_chain(n_ops, x0, threads):
    import tide

    main, h = tide_chain_program(n_ops)
    path = os.path.join(tempfile.mkdtemp(), "chain.tideaot")
    tide.aot.freeze(main, ["x", "y"], [h], tide.CPUPlace(), {"x": [64], "y": [64]}, path)
    model = tide.aot.FrozenModel(path)
    feed = [tide.LoDTensor(x0), tide.LoDTensor(x0)]
    return lambda: model.run(feed)[0]


CHAINS = {
    "executor": lambda n, x0, threads: tide_chain(n, x0),
    "frozen": frozen_chain,
    "onnxruntime": onnxruntime_chain,
}


def compile_worker(what, args):
    """Freezes and compiles the chain or ResNet (--plan: where its plan is) into a source
    directory; prints it with the cmake arguments that build it against this tide."""
    import tide

    src = os.path.join(tempfile.mkdtemp(), "src")
    if what == "chain":
        main, h = tide_chain_program(args.ops)
        plan = os.path.join(os.path.dirname(src), "chain.tideaot")
        tide.aot.freeze(main, ["x", "y"], [h], tide.CPUPlace(), {"x": [64], "y": [64]}, plan)
    else:
        plan = args.plan
    tide.aot.compile(plan, src)
    print(json.dumps({"src": src, "cmake_args": tide.aot.cmake_args()}))


def build_compiled(what, extra):
    """model_main for the chain or ResNet, compiled and built (Release) in a temporary directory."""
    r = run_isolated(__file__, "compile:" + what, extra)
    if r is None:
        return None
    build = os.path.join(os.path.dirname(r["src"]), "build")
    for cmd in (
        ["cmake", "-S", r["src"], "-B", build, "-DCMAKE_BUILD_TYPE=Release"] + r["cmake_args"],
        ["cmake", "--build", build],
    ):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print("aot.py: building the compiled %s failed: %s" % (what, p.stderr[-500:]))
            return None
    return os.path.join(build, "model_main")


def compiled_chain_us_per_op(model_main, args):
    """The compiled chain's framework time per op: model_main's own timing of 5 x reps runs
    (no Python), after checking its result."""
    work = os.path.dirname(model_main)
    x0 = np.random.RandomState(0).rand(64).astype("float32")
    np.save(os.path.join(work, "x0.npy"), x0)
    inputs = [os.path.join(work, "x0.npy")] * 2
    p = subprocess.run(
        [model_main, "--quiet", "--out", work, "--repeat", str(5 * args.reps)] + inputs,
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        raise SystemExit("compiled chain failed: " + p.stderr[-500:])
    if not np.allclose(np.load(os.path.join(work, "output_0.npy")), x0 * (args.ops + 1), rtol=1e-4):
        raise SystemExit("the compiled chain computed something else")
    return float(p.stdout.split("us per run:")[1].split()[0]) / args.ops


def chain_worker(name, args):
    x0 = np.random.RandomState(0).rand(64).astype("float32")
    run = CHAINS[name](args.ops, x0, args.threads)
    if run is None:
        raise SystemExit("%s is not installed" % name)
    got = np.asarray(run())
    if not np.allclose(got, x0 * (args.ops + 1), rtol=1e-4):
        raise SystemExit("%s computed something else" % name)
    t = measure(run, reps=args.reps, warmup=3, inner=5)
    print(json.dumps({"us_per_op": [v / args.ops * 1e6 for v in t]}))


def resnet_model(args):
    """(model prefix, name): ResNet-50 exported once into --model-dir, else the fixture."""
    prefix = os.path.join(args.model_dir, "resnet50", "inference")
    if not os.path.exists(prefix + ".pdiparams") and args.paddle_python:
        subprocess.run(
            [args.paddle_python, os.path.join(ROOT, "tools", "paddle_export.py"), args.model_dir]
            + ["--big", "--only", "resnet50"],
            env=dict(os.environ, FLAGS_enable_pir_api="0"),
            capture_output=True,
        )
    if os.path.exists(prefix + ".pdiparams"):
        return prefix, "ResNet-50 (224x224)", [3, 224, 224]
    return FIXTURE, "resnet18 fixture (1/8 width, 32x32; no ResNet-50 export)", [3, 32, 32]


def freeze_resnet(prefix, chw, path, optimize=True):
    import tide

    exe = tide.Executor(tide.CPUPlace())
    program, feeds, fetches = tide.io.load_inference_model(prefix, exe, optimize=optimize)
    tide.aot.freeze(program, feeds, fetches, tide.CPUPlace(), {feeds[0]: [(1, 1)] + chw}, path)


STARTUP = {
    "executor": (
        "import numpy as np, tide\nt1 = time.time()\n"
        "exe = tide.Executor(tide.CPUPlace())\n"
        "program, feeds, fetches = tide.io.load_inference_model(PREFIX, exe)\n"
        "out = exe.run(program, feed={feeds[0]: X}, fetch_list=fetches)[0]\n"
    ),
    "frozen": (
        "import numpy as np, tide\nt1 = time.time()\n"
        "model = tide.aot.FrozenModel(PLAN)\n"
        "out = model.run([X])[0]\n"
    ),
}


def compiled_startup_seconds(model_main, x_npy):
    """(wall time from spawning model_main to its exit after the first result, the part the
    executable reports: tide_model_create and the first run)."""
    t0 = time.perf_counter()
    p = subprocess.run([model_main, x_npy], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit("compiled start-up failed: " + p.stderr[-500:])
    create, first = p.stdout.split("create ", 1)[1].split(" s, first run ")
    return wall, float(create) + float(first.split()[0])


def startup_seconds(case, prefix, plan, chw):
    """(wall time from spawning the process to its first result, the part after `import tide`:
    loading and the first run, which the process prints)."""
    code = (
        "import time\nt0 = time.time()\n"
        + STARTUP[case]
        .replace("PREFIX", repr(prefix))
        .replace("PLAN", repr(plan))
        .replace("X", "np.zeros([1] + %r, 'float32')" % (chw,))
        + "print('done', time.time() - t1, float(out.sum()))\n"
    )
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit("%s start-up failed: %s" % (case, p.stderr[-500:]))
    after_import = float(p.stdout.split("done", 1)[1].split()[0])
    return wall, after_import


def memory_worker(case, args):
    """Peak bytes of a run: the executor's allocator peak past the parameters, or the arena."""
    import tide

    prefix, chw = args.prefix, json.loads(args.chw)
    x = np.zeros([1] + chw, "float32")
    place = tide.CPUPlace()
    if case == "frozen":
        model = tide.aot.FrozenModel(args.plan)
        model.run([x])
        print(json.dumps({"bytes": model.arena_bytes}))
        return
    exe = tide.Executor(place)
    # Unoptimised (as --plan was frozen): InferenceTranspiler's folding peaks above the run, and
    # the allocator's peak is the process's, so it would hide the run's.
    program, feeds, fetches = tide.io.load_inference_model(prefix, exe, optimize=False)
    before = tide.memory.stats(place)
    base = before["used"]  # the parameters
    exe.run(program, feed={feeds[0]: x}, fetch_list=fetches)
    peak = tide.memory.stats(place)["peak_used"]
    # When loading peaked higher than the run, the run's own peak is hidden under it and this
    # is an upper bound (said in the table).
    print(json.dumps({"bytes": peak - base, "bound": peak == before["peak_used"]}))


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (one process each)")
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "benchmarks", ".models"))
    ap.add_argument("--paddle-python", default="/work/venvs/paddle3/bin/python")
    ap.add_argument("--worker", default=None, help="==SUPPRESS==")
    ap.add_argument("--prefix", default=None, help="==SUPPRESS==")
    ap.add_argument("--plan", default=None, help="==SUPPRESS==")
    ap.add_argument("--chw", default=None, help="==SUPPRESS==")
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker and args.worker.startswith("memory:"):
        return memory_worker(args.worker.split(":", 1)[1], args)
    if args.worker and args.worker.startswith("compile:"):
        return compile_worker(args.worker.split(":", 1)[1], args)
    if args.worker:
        return chain_worker(args.worker, args)
    load0 = os.getloadavg()[0]

    extra = ["--ops", str(args.ops), "--reps", str(args.reps), "--threads", str(args.threads)]
    compiled_chain = build_compiled("chain", extra)
    per_op = {name: [] for name in list(CHAINS) + ["compiled"]}
    for _ in range(args.rounds):
        for name in CHAINS:
            r = run_isolated(__file__, name, extra)
            if r:
                per_op[name].append(r["us_per_op"][0])
        if compiled_chain:
            per_op["compiled"].append(compiled_chain_us_per_op(compiled_chain, args))
    per_op = {k: (statistics.median(v), min(v), max(v)) for k, v in per_op.items() if v}

    prefix, model_name, chw = resnet_model(args)
    plan = os.path.join(tempfile.mkdtemp(), "resnet.tideaot")
    freeze_resnet(prefix, chw, plan)
    compiled_resnet = build_compiled("resnet", ["--plan", plan, "--threads", str(args.threads)])
    x_npy = os.path.join(os.path.dirname(plan), "x.npy")
    np.save(x_npy, np.zeros([1] + chw, "float32"))
    starts = {"executor": [], "frozen": []}
    if compiled_resnet:
        starts["compiled"] = []
    for _ in range(args.rounds):
        for case in starts:
            if case == "compiled":
                starts[case].append(compiled_startup_seconds(compiled_resnet, x_npy))
            else:
                starts[case].append(startup_seconds(case, prefix, plan, chw))
    loads = {k: [a for _, a in v] for k, v in starts.items()}
    loads = {k: (statistics.median(v), min(v), max(v)) for k, v in loads.items()}
    starts = {k: [w for w, _ in v] for k, v in starts.items()}
    starts = {k: (statistics.median(v), min(v), max(v)) for k, v in starts.items()}
    plain_plan = os.path.join(os.path.dirname(plan), "resnet_unoptimised.tideaot")
    freeze_resnet(prefix, chw, plain_plan, optimize=False)
    mem_args = ["--prefix", prefix, "--plan", plain_plan, "--chw", json.dumps(chw)]
    mem = {
        case: run_isolated(__file__, "memory:" + case, mem_args + ["--threads", str(args.threads)])
        for case in ("executor", "frozen")
    }
    load1 = os.getloadavg()[0]
    for built in (compiled_chain, compiled_resnet):  # sources, builds and params.bin copies
        if built:
            shutil.rmtree(os.path.dirname(os.path.dirname(built)), ignore_errors=True)
    shutil.rmtree(os.path.dirname(plan), ignore_errors=True)  # the two ResNet plans

    table = Table(
        "tide.aot: the compiled executable and the frozen plan against the executor (issue 34)",
        "see case",
    )
    table.add(
        "us per op, %d-op elementwise_add chain" % args.ops,
        per_op.get("compiled"),
        {k: v for k, v in per_op.items() if k != "compiled"},
        note="tide = the compiled model_main's own timing; peers: FrozenModel.run, the executor "
        "on the same program, ONNX Runtime (from Python)",
    )
    table.add(
        "s, start-up to first result, batch 1",
        starts.get("compiled"),
        {k: v for k, v in starts.items() if k != "compiled"},
        note=model_name + "; process spawn to exit; `import tide` included for the Python cases",
    )
    table.add(
        "s, load + first run",
        loads.get("compiled"),
        {k: v for k, v in loads.items() if k != "compiled"},
        note=model_name + "; compiled: tide_model_create + run; Python cases: after import tide; "
        "executor: load_inference_model (with its optimisations) + run",
    )
    if mem["executor"] and mem["frozen"]:
        table.add(
            "MB, peak temporaries, batch 1",
            (mem["frozen"]["bytes"] / 2**20,) * 3,
            {"executor peak": (mem["executor"]["bytes"] / 2**20,) * 3},
            note=model_name
            + " unoptimised; the arena against the allocator's peak above the parameters"
            + (" (an upper bound: loading peaked higher)" if mem["executor"]["bound"] else ""),
        )
    import tide

    ort = try_import("onnxruntime")
    machine = machine_line(
        "tide %s, %d threads, ISA %s (plain kernels), one process per case, %d interleaved "
        "rounds, onnxruntime %s; machine busy: load average %.1f before, %.1f after (other "
        "sessions share its cores)"
        % (
            tide.__version__,
            args.threads,
            isa(),
            args.rounds,
            getattr(ort, "__version__", "n/a"),
            load0,
            load1,
        )
    )
    table.print(machine)
    for case in ("compiled", "frozen"):
        if case in per_op and "onnxruntime" in per_op:
            print(
                "per op: %s / onnxruntime = %.2f (issue 34's target <= 0.2), "
                "%s / executor = %.2f"
                % (
                    case,
                    per_op[case][0] / per_op["onnxruntime"][0],
                    case,
                    per_op[case][0] / per_op["executor"][0],
                )
            )
    for case in ("compiled", "frozen"):
        if case in starts:
            print(
                "start-up: executor / %s = %.2f (target >= 3); load + first run: %.2f"
                % (
                    case,
                    starts["executor"][0] / starts[case][0],
                    loads["executor"][0] / loads[case][0],
                )
            )
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
