"""The collective job's world from the environment: rank, world size, local rank and the rendezvous,
whoever started the process::

    w = tide.distributed.world()     # World(rank=1, world_size=4, local_rank=1, ...)

Read, first match wins (a process started by torchrun inside a Slurm job is torchrun's)::

  Tide (the launcher)  TIDE_RANK, TIDE_WORLD_SIZE, TIDE_LOCAL_RANK, TIDE_MASTER (host:port)
  PaddlePaddle         PADDLE_TRAINER_ID, PADDLE_TRAINERS_NUM, PADDLE_TRAINER_ENDPOINTS (the
                       first is the master), PADDLE_CURRENT_ENDPOINT, PADDLE_RANK_IN_NODE
  torchrun             RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (the port after
                       MASTER_PORT under torchrun's agent, whose own store holds MASTER_PORT)
  Open MPI (mpirun)    OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK;
                       the master from TIDE_MASTER or MASTER_ADDR/MASTER_PORT (mpirun -x ...)
  Slurm (srun)         SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID; the master is the first host of
                       SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST), port MASTER_PORT or
                       TIDE_MASTER_PORT, else 10000 + SLURM_JOB_ID % 50000

TIDE_STORE overrides the rendezvous: tcp://host:port (rank 0 hosts it) or file:///shared/dir
(Gloo's file store on a shared file system). None of these set: one process, world size 1.
"""

import collections
import os
import re

World = collections.namedtuple(
    "World", ["rank", "world_size", "local_rank", "master", "store", "current_endpoint", "source"]
)


class WorldError(ValueError):
    """The environment describes no valid world (names the variables at fault)."""


def _int(env, name, default=None):
    """env[name] as an int (default when it is unset and a default is given); a WorldError
    naming the variable otherwise."""
    text = env.get(name)
    if text is None and default is not None:
        return default
    try:
        return int(text)
    except (TypeError, ValueError):
        raise WorldError("%s=%r is not an integer" % (name, text)) from None


def _port(env, name):
    port = _int(env, name)
    if not 0 < port < 65536:
        raise WorldError("%s=%d is not a port (1 to 65535)" % (name, port))
    return port


def _endpoint(text, name):
    """text ('host:port', from the variable `name`) checked: a WorldError naming the variable."""
    host, _, port = text.strip().rpartition(":")
    if not host or ":" in host or not port.isdigit() or not 0 < int(port) < 65536:
        raise WorldError("%s=%r is not host:port" % (name, text))
    return text.strip()


# (rank variable, world size variable) of the launchers whose pair must come whole: one of them
# without the other is a launcher set up wrong, not a local run (each process would train alone).
_PAIRS = (
    ("TIDE_RANK", "TIDE_WORLD_SIZE"),
    ("PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM"),
    ("RANK", "WORLD_SIZE"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
)


def _half_a_world(env):
    """A WorldError for the first launcher pair set by half (a world size of 1 alone is one
    process, as some schedulers set it), else None."""
    for rank_var, size_var in _PAIRS:
        if rank_var in env and size_var not in env:
            return WorldError(
                "%s=%s is set but %s is not: set both (or neither, for one process)"
                % (rank_var, env[rank_var], size_var)
            )
        if size_var in env and rank_var not in env and env[size_var].strip() != "1":
            return WorldError(
                "%s=%s is set but %s is not: set both (or neither, for one process)"
                % (size_var, env[size_var], rank_var)
            )
    return None


def expand_first_host(nodelist):
    """The first host of a Slurm node list: 'gpu[07-09,12],cpu1' -> 'gpu07'."""
    nodelist = nodelist.strip()
    m = re.match(r"([^,\[]+)(?:\[([^\]]+)\])?", nodelist)
    if not m or not m.group(1):
        raise WorldError("cannot read the first host of the Slurm node list %r" % nodelist)
    prefix, ranges = m.group(1), m.group(2)
    if not ranges:
        return prefix
    first = ranges.split(",")[0].split("-")[0]
    return prefix + first


def _check(rank, world_size, names):
    if world_size < 1:
        raise WorldError(
            "world size %d from %s: a job needs at least one process" % (world_size, names[1])
        )
    if not 0 <= rank < world_size:
        raise WorldError(
            "rank %d from %s is outside the world [0, %d) of %s"
            % (rank, names[0], world_size, names[1])
        )


def _master_from(env, what):
    if env.get("TIDE_MASTER"):
        return _endpoint(env["TIDE_MASTER"], "TIDE_MASTER")
    if env.get("MASTER_ADDR") and env.get("MASTER_PORT"):
        return "%s:%d" % (env["MASTER_ADDR"], _port(env, "MASTER_PORT"))
    if env.get("TIDE_STORE"):
        return ""
    raise WorldError(
        "%s gives no master: set TIDE_MASTER=host:port or MASTER_ADDR and MASTER_PORT "
        "(with mpirun: -x MASTER_ADDR=host -x MASTER_PORT=port), or TIDE_STORE" % what
    )


def _read(env):
    """(rank, world_size, local_rank, master, current_endpoint, source, (rank var, size var))."""
    if "TIDE_RANK" in env or "TIDE_WORLD_SIZE" in env:
        names = ("TIDE_RANK", "TIDE_WORLD_SIZE")
        for have, lack in (names, names[::-1]):
            if have in env and lack not in env:  # the launcher sets both
                raise WorldError("%s=%s is set but %s is not" % (have, env[have], lack))
        return (
            _int(env, "TIDE_RANK"),
            _int(env, "TIDE_WORLD_SIZE"),
            _int(env, "TIDE_LOCAL_RANK", 0),
            _master_from(env, "TIDE_RANK"),
            "",
            "tide",
            names,
        )
    if "PADDLE_TRAINER_ID" in env:
        names = ("PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM")
        eps = [e.strip() for e in env.get("PADDLE_TRAINER_ENDPOINTS", "").split(",") if e.strip()]
        size = _int(env, "PADDLE_TRAINERS_NUM") if "PADDLE_TRAINERS_NUM" in env else len(eps)
        if eps and len(eps) != size:
            raise WorldError(
                "PADDLE_TRAINER_ENDPOINTS lists %d endpoints but PADDLE_TRAINERS_NUM "
                "is %d" % (len(eps), size)
            )
        master = (
            _endpoint(eps[0], "PADDLE_TRAINER_ENDPOINTS")
            if eps
            else _master_from(env, "PADDLE_TRAINER_ID")
        )
        return (
            _int(env, "PADDLE_TRAINER_ID"),
            size,
            _int(env, "PADDLE_RANK_IN_NODE", 0),
            master,
            env.get("PADDLE_CURRENT_ENDPOINT", ""),
            "paddle",
            names,
        )
    if "RANK" in env and "WORLD_SIZE" in env:
        names = ("RANK", "WORLD_SIZE")
        if not (env.get("MASTER_ADDR") and env.get("MASTER_PORT")) and not env.get("TIDE_STORE"):
            raise WorldError("RANK and WORLD_SIZE are set but MASTER_ADDR or MASTER_PORT is not")
        master = ""
        if env.get("MASTER_ADDR"):
            port = _port(env, "MASTER_PORT")
            if env.get("TORCHELASTIC_RUN_ID"):  # torchrun's agent holds MASTER_PORT itself
                port += 1
            master = "%s:%d" % (env["MASTER_ADDR"], port)
        return (
            _int(env, "RANK"),
            _int(env, "WORLD_SIZE"),
            _int(env, "LOCAL_RANK", 0),
            master,
            "",
            "torchrun",
            names,
        )
    if "OMPI_COMM_WORLD_RANK" in env:
        names = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")
        return (
            _int(env, "OMPI_COMM_WORLD_RANK"),
            _int(env, "OMPI_COMM_WORLD_SIZE"),
            _int(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0),
            _master_from(env, "Open MPI's OMPI_COMM_WORLD_RANK"),
            "",
            "openmpi",
            names,
        )
    if "SLURM_PROCID" in env:
        names = ("SLURM_PROCID", "SLURM_NTASKS")
        if env.get("TIDE_MASTER"):
            master = _endpoint(env["TIDE_MASTER"], "TIDE_MASTER")
        else:
            nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST")
            if not nodelist:
                raise WorldError(
                    "SLURM_PROCID is set but neither SLURM_STEP_NODELIST nor "
                    "SLURM_JOB_NODELIST names the hosts"
                )
            if env.get("MASTER_PORT"):
                port = _port(env, "MASTER_PORT")
            elif env.get("TIDE_MASTER_PORT"):
                port = _port(env, "TIDE_MASTER_PORT")
            else:
                port = 10000 + _int(env, "SLURM_JOB_ID", 0) % 50000
            master = "%s:%d" % (expand_first_host(nodelist), port)
        return (
            _int(env, "SLURM_PROCID"),
            _int(env, "SLURM_NTASKS"),
            _int(env, "SLURM_LOCALID", 0),
            master,
            "",
            "slurm",
            names,
        )
    half = _half_a_world(env)
    if half is not None:
        raise half
    return None


def world(environ=None):
    """The World this process belongs to (see the module's text); one process when nothing is set.
    Raises WorldError for a rank outside the world, a world size below 1 or a missing master."""
    env = os.environ if environ is None else environ
    found = _read(env)
    if found is None:
        return World(0, 1, 0, "", "", "", "local")
    rank, size, local_rank, master, current, source, names = found
    _check(rank, size, names)
    store = env.get("TIDE_STORE") or ("tcp://" + master if master else "")
    if store and not (store.startswith("tcp://") or store.startswith("file://")):
        raise WorldError("TIDE_STORE=%r: expected tcp://host:port or file:///shared/dir" % store)
    if store.startswith("tcp://") and not re.match(r"^tcp://[^:]+:\d+$", store):
        raise WorldError("master %r (from %s) is not host:port" % (store[6:], source))
    return World(rank, size, local_rank, master, store, current, source)


__all__ = ["World", "WorldError", "world", "expand_first_host"]
