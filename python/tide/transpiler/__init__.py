"""Program transpilers: DistributeTranspiler splits a program into trainer and pserver programs;
CollectiveTranspiler makes it data-parallel on allreduce (tide.distributed.fleet uses it);
memory_optimize frees each temporary variable after its last use (fuse_weight_updates, which it
may run first, computes fc weight gradients straight into their update); fuse_conv_bias_act runs a
conv, its bias add and its activation as one fused_conv2d in training, fuse_fc_bias_act a mul's
as one fc; InferenceTranspiler folds batch_norm into convolutions and fuses bias, residual and
activations into fused_conv2d, and a transformer's linear layers, attention and residual layer
norms into fc, fused_multihead_attention, skip_layernorm and preln_skip_layernorm
(inference_passes/)."""

from .collective_transpiler import CollectiveTranspiler  # noqa: F401
from .distribute_transpiler import (
    OP_ROLE_RPC,
    DistributeTranspiler,
    DistributeTranspilerConfig,  # noqa: F401
)
from .fuse_conv_bias_act import fuse_conv_bias_act, fuse_fc_bias_act  # noqa: F401
from .fuse_weight_updates import fuse_weight_updates  # noqa: F401
from .inference_transpiler import InferenceTranspiler  # noqa: F401
from .memory_optimization_transpiler import memory_optimize, release_memory  # noqa: F401

__all__ = [
    "CollectiveTranspiler",
    "DistributeTranspiler",
    "DistributeTranspilerConfig",
    "InferenceTranspiler",
    "OP_ROLE_RPC",
    "fuse_conv_bias_act",
    "fuse_fc_bias_act",
    "fuse_weight_updates",
    "memory_optimize",
    "release_memory",
]
