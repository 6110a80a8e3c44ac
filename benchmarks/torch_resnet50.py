"""PyTorch as a peer of paddle_resnet50.py: torchvision's ResNet-50 holding the weights of the
ResNet-50 Paddle saved (paddle.vision.models.resnet50 is the same network: v1.5, the stride on
each bottleneck's 3x3 convolution), matched layer by layer in the order both run them. Set up as
PyTorch's CPU users deploy it: eval mode, channels-last, traced, frozen and optimised for
inference (batch norm folded into the convolutions, oneDNN's), denormals flushed; bfloat16
through torch.autocast("cpu", torch.bfloat16) before tracing. torch.compile is not used: on this
2-core machine it took 34 s to compile and ran batch 1 in 1.4 s against TorchScript's 52 ms
(2026-11-29, torch 2.15, under load). The benchmark compares its output with Paddle Inference's
like every other peer's, which also checks the weights went where they belong."""

import numpy as np


def paddle_weights(prefix):
    """The saved model's weights in the order its program uses them: conv filters, batch norms
    (scale, bias, mean, variance), then the classifier's weight [in, out] and bias. Read with
    Tide's loader (the program as saved, nothing fused)."""
    import tide

    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    program, _, _ = tide.io.load_inference_model(prefix, exe, scope=scope, optimize=False)

    def value(name):
        return np.array(scope.find_var(name).get_tensor())

    convs, norms, fc = [], [], []
    for op in program.global_block().ops:
        if op.type == "conv2d":
            convs.append(value(op.input("Filter")[0]))
        elif op.type == "batch_norm":
            norms.append([value(op.input(p)[0]) for p in ("Scale", "Bias", "Mean", "Variance")])
        elif op.type in ("matmul_v2", "matmul", "mul"):
            fc.append(value(op.input("Y")[0]))
        elif op.type == "elementwise_add" and len(fc) == 1:
            fc.append(value(op.input("Y")[0]))
    return convs, norms, fc


def resnet50(prefix):
    """torchvision's ResNet-50 with the Paddle model's weights, in eval mode."""
    import torch
    import torchvision
    from torch import nn

    convs, norms, fc = paddle_weights(prefix)
    net = torchvision.models.resnet50()
    tconvs = [m for m in net.modules() if isinstance(m, nn.Conv2d)]
    tnorms = [m for m in net.modules() if isinstance(m, nn.BatchNorm2d)]
    if (len(tconvs), len(tnorms), len(fc)) != (len(convs), len(norms), 2):
        raise ValueError(
            "the saved model has %d convolutions, %d batch norms and %d classifier tensors; "
            "torchvision's ResNet-50 %d, %d and 2"
            % (len(convs), len(norms), len(fc), len(tconvs), len(tnorms))
        )
    with torch.no_grad():
        for m, w in zip(tconvs, convs):
            m.weight.copy_(torch.from_numpy(w))
        for m, (scale, bias, mean, var) in zip(tnorms, norms):
            for p, v in (
                (m.weight, scale),
                (m.bias, bias),
                (m.running_mean, mean),
                (m.running_var, var),
            ):
                p.copy_(torch.from_numpy(v))
        net.fc.weight.copy_(torch.from_numpy(fc[0].T))
        net.fc.bias.copy_(torch.from_numpy(fc[1]))
    return net.eval()


def runner(prefix, feed, threads, bf16=False):
    """One inference of `feed` (NCHW float32) per call, returning float32 logits as numpy."""
    import contextlib
    import warnings

    import torch

    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    net = resnet50(prefix).to(memory_format=torch.channels_last)
    x = torch.from_numpy(feed).contiguous(memory_format=torch.channels_last)
    cast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    with torch.inference_mode(), cast, warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # TorchScript's deprecation notice
        traced = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(net, x)))
        for _ in range(2):  # the profiling runs TorchScript makes before it settles
            traced(x)

    def run():
        with torch.inference_mode(), cast:
            return traced(x).float().numpy()

    return run
