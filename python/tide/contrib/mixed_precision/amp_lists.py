"""Which ops run in low precision: Fluid's three lists (fp16_lists.py). White ops compute in the
low type (they gain from it and are numerically safe: matrix products, convolutions); black ops
stay float32 (reductions, exponentials, losses); gray ops follow the ops that wrote their inputs
(float32 after a black op, else low after a low op; parameters and feeds do not count). An op on
no list stays float32. The device then has its say: an op runs low only where the run's place
has a kernel for it in that type (`rewrite_program`)."""

from ... import _C

WHITE_LIST = {"conv2d", "matmul", "matmul_v2", "mul"}

BLACK_LIST = {
    "exp",
    "square",
    "log",
    "mean",
    "sum",
    "cos_sim",
    "softmax",
    "log_softmax",
    "softmax_with_cross_entropy",
    "sigmoid_cross_entropy_with_logits",
    "cross_entropy",
    "cross_entropy2",
    "reduce_sum",
    "reduce_mean",
}

GRAY_LIST = {
    "elementwise_add",
    "elementwise_sub",
    "elementwise_mul",
    "elementwise_div",
    "elementwise_max",
    "elementwise_min",
    "elementwise_pow",
    "tanh",
    "sigmoid",
    "relu",
    "relu6",
    "leaky_relu",
    "gelu",
    "pool2d",
    "dropout",
    "scale",
    "reshape2",
    "transpose2",
    "flatten2",
    "slice",
    "concat",
    "split",
    "stack",
    "unstack",
    "gather",
    "lookup_table",
    "lookup_table_v2",
}


class AutoMixedPrecisionLists:
    """The white, black and gray op lists of mixed precision, with a user's changes.

    Args:
        custom_white_list (set): ops to run in the low type (taken off the other lists).
        custom_black_list (set): ops to keep in float32 (taken off the other lists).
        custom_black_varnames (set): variables that stay float32: an op reading or writing one
            runs in float32.
    """

    _white, _black, _gray = WHITE_LIST, BLACK_LIST, GRAY_LIST

    def __init__(self, custom_white_list=None, custom_black_list=None, custom_black_varnames=None):
        white = self._names("custom_white_list", custom_white_list)
        black = self._names("custom_black_list", custom_black_list)
        known = self._white | self._black | self._gray
        unknown = sorted(n for n in white | black if n not in known and not _C.has_op(n))
        if unknown:
            raise ValueError(
                "AutoMixedPrecisionLists: %s on the custom lists %s no registered op type (a "
                "typo? an op of a plugin not loaded?)"
                % (unknown, "is" if len(unknown) == 1 else "are")
            )
        both = white & black
        if both:
            raise ValueError(
                "AutoMixedPrecisionLists: %s on both the custom white and black lists"
                % sorted(both)
            )
        self.white_list = (set(self._white) - black) | white
        self.black_list = (set(self._black) - white) | black
        self.gray_list = set(self._gray) - white - black
        self.black_varnames = self._names("custom_black_varnames", custom_black_varnames)

    @staticmethod
    def _names(arg, names):
        """`names` (an iterable of strings, or None) as a set; a single string is refused rather
        than taken letter by letter."""
        if names is None:
            return set()
        if isinstance(names, (str, bytes)):
            raise TypeError(
                "AutoMixedPrecisionLists: %s must be a set or list of names, got the string %r "
                "(write {%r})" % (arg, names, names)
            )
        names = set(names)
        bad = [n for n in names if not isinstance(n, str)]
        if bad:
            raise TypeError("AutoMixedPrecisionLists: %s must hold strings, got %r" % (arg, bad[0]))
        return names


class AutoMixedPrecisionListsBF16(AutoMixedPrecisionLists):
    """The lists of bfloat16 mixed precision (Paddle's AutoMixedPrecisionListsBF16): bfloat16 has
    float32's range, so more ops are safe in it than in float16 (the same arguments)."""

    _white = WHITE_LIST | {"elementwise_add", "relu", "pool2d", "gelu"}
    _gray = GRAY_LIST - {"elementwise_add", "relu", "pool2d", "gelu"}


# The inference transpiler's fused ops (tide.transpiler.InferenceTranspiler): convolutions with
# their bias, residual and activation, matrix products with their bias and activation, attention.
INFERENCE_WHITE_LIST = {"fused_conv2d", "depthwise_conv2d", "fc", "fused_multihead_attention"}

# Ops of a decoder between its projections that follow their inputs in inference: an RMS norm,
# a rotary embedding, the causal softmax and the SwiGLU between bfloat16 ops compute in float32
# and round once, as they did between two casts, without the casts (weights and tables stay
# float32). Their bfloat16 kernels are forward only.
INFERENCE_GRAY_LIST = {
    "rms_norm",
    "fused_rms_norm_quant",
    "fused_rotary_position_embedding",
    "fused_softmax_mask_upper_triangle",
    "swiglu",
}


class AutoMixedPrecisionListsBF16Inference(AutoMixedPrecisionListsBF16):
    """The lists of bfloat16 inference (bf16_inference): bfloat16 mixed precision's, with the
    inference transpiler's fused ops on the white list and INFERENCE_GRAY_LIST's on the gray one
    (the same arguments)."""

    _white = AutoMixedPrecisionListsBF16._white | INFERENCE_WHITE_LIST
    _gray = AutoMixedPrecisionListsBF16._gray | INFERENCE_GRAY_LIST
