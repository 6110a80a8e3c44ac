"""PostTrainingQuantization with Paddle's names (paddle.static.quantization): it loads a saved
inference model, calibrates it on the batches a generator or loader gives, and returns (and
saves) the int8 program: Tide's int8 ops (quantize_post_training), not Paddle's fake-quant QDQ
program, which Tide reads but Paddle's own PTQ is the tool to make."""

import itertools

import numpy as np

from ... import io
from .post_training import quantize_post_training

# Paddle's names of the matrix products: after the InferenceTranspiler they are fc ops.
_PADDLE_TYPES = {"mul": "fc", "matmul": "fc", "matmul_v2": "fc"}
_WEIGHT_TYPES = ("channel_wise_abs_max", "abs_max")


class PostTrainingQuantization:
    """Paddle's post-training quantization, run on Tide's int8 kernels.

    Args (Paddle's): executor; model_dir (and model_filename, params_filename): the model;
    scope; one of batch_generator (yields lists of arrays in the feed order), sample_generator
    (yields one sample, a list of arrays, at a time: batched by batch_size) or data_loader
    (yields {feed name: array} dicts); batch_nums (batches to use; default all); algo ("abs_max",
    "hist" or "KL"); hist_percent; quantizable_op_type (conv2d, depthwise_conv2d, and mul /
    matmul / matmul_v2, which the transpiler makes fc); weight_quantize_type
    ("channel_wise_abs_max" or "abs_max")."""

    def __init__(
        self,
        executor,
        model_dir,
        scope=None,
        model_filename=None,
        params_filename=None,
        batch_generator=None,
        sample_generator=None,
        data_loader=None,
        batch_size=10,
        batch_nums=None,
        algo="KL",
        hist_percent=0.99999,
        quantizable_op_type=("conv2d", "depthwise_conv2d", "mul"),
        weight_quantize_type="channel_wise_abs_max",
    ):
        if weight_quantize_type not in _WEIGHT_TYPES:
            raise ValueError(
                "PostTrainingQuantization: weight_quantize_type must be one of %s, got %r"
                % (list(_WEIGHT_TYPES), weight_quantize_type)
            )
        given = [g for g in (batch_generator, sample_generator, data_loader) if g is not None]
        if len(given) != 1:
            raise ValueError(
                "PostTrainingQuantization: give one of batch_generator, sample_generator and "
                "data_loader (the calibration data), got %d" % len(given)
            )
        self._executor = executor
        self._scope = scope
        self._model = (model_dir, model_filename, params_filename)
        self._generators = (batch_generator, sample_generator, data_loader)
        self._batch_size = batch_size
        self._batch_nums = batch_nums
        self._algo = algo
        self._hist_percent = hist_percent
        types = []
        for t in quantizable_op_type:
            t = _PADDLE_TYPES.get(t, t)
            if t == "conv2d":
                types += ["conv2d", "fused_conv2d"]
            elif t not in types:
                types.append(t)
        self._types = types
        self._per_channel = weight_quantize_type == "channel_wise_abs_max"
        self._program = self._feeds = self._fetches = None

    def _batches(self):
        batch_generator, sample_generator, data_loader = self._generators
        if data_loader is not None:
            batches = (dict(b) for b in data_loader())
        elif batch_generator is not None:
            batches = (dict(zip(self._feeds, b)) for b in batch_generator())
        else:

            def batched():
                samples = iter(sample_generator())
                while True:
                    chunk = list(itertools.islice(samples, self._batch_size))
                    if not chunk:
                        return
                    yield {
                        n: np.stack([np.asarray(s[i]) for s in chunk])
                        for i, n in enumerate(self._feeds)
                    }

            batches = batched()
        return list(itertools.islice(batches, self._batch_nums))

    def quantize(self):
        """Loads the model, calibrates and rewrites it; returns the int8 program."""
        model_dir, model_filename, params_filename = self._model
        self._program, self._feeds, self._fetches = io.load_inference_model(
            model_dir, self._executor, model_filename, params_filename, scope=self._scope
        )
        quantize_post_training(
            self._program,
            self._executor,
            self._scope,
            self._batches(),
            algo=self._algo,
            quantizable_op_type=self._types,
            per_channel=self._per_channel,
            hist_percent=self._hist_percent,
        )
        return self._program

    def save_quantized_model(self, save_model_path, model_filename=None, params_filename=None):
        """Saves the int8 program (tide.io.save_inference_model: it loads back as it is)."""
        if self._program is None:
            raise RuntimeError("PostTrainingQuantization: call quantize() first")
        io.save_inference_model(
            save_model_path,
            self._feeds,
            self._fetches,
            self._executor,
            main_program=self._program,
            model_filename=model_filename,
            params_filename=params_filename,
            scope=self._scope,
        )
