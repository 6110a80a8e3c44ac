"""Models quantized by Paddle's quantization-aware training (`paddle.quantization.
ImperativeQuantAware`, Paddle 2.x's dygraph QAT, which PaddleSlim's `quant_aware` wraps), saved by
its `save_quantized_model` in both of its formats: Paddle's own quant-dequant ops
(`fake_quantize_dequantize_moving_average_abs_max` on activations,
`fake_channel_wise_quantize_dequantize_abs_max` on weights) and, with `onnx_format=True`, the
`quantize_linear` / `dequantize_linear` pairs of ONNX's QDQ form (weights stored as int8 levels).
A small conv net (conv, batch norm, relu, pool, depthwise conv, linear), its scales set by a few
training steps on random data. Used by tools/paddle_export.py."""

import numpy as np
import paddle
from paddle import nn


class QuantConvNet(nn.Layer):
    inputs = [("x", [None, 3, 16, 16], "float32")]

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2D(8)
        self.depthwise = nn.Conv2D(8, 8, 3, padding=1, groups=8)
        self.pool = nn.MaxPool2D(2)
        self.fc = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        h = self.pool(nn.functional.relu(self.bn(self.conv(x))))
        h = nn.functional.relu(self.depthwise(h))
        return self.fc(paddle.flatten(h, 1))

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 3, 16, 16)).astype(np.float32)}


def save_quantized(onnx_format, prefix, rng, steps=4):
    """QuantConvNet through QAT (channel-wise abs-max weights, moving-average abs-max
    activations), `steps` SGD steps on random data, saved at `prefix`; returns the feed."""
    from paddle.quantization import ImperativeQuantAware

    net = QuantConvNet()
    qat = ImperativeQuantAware(
        weight_quantize_type="channel_wise_abs_max",
        activation_quantize_type="moving_average_abs_max",
        onnx_format=onnx_format,
    )
    qat.quantize(net)
    opt = paddle.optimizer.SGD(0.01, parameters=net.parameters())
    for _ in range(steps):
        x = paddle.to_tensor(rng.standard_normal((4, 3, 16, 16)).astype(np.float32))
        loss = net(x).square().mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
    net.eval()
    spec = [paddle.static.InputSpec(s, d, n) for n, s, d in QuantConvNet.inputs]
    qat.save_quantized_model(net, prefix, input_spec=spec)
    return QuantConvNet.example(rng)
