"""ResNet-50 inference from a model saved by PaddlePaddle (issue 15): Tide (plain kernels and
oneDNN, the model read by tide.io.load_inference_model) against Paddle Inference's CPU predictor
(oneDNN on, its IR optimisations on, as its users run it) and ONNX Runtime on the same model
converted by paddle2onnx; batch 1 and 16, the same thread count, each framework in a process of
its own, rounds interleaved. Every framework's output is compared with Paddle's.

    benchmarks/.venv-peers/bin/pip install paddlepaddle onnxruntime paddle2onnx
    benchmarks/.venv-peers/bin/python benchmarks/paddle_resnet50.py [--batches 1 16] [--json out.json]

The model (random weights, ~100 MB) is exported once into --model-dir by tools/paddle_export.py.
Tide loads it with load_inference_model's default optimisations (InferenceTranspiler: batch_norm
folded, bias / residual / relu fused into fused_conv2d); --no-optimize measures the program as
saved. --tide-omp-wait-policy sets OMP_WAIT_POLICY in Tide's processes only: Debian's oneDNN
runs on libgomp, whose waiting threads spin, which on a busy machine costs a scheduler time
slice per primitive (Paddle ships Intel's OpenMP runtime, ONNX Runtime its own pool).
"""

import json
import os
import subprocess
import sys

import numpy as np
from common import (
    ROOT,
    Table,
    machine_line,
    measure,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
)

FRAMEWORKS = ["tide", "tide-mkldnn", "paddle-inference", "onnxruntime"]


def export(model_dir):
    prefix = os.path.join(model_dir, "resnet50", "inference")
    if not os.path.exists(prefix + ".pdiparams"):
        subprocess.run(
            [
                sys.executable,
                os.path.join(ROOT, "tools", "paddle_export.py"),
                model_dir,
                "--only",
                "resnet50",
            ],
            check=True,
            env=dict(os.environ, FLAGS_enable_pir_api="0"),
            stdout=subprocess.DEVNULL,
        )
    onnx = prefix + ".onnx"
    if not os.path.exists(onnx):
        try:
            subprocess.run(
                [
                    "paddle2onnx",
                    "--model_dir",
                    os.path.dirname(prefix),
                    "--model_filename",
                    "inference.pdmodel",
                    "--params_filename",
                    "inference.pdiparams",
                    "--save_file",
                    onnx,
                    "--opset_version",
                    "13",
                ],
                check=True,
                capture_output=True,
                env=dict(
                    os.environ,
                    PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
                ),
            )
        except (OSError, subprocess.CalledProcessError) as e:
            print(
                "paddle2onnx unavailable or failed (%s): no ONNX Runtime row"
                % str(e).splitlines()[0]
            )
    return prefix


def make_runner(framework, prefix, feed, threads, optimize=True):
    if framework.startswith("tide"):
        import tide

        exe = tide.Executor(tide.CPUPlace())
        program, feeds, fetches = tide.io.load_inference_model(prefix, exe, optimize=optimize)
        tide.set_flags({"use_mkldnn": framework == "tide-mkldnn"})
        data = {feeds[0]: tide.LoDTensor(feed)}
        return lambda: exe.run(program, feed=data, fetch_list=fetches)[0]
    if framework == "paddle-inference":
        import paddle.inference as pi

        cfg = pi.Config(prefix + ".pdmodel", prefix + ".pdiparams")
        cfg.disable_gpu()
        cfg.enable_mkldnn()
        cfg.set_cpu_math_library_num_threads(threads)
        cfg.disable_glog_info()
        pred = pi.create_predictor(cfg)
        inp = pred.get_input_handle(pred.get_input_names()[0])
        out = pred.get_output_handle(pred.get_output_names()[0])

        def run():
            inp.copy_from_cpu(feed)
            pred.run()
            return out.copy_to_cpu()

        return run
    if framework == "onnxruntime":
        import onnxruntime as ort

        if not os.path.exists(prefix + ".onnx"):
            raise RuntimeError("no ONNX model (paddle2onnx failed)")
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
        sess = ort.InferenceSession(prefix + ".onnx", so, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        return lambda: sess.run(None, {name: feed})[0]
    raise ValueError(framework)


def worker(case, args):
    framework, batch = case.rsplit(":", 1)
    set_threads(args.threads)
    if framework.startswith("tide"):
        setup_paths()
    feed = (
        np.random.RandomState(int(batch))
        .standard_normal((int(batch), 3, 224, 224))
        .astype(np.float32)
    )
    fn = make_runner(framework, args.prefix, feed, args.threads, optimize=not args.no_optimize)
    out = fn()
    t = measure(fn, reps=args.reps, warmup=1)
    np.save(os.path.join(args.model_dir, "out_%s_%s.npy" % (framework, batch)), out)
    print(json.dumps({"time": [x * 1e3 for x in t]}))


def main():
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds (processes) per case")
    ap.add_argument("--model-dir", default="/tmp/tide-bench-paddle")
    ap.add_argument(
        "--no-optimize",
        action="store_true",
        help="Tide runs the program as saved (load_inference_model(optimize=False))",
    )
    ap.add_argument(
        "--tide-omp-wait-policy",
        default=None,
        choices=["PASSIVE", "ACTIVE"],
        help="OMP_WAIT_POLICY for Tide's processes (default: libgomp's own)",
    )
    ap.add_argument("--worker", default=None)
    ap.add_argument("--prefix", default=None)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args)
    prefix = export(args.model_dir)
    extra = [
        "--prefix",
        prefix,
        "--model-dir",
        args.model_dir,
        "--reps",
        str(args.reps),
        "--threads",
        str(args.threads),
    ] + (["--no-optimize"] if args.no_optimize else [])
    table = Table("ResNet-50 inference, a model saved by PaddlePaddle", "ms per batch")
    for batch in args.batches:
        times = {f: [] for f in FRAMEWORKS}
        for _ in range(args.rounds):  # A B C D A B C D: drift on a shared machine hits all
            for f in FRAMEWORKS:
                env = (
                    {"OMP_WAIT_POLICY": args.tide_omp_wait_policy}
                    if f.startswith("tide") and args.tide_omp_wait_policy
                    else None
                )
                r = run_isolated(
                    os.path.abspath(__file__), "%s:%d" % (f, batch), extra, timeout=1800, env=env
                )
                if r:
                    times[f].append(r["time"])
        best = {
            f: (float(np.median([t[0] for t in ts])), min(t[1] for t in ts), max(t[2] for t in ts))
            for f, ts in times.items()
            if ts
        }
        ref = (
            np.load(os.path.join(args.model_dir, "out_paddle-inference_%d.npy" % batch))
            if "paddle-inference" in best
            else None
        )
        gaps = {}
        for f in best:
            out = np.load(os.path.join(args.model_dir, "out_%s_%d.npy" % (f, batch)))
            if ref is not None:
                gaps[f] = float(np.abs(out - ref).max() / np.abs(ref).max())
        peers = {f: best[f] for f in ("paddle-inference", "onnxruntime") if f in best}
        for f in ("tide", "tide-mkldnn"):
            if f in best:
                table.add(
                    "b%d %s" % (batch, f),
                    best[f],
                    peers,
                    "max |out - Paddle's| / max |Paddle's|: "
                    + ", ".join("%s %.1e" % kv for kv in gaps.items()),
                )
    import paddle

    extra_line = "%d threads, paddle %s, tide %s, tide OMP_WAIT_POLICY %s" % (
        args.threads,
        paddle.__version__,
        "as saved" if args.no_optimize else "optimised",
        args.tide_omp_wait_policy or os.environ.get("OMP_WAIT_POLICY", "unset"),
    )
    try:
        import onnxruntime

        extra_line += ", onnxruntime %s" % onnxruntime.__version__
    except ImportError:
        pass
    table.print(machine_line(extra_line))
    table.dump(args.json, machine_line(extra_line))


if __name__ == "__main__":
    main()
