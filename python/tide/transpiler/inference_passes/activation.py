"""The activation ops Paddle's fusion ops (fused_conv2d, fc) take, as their fuse_activation,
fuse_alpha and fuse_beta."""

# The activation ops fused_conv2d can take (Paddle's conv_activation_mkldnn_fuse_pass fuses
# these and mish, which Tide has no op for; silu is swish with beta 1).
_ACTIVATIONS = (
    "relu",
    "leaky_relu",
    "relu6",
    "clip",
    "swish",
    "silu",
    "hard_sigmoid",
    "hard_swish",
    "sigmoid",
    "tanh",
    "abs",
    "sqrt",
    "gelu",
)


def _fused_activation(act):
    """(fuse_activation, fuse_alpha, fuse_beta) for activation op `act`, as Paddle's pass writes
    them (its GetAttributeMap: relu6's threshold is fuse_beta over a fuse_alpha of 0, swish's
    beta is fuse_alpha, hard_sigmoid's slope and offset are fuse_alpha and fuse_beta, gelu
    becomes gelu_tanh or gelu_erf), or None where the fused op would compute something else:
    hard_swish other than Fluid's defaults (Paddle writes 1/6, 1/2 whatever its attributes,
    and oneDNN 2.6's hardswish has no other form), a clip with Min / Max inputs or min > max."""

    def attr(name, default):
        return float(act.attr(name)) if act.has_attr(name) else default

    t = act.type
    if t in ("relu", "sigmoid", "tanh", "abs", "sqrt"):
        return t, 0.0, 0.0
    if t == "leaky_relu":
        return t, attr("alpha", 0.02), 0.0
    if t == "relu6":
        return t, 0.0, attr("threshold", 6.0)
    if t == "swish":
        return t, attr("beta", 1.0), 0.0
    if t == "silu":  # x * sigmoid(x): swish with beta 1
        return "swish", 1.0, 0.0
    if t == "hard_sigmoid":
        return t, attr("slope", 0.2), attr("offset", 0.5)
    if t == "hard_swish":
        if (attr("threshold", 6.0), attr("scale", 6.0), attr("offset", 3.0)) != (6.0, 6.0, 3.0):
            return None
        return t, 1.0 / 6.0, 0.5
    if t == "clip":
        if act.input("Min") or act.input("Max") or attr("min", 0.0) > attr("max", 0.0):
            return None
        return t, attr("min", 0.0), attr("max", 0.0)
    if t == "gelu":
        approximate = act.has_attr("approximate") and act.attr("approximate")
        return ("gelu_tanh" if approximate else "gelu_erf"), 0.0, 0.0
    return None
