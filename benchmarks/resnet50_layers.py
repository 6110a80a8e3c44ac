"""ResNet-50's convolutions one by one: Tide (plain kernels, or oneDNN with --mkldnn) against ONNX
Runtime on the same Paddle model (paddle_resnet50.py's export, converted by paddle2onnx), each
layer's time from the framework's own profiler (Tide's op events, ONNX Runtime's node kernel
times), the minimum over the rounds, layers of the same filter and output size summed. Both run
in one process, a run of each per round, so that a slow phase of the machine reaches both alike
(paddle_resnet50.py's separate processes can land in different phases); a pause after each run
lets the other's threads stop spinning. Where paddle_resnet50.py says how far apart the whole
nets are, this says which layers make the difference.

    benchmarks/.venv-peers/bin/python benchmarks/resnet50_layers.py [--batch 16] [--rounds 8]
"""

import collections
import json
import os
import time

import numpy as np
from common import machine_line, parser, set_threads, setup_paths
from paddle_resnet50 import export


def tide_layers(program, block, events):
    """{(filter dims, output size): [ms of each op]} from one run's fused_conv2d / conv2d events."""
    convs = [op for op in block.ops if op.type in ("fused_conv2d", "conv2d")]
    times = [e["dur_us"] / 1e3 for e in events if e["name"] in ("fused_conv2d", "conv2d")]
    assert len(times) == len(convs), "one event per convolution expected"
    out = []
    for op, t in zip(convs, times):
        f = tuple(block.var(op.input("Filter")[0]).shape)
        h = block.var(op.input("Input")[0]).shape[2]
        s, p = op.attr("strides")[0], op.attr("paddings")[0]
        out.append(((f, (h + 2 * p - f[2]) // s + 1), t))
    return out


def ort_layers(profile_file):
    """[(key, ms)] per Conv node and run from ONNX Runtime's profile."""
    with open(profile_file) as fh:
        events = json.load(fh)
    out = []
    for e in events:
        a = e.get("args", {})
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        if a.get("op_name") not in ("Conv", "FusedConv", "NchwcConv"):
            continue
        f = tuple(next(iter(a["input_type_shape"][1].values())))
        o = next(iter(a["output_type_shape"][0].values()))[2]
        out.append(((e["name"], (f, o)), e["dur"] / 1e3))
    return out


def main():
    ap = parser(__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--mkldnn", action="store_true", help="Tide on its oneDNN kernels")
    ap.add_argument("--model-dir", default="/tmp/tide-bench-paddle")
    ap.add_argument("--pause", type=float, default=0.0, help="seconds between the two runs")
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    import onnxruntime as ort

    import tide

    prefix = export(args.model_dir, ["onnxruntime"])
    exe = tide.Executor(tide.CPUPlace())
    program, feeds, fetches = tide.io.load_inference_model(prefix, exe)
    tide.set_flags({"use_mkldnn": args.mkldnn})
    x = np.random.RandomState(1).standard_normal((args.batch, 3, 224, 224)).astype("float32")
    data = {feeds[0]: tide.LoDTensor(x)}
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(args.model_dir, "resnet50_layers_ort")
    sess = ort.InferenceSession(prefix + ".onnx", so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    block = program.global_block()

    tide_min = {}  # op index -> (key, ms)
    for r in range(args.rounds + 2):  # two warm-up rounds
        if r < 2:
            exe.run(program, feed=data, fetch_list=fetches)
        else:
            with tide.profiler.profile():
                exe.run(program, feed=data, fetch_list=fetches)
            for i, (key, t) in enumerate(tide_layers(program, block, tide.profiler.events())):
                tide_min[i] = (key, min(t, tide_min.get(i, (key, t))[1]))
        time.sleep(args.pause)
        sess.run(None, {name: x})
        time.sleep(args.pause)
    ort_min = {}
    for (node, key), t in ort_layers(sess.end_profiling()):
        ort_min[node] = (key, min(t, ort_min.get(node, (key, t))[1]))

    tide_sum, ort_sum = collections.OrderedDict(), collections.defaultdict(float)
    counts = collections.Counter()
    for key, t in tide_min.values():
        tide_sum[key] = tide_sum.get(key, 0.0) + t
        counts[key] += 1
    for key, t in ort_min.values():
        ort_sum[key] += t
    kernels = "oneDNN" if args.mkldnn else "plain"
    print(
        "\nResNet-50's convolutions, batch %d, Tide (%s) against ONNX Runtime: ms, minimum over %d"
        " rounds, layers of one filter and output size summed" % (args.batch, kernels, args.rounds)
    )
    print("%-28s %3s %10s %10s %8s" % ("filter, output size", "n", "tide", "onnxrt", "ratio"))
    for key, t in tide_sum.items():
        o = ort_sum.get(key, float("nan"))
        label = "%s @%d" % (list(key[0]), key[1])
        print("%-28s %3d %10.3f %10.3f %7.2fx" % (label, counts[key], t, o, t / o))
    t, o = sum(tide_sum.values()), sum(ort_sum.values())
    print("%-28s %3d %10.2f %10.2f %7.3fx" % ("all", sum(counts.values()), t, o, t / o))
    print(machine_line("%d threads, onnxruntime %s" % (args.threads, ort.__version__)))


if __name__ == "__main__":
    main()
