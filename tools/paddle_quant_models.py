"""Models quantized by Paddle's quantization-aware training (`paddle.quantization.
ImperativeQuantAware`, Paddle 2.x's dygraph QAT, which PaddleSlim's `quant_aware` wraps), saved by
its `save_quantized_model` in both of its formats: Paddle's own quant-dequant ops
(`fake_quantize_dequantize_moving_average_abs_max` on activations,
`fake_channel_wise_quantize_dequantize_abs_max` on weights) and, with `onnx_format=True`, the
`quantize_linear` / `dequantize_linear` pairs of ONNX's QDQ form (weights stored as int8 levels).
A small conv net (conv, batch norm, relu, pool, depthwise conv, linear), its scales set by a few
training steps on random data. Used by tools/paddle_export.py.

Paddle 3.x (`save_pir_quantized`, `tools/paddle_export.py --pir`): the same net through Paddle 3's
`paddle.quantization.QAT` with a `QuantConfig` (moving-average abs-max activations, channel-wise
abs-max weights), saved by `paddle.jit.save` as PIR programs: `quant_fake` as trained (its quanters'
fake quant-dequant ops), `quant_qdq` after `QAT.convert` (`quantize_linear` / `dequantize_linear`,
the weights' int8 levels stored as float32). Paddle 3.3's own quanters cannot be converted (the
activation quanter's `zero_points()` is None, which `convert` turns into a tensor and fails; it has
no channel-wise weight quanter), so the two quanters here are Paddle 3's
`FakeQuanterWithAbsMaxObserverLayer` with zero points and a channel-wise abs-max quanter on
`fake_channel_wise_quantize_dequantize_abs_max` (as PaddleSlim's), the quanters' documented
extension point (`BaseQuanter`, `QuanterFactory`).

`quant_ptq`: the untrained net through Paddle 3's post-training quantization (`PTQ`, its own
`AbsmaxObserver` on activations and weights: one scale per tensor), four calibration batches,
converted and saved the same way.

Run as a script with FLAGS_enable_pir_api=0 (`legacy-twin qdq|ptq DIR`), it makes the very same
converted net and saves it in the legacy format to DIR, with Paddle's executor output on it: the
PIR fixture's cross-check (paddle_export.py runs it)."""

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


def _train(net, rng, steps):
    """`steps` SGD steps of the quantized net on random batches (the quanters' scales move), then
    eval mode."""
    opt = paddle.optimizer.SGD(0.01, parameters=net.parameters())
    for _ in range(steps):
        x = paddle.to_tensor(rng.standard_normal((4, 3, 16, 16)).astype(np.float32))
        loss = net(x).square().mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
    net.eval()


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
    _train(net, rng, steps)
    spec = [paddle.static.InputSpec(s, d, n) for n, s, d in QuantConvNet.inputs]
    qat.save_quantized_model(net, prefix, input_spec=spec)
    return QuantConvNet.example(rng)


# --- Paddle 3.x: paddle.quantization.QAT, saved as PIR programs ---------------------------------

QAT3_SEED = 2026  # paddle.seed and the training data's; the same net for both forms


def _quanters():
    """(activation, weight) quanter factories for Paddle 3's QuantConfig (see the module doc)."""
    from paddle import _C_ops
    from paddle.quantization import BaseQuanter
    from paddle.quantization.factory import QuanterFactory
    from paddle.quantization.quanters.abs_max import FakeQuanterWithAbsMaxObserverLayer

    class MovingAverageLayer(FakeQuanterWithAbsMaxObserverLayer):
        # Symmetric: zeros (Paddle 3.3's returns None, which convert refuses).
        def zero_points(self):
            return paddle.zeros_like(self._scale)

    class MovingAverageAbsMax(QuanterFactory):
        def __init__(self, moving_rate=0.9, bit_length=8):
            super().__init__(moving_rate=moving_rate, bit_length=bit_length)

        def _get_class(self):
            return MovingAverageLayer

    class ChannelWiseLayer(BaseQuanter):
        """Each output channel's largest |w| (dim 0 of a conv's weight, dim 1 of a Linear's)."""

        def __init__(self, layer, bit_length=8):
            super().__init__()
            self._bit_length = bit_length
            self._axis = 1 if isinstance(layer, nn.Linear) else 0
            self._scale = self.create_parameter(
                shape=[layer.weight.shape[self._axis]],
                dtype="float32",
                attr=paddle.ParamAttr(
                    name=paddle.utils.unique_name.generate("quant_dequant.scale"),
                    initializer=nn.initializer.Constant(0.0),
                    trainable=False,
                ),
            )
            self._scale.stop_gradient = True

        def forward(self, w):
            out, scale = _C_ops.fake_channel_wise_quantize_dequantize_abs_max(
                w, self._bit_length, 1, self._axis
            )
            if paddle.in_dynamic_mode():
                paddle.assign(scale, self._scale)
            return out

        def bit_length(self):
            return self._bit_length

        def quant_axis(self):
            return self._axis

        def scales(self):
            return self._scale

        def zero_points(self):
            return paddle.zeros_like(self._scale)

    class ChannelWiseAbsMax(QuanterFactory):
        def __init__(self, bit_length=8):
            super().__init__(bit_length=bit_length)

        def _get_class(self):
            return ChannelWiseLayer

    return MovingAverageAbsMax(moving_rate=0.9), ChannelWiseAbsMax()


def train_qat3(steps=4):
    """QuantConvNet through Paddle 3's QAT, `steps` SGD steps on random data, in eval mode:
    (qat, net, rng after training). Deterministic: the same net at every call, either program
    format (parameter names from a fresh unique_name scope)."""
    from paddle.quantization import QAT, QuantConfig

    paddle.disable_static()
    paddle.seed(QAT3_SEED)
    rng = np.random.default_rng(QAT3_SEED)
    with paddle.utils.unique_name.guard():
        activation, weight = _quanters()
        qat = QAT(QuantConfig(activation=activation, weight=weight))
        net = qat.quantize(QuantConvNet())
        _train(net, rng, steps)
    return qat, net, rng


def calibrated_ptq3(batches=4):
    """QuantConvNet (as initialised, eval mode) through Paddle 3's post-training quantization,
    `paddle.quantization.PTQ` with its own `AbsmaxObserver` on activations and weights (one scale
    each: the largest |x| over `batches` calibration batches of random data): (ptq, net, rng)."""
    from paddle.quantization import PTQ, QuantConfig
    from paddle.quantization.observers import AbsmaxObserver

    paddle.disable_static()
    paddle.seed(QAT3_SEED)
    rng = np.random.default_rng(QAT3_SEED)
    with paddle.utils.unique_name.guard():
        net = QuantConvNet()
        net.eval()
        ptq = PTQ(QuantConfig(activation=AbsmaxObserver(), weight=AbsmaxObserver()))
        net = ptq.quantize(net)
        for _ in range(batches):
            net(paddle.to_tensor(rng.standard_normal((4, 3, 16, 16)).astype(np.float32)))
    return ptq, net, rng


def converted3(form):
    """form "qdq": train_qat3's net after QAT.convert; "ptq": calibrated_ptq3's after
    PTQ.convert (quantize_linear / dequantize_linear, int8 weight levels). (net, feed)."""
    quantizer, net, rng = train_qat3() if form == "qdq" else calibrated_ptq3()
    with paddle.utils.unique_name.guard("converted_"):
        inference = quantizer.convert(net)
    return inference, QuantConvNet.example(rng)


def save_pir_quantized(form, prefix):
    """form "fake": train_qat3's net as is; "qdq" / "ptq": converted3's. Saved by paddle.jit.save
    (PIR with Paddle 3's default flags). Returns (feed, Paddle's dygraph output of the saved
    net)."""
    if form == "fake":
        _, net, rng = train_qat3()
        feed = QuantConvNet.example(rng)
        shape = [None, 3, 16, 16]
    else:
        net, feed = converted3(form)
        # Paddle 3.3's LinearQuanter builds a persistable of the input's shape in PIR mode, which
        # a dynamic dim breaks ("shape[0] = -1"): the batch is fixed.
        shape = list(feed["x"].shape)
    out = net(paddle.to_tensor(feed["x"])).numpy()
    spec = [paddle.static.InputSpec(shape, "float32", "x")]
    paddle.jit.save(net, prefix, input_spec=spec)
    return feed, out


def save_legacy_twin(form, out_dir):
    """(FLAGS_enable_pir_api=0) converted3(form)'s net saved in the legacy format to out_dir, and
    Paddle's executor output on it (paddle_out.npy)."""
    import os

    net, feed = converted3(form)
    prefix = os.path.join(out_dir, "inference")
    spec = [paddle.static.InputSpec([None, 3, 16, 16], "float32", "x")]
    paddle.jit.save(net, prefix, input_spec=spec)
    paddle.enable_static()
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        prog, _, fetches = paddle.static.load_inference_model(prefix, exe)
        (out,) = exe.run(prog, feed=feed, fetch_list=fetches)
    np.save(os.path.join(out_dir, "paddle_out.npy"), out)


if __name__ == "__main__":
    import os
    import sys

    if len(sys.argv) != 4 or sys.argv[1] != "legacy-twin" or sys.argv[2] not in ("qdq", "ptq"):
        sys.exit("usage: FLAGS_enable_pir_api=0 paddle_quant_models.py legacy-twin qdq|ptq DIR")
    if os.environ.get("FLAGS_enable_pir_api") != "0":
        sys.exit("legacy-twin needs FLAGS_enable_pir_api=0")
    save_legacy_twin(sys.argv[2], sys.argv[3])
