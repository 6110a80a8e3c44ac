"""Multi-process training on one or several hosts: the environment a launched process reads
(tide.distributed.env() for parameter-server jobs, tide.distributed.world() for collective ones,
see world.py), the launcher (python -m tide.distributed.launch, see launch.py) and
tide.distributed.fleet (Fluid's collective API: data-parallel training on allreduce).

Variables the launcher sets for each process (set them yourself to run without it):
  TIDE_ROLE               PSERVER or TRAINER
  TIDE_TRAINER_ID         this trainer's id, 0 .. TIDE_TRAINERS-1 (trainers only)
  TIDE_TRAINERS           the number of trainers
  TIDE_PSERVER_ENDPOINTS  every pserver, "host:port,host:port"
  TIDE_CURRENT_ENDPOINT   this pserver's endpoint (pservers only)
  TIDE_PSERVER_BIND       (optional) the address pservers listen on, default 127.0.0.1
  TIDE_RPC_DEADLINE       (optional) ms an RPC may wait before failing, default 180000

A trainer ends with DistributeTranspiler.send_complete(executor): a pserver returns from
listen_and_serv once all its trainers have. See examples/fit_a_line_dist.py.
"""

import collections
import os

from .world import World, WorldError, world

DistEnv = collections.namedtuple(
    "DistEnv", ["role", "trainer_id", "trainers", "pserver_endpoints", "current_endpoint"]
)


def env():
    """The launched process's role, or None when TIDE_ROLE is not set (a local run)."""
    role = os.environ.get("TIDE_ROLE")
    if not role:
        return None
    role = role.upper()
    if role not in ("PSERVER", "TRAINER"):
        raise ValueError("TIDE_ROLE must be PSERVER or TRAINER, got %r" % role)
    eps = os.environ.get("TIDE_PSERVER_ENDPOINTS", "")
    if not eps:
        raise ValueError("TIDE_ROLE=%s needs TIDE_PSERVER_ENDPOINTS" % role)
    current = os.environ.get("TIDE_CURRENT_ENDPOINT", "")
    if role == "PSERVER" and not current:
        raise ValueError("TIDE_ROLE=PSERVER needs TIDE_CURRENT_ENDPOINT")
    return DistEnv(
        role,
        int(os.environ.get("TIDE_TRAINER_ID", "0")),
        int(os.environ.get("TIDE_TRAINERS", "1")),
        eps,
        current,
    )


__all__ = ["DistEnv", "env", "World", "WorldError", "world"]
