"""Program transpilers: DistributeTranspiler splits a program into trainer and pserver programs."""
from .distribute_transpiler import (DistributeTranspiler, DistributeTranspilerConfig,  # noqa: F401
                                    OP_ROLE_RPC)

__all__ = ["DistributeTranspiler", "DistributeTranspilerConfig", "OP_ROLE_RPC"]
