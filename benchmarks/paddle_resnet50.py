"""ResNet-50 inference from a model saved by PaddlePaddle (issue 15): Tide (plain kernels and
oneDNN, the model read by tide.io.load_inference_model) against Paddle Inference's CPU predictor
(oneDNN on, its IR optimisations on, as its users run it) and ONNX Runtime on the same model
converted by paddle2onnx; batch 1 and 16, the same thread count, each framework in a process of
its own, rounds interleaved. Every framework's output is compared with Paddle's.

bfloat16 (issue 32): tide-bf16 is load_inference_model(precision="bf16") (the fused convolutions
in bfloat16 on oneDNN, what stays float32 on oneDNN too), against the same peers and Paddle
Inference's own oneDNN bfloat16 (paddle-inference-bf16); its output must be within bfloat16's
tolerance (2e-2 of the largest) of Paddle's float32 one. The ISA line says what oneDNN ran
bfloat16 with. PyTorch (pytorch, pytorch-bf16: torchvision's ResNet-50 holding the saved model's
weights, traced and frozen, bf16 by autocast; torch_resnet50.py) is a peer where the venv has
torch and torchvision.

int8 (issue 32): tide-int8 is load_inference_model(precision="int8") calibrated on 4 random
batches of 2 (every convolution and the classifier in int8 on oneDNN), against ONNX Runtime's
static int8 quantization of the paddle2onnx model (onnxruntime-int8: quant_pre_process, then
quantize_static in QDQ format with per-channel weights, calibrated on the same batches) and
float32, and against Paddle Inference's oneDNN int8 (paddle-inference-int8: enable_mkldnn_int8
on the model Paddle's own PostTrainingQuantization made: abs_max, channel-wise weights, the same
batches); every int8 output is compared with float32's (max error, top-1 agreement).

    benchmarks/.venv-peers/bin/pip install paddlepaddle onnxruntime paddle2onnx
    benchmarks/.venv-peers/bin/python benchmarks/paddle_resnet50.py [--batches 1 16] [--json out.json]

The model (random weights, ~100 MB) is exported once into --model-dir by tools/paddle_export.py.
Tide loads it with load_inference_model's default optimisations (InferenceTranspiler: batch_norm
folded, bias / residual / relu fused into fused_conv2d); --no-optimize measures the program as
saved. --tide-omp-wait-policy sets OMP_WAIT_POLICY in Tide's processes only: Debian's oneDNN
runs on libgomp, whose waiting threads spin, which on a busy machine costs a scheduler time
slice per primitive (Paddle ships Intel's OpenMP runtime, ONNX Runtime its own pool).
"""

import os
import subprocess
import sys

import numpy as np
import paddle_peers as peers
from common import ROOT, Table, cpu_flags, machine_line, parser, set_threads, setup_paths

FRAMEWORKS = [
    "tide",
    "tide-mkldnn",
    "tide-bf16",
    "paddle-inference",
    "paddle-inference-bf16",
    "onnxruntime",
    "tide-int8",
    "paddle-inference-int8",
    "onnxruntime-int8",
    "pytorch",
    "pytorch-bf16",
]


def bf16_isa():
    """What the CPU computes bfloat16 with (its flags): AMX, AVX-512 BF16, or neither."""
    flags = cpu_flags()
    if "amx_bf16" in flags:
        return "AMX-BF16"
    if "avx512_bf16" in flags:
        return "AVX-512 BF16 (no AMX)"
    return "none (no AVX-512 BF16 / AMX: Tide's bf16 kernels decline, the program runs float32)"


def int8_isa():
    """What the CPU computes int8 dot products with: VNNI (AVX-512 or AVX) or neither."""
    flags = cpu_flags()
    if "amx_int8" in flags:
        return "AMX-INT8"
    if "avx512_vnni" in flags:
        return "AVX-512 VNNI (no AMX)"
    if "avx_vnni" in flags:
        return "AVX-VNNI"
    return "no VNNI (oneDNN's int8 runs without it, slower)"


def export(model_dir, frameworks):
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
    peers.paddle2onnx(os.path.dirname(prefix), "inference.pdmodel", prefix + ".onnx", 13)
    if "onnxruntime-int8" in frameworks and os.path.exists(prefix + ".onnx"):
        peers.onnxruntime_int8(prefix + ".onnx", prefix + ".int8.onnx", (1, 3, 224, 224))
    if "paddle-inference-int8" in frameworks:
        peers.paddle_int8_model(
            os.path.dirname(prefix), os.path.join(model_dir, "resnet50", "paddle_int8")
        )
    return prefix


def worker(case, args):
    framework, batch = case.rsplit(":", 1)
    set_threads(args.threads)
    if framework.startswith(("tide", "pytorch")):
        setup_paths()  # PyTorch's peer reads the saved weights with Tide's loader
    feed = (
        np.random.RandomState(int(batch))
        .standard_normal((int(batch), 3, 224, 224))
        .astype(np.float32)
    )
    if framework.startswith("pytorch"):
        import torch_resnet50

        fn = torch_resnet50.runner(args.prefix, feed, args.threads, bf16=framework.endswith("bf16"))
    else:
        fn = peers.make_runner(
            framework,
            args.prefix,
            args.prefix + ".pdmodel",
            feed,
            args.threads,
            optimize=not args.no_optimize,
        )
    peers.time_worker(fn, args.reps, args.model_dir, framework, batch)


def main():
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--frameworks", nargs="+", default=FRAMEWORKS, choices=FRAMEWORKS)
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
    prefix = export(args.model_dir, args.frameworks)
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

    def env_of(f):
        if f.startswith("tide") and args.tide_omp_wait_policy:
            return {"OMP_WAIT_POLICY": args.tide_omp_wait_policy}
        return None

    for batch in args.batches:
        script = os.path.abspath(__file__)
        best, gaps, cpu, per_round = peers.interleaved(
            script, args.frameworks, batch, args.rounds, extra, args.model_dir, env_of
        )
        peers.add_rows(table, batch, best, gaps, cpu, per_round)
    import paddle

    extra_line = (
        "%d threads, paddle %s, tide %s, tide OMP_WAIT_POLICY %s, load %s, bf16 ISA %s"
        % (
            args.threads,
            paddle.__version__,
            "as saved" if args.no_optimize else "optimised",
            args.tide_omp_wait_policy or os.environ.get("OMP_WAIT_POLICY", "unset"),
            "%.1f %.1f %.1f" % os.getloadavg(),
            bf16_isa(),
        )
        + ", int8 ISA %s" % int8_isa()
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
