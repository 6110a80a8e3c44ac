"""A LLaMA-style decoder's inference from a model saved by PaddlePaddle 3.3.1 (PIR): Tide (plain
kernels and oneDNN, the model read by tide.io.load_inference_model with its optimisations; and
precision="bf16", oneDNN's bfloat16 kernels, where the CPU has AVX-512 BF16 or AMX) against Paddle
Inference's CPU predictor (oneDNN on, its IR optimisation passes on, as PaddleNLP's predictors
configure it; and `paddle-inference-plain`, its plain kernels, IR passes on) and ONNX Runtime on
the same model converted by paddle2onnx (default optimisations), each framework in a process of
its own, rounds interleaved, 2 threads each (Paddle's set_cpu_math_library_num_threads, ONNX
Runtime's intra_op_num_threads, Tide's OMP_NUM_THREADS). Each framework's logits are compared
with Paddle Inference's: its plain predictor's, Paddle's own result (with oneDNN, Paddle
3.3.1's predictor computes these models wrongly: logits 0.4-1.1 off, relative to the largest,
with its IR passes on or off, where its plain predictor, ONNX Runtime and Tide agree within 4e-6;
tools/paddle_llm_models.py's fixtures record the same); a float32 row further than 1e-4 is marked
WRONG in its note. tide-bf16's note also gives its greedy token's agreement with the reference
at every position (top-1): bfloat16's rounding moves the logits by ~2e-2 of the largest.

    /work/venvs/peers/bin/pip install paddlepaddle onnxruntime paddle2onnx onnx
    /work/venvs/peers/bin/python benchmarks/paddle_llm.py [--cases prefill-b1 decode-b1 decode-b4]
        [--rounds 3] [--reps 7] [--model-dir DIR] [--json FILE]
    /work/venvs/peers/bin/python benchmarks/paddle_llm.py --profile tide-mkldnn:prefill-b1
        # Tide's per-op profile of one case and the ops of the program it ran

The models: tools/paddle_llm_models.py's classes (helper "llm"'s LLaMA fixtures) at a
realistic size: hidden 1024, 16 query heads over 4 KV heads (head 64), 4 layers, SwiGLU
intermediate 2816, vocabulary 32000, rotary tables over 2048 positions, RMSNorm, an untied LM head
(~110 M parameters, 440 MB in float32); random weights (normal, sigma 0.02; RMSNorm scales in
[0.5, 1.5]), saved once into --model-dir by paddle.jit.save (never committed) and converted once
by paddle2onnx:
- `prefill`: Llama (rotary tables from arange at the run's length, F.scaled_dot_product_attention
  with is_causal, which Paddle saves as matmul / triu / softmax), the logits of every position
  of a 128-token prompt at batch 1 (`prefill-b1`), and of a 1024-token one when asked for
  (`--cases prefill-1k-b1`: the attention's scores then outweigh the projections);
- `decode`: LlamaDecodeStep at 4 layers (one new token per row with its position id and the
  attention mask over past and new tokens, each layer's past key and value [B, 256, 4, 64] fed
  and the new ones concatenated after them, rotary tables gathered at the position ids, matmul
  attention under the causal & padding mask; outputs the logits, the present keys / values and
  a sampling tail: argmax, softmax / temperature, top-k), at batch 1 and 4; row i >= 1 has its
  first past position padded.
The machine line says which ISA the CPU has (float32's widest; bfloat16's: AMX or AVX-512 BF16)
and the load average over the run.
"""

import json
import os
import subprocess
import sys
import time

import numpy as np
import paddle_peers as peers
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
)

FRAMEWORKS = [
    "tide",
    "tide-mkldnn",
    "tide-bf16",
    "paddle-inference",
    "paddle-inference-plain",
    "onnxruntime",
]
PEERS = ("paddle-inference", "paddle-inference-plain", "onnxruntime")
# The logits the others are compared with: Paddle Inference's plain-kernel predictor (Paddle's own
# result: with oneDNN, Paddle 3.3.1's predictor computes these models wrongly, see the module's
# doc), else its oneDNN one, else ONNX Runtime's, else Tide's.
REFERENCES = ("paddle-inference-plain", "paddle-inference", "onnxruntime", "tide-mkldnn", "tide")
# A float32 output further than this from the reference (relative to its largest) is wrong.
FLOAT32_TOLERANCE = 1e-4
VOCAB, HIDDEN, HEADS, KV_HEADS, INTER, LAYERS, MAX_POS = 32000, 1024, 16, 4, 2816, 4, 2048
HEAD_DIM = HIDDEN // HEADS
PAST = 256
# case: (model, batch)
# case: (model, batch, prompt tokens of a prefill). prefill-1k-b1 (a long prompt, where the
# attention's [heads, tokens, tokens] scores outweigh the projections) is run when asked for.
CASES = {
    "prefill-b1": ("prefill", 1, 128),
    "decode-b1": ("decode", 1, 0),
    "decode-b4": ("decode", 4, 0),
    "prefill-1k-b1": ("prefill", 1, 1024),
}
DEFAULT_CASES = ["prefill-b1", "decode-b1", "decode-b4"]
MODEL_DIRS = {"prefill": "llama_prefill", "decode": "llama_decode"}


def decode_inputs():
    return [
        ("input_ids", [None, None], "int64"),
        ("position_ids", [None, None], "int64"),
        ("attention_mask", [None, None], "int64"),
    ] + [
        ("past_%s_%d" % (kv, i), [None, None, KV_HEADS, HEAD_DIM], "float32")
        for i in range(LAYERS)
        for kv in ("key", "value")
    ]


def export_model(model_dir, model):
    """Runs in the peers' Python (Paddle 3.x): the model at the size above, saved."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import paddle
    import paddle.nn.functional as F
    import paddle_llm_models as m

    m.VOCAB, m.HIDDEN, m.HEADS, m.KV_HEADS = VOCAB, HIDDEN, HEADS, KV_HEADS
    m.INTER, m.LAYERS, m.MAX_POS, m.HEAD_DIM = INTER, LAYERS, MAX_POS, HEAD_DIM

    class DecodeStep(m.LlamaDecodeStep):
        """LlamaDecodeStep's forward at LAYERS = 4 (its signature names two layers' caches)."""

        inputs = decode_inputs()

        def forward(
            self,
            input_ids,
            position_ids,
            attention_mask,
            past_key_0,
            past_value_0,
            past_key_1,
            past_value_1,
            past_key_2,
            past_value_2,
            past_key_3,
            past_value_3,
        ):
            past = [past_key_0, past_value_0, past_key_1, past_value_1]
            past += [past_key_2, past_value_2, past_key_3, past_value_3]
            batch, seq_len = paddle.shape(input_ids)[0], paddle.shape(input_ids)[1]
            past_len = paddle.shape(past[0])[1]
            cos_all, sin_all = m.rope_tables(m.MAX_POS)
            cos = paddle.gather(cos_all, position_ids.flatten()).reshape(
                [batch, seq_len, 1, m.HEAD_DIM]
            )
            sin = paddle.gather(sin_all, position_ids.flatten()).reshape(
                [batch, seq_len, 1, m.HEAD_DIM]
            )
            mask = m.decoder_mask(attention_mask, batch, seq_len, past_len)
            x = self.embed_tokens(input_ids)
            presents = []
            for i, layer in enumerate(self.layers):
                x, present = layer(x, cos, sin, mask, (past[2 * i], past[2 * i + 1]))
                presents += present
            logits = self.lm_head(self.norm(x))
            last = logits[:, -1, :]
            greedy = paddle.argmax(last, axis=-1)
            probs = F.softmax(last / m.TEMPERATURE, axis=-1)
            top_probs, top_ids = paddle.topk(probs, k=m.TOP_K)
            kth = paddle.topk(last, k=m.TOP_K)[0][:, -1:]
            filtered = paddle.where(last < kth, paddle.full_like(last, float("-inf")), last)
            return [logits, *presents, greedy, probs, top_probs, top_ids, filtered]

    paddle.disable_static()
    paddle.seed(2026)
    net = m.Llama() if model == "prefill" else DecodeStep()
    inputs = m.Llama.inputs if model == "prefill" else DecodeStep.inputs
    net.eval()
    rng = np.random.default_rng(2026)
    with paddle.no_grad():
        for p in net.parameters():
            p.set_value(rng.normal(0, 0.02, p.shape).astype(np.float32))
        for sub in net.sublayers():
            if isinstance(sub, m.RMSNorm):
                sub.weight.set_value(rng.uniform(0.5, 1.5, sub.weight.shape).astype(np.float32))
    spec = [paddle.static.InputSpec(s, d, n) for n, s, d in inputs]
    paddle.jit.save(net, os.path.join(model_dir, MODEL_DIRS[model], "inference"), input_spec=spec)


def export(model_dir, model):
    prefix = os.path.join(model_dir, MODEL_DIRS[model], "inference")
    if not os.path.exists(prefix + ".pdiparams"):
        subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--export", "--model-dir", model_dir]
            + ["--model", model],
            check=True,
            env=dict(os.environ, OMP_NUM_THREADS="1"),
        )
    to_onnx(prefix)
    return prefix


def to_onnx(prefix):
    """paddle2onnx (the peers' venv's) of prefix.json into prefix.onnx (opset 17); where it fails,
    says why (its last lines) and leaves no ONNX model: no onnxruntime rows."""
    if os.path.exists(prefix + ".onnx"):
        return
    tool = os.path.join(os.path.dirname(sys.executable), "paddle2onnx")
    cmd = [tool if os.path.exists(tool) else "paddle2onnx", "--model_dir", os.path.dirname(prefix)]
    cmd += ["--model_filename", "inference.json", "--params_filename", "inference.pdiparams"]
    cmd += ["--save_file", prefix + ".onnx", "--opset_version", "17"]
    try:
        r = subprocess.run(
            cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1")
        )
        why = (
            "" if r.returncode == 0 and os.path.exists(prefix + ".onnx") else (r.stderr or r.stdout)
        )
    except OSError as e:
        why = str(e)
    if why:
        tail = " | ".join(why.strip().splitlines()[-3:])
        print("paddle2onnx did not convert %s (%s): no onnxruntime row" % (prefix, tail))


def feed(case):
    """The case's inputs (numpy only: the Tide workers never import Paddle)."""
    model, batch, tokens = CASES[case]
    rng = np.random.default_rng(batch + (0 if model == "prefill" else 100))
    if model == "prefill":
        return {"input_ids": rng.integers(0, VOCAB, (batch, tokens)).astype(np.int64)}
    mask = np.ones((batch, PAST + 1), np.int64)
    mask[1:, 0] = 0
    out = {
        "input_ids": rng.integers(0, VOCAB, (batch, 1)).astype(np.int64),
        "position_ids": (np.cumsum(mask, axis=-1) - 1)[:, PAST:].astype(np.int64),
        "attention_mask": mask,
    }
    for i in range(LAYERS):
        for kv in ("key", "value"):
            out["past_%s_%d" % (kv, i)] = rng.normal(
                0, 1, (batch, PAST, KV_HEADS, HEAD_DIM)
            ).astype(np.float32)
    return out


def paddle_inference(prefix, data, threads, mkldnn=True):
    """peers.paddle_inference's configuration (without `mkldnn`: its plain kernels, IR passes
    still on), every input fed by name; the first output."""
    import paddle.inference as pi

    cfg = pi.Config(prefix + ".json", prefix + ".pdiparams")
    cfg.disable_gpu()
    cfg.switch_ir_optim(True)
    if mkldnn:
        cfg.enable_mkldnn()
    else:
        cfg.disable_mkldnn()
    cfg.set_cpu_math_library_num_threads(threads)
    cfg.disable_glog_info()
    pred = pi.create_predictor(cfg)
    handles = [(pred.get_input_handle(n), data[n]) for n in pred.get_input_names()]
    out = pred.get_output_handle(pred.get_output_names()[0])

    def run():
        for h, x in handles:
            h.copy_from_cpu(x)
        pred.run()
        return out.copy_to_cpu()

    return run


def onnxruntime(onnx, data, threads):
    import onnxruntime as ort

    if not os.path.exists(onnx):
        raise RuntimeError("no ONNX model (paddle2onnx failed)")
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
    feeds = {i.name: data[i.name] for i in sess.get_inputs()}
    return lambda: sess.run(None, feeds)[0]


def tide_runner(framework, prefix, data, profile=None):
    import tide

    exe = tide.Executor(tide.CPUPlace())
    program, feeds, fetches = tide.io.load_inference_model(
        prefix, exe, precision="bf16" if framework == "tide-bf16" else "float32"
    )
    tide.set_flags({"use_mkldnn": framework != "tide"})
    tensors = {n: tide.LoDTensor(data[n]) for n in feeds}
    if profile:
        profile(program)
    return lambda: exe.run(program, feed=tensors, fetch_list=fetches)[0]


def make_runner(framework, prefix, data, threads):
    if framework.startswith("tide"):
        return tide_runner(framework, prefix, data)
    if framework in ("paddle-inference", "paddle-inference-plain"):
        return paddle_inference(prefix, data, threads, mkldnn=framework == "paddle-inference")
    if framework == "onnxruntime":
        return onnxruntime(prefix + ".onnx", data, threads)
    raise ValueError(framework)


def profile(spec, args):
    """Tide's op kernels by total time over --reps runs of the case (after a warm-up run), and
    the ops of the program it ran."""
    framework, case = spec.split(":", 1)
    set_threads(args.threads)
    setup_paths()
    import collections

    import tide

    prefix = os.path.join(args.model_dir, MODEL_DIRS[CASES[case][0]], "inference")
    programs = []
    fn = tide_runner(framework, prefix, feed(case), programs.append)
    fn()
    with tide.profiler.profile():
        for _ in range(args.reps):
            fn()
    print(tide.profiler.report())
    ops = collections.Counter(op.type for op in programs[0].global_block().ops)
    print("ops of the program run: " + ", ".join("%s %d" % kv for kv in ops.most_common()))


def worker(spec, args):
    framework, case = spec.split(":", 1)
    set_threads(args.threads)
    if framework.startswith("tide"):
        setup_paths()
    model = CASES[case][0]
    prefix = os.path.join(args.model_dir, MODEL_DIRS[model], "inference")
    fn = make_runner(framework, prefix, feed(case), args.threads)
    out = fn()
    cpu = time.process_time()
    t = measure(fn, reps=args.reps, warmup=1)
    cpu = (time.process_time() - cpu) / (args.reps + 1)
    np.save(os.path.join(args.model_dir, "out_%s_%s.npy" % (framework, case)), out)
    print(json.dumps({"time": [x * 1e3 for x in t], "cpu": cpu * 1e3}))


def interleaved(frameworks, case, rounds, extra, model_dir):
    """peers.interleaved for a named case: rounds of one process per framework, the median of
    the rounds' medians (min, max), each output's gap to Paddle Inference's (max |out - ref| /
    max |ref|), the median CPU ms per run, and each round's medians (for paired ratios)."""
    script = os.path.abspath(__file__)
    times = {f: [] for f in frameworks}
    cpu = {f: [] for f in frameworks}
    per_round = []
    for _ in range(rounds):
        per_round.append({})
        for f in frameworks:
            r = run_isolated(script, "%s:%s" % (f, case), extra, timeout=1800)
            if r:
                times[f].append(r["time"])
                cpu[f].append(r["cpu"])
                per_round[-1][f] = r["time"][0]
    best = {
        f: (float(np.median([t[0] for t in ts])), min(t[1] for t in ts), max(t[2] for t in ts))
        for f, ts in times.items()
        if ts
    }
    out = {f: np.load(os.path.join(model_dir, "out_%s_%s.npy" % (f, case))) for f in best}
    ref = next((out[f] for f in REFERENCES if f in out), None)
    gaps = {}
    if ref is not None:
        gaps = {f: float(np.abs(o - ref).max() / np.abs(ref).max()) for f, o in out.items()}
        if "tide-bf16" in out:  # the greedy token at every position: the reference's?
            gaps["tide-bf16 top-1"] = float((out["tide-bf16"].argmax(-1) == ref.argmax(-1)).mean())
    return best, gaps, {f: float(np.median(c)) for f, c in cpu.items() if c}, per_round


def add_rows(table, case, best, gaps, cpu, per_round):
    """peers.add_rows for a named case."""
    peer_times = {f: best[f] for f in PEERS if f in best}
    ref = next((f for f in REFERENCES if f in best), "?")
    note = ("max |logits - %s's| / max |%s's|: " % (ref, ref)) + ", ".join(
        ("%s %.3f" if k.endswith("top-1") else "%s %.1e") % (k, v) for k, v in gaps.items()
    )
    wrong = [
        f for f, g in gaps.items() if f in FRAMEWORKS and f != "tide-bf16" and g > FLOAT32_TOLERANCE
    ]
    if wrong:
        note += " (WRONG, beyond float32's %.0e: %s)" % (FLOAT32_TOLERANCE, ", ".join(wrong))
    if "tide-bf16" in gaps:
        note += " (tide-bf16 %s bfloat16's tolerance, %.0e)" % (
            "within" if gaps["tide-bf16"] <= peers.BF16_TOLERANCE else "OUTSIDE",
            peers.BF16_TOLERANCE,
        )
    note += "; CPU ms per run (all threads): " + ", ".join("%s %.0f" % kv for kv in cpu.items())
    for f in ("tide", "tide-mkldnn", "tide-bf16"):
        if f in best:
            paired = [(p, peers.paired_ratios(per_round, f, p)) for p in peer_times]
            paired = ", ".join("%s %.2f (%.2f-%.2f)" % ((p,) + r) for p, r in paired if r)
            extra = "; paired per-round ratio: " + paired if paired else ""
            table.add("%s %s" % (case, f), best[f], peer_times, note + extra)


def isa():
    """The CPU's widest ISA for float32 and what oneDNN computes bfloat16 with."""
    flags = cpu_flags()
    fp32 = next((n for n in ("avx512f", "avx2", "avx") if n in flags), "no AVX")
    if "amx_bf16" in flags:
        bf16 = "AMX (amx_bf16) and AVX-512 BF16"
    elif "avx512_bf16" in flags:
        bf16 = "AVX-512 BF16, no AMX"
    else:
        bf16 = "no bf16 instructions"
    return "ISA %s, bf16: %s" % (fp32.upper().replace("AVX512F", "AVX-512"), bf16)


def main():
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="+", default=DEFAULT_CASES, choices=list(CASES))
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (processes) per case")
    ap.add_argument("--model-dir", default="/work/scratch/llmbench")
    ap.add_argument("--frameworks", nargs="+", default=FRAMEWORKS, choices=FRAMEWORKS)
    ap.add_argument(
        "--model", default="prefill", choices=sorted(MODEL_DIRS), help=argparse_hidden()
    )
    ap.add_argument("--export", action="store_true", help=argparse_hidden())
    ap.add_argument("--worker", default=None)
    ap.add_argument(
        "--profile",
        default=None,
        metavar="FRAMEWORK:CASE",
        help="print Tide's per-op profile (tide.profiler) of FRAMEWORK (tide, tide-mkldnn, "
        "tide-bf16) on CASE and the optimized program's op counts, instead of the benchmark",
    )
    args = ap.parse_args()
    if args.profile:
        return profile(args.profile, args)
    if args.export:
        return export_model(args.model_dir, args.model)
    if args.worker:
        return worker(args.worker, args)
    frameworks = list(args.frameworks)
    if "tide-bf16" in frameworks and not cpu_flags() & {"avx512_bf16", "amx_bf16"}:
        print("no AVX-512 BF16 / AMX on this CPU: no tide-bf16 row")
        frameworks.remove("tide-bf16")
    os.makedirs(args.model_dir, exist_ok=True)
    for model in sorted({CASES[c][0] for c in args.cases}):
        export(args.model_dir, model)
    extra = ["--model-dir", args.model_dir, "--reps", str(args.reps)]
    extra += ["--threads", str(args.threads)]
    table = Table(
        "LLaMA-style decoder (hidden 1024, 4 layers, 16/4 heads, vocab 32000) inference, "
        "a model saved by PaddlePaddle: prefill of %s tokens, a decode step after %d"
        % (
            " / ".join(str(CASES[c][2]) for c in args.cases if CASES[c][0] == "prefill") or "no",
            PAST,
        ),
        "ms per run",
    )
    load = [os.getloadavg()[0]]
    for case in args.cases:
        best, gaps, cpu, per_round = interleaved(
            frameworks, case, args.rounds, extra, args.model_dir
        )
        add_rows(table, case, best, gaps, cpu, per_round)
        load.append(os.getloadavg()[0])
    import paddle

    line = "%d threads, %s, paddle %s, load average %.1f-%.1f, %d rounds" % (
        args.threads,
        isa(),
        paddle.__version__,
        min(load),
        max(load),
        args.rounds,
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
