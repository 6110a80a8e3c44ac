"""The rendezvous warns where a rank's main program differs from rank 0's, and refuses, naming why, what Gloo would report in its own terms: ranks started with
different world sizes (every one of them stops, none waits for the timeout), a file store whose
directory does not exist, and one that holds an earlier job's keys."""

import sys
import time

from e2e_util import HERE

from tide.distributed.launch import free_ports

MODEL = HERE + "/collective_model.py"


def start(procs, tmp_path, rank, size, tag="", **env):
    env.setdefault("TIDE_COLLECTIVE_TIMEOUT_MS", 20000)
    return procs(
        "%srank%d_of_%d" % (tag, rank, size),
        [sys.executable, "-u", MODEL, "--out", str(tmp_path / "r{rank}.json"), "--steps", "2"],
        TIDE_RANK=rank,
        TIDE_WORLD_SIZE=size,
        **env,
    )


def test_ranks_started_with_different_world_sizes_all_stop(procs, tmp_path):
    master = "127.0.0.1:%d" % free_ports(1)[0]
    begin = time.time()
    r0 = start(procs, tmp_path, 0, 2, TIDE_MASTER=master)
    r1 = start(procs, tmp_path, 1, 3, TIDE_MASTER=master)
    for p, theirs, mine in [(r0, 3, 2), (r1, 2, 3)]:
        assert p.wait(60) != 0, p.output()[-3000:]
        out = p.output()
        other = 1 if p is r0 else 0
        want = "rank %d was started with a world of %d processes, this rank with %d" % (
            other,
            theirs,
            mine,
        )
        assert want in out and "c_comm_init" in out, out[-3000:]
    assert time.time() - begin < 20  # long before the 20 s timeout: nobody waited for it


def test_file_store_directory_missing(procs, tmp_path):
    store = "file://%s/nowhere" % tmp_path
    ranks = [
        start(procs, tmp_path, r, 2, TIDE_MASTER="127.0.0.1:1", TIDE_STORE=store) for r in range(2)
    ]
    for p in ranks:
        assert p.wait(60) != 0
        assert "nowhere is not a directory" in p.output(), p.output()[-3000:]


def test_file_store_of_an_earlier_job(procs, tmp_path):
    d = tmp_path / "store"
    d.mkdir()
    env = {"TIDE_MASTER": "127.0.0.1:1", "TIDE_STORE": "file://%s" % d}
    first = [start(procs, tmp_path, r, 2, **env) for r in range(2)]
    for p in first:
        assert p.wait(120) == 0, p.output()[-3000:]
    again = [start(procs, tmp_path, r, 2, tag="again_", **env) for r in range(2)]
    for p in again:
        assert p.wait(60) != 0
        assert "holds an earlier job's keys" in p.output(), p.output()[-3000:]


def test_a_rank_that_built_another_model_is_named(procs, tmp_path):
    master = "127.0.0.1:%d" % free_ports(1)[0]
    ranks = [
        procs(
            "rank%d" % r,
            [
                sys.executable,
                "-u",
                MODEL,
                "--out",
                str(tmp_path / "r{rank}.json"),
                "--steps",
                "1",
                "--sigmoid_rank",
                "1",
            ],
            TIDE_RANK=r,
            TIDE_WORLD_SIZE=2,
            TIDE_MASTER=master,
            TIDE_COLLECTIVE_TIMEOUT_MS=20000,
        )
        for r in range(2)
    ]
    for p in ranks:
        assert p.wait(120) == 0, p.output()[-3000:]  # a warning: programs may differ on purpose
    out = ranks[0].output()
    assert (
        "rank 1's main program differs from rank 0's at op 2 of block 0: 'sigmoid' there, "
        "'relu' here" in out
    ), out[-3000:]


def test_rank_0_given_a_master_address_not_its_own(procs, tmp_path):
    """Rank 0 hosts the store on every address of its host; a master address that is not one of
    them is named as such, not as 'rank 0 stopped or died' said by rank 0 itself."""
    port = free_ports(1)[0]
    r0 = start(
        procs, tmp_path, 0, 2, TIDE_MASTER="10.255.255.1:%d" % port, TIDE_COLLECTIVE_TIMEOUT_MS=2000
    )
    assert r0.wait(60) != 0
    out = r0.output()
    assert "this rank hosts the rendezvous store" in out and "an address of this host" in out, out[
        -3000:
    ]
