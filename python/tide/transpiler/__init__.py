"""Program transpilers: DistributeTranspiler splits a program into trainer and pserver programs;
memory_optimize frees each temporary variable after its last use."""
from .distribute_transpiler import (DistributeTranspiler, DistributeTranspilerConfig,  # noqa: F401
                                    OP_ROLE_RPC)
from .memory_optimization_transpiler import memory_optimize, release_memory  # noqa: F401

__all__ = ["DistributeTranspiler", "DistributeTranspilerConfig", "OP_ROLE_RPC", "memory_optimize",
           "release_memory"]
