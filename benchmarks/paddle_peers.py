"""What the benchmarks of models saved by PaddlePaddle (paddle_resnet50.py, paddle_bert.py) share:
the peers as functions running the model on a feed (Paddle Inference's CPU predictor with oneDNN
and its IR optimisation passes on, as its users configure it; ONNX Runtime at its default
optimisations on the model converted by paddle2onnx), the conversion, and the interleaved rounds
of isolated processes with their summary (median time per framework, each output's gap to
Paddle Inference's)."""

import json
import os
import subprocess
import sys
import time

import numpy as np
from common import measure, run_isolated


def paddle2onnx(model_dir, model_filename, onnx, opset):
    """Converts model_dir/model_filename (+ inference.pdiparams) to `onnx`; says why not."""
    if os.path.exists(onnx):
        return
    tool = os.path.join(os.path.dirname(sys.executable), "paddle2onnx")  # the peers' venv's
    try:
        subprocess.run(
            [
                tool if os.path.exists(tool) else "paddle2onnx",
                "--model_dir",
                model_dir,
                "--model_filename",
                model_filename,
                "--params_filename",
                "inference.pdiparams",
                "--save_file",
                onnx,
                "--opset_version",
                str(opset),
            ],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError) as e:
        print(
            "paddle2onnx unavailable or failed (%s): no ONNX Runtime row" % str(e).splitlines()[0]
        )


def paddle_inference(model_file, params_file, feed, threads, bf16=False, int8=False):
    """Paddle Inference's CPU predictor: oneDNN on, IR optimisation passes on (its default);
    with `bf16`, its oneDNN bfloat16 passes (Config.enable_mkldnn_bfloat16); with `int8`, its
    oneDNN int8 passes (Config.enable_mkldnn_int8) on a model its quantization saved."""
    import paddle.inference as pi

    cfg = pi.Config(model_file, params_file)
    cfg.disable_gpu()
    cfg.switch_ir_optim(True)
    cfg.enable_mkldnn()
    if bf16:
        cfg.enable_mkldnn_bfloat16()
    if int8:
        cfg.enable_mkldnn_int8()
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


def onnxruntime(onnx, feed, threads):
    import onnxruntime as ort

    if not os.path.exists(onnx):
        raise RuntimeError("no ONNX model (paddle2onnx failed)")
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return lambda: sess.run(None, {name: feed})[0]


def calibration_batches(feed_shape, count=4, batch=2, seed=1234):
    """int8's calibration data, the same for every framework: `count` batches of `batch` random
    normal images of feed_shape's other dims."""
    rng = np.random.RandomState(seed)
    return [
        rng.standard_normal((batch,) + tuple(feed_shape[1:])).astype(np.float32)
        for _ in range(count)
    ]


def onnxruntime_int8(onnx, int8_onnx, feed_shape):
    """ONNX Runtime's static int8 quantization of `onnx` into `int8_onnx` as its documentation
    has users do it: quant_pre_process (shape inference, graph optimisation), then
    quantize_static in QDQ format with per-channel weights (s8 activations and weights, its
    defaults), calibrated (MinMax) on calibration_batches. Says why not where it fails."""
    if os.path.exists(int8_onnx):
        return
    try:
        import onnx as onnx_lib
        from onnxruntime import quantization as q

        pre = int8_onnx + ".pre.onnx"
        q.quant_pre_process(onnx, pre)
        name = onnx_lib.load(pre).graph.input[0].name

        class Reader(q.CalibrationDataReader):
            def __init__(self):
                self.batches = iter(calibration_batches(feed_shape))

            def get_next(self):
                b = next(self.batches, None)
                return None if b is None else {name: b}

        q.quantize_static(
            pre, int8_onnx, Reader(), quant_format=q.QuantFormat.QDQ, per_channel=True
        )
    except Exception as e:  # noqa: BLE001: any failure of the peer's tooling drops its row
        print("onnxruntime int8 quantization failed (%s): no onnxruntime-int8 row" % e)


# Paddle's own post-training quantization, as its users run it: abs_max activations,
# channel-wise weights, on calibration_batches (run by paddle_int8_model in a process of its own:
# it needs Paddle's static mode and the old program format).
PADDLE_PTQ = """
import sys
import numpy as np
import paddle
sys.path.insert(0, sys.argv[4])
from paddle_peers import calibration_batches
paddle.enable_static()
from paddle.static.quantization import PostTrainingQuantization
exe = paddle.static.Executor(paddle.CPUPlace())
model_dir, out_dir, feed = sys.argv[1], sys.argv[2], sys.argv[3]
batches = calibration_batches((1, 3, 224, 224))
ptq = PostTrainingQuantization(
    executor=exe, model_dir=model_dir, model_filename="inference.pdmodel",
    params_filename="inference.pdiparams", data_loader=lambda: ({feed: b} for b in batches),
    batch_nums=len(batches), algo="abs_max",
    quantizable_op_type=["conv2d", "depthwise_conv2d", "mul", "matmul", "matmul_v2"])
ptq.quantize()
ptq.save_quantized_model(out_dir, model_filename="inference.pdmodel",
                         params_filename="inference.pdiparams")
"""


def paddle_int8_model(model_dir, out_dir, feed_name="x"):
    """Paddle's PostTrainingQuantization of model_dir's inference model into out_dir (its
    fake-quant format, which Paddle Inference's enable_mkldnn_int8 runs); says why not."""
    if os.path.exists(os.path.join(out_dir, "inference.pdiparams")):
        return
    try:
        subprocess.run(
            [
                sys.executable,
                "-c",
                PADDLE_PTQ,
                model_dir,
                out_dir,
                feed_name,
                os.path.dirname(os.path.abspath(__file__)),
            ],
            check=True,
            env=dict(os.environ, FLAGS_enable_pir_api="0"),
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError) as e:
        tail = getattr(e, "stderr", "") or str(e)
        print(
            "Paddle's int8 quantization failed (%s): no paddle-inference-int8 row"
            % tail.strip().splitlines()[-1]
        )


def make_runner(framework, prefix, model_file, feed, threads, optimize=True, skip_passes=()):
    """A function running one inference of the model saved at `prefix` (its program file
    `model_file`) on `feed` with `framework`: tide / tide-mkldnn / tide-bf16 / tide-int8
    (load_inference_model, with its optimisations unless `optimize` is false, less `skip_passes`;
    tide-bf16 with precision="bf16", tide-int8 with precision="int8" calibrated on
    calibration_batches, both with oneDNN for what stays float32), paddle-inference (-bf16: its
    oneDNN bfloat16; -int8: its oneDNN int8 on paddle_int8_model's model), onnxruntime (-int8:
    onnxruntime_int8's model)."""
    if framework.startswith("tide"):
        import tide

        exe = tide.Executor(tide.CPUPlace())
        precision = {"tide-bf16": "bf16", "tide-int8": "int8"}.get(framework, "float32")
        calibration = None
        if precision == "int8":
            feed_name = tide.io.load_inference_model(prefix, exe, scope=tide.Scope())[1][0]
            calibration = [{feed_name: b} for b in calibration_batches(feed.shape)]
        program, feeds, fetches = tide.io.load_inference_model(
            prefix,
            exe,
            optimize=optimize,
            skip_passes=skip_passes,
            precision=precision,
            calibration=calibration,
        )
        tide.set_flags({"use_mkldnn": framework != "tide"})
        data = {feeds[0]: tide.LoDTensor(feed)}
        return lambda: exe.run(program, feed=data, fetch_list=fetches)[0]
    if framework in ("paddle-inference", "paddle-inference-bf16"):
        bf16 = framework.endswith("bf16")
        return paddle_inference(model_file, prefix + ".pdiparams", feed, threads, bf16)
    if framework == "paddle-inference-int8":
        d = os.path.join(os.path.dirname(prefix), "paddle_int8")
        model, params = (os.path.join(d, "inference." + e) for e in ("pdmodel", "pdiparams"))
        return paddle_inference(model, params, feed, threads, int8=True)
    if framework == "onnxruntime":
        return onnxruntime(prefix + ".onnx", feed, threads)
    if framework == "onnxruntime-int8":
        return onnxruntime(prefix + ".int8.onnx", feed, threads)
    raise ValueError(framework)


def time_worker(fn, reps, model_dir, framework, batch):
    """In a worker: times fn, keeps its output for the comparison, prints the times (ms) and the
    CPU time of all the process's threads per run (ms; on a busy machine, what the work cost
    apart from how much of the cores the scheduler gave it)."""
    out = fn()
    cpu = time.process_time()
    t = measure(fn, reps=reps, warmup=1)
    cpu = (time.process_time() - cpu) / (reps + 1)
    np.save(os.path.join(model_dir, "out_%s_%s.npy" % (framework, batch)), out)
    print(json.dumps({"time": [x * 1e3 for x in t], "cpu": cpu * 1e3}))


def interleaved(script, frameworks, batch, rounds, extra, model_dir, env_of=lambda f: None):
    """`rounds` rounds of one process per framework (A B C D A B C D: drift on a shared machine
    hits all): {framework: (median of the rounds' medians, min, max)}, {framework: max |out -
    Paddle Inference's| / max |Paddle Inference's|}, {framework: median CPU ms per run}, and
    [{framework: its median}] per round (for paired ratios: paired_ratios)."""
    times = {f: [] for f in frameworks}
    cpu = {f: [] for f in frameworks}
    per_round = []
    for _ in range(rounds):
        per_round.append({})
        for f in frameworks:
            r = run_isolated(script, "%s:%d" % (f, batch), extra, timeout=1800, env=env_of(f))
            if r:
                times[f].append(r["time"])
                cpu[f].append(r["cpu"])
                per_round[-1][f] = r["time"][0]
    best = {
        f: (float(np.median([t[0] for t in ts])), min(t[1] for t in ts), max(t[2] for t in ts))
        for f, ts in times.items()
        if ts
    }
    out = {f: np.load(os.path.join(model_dir, "out_%s_%d.npy" % (f, batch))) for f in best}
    ref = reference_output(out)
    gaps = {}
    if ref is not None:
        gaps = {f: float(np.abs(o - ref).max() / np.abs(ref).max()) for f, o in out.items()}
        for f, o in out.items():  # int8's top-1 against float32's, image by image
            if f.endswith("int8") and o.ndim == 2:
                gaps[f + " top-1"] = float((o.argmax(1) == ref.argmax(1)).mean())
    return best, gaps, {f: float(np.median(c)) for f, c in cpu.items() if c}, per_round


def paired_ratios(per_round, framework, peer):
    """framework's time / peer's in each round both ran (processes a minute apart: on a machine
    whose speed drifts between phases, the pair shares the phase far more often than two
    medians over all rounds do): (median, min, max), or None."""
    r = [t[framework] / t[peer] for t in per_round if framework in t and peer in t]
    return (float(np.median(r)), min(r), max(r)) if r else None


# The float32 output the others are compared with: Paddle Inference's where it ran, else the
# first float32 framework's.
REFERENCES = ("paddle-inference", "tide-mkldnn", "onnxruntime", "tide")


def reference_output(out):
    return next((out[f] for f in REFERENCES if f in out), None)


# bfloat16's tolerance: an output within this of Paddle's float32 one, relative to its largest.
BF16_TOLERANCE = 2e-2


def add_rows(table, batch, best, gaps, cpu, per_round=()):
    """Tide's rows against the peers' times, with every output's gap, CPU time and (given the
    rounds) the ratio paired round by round to each peer as the note."""
    peers = {
        f: best[f]
        for f in (
            "paddle-inference",
            "paddle-inference-bf16",
            "paddle-inference-int8",
            "onnxruntime",
            "onnxruntime-int8",
            "pytorch",
            "pytorch-bf16",
        )
        if f in best
    }
    ref = "Paddle's" if "paddle-inference" in best else "float32's"
    note = ("max |out - %s| / max |%s|: " % (ref, ref)) + ", ".join(
        ("%s %.3f" if k.endswith("top-1") else "%s %.1e") % (k, v) for k, v in gaps.items()
    )
    if "tide-bf16" in gaps:
        note += " (tide-bf16 %s bfloat16's tolerance, %.0e)" % (
            "within" if gaps["tide-bf16"] <= BF16_TOLERANCE else "OUTSIDE",
            BF16_TOLERANCE,
        )
    note += "; CPU ms per run (all threads): " + ", ".join("%s %.0f" % kv for kv in cpu.items())
    for f in ("tide", "tide-mkldnn", "tide-bf16", "tide-int8"):
        if f in best:
            paired = [(p, paired_ratios(per_round, f, p)) for p in peers]
            paired = ", ".join("%s %.2f (%.2f-%.2f)" % ((p,) + r) for p, r in paired if r)
            extra = "; paired per-round ratio: " + paired if paired else ""
            table.add("b%d %s" % (batch, f), best[f], peers, note + extra)
