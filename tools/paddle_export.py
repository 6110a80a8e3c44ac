#!/usr/bin/env python3
"""Exports models built from PaddlePaddle's `paddle.vision.models` and `paddle.nn` layers in Paddle's
legacy program format, with random weights, a fixed random input and Paddle's own output, as Tide's
test fixtures.

Run it in a separate virtual environment with PaddlePaddle (CPU) from PyPI; the tests never need it.
The vision models are saved by Paddle 3.x; the text models, the vision transformer and the
PaddleOCR / PaddleClas / PaddleNLP families (paddle_family_models.py) by Paddle 2.6 (Paddle 3.x cannot build `paddle.nn`'s transformer layers in the legacy static graph); each
Paddle exports the models made with its major version unless `--only` names others:

    python3.11 -m venv /tmp/paddle3 && /tmp/paddle3/bin/pip install paddlepaddle==3.3.1
    FLAGS_enable_pir_api=0 /tmp/paddle3/bin/python tools/paddle_export.py tests/fixtures/paddle
    python3.11 -m venv /tmp/paddle26 && /tmp/paddle26/bin/pip install paddlepaddle==2.6.2 \
        "numpy<2" "protobuf<=3.20.3"    # 2.6's dynamic-to-static crashes with numpy 2 / protobuf 4+
    /tmp/paddle26/bin/python tools/paddle_export.py tests/fixtures/paddle

Each model goes to OUT/<model>/ as
  inference.pdmodel + inference.pdiparams  (paddle.static.save_inference_model or paddle.jit.save),
  or __model__ + one file per parameter    (Fluid 1.x's layout: the program and save_vars' files),
  input.npy, expected.npy                  (Paddle's executor on the saved model, reloaded;
                                           expected.npz with out0, out1, ... for several outputs),
  or inputs.npz (one array per feed name)  (models with several inputs or int64 ids),
  info.json                                (paddle version, how it was saved, shapes).
`--only NAME` exports one model; `--big` adds resnet50 (224x224, ~100 MB: for the benchmark only,
never committed).

With `--pir` (Paddle 3.x, its default program format) the models of PIR_MODELS are saved by
`paddle.jit.save` as PIR programs, to OUT/pir/<model>/ (inference.json + inference.pdiparams, the
same feed and reference files):

    /tmp/paddle3/bin/python tools/paddle_export.py --pir tests/fixtures/paddle
"""

import argparse
import json
import os
import shutil
import sys

PIR = "--pir" in sys.argv  # read before paddle is imported: the flag decides its program format
# The legacy ProgramDesc, or PIR's json with --pir.
os.environ.setdefault("FLAGS_enable_pir_api", "1" if PIR else "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle_family_models as families  # noqa: E402
import paddle_nn_models as nn_models  # noqa: E402
import paddle_quant_models as quant_models  # noqa: E402
from paddle import nn  # noqa: E402
from paddle.vision import models  # noqa: E402
from paddle.vision.models.resnet import BasicBlock  # noqa: E402
from paddle.vision.models.vgg import make_layers  # noqa: E402

SEED = 2026


class TinyResNet18(models.ResNet):
    """ResNet-18's topology (Paddle's ResNet and BasicBlock, its forward) at 1/8 of the width, so
    the fixture stays small; every op the full model uses is there."""

    def __init__(self, num_classes=10, base=8):
        nn.Layer.__init__(self)
        self._norm_layer, self.num_classes, self.with_pool = nn.BatchNorm2D, num_classes, True
        self.groups, self.base_width, self.dilation, self.inplanes = 1, 64, 1, base
        self.conv1 = nn.Conv2D(3, base, kernel_size=7, stride=2, padding=3, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(base)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(BasicBlock, base, 2)
        self.layer2 = self._make_layer(BasicBlock, base * 2, 2, stride=2)
        self.layer3 = self._make_layer(BasicBlock, base * 4, 2, stride=2)
        self.layer4 = self._make_layer(BasicBlock, base * 8, 2, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        self.fc = nn.Linear(base * 8, num_classes)


def tiny_vgg11():
    """VGG-11's layer pattern, narrow (8 to 32 channels), with a small classifier (Paddle's VGG: features,
    AdaptiveAvgPool2D((7, 7)), flatten, classifier)."""
    cfg = [8, "M", 16, "M", 32, 32, "M", 32, 32, "M", 32, 32, "M"]
    net = models.VGG(make_layers(cfg, batch_norm=False), num_classes=10)
    net.classifier = nn.Sequential(
        nn.Linear(32 * 7 * 7, 16),
        nn.ReLU(),
        nn.Dropout(),
        nn.Linear(16, 16),
        nn.ReLU(),
        nn.Dropout(),
        nn.Linear(16, 10),
    )
    return net


class ScaleBias(nn.Layer):
    """A linear layer, then x * 2 + 1 and paddle.scale with its bias before the scale: Paddle 3.x
    saves each `scale` of a legacy program with an empty BiasTensor input, which Paddle 2.x's
    definition (and Fluid's) lacks."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        h = self.fc(x)
        return paddle.scale(h * 2.0 + 1.0, scale=0.5, bias=0.25, bias_after_scale=False)


# name: (constructor, input shape (NCHW, batch 2), how it is saved)
MODELS = {
    "lenet": (lambda: models.LeNet(num_classes=10), [2, 1, 28, 28], "static"),
    "lenet_separate": (lambda: models.LeNet(num_classes=10), [2, 1, 28, 28], "fluid1"),
    "resnet18": (TinyResNet18, [2, 3, 32, 32], "jit"),
    "mobilenet_v1": (
        lambda: models.MobileNetV1(scale=0.125, num_classes=10),
        [2, 3, 32, 32],
        "static",
    ),
    "mobilenet_v2": (lambda: models.MobileNetV2(scale=0.25, num_classes=10), [2, 3, 32, 32], "jit"),
    "vgg11": (tiny_vgg11, [2, 3, 48, 48], "static"),
    "scale_bias": (ScaleBias, [2, 8], "static"),
}
# name: constructor of a paddle_nn_models layer (its inputs and example feed), saved by
# paddle.jit.save with Paddle 2.x.
NN_MODELS = {
    "bert": nn_models.BertEncoder,
    "gpt": nn_models.GptDecoder,
    "lstm": lambda: nn_models.RnnClassifier("lstm"),
    "gru": lambda: nn_models.RnnClassifier("gru"),
    "simple_rnn": lambda: nn_models.RnnClassifier("simple_rnn"),
    "vit": nn_models.TinyViT,
    "zero_d": nn_models.ZeroD,
    "new_ops": nn_models.NewOps,
    "set_value": nn_models.SetValue,
    # PaddleOCR, PaddleClas and PaddleNLP families (tools/paddle_family_models.py), saved by
    # Paddle 2.6 and, as PIR programs, by Paddle 3.x.
    **families.FAMILIES,
}
# paddle.nn models saved as PIR programs only: a model without parameters (Paddle 2.6's
# predictor, which the legacy export's reference runs, refuses to load no parameters).
PIR_NN_MODELS = {
    "no_params": nn_models.NoParams,
    "tensor_ops": nn_models.TensorOps,
    "new_ops": lambda: nn_models.NewOps(with_cond=False),
    "shape_ops": nn_models.ShapeOps,
    "unary_ops": nn_models.UnaryOps,
    "binary_ops": nn_models.BinaryOps,
    "vision_ops": nn_models.VisionOps,
    "misc_ops": nn_models.MiscOps,
    "volumetric_ops": nn_models.VolumetricOps,  # vol3d
    "einsum_ops": nn_models.EinsumOps,
    "detect_ops": nn_models.DetectOps,  # detect: yolo_box, multiclass_nms3
    "index_ops": nn_models.IndexOps,  # indexops: cummax ... unique, bool / int reductions
    "linalg_ops": nn_models.LinalgOps,  # linalg: det ... eigh, pinv
    "linalg2_ops": nn_models.Linalg2Ops,  # linalg2: lu ... lstsq, multi_dot, nanmedian
    "linalg2_rank": nn_models.Linalg2Rank,  # linalg2: matrix_rank (Paddle misdeclares its type)
    "loss_act_ops": nn_models.LossActOps,  # lossact: losses, i0 ... polygamma, swiglu, rms norm
    "nn_extra_ops": nn_models.NnExtraOps,  # nnextra: fold, unpool, lp_pool2d ... shard_index
    "random_ops": nn_models.RandomOps,  # random: uniform ... rrelu, deterministic outputs
    "graph_ops": nn_models.GraphOps,  # graph: segment_pool, send_u_recv, send_ue_recv, send_uv
    "loss_seq_ops": nn_models.LossSeqOps,  # lossseq: bce, log, nll and CTC losses, gather_tree
    "viterbi_ops": nn_models.ViterbiOps,  # lossseq: viterbi_decode
    "elem_extra_ops": nn_models.ElemExtraOps,  # elem: isclose ... clip of ints
    "spectral_ops": nn_models.SpectralOps,  # fft: paddle.fft, frame, overlap_add, stft, istft
    "audio_features": nn_models.AudioFeatures,  # fft: paddle.audio's LogMelSpectrogram, MFCC
    "complex_ops": nn_models.ComplexOps,  # complex: complex64 arithmetic, polar, as_complex
    "spectral_conv": nn_models.SpectralConv,  # an FNO layer: rfft2, complex einsum, irfft2
}
# The models saved as PIR programs by Paddle 3.x with --pir: the vision CNNs by dynamic-to-static
# ("jit"), the paddle.nn models as NN_MODELS (Paddle 3.x builds their transformer layers in PIR).
PIR_MODELS = [
    "lenet",
    "resnet18",
    "mobilenet_v2",
    "bert",
    "gpt",
    "vit",
    "zero_d",
    "no_params",
    "tensor_ops",
    "new_ops",
    "lstm",
    "set_value",
    "shape_ops",
    "unary_ops",
    "vision_ops",
    "binary_ops",
    "misc_ops",
    "volumetric_ops",
    "einsum_ops",
    "detect_ops",
    "index_ops",  # indexops
    "linalg_ops",  # linalg
    "linalg2_ops",  # linalg2
    "linalg2_rank",  # linalg2
    "loss_act_ops",  # lossact
    "nn_extra_ops",  # nnextra
    "random_ops",  # random
    "graph_ops",  # graph
    "loss_seq_ops",  # lossseq
    "viterbi_ops",  # lossseq
    "elem_extra_ops",  # elem
    "spectral_ops",  # fft
    "audio_features",  # fft
    "complex_ops",  # complex
    "spectral_conv",  # fft + complex
] + list(families.FAMILIES)
BIG = {"resnet50": (lambda: models.resnet50(), [1, 3, 224, 224], "static")}


def randomize(layer, rng):
    """Weights from a fixed seed, with BatchNorm's statistics, scales and biases not at their
    initial 0/1 either, so a kernel that ignores one of them shows."""
    scope, place = paddle.static.global_scope(), paddle.CPUPlace()

    def put(var, arr):
        scope.find_var(var.name).get_tensor().set(arr.astype(np.float32), place)

    for sub in layer.sublayers(include_self=True):
        if isinstance(sub, (nn.BatchNorm2D, nn.BatchNorm)):
            c = sub.weight.shape[0]
            put(sub.weight, rng.uniform(0.5, 1.5, c))
            put(sub.bias, rng.uniform(-0.2, 0.2, c))
            put(sub._mean, rng.uniform(-0.2, 0.2, c))
            put(sub._variance, rng.uniform(0.5, 1.5, c))
        elif isinstance(sub, (nn.Conv2D, nn.Linear)):
            w = sub.weight
            fan_in = int(np.prod(w.shape[1:])) if isinstance(sub, nn.Conv2D) else w.shape[0]
            put(w, rng.normal(0, np.sqrt(2.0 / fan_in), w.shape))
            if sub.bias is not None:
                put(sub.bias, rng.uniform(-0.1, 0.1, sub.bias.shape))


def build(ctor, shape, how, out_dir, rng):
    paddle.seed(SEED)
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = SEED
    exe = paddle.static.Executor(paddle.CPUPlace())
    if how == "jit":
        # Dynamic-to-static, as users of paddle.jit.save get it: the net's parameters are created
        # and randomised in dygraph, then traced.
        paddle.disable_static()
        net = ctor()
        net.eval()
        with paddle.no_grad():
            for p in net.parameters():
                p.set_value(rng.normal(0, 0.1, p.shape).astype(np.float32))
            for sub in net.sublayers():
                if isinstance(sub, nn.BatchNorm2D):
                    c = sub.weight.shape[0]
                    sub.weight.set_value(rng.uniform(0.5, 1.5, c).astype(np.float32))
                    sub._mean.set_value(rng.uniform(-0.2, 0.2, c).astype(np.float32))
                    sub._variance.set_value(rng.uniform(0.5, 1.5, c).astype(np.float32))
        spec = [paddle.static.InputSpec([None] + shape[1:], "float32", "x")]
        paddle.jit.save(
            paddle.jit.to_static(net, input_spec=spec, full_graph=True),
            os.path.join(out_dir, "inference"),
        )
        paddle.enable_static()
        return os.path.join(out_dir, "inference")
    with paddle.static.program_guard(main, startup):
        net = ctor()
        net.eval()
        x = paddle.static.data("x", [None] + shape[1:], "float32")
        y = net(x)
    exe.run(startup)
    randomize(net, rng)
    if how == "static":
        prefix = os.path.join(out_dir, "inference")
        paddle.static.save_inference_model(prefix, [x], [y], exe, program=main)
        return prefix
    # Fluid 1.x's layout: __model__ (the pruned program with feed/fetch ops) and one file per
    # persistable variable, written by save_vars (Paddle's `save` op).
    program = paddle.static.normalize_program(main, [x], [y])
    with open(os.path.join(out_dir, "__model__"), "wb") as f:
        f.write(program.desc.serialize_to_string())
    persistables = [
        v
        for v in program.list_vars()
        if v.persistable
        and v.type
        not in (
            paddle.base.core.VarDesc.VarType.FEED_MINIBATCH,
            paddle.base.core.VarDesc.VarType.FETCH_LIST,
        )
    ]
    paddle.static.save_vars(exe, out_dir, main, vars=persistables)
    return out_dir


# Models whose cross-check skips Paddle Inference's oneDNN predictor: Paddle 3.3.1's oneDNN
# pd_op.pad corrupts the heap (malloc aborts) or hangs, its executor and plain predictor are fine;
# its oneDNN pass fuses a complex matmul into a pd_op.fused_matmul it has no kernel for.
NO_ONEDNN_PREDICTOR = {"nn_extra_ops", "complex_ops"}


def reference(path, how, feed):
    """Paddle's outputs (a list) from its executor on the model as saved (reloaded from the files),
    and Paddle Inference's predictor's as a cross-check. `feed`: {feed name: array}."""
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        if how == "fluid1":
            prog, feeds, fetches = paddle.static.load_inference_model(
                path, exe, model_filename="__model__", params_filename=None
            )
        else:
            prog, feeds, fetches = paddle.static.load_inference_model(path, exe)
        assert sorted(feeds) == sorted(feed), (feeds, list(feed))
        outs = exe.run(prog, feed=feed, fetch_list=fetches)
    if how == "fluid1":
        return outs, None
    model = path + (".json" if os.path.exists(path + ".json") else ".pdmodel")
    if os.path.basename(os.path.dirname(path)) in NO_ONEDNN_PREDICTOR:
        return outs, predict(model, path + ".pdiparams", feed, False)
    try:
        return outs, predict(model, path + ".pdiparams", feed, True)
    except NotImplementedError as e:  # Paddle 3.3's oneDNN instructions lack some attributes
        print("predictor with oneDNN failed (%s); without it" % str(e).split("\n")[0][:100])
        return outs, predict(model, path + ".pdiparams", feed, False)


def predict(model, params, feed, mkldnn):
    cfg = paddle.inference.Config(model, params)
    cfg.disable_gpu()
    if not mkldnn:
        cfg.disable_mkldnn()
    predictor = paddle.inference.create_predictor(cfg)
    for name in predictor.get_input_names():
        predictor.get_input_handle(name).copy_from_cpu(feed[name])
    predictor.run()
    return [predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()]


def save_nn(ctor, out_dir, rng):
    """A paddle_nn_models layer in dygraph, randomised, saved by paddle.jit.save."""
    paddle.disable_static()
    paddle.seed(SEED)
    net = ctor()
    net.eval()
    if hasattr(net, "randomize_weights"):  # the families' own (conv stacks need fan-in scaling)
        net.randomize_weights(rng)
    else:
        nn_models.randomize(net, rng)
    spec = [paddle.static.InputSpec(shape, dtype, name) for name, shape, dtype in net.inputs]
    prefix = os.path.join(out_dir, "inference")
    paddle.jit.save(net, prefix, input_spec=spec)
    paddle.enable_static()
    return prefix, net.example(rng)


def record(name, how, out_dir, path, feed, outs=None, extra=None):
    """Paddle's output for `feed` (its executor on the saved files unless `outs` gives it),
    written with the feed and info.json (plus `extra`'s keys)."""
    preds = None
    if outs is None:
        outs, preds = reference(path, how, feed)
    if len(feed) == 1 and "x" in feed:
        np.save(os.path.join(out_dir, "input.npy"), feed["x"])
    else:
        np.savez(os.path.join(out_dir, "inputs.npz"), **feed)
    # One output: expected.npy; several (UIE's start and end): expected.npz, out0, out1, ...
    if len(outs) == 1:
        np.save(os.path.join(out_dir, "expected.npy"), outs[0])
    else:
        np.savez(
            os.path.join(out_dir, "expected.npz"), **{"out%d" % i: o for i, o in enumerate(outs)}
        )
    out = outs[0]
    gap = (
        None
        if preds is None
        else max(
            float(np.max(np.abs(o - p)) / (np.max(np.abs(o)) + 1e-12)) for o, p in zip(outs, preds)
        )
    )
    info = {
        "paddle": paddle.__version__,
        "saved_by": {
            "static": "paddle.static.save_inference_model",
            "jit": "paddle.jit.save (to_static)",
            "fluid1": "__model__ + paddle.static.save_vars (one file per variable)",
            "pir": "paddle.jit.save (PIR program: inference.json)",
        }[how],
        "output_shape": list(out.shape),
        **({"output_shapes": [list(o.shape) for o in outs]} if len(outs) > 1 else {}),
        "seed": SEED,
        "predictor_rel_gap": gap,
    }
    info.update(extra or {})
    if list(feed) == ["x"]:
        info["input_shape"] = list(feed["x"].shape)
    else:
        info["inputs"] = {k: [str(v.dtype), list(v.shape)] for k, v in feed.items()}
    with open(os.path.join(out_dir, "info.json"), "w") as f:
        json.dump(info, f, indent=1)
    size = sum(os.path.getsize(os.path.join(out_dir, n)) for n in os.listdir(out_dir))
    print(
        "%-15s %-8s %8.1f KiB  out %s  predictor gap %s" % (name, how, size / 1024, out.shape, gap)
    )


# name: onnx_format of paddle_quant_models' QAT export (Paddle 2.x).
QUANT_MODELS = {"quant_fake": False, "quant_qdq": True}


def export_quant(name, out_root):
    paddle.disable_static()
    paddle.seed(SEED)
    out_dir = fresh_dir(out_root, name)
    prefix = os.path.join(out_dir, "inference")
    rng = np.random.default_rng(SEED + sum(map(ord, name)))
    feed = quant_models.save_quantized(QUANT_MODELS[name], prefix, rng)
    paddle.enable_static()
    record(name, "jit", out_dir, prefix, feed)


# name: the form of paddle_quant_models.save_pir_quantized (Paddle 3.x's QAT / PTQ, PIR programs).
PIR_QUANT_MODELS = {"quant_fake": "fake", "quant_qdq": "qdq", "quant_ptq": "ptq"}


def rel_gap(a, b):
    return float(np.max(np.abs(a - b)) / (np.max(np.abs(a)) + 1e-12))


def export_pir_quant(name, out_root):
    """Paddle 3.x's QAT net as a PIR program. quant_fake: Paddle's executor on the reloaded file
    gives expected.npy (as every fixture). quant_qdq: Paddle 3.3.1 runs its own PIR
    dequantize_linear as a quantize (the reloaded program outputs the weights' levels times the
    levels of the activations, ~1e5) and its predictor fails to build the program, so expected.npy
    is Paddle's dygraph output of the converted net that was saved, checked against Paddle's
    executor on the same net saved in the legacy format (its twin, legacy/, run in a second
    process with FLAGS_enable_pir_api=0); info.json records both gaps. quant_ptq (post-training
    quantization, converted) likewise."""
    import subprocess

    out_dir = fresh_dir(out_root, name)
    prefix = os.path.join(out_dir, "inference")
    form = PIR_QUANT_MODELS[name]
    feed, dygraph = quant_models.save_pir_quantized(form, prefix)
    paddle.enable_static()
    if form == "fake":
        outs, _ = reference(prefix, "pir", feed)
        record(
            name, "pir", out_dir, prefix, feed, extra={"dygraph_rel_gap": rel_gap(outs[0], dygraph)}
        )
        return
    twin = os.path.join(out_dir, "legacy")
    os.makedirs(twin)
    env = dict(os.environ, FLAGS_enable_pir_api="0")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paddle_quant_models.py")
    subprocess.run([sys.executable, script, "legacy-twin", form, twin], env=env, check=True)
    legacy = np.load(os.path.join(twin, "paddle_out.npy"))
    os.remove(os.path.join(twin, "paddle_out.npy"))
    os.remove(os.path.join(twin, "inference.pdiparams.info"))
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        prog, _, fetches = paddle.static.load_inference_model(prefix, exe)
        (pir_exe,) = exe.run(prog, feed=feed, fetch_list=fetches)
    try:
        predict(prefix + ".json", prefix + ".pdiparams", feed, False)
        predictor = "ran"
    except Exception as e:  # noqa: BLE001 (Paddle 3.3.1's own failure, recorded)
        lines = [ln.strip() for ln in str(e).split("\n") if "Error" in ln] or [str(e)]
        predictor = "fails: " + lines[0][:120]
    extra = {
        "expected_from": "Paddle's dygraph run of the converted net that paddle.jit.save saved",
        "legacy_twin_executor_rel_gap": rel_gap(dygraph, legacy),
        "paddle_pir_executor_rel_gap": rel_gap(dygraph, pir_exe),
        "paddle_pir_predictor": predictor,
    }
    assert extra["legacy_twin_executor_rel_gap"] < 1e-5, extra
    record(name, "pir", out_dir, prefix, feed, outs=[dygraph], extra=extra)


def share_params(out_root, name):
    """A PIR fixture whose parameters are byte for byte the legacy fixture's (same model, seed
    and names) keeps none of its own: info.json's "params" names the legacy file, which the test
    puts beside the .json. Keeps the fixtures small."""
    pir_dir = os.path.join(out_root, "pir", name)
    mine = os.path.join(pir_dir, "inference.pdiparams")
    legacy = os.path.join(out_root, name, "inference.pdiparams")
    if not os.path.exists(legacy):
        return
    with open(mine, "rb") as a, open(legacy, "rb") as b:
        if a.read() != b.read():
            return
    os.remove(mine)
    with open(os.path.join(pir_dir, "info.json")) as f:
        info = json.load(f)
    info["params"] = "../../%s/inference.pdiparams" % name
    with open(os.path.join(pir_dir, "info.json"), "w") as f:
        json.dump(info, f, indent=1)
    print("%-15s shares %s" % (name, info["params"]))


def fresh_dir(out_root, name):
    out_dir = os.path.join(out_root, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    return out_dir


def export_nn(name, ctor, out_root, how="jit"):
    out_dir = fresh_dir(out_root, name)
    path, feed = save_nn(ctor, out_dir, np.random.default_rng(SEED + sum(map(ord, name))))
    record(name, how, out_dir, path, feed)


def export(name, spec, out_root, how=None):
    ctor, shape, saved_how = spec
    out_dir = fresh_dir(out_root, name)
    rng = np.random.default_rng(SEED + sum(map(ord, name)))
    # PIR programs come from dynamic-to-static, whatever the legacy fixture used.
    path = build(ctor, shape, "jit" if how == "pir" else saved_how, out_dir, rng)
    how = how or saved_how
    record(name, how, out_dir, path, {"x": rng.standard_normal(shape).astype(np.float32)})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output directory (tests/fixtures/paddle)")
    ap.add_argument("--only", action="append", help="export only these models")
    ap.add_argument("--big", action="store_true", help="also resnet50 (not a fixture)")
    ap.add_argument("--pir", action="store_true", help="PIR programs (Paddle 3.x) to OUT/pir")
    args = ap.parse_args()
    if args.pir:
        if paddle.__version__.startswith("2.") or os.environ["FLAGS_enable_pir_api"] in ("0",):
            sys.exit("--pir needs Paddle 3.x with FLAGS_enable_pir_api on (its default)")
        out = os.path.join(args.out, "pir")
        for name in args.only or PIR_MODELS + list(PIR_QUANT_MODELS):
            if name in PIR_QUANT_MODELS:
                export_pir_quant(name, out)
                continue
            if name in NN_MODELS or name in PIR_NN_MODELS:
                export_nn(name, {**NN_MODELS, **PIR_NN_MODELS}[name], out, how="pir")
            else:
                export(name, MODELS[name], out, how="pir")
            share_params(args.out, name)
        return
    if os.environ.get("FLAGS_enable_pir_api") not in ("0", "false", "False"):
        sys.exit("run with FLAGS_enable_pir_api=0 (the legacy program format)")
    paddle.enable_static()
    todo = dict(MODELS, **(BIG if args.big else {}))
    if args.only:
        names = args.only
    else:  # the models made with this Paddle's major version
        names = list(NN_MODELS) if paddle.__version__.startswith("2.") else list(todo)
    if not args.only and paddle.__version__.startswith("2."):
        names += list(QUANT_MODELS)
    for name in names:
        if name in QUANT_MODELS:
            export_quant(name, args.out)
        elif name in NN_MODELS:
            export_nn(name, NN_MODELS[name], args.out)
        else:
            export(name, todo[name] if name in todo else BIG[name], args.out)


if __name__ == "__main__":
    main()
