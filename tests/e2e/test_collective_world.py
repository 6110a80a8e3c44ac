"""tide.distributed.world() reads the world from the variables each launcher sets: the sets below
are what Tide's launcher, PaddlePaddle's launch, torchrun, Open MPI's mpirun, Slurm's srun and a
Kubernetes indexed job (through torchrun-style variables) give a process."""

import pytest

from tide.distributed import WorldError, world
from tide.distributed.world import expand_first_host


def test_tide_launcher():
    w = world(
        {
            "TIDE_RANK": "3",
            "TIDE_WORLD_SIZE": "4",
            "TIDE_LOCAL_RANK": "1",
            "TIDE_MASTER": "10.0.0.1:6170",
        }
    )
    assert (w.rank, w.world_size, w.local_rank, w.store, w.source) == (
        3,
        4,
        1,
        "tcp://10.0.0.1:6170",
        "tide",
    )


def test_paddle():
    w = world(
        {
            "PADDLE_TRAINER_ID": "1",
            "PADDLE_TRAINERS_NUM": "2",
            "PADDLE_TRAINER_ENDPOINTS": "10.0.0.1:6170,10.0.0.2:6170",
            "PADDLE_CURRENT_ENDPOINT": "10.0.0.2:6170",
        }
    )
    assert (w.rank, w.world_size, w.store, w.current_endpoint) == (
        1,
        2,
        "tcp://10.0.0.1:6170",
        "10.0.0.2:6170",
    )
    with pytest.raises(WorldError, match="lists 2 endpoints but PADDLE_TRAINERS_NUM is 3"):
        world(
            {
                "PADDLE_TRAINER_ID": "1",
                "PADDLE_TRAINERS_NUM": "3",
                "PADDLE_TRAINER_ENDPOINTS": "a:1,b:1",
            }
        )


def test_torchrun_and_kubernetes():
    env = {
        "RANK": "5",
        "WORLD_SIZE": "8",
        "LOCAL_RANK": "1",
        "MASTER_ADDR": "trainer-0.svc",
        "MASTER_PORT": "29500",
    }
    w = world(env)
    assert (w.rank, w.world_size, w.local_rank, w.store, w.source) == (
        5,
        8,
        1,
        "tcp://trainer-0.svc:29500",
        "torchrun",
    )
    # Under torchrun's agent MASTER_PORT is the agent's own store: Tide's is the next port.
    w = world(dict(env, TORCHELASTIC_RUN_ID="job"))
    assert w.store == "tcp://trainer-0.svc:29501"


def test_open_mpi():
    env = {
        "OMPI_COMM_WORLD_RANK": "2",
        "OMPI_COMM_WORLD_SIZE": "4",
        "OMPI_COMM_WORLD_LOCAL_RANK": "0",
        "MASTER_ADDR": "node1",
        "MASTER_PORT": "6000",
    }
    w = world(env)
    assert (w.rank, w.world_size, w.local_rank, w.store, w.source) == (
        2,
        4,
        0,
        "tcp://node1:6000",
        "openmpi",
    )
    del env["MASTER_ADDR"]
    with pytest.raises(WorldError, match="no master.*mpirun: -x MASTER_ADDR"):
        world(env)


def test_slurm():
    env = {
        "SLURM_PROCID": "6",
        "SLURM_NTASKS": "8",
        "SLURM_LOCALID": "2",
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NODELIST": "gpu[07-09,12]",
        "SLURM_STEP_NODELIST": "gpu[08-09]",
    }
    w = world(env)
    assert (w.rank, w.world_size, w.local_rank, w.source) == (6, 8, 2, "slurm")
    assert w.store == "tcp://gpu08:%d" % (10000 + 4242 % 50000)
    w = world(dict(env, MASTER_PORT="7000"))
    assert w.store == "tcp://gpu08:7000"
    del env["SLURM_STEP_NODELIST"]
    assert world(env).store.startswith("tcp://gpu07:")


def test_nodelists():
    assert expand_first_host("node1") == "node1"
    assert expand_first_host("node1,node2") == "node1"
    assert expand_first_host("rack1-n[003-010],login") == "rack1-n003"


def test_precedence_and_file_store():
    env = {
        "TIDE_RANK": "0",
        "TIDE_WORLD_SIZE": "2",
        "TIDE_MASTER": "h:1",
        "SLURM_PROCID": "1",
        "SLURM_NTASKS": "4",
        "SLURM_JOB_NODELIST": "x",
    }
    assert world(env).source == "tide"
    w = world(
        {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "TIDE_STORE": "file:///nfs/job"}
    )
    assert w.store == "file:///nfs/job"


def test_local_and_errors():
    assert world({}) == world({}) and world({}).world_size == 1 and world({}).source == "local"
    with pytest.raises(
        WorldError, match="rank 4 from SLURM_PROCID is outside the world \\[0, 4\\)"
    ):
        world({"SLURM_PROCID": "4", "SLURM_NTASKS": "4", "SLURM_JOB_NODELIST": "a"})
    with pytest.raises(WorldError, match="world size 0 from WORLD_SIZE"):
        world({"RANK": "0", "WORLD_SIZE": "0", "MASTER_ADDR": "a", "MASTER_PORT": "1"})
    with pytest.raises(WorldError, match="RANK=.x. is not an integer"):
        world({"RANK": "x", "WORLD_SIZE": "2", "MASTER_ADDR": "a", "MASTER_PORT": "1"})
    with pytest.raises(WorldError, match="TIDE_STORE"):
        world({"TIDE_RANK": "0", "TIDE_WORLD_SIZE": "1", "TIDE_STORE": "redis://x"})


def test_half_a_world_is_an_error_not_one_process():
    # WORLD_SIZE without RANK (or the reverse) is a launcher set up wrong: read as "no world",
    # every process would train alone on its share, silently.
    with pytest.raises(WorldError, match="WORLD_SIZE=2 is set but RANK is not"):
        world({"WORLD_SIZE": "2", "MASTER_ADDR": "a", "MASTER_PORT": "1"})
    with pytest.raises(WorldError, match="RANK=1 is set but WORLD_SIZE is not"):
        world({"RANK": "1", "MASTER_ADDR": "a", "MASTER_PORT": "1"})
    with pytest.raises(WorldError, match="OMPI_COMM_WORLD_SIZE=4 is set but OMPI_COMM_WORLD_RANK"):
        world({"OMPI_COMM_WORLD_SIZE": "4", "MASTER_ADDR": "a", "MASTER_PORT": "1"})
    with pytest.raises(WorldError, match="PADDLE_TRAINERS_NUM=2 is set but PADDLE_TRAINER_ID"):
        world({"PADDLE_TRAINERS_NUM": "2", "PADDLE_TRAINER_ENDPOINTS": "a:1,a:2"})
    # A world of one (WORLD_SIZE=1 alone, as some schedulers set) is still one process.
    assert world({"WORLD_SIZE": "1"}).world_size == 1


def test_every_variable_read_is_named_when_it_is_bad():
    base = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "a", "MASTER_PORT": "1"}
    with pytest.raises(WorldError, match="LOCAL_RANK=.x. is not an integer"):
        world(dict(base, LOCAL_RANK="x"))
    for port in ("0", "70000", "-1"):
        with pytest.raises(WorldError, match="MASTER_PORT=%s is not a port" % port):
            world(dict(base, MASTER_PORT=port))
    with pytest.raises(WorldError, match="TIDE_MASTER=.h:99999. is not host:port"):
        world({"TIDE_RANK": "0", "TIDE_WORLD_SIZE": "2", "TIDE_MASTER": "h:99999"})
    slurm = {"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_JOB_NODELIST": "n1"}
    with pytest.raises(WorldError, match="SLURM_JOB_ID=.abc. is not an integer"):
        world(dict(slurm, SLURM_JOB_ID="abc"))
    with pytest.raises(WorldError, match="SLURM_LOCALID=.y. is not an integer"):
        world(dict(slurm, SLURM_JOB_ID="5", SLURM_LOCALID="y"))
    with pytest.raises(WorldError, match="TIDE_MASTER_PORT=.p. is not an integer"):
        world(dict(slurm, TIDE_MASTER_PORT="p"))
