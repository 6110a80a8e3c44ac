"""BERT-base inference from a model saved by PaddlePaddle (issue 31): Tide (plain kernels and
oneDNN, the model read by tide.io.load_inference_model with its transformer passes) against Paddle
Inference's CPU predictor (oneDNN on, its IR optimisation passes on, as PaddleNLP's ERNIE / BERT
predictors configure it; not enable_memory_optim, which Paddle 3.3.1's predictor refuses on a PIR
program: "Not find predictor_id 0 and pass_name memory_optimize_pass") and ONNX Runtime on the same model converted by
paddle2onnx (default optimisations); batch 1 and 8, sequence 128, the same thread count, each
framework in a process of its own, rounds interleaved. Every output is compared with Paddle's.

    python3.11 -m venv /work/venvs/bert-peers
    /work/venvs/bert-peers/bin/pip install paddlepaddle==3.3.1 onnxruntime paddle2onnx
    /work/venvs/bert-peers/bin/python benchmarks/paddle_bert.py [--batches 1 8] [--rounds 3]

The model: tools/paddle_nn_models.py's BertEncoder (word / position / token type embeddings,
post-norm nn.TransformerEncoder with gelu and a padding mask, tanh pooler) at BERT-base's size
(12 layers, hidden 768, 12 heads, feed-forward 3072, vocabulary 30522), random weights (normal,
sigma 0.02 as BERT initialises them; layer norm scales in [0.5, 1.5]), saved once into
--model-dir by paddle.jit.save of Paddle 3.x (its default PIR program, inference.json, which
Tide, Paddle Inference and paddle2onnx read; ~440 MB, never committed). The ids are random with
padding after each row's length (128, 112, 96, ...), so the mask matters.
--skip-passes names InferenceTranspiler passes Tide does not run (inference_passes.PASSES).
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
SEQ, VOCAB = 128, 30522


def export_model(model_dir):
    """Runs in the peers' Python (Paddle 3.x): BertEncoder at BERT-base's size, saved."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import paddle
    import paddle_nn_models as m

    m.VOCAB, m.HIDDEN, m.HEADS, m.FFN, m.LAYERS, m.MAX_LEN = VOCAB, 768, 12, 3072, 12, 512
    paddle.seed(2026)
    net = m.BertEncoder()
    net.eval()
    rng = np.random.default_rng(2026)
    with paddle.no_grad():
        for p in net.parameters():
            p.set_value(rng.normal(0, 0.02, p.shape).astype(np.float32))
        for sub in net.sublayers():
            if isinstance(sub, paddle.nn.LayerNorm):
                sub.weight.set_value(rng.uniform(0.5, 1.5, sub.weight.shape).astype(np.float32))
    spec = [paddle.static.InputSpec(s, d, n) for n, s, d in net.inputs]
    paddle.jit.save(net, os.path.join(model_dir, "bert_base", "inference"), input_spec=spec)


def export(model_dir):
    prefix = os.path.join(model_dir, "bert_base", "inference")
    if not os.path.exists(prefix + ".pdiparams"):
        subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--export", "--model-dir", model_dir],
            check=True,
        )
    if not os.path.exists(prefix + ".onnx"):
        try:
            subprocess.run(
                [
                    os.path.join(os.path.dirname(sys.executable), "paddle2onnx"),
                    "--model_dir",
                    os.path.dirname(prefix),
                    "--model_filename",
                    "inference.json",
                    "--params_filename",
                    "inference.pdiparams",
                    "--save_file",
                    prefix + ".onnx",
                    "--opset_version",
                    "14",
                ],
                check=True,
                capture_output=True,
            )
        except (OSError, subprocess.CalledProcessError) as e:
            print("paddle2onnx failed (%s): no ONNX Runtime row" % str(e).splitlines()[0])
    return prefix


def ids(batch):
    """Random ids in [1, VOCAB), 0 (padding) after row i's length 128 - 16 i (at least 16)."""
    rng = np.random.default_rng(batch)
    x = rng.integers(1, VOCAB, (batch, SEQ)).astype(np.int64)
    for i in range(batch):
        x[i, max(SEQ - 16 * i, 16) :] = 0
    return x


def make_runner(framework, prefix, feed, threads, skip_passes):
    if framework.startswith("tide"):
        import tide

        exe = tide.Executor(tide.CPUPlace())
        program, feeds, fetches = tide.io.load_inference_model(prefix, exe, optimize=False)
        tide.transpiler.InferenceTranspiler().transpile(
            program, exe.place, tide.global_scope(), skip_passes=skip_passes
        )
        tide.set_flags({"use_mkldnn": framework == "tide-mkldnn"})
        data = {feeds[0]: tide.LoDTensor(feed)}
        return lambda: exe.run(program, feed=data, fetch_list=fetches)[0]
    if framework == "paddle-inference":
        import paddle.inference as pi

        cfg = pi.Config(prefix + ".json", prefix + ".pdiparams")
        cfg.disable_gpu()
        cfg.switch_ir_optim(True)
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
    fn = make_runner(framework, args.prefix, ids(int(batch)), args.threads, args.skip_passes)
    out = fn()
    t = measure(fn, reps=args.reps, warmup=1)
    np.save(os.path.join(args.model_dir, "out_%s_%s.npy" % (framework, batch)), out)
    print(json.dumps({"time": [x * 1e3 for x in t]}))


def main():
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (processes) per case")
    ap.add_argument("--model-dir", default="/tmp/tide-bench-paddle")
    ap.add_argument("--skip-passes", nargs="*", default=[], help="InferenceTranspiler passes off")
    ap.add_argument("--frameworks", nargs="+", default=FRAMEWORKS, choices=FRAMEWORKS)
    ap.add_argument("--export", action="store_true", help=argparse_hidden())
    ap.add_argument("--worker", default=None)
    ap.add_argument("--prefix", default=None)
    args = ap.parse_args()
    if args.export:
        return export_model(args.model_dir)
    if args.worker:
        return worker(args.worker, args)
    prefix = export(args.model_dir)
    extra = ["--prefix", prefix, "--model-dir", args.model_dir, "--reps", str(args.reps)]
    extra += ["--threads", str(args.threads), "--skip-passes"] + args.skip_passes
    table = Table("BERT-base inference (seq 128), a model saved by PaddlePaddle", "ms per batch")
    for batch in args.batches:
        times = {f: [] for f in args.frameworks}
        for _ in range(args.rounds):  # A B C D A B C D: drift on a shared machine hits all
            for f in args.frameworks:
                r = run_isolated(os.path.abspath(__file__), "%s:%d" % (f, batch), extra, 1800)
                if r:
                    times[f].append(r["time"])
        best = {
            f: (float(np.median([t[0] for t in ts])), min(t[1] for t in ts), max(t[2] for t in ts))
            for f, ts in times.items()
            if ts
        }
        outs = {
            f: np.load(os.path.join(args.model_dir, "out_%s_%d.npy" % (f, batch))) for f in best
        }
        ref = outs.get("paddle-inference")
        gaps = {
            f: float(np.abs(o - ref).max() / np.abs(ref).max())
            for f, o in outs.items()
            if ref is not None
        }
        peers = {f: best[f] for f in ("paddle-inference", "onnxruntime") if f in best}
        for f in ("tide", "tide-mkldnn"):
            if f in best:
                note = "max |out - Paddle's| / max |Paddle's|: " + ", ".join(
                    "%s %.1e" % kv for kv in gaps.items()
                )
                table.add("b%d %s" % (batch, f), best[f], peers, note)
    import paddle

    line = "%d threads, paddle %s, tide passes off: %s" % (
        args.threads,
        paddle.__version__,
        " ".join(args.skip_passes) or "none",
    )
    try:
        import onnxruntime

        line += ", onnxruntime %s" % onnxruntime.__version__
    except ImportError:
        pass
    table.print(machine_line(line))
    table.dump(args.json, machine_line(line))


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
