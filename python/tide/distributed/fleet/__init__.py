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

from ... import io as _io
from ...executor import Executor
from ...framework import Program, default_main_program, default_startup_program, program_guard
from ...transpiler.collective_transpiler import CollectiveTranspiler
from ..world import world as _resolve_world

__all__ = [
    "init",
    "worker_index",
    "worker_num",
    "is_first_worker",
    "is_collective",
    "is_worker",
    "is_server",
    "local_rank",
    "init_worker",
    "stop_worker",
    "barrier_worker",
    "save_persistables",
    "save_inference_model",
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
        # Fluid's collective fleet: the programs distributed_optimizer(...).minimize rewrote.
        self.main_program = None
        self.startup_program = None

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

    def is_worker(self):
        """Every process of a collective job is a worker (Fluid's API)."""
        return True

    def is_server(self):
        """No process of a collective job is a parameter server (Fluid's API)."""
        return False

    def local_rank(self):
        """This process's index on its node (LOCAL_RANK, TIDE_LOCAL_RANK, ...)."""
        return self._require().local_rank

    def init_worker(self):
        """Nothing to do in a collective job: the startup program connects the ranks (Fluid's API)."""
        self._require()

    def stop_worker(self):
        """Nothing to do in a collective job (Fluid's API)."""
        self._require()

    def barrier_worker(self, executor=None):
        """Returns once every rank has called it (a `barrier` op on ring 0), e.g. after rank 0
        wrote a checkpoint the others read. Call it after the startup program (which connects
        the ranks); with one process it returns at once."""
        w = self._require()
        if w.world_size == 1:
            return
        executor = executor or Executor()
        prog = Program()
        with program_guard(prog, Program()):
            prog.global_block().append_op("barrier", attrs={"ring_id": 0})
        executor.run(prog)

    def save_persistables(self, executor, dirname, main_program=None, filename=None):
        """tide.io.save_persistables of the program minimize rewrote (or main_program); call it
        on one rank (fleet.is_first_worker()): the ranks hold the same values."""
        self._require()
        return _io.save_persistables(
            executor, dirname, main_program or self.main_program or default_main_program(), filename
        )

    def save_inference_model(
        self,
        executor,
        dirname,
        feeded_var_names,
        target_vars,
        main_program=None,
        export_for_deployment=True,
    ):
        """tide.io.save_inference_model of the program minimize rewrote (or main_program); the
        saved model has no collective op (they belong to backward) and runs in one process."""
        self._require()
        return _io.save_inference_model(
            dirname,
            feeded_var_names,
            target_vars,
            executor,
            main_program=main_program or self.main_program or default_main_program(),
            export_for_deployment=export_for_deployment,
        )

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
        self._fleet.main_program, self._fleet.startup_program = main, startup
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
is_worker = _fleet.is_worker
is_server = _fleet.is_server
local_rank = _fleet.local_rank
init_worker = _fleet.init_worker
stop_worker = _fleet.stop_worker
barrier_worker = _fleet.barrier_worker
save_persistables = _fleet.save_persistables
save_inference_model = _fleet.save_inference_model
distributed_optimizer = _fleet.distributed_optimizer


def __getattr__(name):
    # fleet.main_program / fleet.startup_program (Fluid's): what minimize rewrote, else None.
    if name in ("main_program", "startup_program"):
        return getattr(_fleet, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
