"""tide.distributed.fleet: Fluid's fleet API for collective (data-parallel) training.

    from tide.distributed import fleet
    fleet.init(is_collective=True)               # rank, world size and master from the environment
    opt = fleet.distributed_optimizer(tide.optimizer.SGD(0.1), fleet.DistributedStrategy())
    opt.minimize(loss)                           # backward, allreduce, update; startup: comm + broadcast
    exe.run(tide.default_startup_program())
    ... each rank feeds its share of the batch: exe.run(feed=..., fetch_list=[loss]) ...

Run it with `python -m tide.distributed.launch --nproc_per_node N train.py`, srun, mpirun, torchrun
or a Kubernetes job (tide.distributed.world lists the variables read). See docs/distributed.md.
"""

from ...framework import default_startup_program
from ...transpiler.collective_transpiler import CollectiveTranspiler
from ..world import world as _resolve_world

__all__ = [
    "init",
    "worker_index",
    "worker_num",
    "is_first_worker",
    "is_collective",
    "distributed_optimizer",
    "DistributedStrategy",
    "DistributedOptimizer",
    "world",
]


class DistributedStrategy:
    """How gradients are communicated (Fluid's names): fuse_all_reduce_ops sums them in buckets of
    at most fuse_grad_size_in_MB (else one allreduce per gradient)."""

    def __init__(self):
        self.fuse_all_reduce_ops = True
        self.fuse_grad_size_in_MB = 32


class _Fleet:
    def __init__(self):
        self._world = None
        self._collective = False

    def init(self, role_maker=None, is_collective=False, strategy=None, environ=None):
        if not is_collective:
            raise NotImplementedError(
                "fleet.init: only is_collective=True is supported; parameter "
                "servers use tide.DistributeTranspiler"
            )
        self._world = _resolve_world(environ)
        self._collective = True
        self._strategy = strategy

    def _require(self):
        if self._world is None:
            raise RuntimeError("call fleet.init(is_collective=True) first")
        return self._world

    def world(self):
        return self._require()

    def worker_index(self):
        return self._require().rank

    def worker_num(self):
        return self._require().world_size

    def is_first_worker(self):
        return self.worker_index() == 0

    def is_collective(self):
        return self._collective

    def distributed_optimizer(self, optimizer, strategy=None):
        self._require()
        return DistributedOptimizer(
            optimizer, strategy or self._strategy or DistributedStrategy(), self
        )


class DistributedOptimizer:
    """Wraps an optimizer: minimize() appends backward and the update like the optimizer, then
    CollectiveTranspiler makes the program data-parallel."""

    def __init__(self, optimizer, strategy, fleet):
        self._optimizer = optimizer
        self._strategy = strategy
        self._fleet = fleet

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        w = self._fleet.world()
        startup = startup_program or default_startup_program()
        main = loss.block.program
        ops, params_grads = self._optimizer.minimize(loss, startup, parameter_list, no_grad_set)
        if w.world_size > 1 and not w.store:
            raise RuntimeError(
                "fleet: world size %d but no rendezvous (set TIDE_MASTER or "
                "TIDE_STORE)" % w.world_size
            )
        fuse = self._strategy.fuse_grad_size_in_MB if self._strategy.fuse_all_reduce_ops else 0
        CollectiveTranspiler(fuse_grad_size_in_MB=fuse).transpile(
            w.rank,
            w.world_size,
            w.store or "tcp://127.0.0.1:0",
            main_program=main,
            startup_program=startup,
            current_endpoint=w.current_endpoint,
            params_grads=params_grads,
        )
        return ops, params_grads

    def __getattr__(self, name):
        return getattr(self._optimizer, name)


_fleet = _Fleet()
init = _fleet.init
world = _fleet.world
worker_index = _fleet.worker_index
worker_num = _fleet.worker_num
is_first_worker = _fleet.is_first_worker
is_collective = _fleet.is_collective
distributed_optimizer = _fleet.distributed_optimizer
