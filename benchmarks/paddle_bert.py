"""BERT-base inference from a model saved by PaddlePaddle (issue 31): Tide (plain kernels and
oneDNN, the model read by tide.io.load_inference_model with its transformer passes) against Paddle
Inference's CPU predictor (oneDNN on, its IR optimisation passes on, as PaddleNLP's ERNIE / BERT
predictors configure it; not enable_memory_optim, which Paddle 3.3.1's predictor refuses on a PIR
program: "Not find predictor_id 0 and pass_name memory_optimize_pass") and ONNX Runtime on the same model converted by
paddle2onnx (default optimisations); batch 1 and 8, sequence 128, the same thread count, each
framework in a process of its own, rounds interleaved. Every output is compared with Paddle's.

    benchmarks/.venv-peers/bin/pip install paddlepaddle onnxruntime paddle2onnx
    benchmarks/.venv-peers/bin/python benchmarks/paddle_bert.py [--batches 1 8] [--rounds 3]

The model: tools/paddle_nn_models.py's BertEncoder (word / position / token type embeddings,
post-norm nn.TransformerEncoder with gelu and a padding mask, tanh pooler) at BERT-base's size
(12 layers, hidden 768, 12 heads, feed-forward 3072, vocabulary 30522), random weights (normal,
sigma 0.02 as BERT initialises them; layer norm scales in [0.5, 1.5]), saved once into
--model-dir by paddle.jit.save of Paddle 3.x (its default PIR program, inference.json, which
Tide, Paddle Inference and paddle2onnx read; ~440 MB, never committed). The ids are random with
padding after each row's length (128, 112, 96, ...), so the mask matters.
--skip-passes names InferenceTranspiler passes Tide does not run (inference_passes.PASSES).

`--model gpt` runs a pre-norm model of the same size instead: tools/paddle_nn_models.py's
GptDecoder (token and position embeddings, nn.TransformerEncoder with normalize_before under a
causal mask, the final layer norm, the output projection tied to the embedding: logits over the
vocabulary), 12 layers, hidden 768, the same vocabulary, weights and ids (saved as gpt_base/).
"""

import os
import subprocess
import sys

import numpy as np
import paddle_peers as peers
from common import (
    ROOT,
    Table,
    machine_line,
    parser,
    set_threads,
    setup_paths,
)

FRAMEWORKS = ["tide", "tide-mkldnn", "paddle-inference", "onnxruntime"]
SEQ, VOCAB = 128, 30522


MODELS = {"bert": ("BertEncoder", "bert_base"), "gpt": ("GptDecoder", "gpt_base")}


def export_model(model_dir, model):
    """Runs in the peers' Python (Paddle 3.x): BertEncoder (or GptDecoder) at BERT-base's size,
    saved."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import paddle
    import paddle_nn_models as m

    m.VOCAB, m.HIDDEN, m.HEADS, m.FFN, m.LAYERS, m.MAX_LEN = VOCAB, 768, 12, 3072, 12, 512
    paddle.seed(2026)
    cls, name = MODELS[model]
    net = getattr(m, cls)()
    net.eval()
    rng = np.random.default_rng(2026)
    with paddle.no_grad():
        for p in net.parameters():
            p.set_value(rng.normal(0, 0.02, p.shape).astype(np.float32))
        for sub in net.sublayers():
            if isinstance(sub, paddle.nn.LayerNorm):
                sub.weight.set_value(rng.uniform(0.5, 1.5, sub.weight.shape).astype(np.float32))
    spec = [paddle.static.InputSpec(s, d, n) for n, s, d in net.inputs]
    paddle.jit.save(net, os.path.join(model_dir, name, "inference"), input_spec=spec)


def export(model_dir, model):
    prefix = os.path.join(model_dir, MODELS[model][1], "inference")
    if not os.path.exists(prefix + ".pdiparams"):
        subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--export", "--model-dir", model_dir]
            + ["--model", model],
            check=True,
        )
    peers.paddle2onnx(os.path.dirname(prefix), "inference.json", prefix + ".onnx", 14)
    return prefix


def ids(batch):
    """Random ids in [1, VOCAB), 0 (padding) after row i's length 128 - 16 i (at least 16)."""
    rng = np.random.default_rng(batch)
    x = rng.integers(1, VOCAB, (batch, SEQ)).astype(np.int64)
    for i in range(batch):
        x[i, max(SEQ - 16 * i, 16) :] = 0
    return x


def worker(case, args):
    framework, batch = case.rsplit(":", 1)
    set_threads(args.threads)
    if framework.startswith("tide"):
        setup_paths()
    fn = peers.make_runner(
        framework,
        args.prefix,
        args.prefix + ".json",
        ids(int(batch)),
        args.threads,
        skip_passes=args.skip_passes,
    )
    peers.time_worker(fn, args.reps, args.model_dir, framework, batch)


def main():
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (processes) per case")
    ap.add_argument("--model-dir", default="/tmp/tide-bench-paddle")
    ap.add_argument("--skip-passes", nargs="*", default=[], help="InferenceTranspiler passes off")
    ap.add_argument("--frameworks", nargs="+", default=FRAMEWORKS, choices=FRAMEWORKS)
    ap.add_argument("--model", default="bert", choices=sorted(MODELS), help="gpt: pre-norm")
    ap.add_argument("--export", action="store_true", help=argparse_hidden())
    ap.add_argument("--worker", default=None)
    ap.add_argument("--prefix", default=None)
    args = ap.parse_args()
    if args.export:
        return export_model(args.model_dir, args.model)
    if args.worker:
        return worker(args.worker, args)
    prefix = export(args.model_dir, args.model)
    extra = ["--prefix", prefix, "--model-dir", args.model_dir, "--reps", str(args.reps)]
    extra += ["--threads", str(args.threads), "--skip-passes"] + args.skip_passes
    title = {"bert": "BERT-base", "gpt": "GPT (pre-norm) at BERT-base's size"}[args.model]
    table = Table(title + " inference (seq 128), a model saved by PaddlePaddle", "ms per batch")
    for batch in args.batches:
        script = os.path.abspath(__file__)
        best, gaps, cpu, per_round = peers.interleaved(
            script, args.frameworks, batch, args.rounds, extra, args.model_dir
        )
        peers.add_rows(table, batch, best, gaps, cpu, per_round)
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
