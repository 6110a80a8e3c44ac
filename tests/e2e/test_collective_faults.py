"""Faults in collective jobs: a rank killed (SIGKILL) or stopped (SIGSTOP) mid-training makes the
others fail within the collective timeout with an error naming the rank and the collective, never
hang; an unreachable master, a rank outside the world and a world size of 0 are clear errors."""

import os
import subprocess
import sys
import time

import pytest
from e2e_util import HERE, child_env

from tide.distributed.launch import free_ports

MODEL = HERE + "/collective_model.py"
TIMEOUT_MS = 4000


def start_ranks(procs, n, *args, **env):
    master = "127.0.0.1:%d" % free_ports(1)[0]
    return [
        procs(
            "rank%d" % r,
            [sys.executable, "-u", MODEL] + [str(a) for a in args],
            TIDE_RANK=r,
            TIDE_WORLD_SIZE=n,
            TIDE_MASTER=master,
            TIDE_COLLECTIVE_TIMEOUT_MS=TIMEOUT_MS,
            **env,
        )
        for r in range(n)
    ]


@pytest.mark.parametrize("sig", ["KILL", "STOP"])
def test_dead_or_stopped_rank_is_named_within_the_timeout(procs, tmp_path, sig):
    n, victim = 4, 2
    ranks = start_ranks(
        procs,
        n,
        "--out",
        tmp_path / "r{rank}.json",
        "--steps",
        6,
        "--die_rank",
        victim,
        "--die_step",
        3,
        "--die_signal",
        sig,
    )
    ranks[victim].wait_for("dies at step 3", 90)
    died_at = time.time()
    for r, p in enumerate(ranks):
        if r == victim:
            continue
        code = p.wait(90)
        elapsed = time.time() - died_at
        out = p.output()
        assert code != 0, out[-3000:]
        # Within the timeout plus the grace period the report waits for late ranks.
        assert elapsed < TIMEOUT_MS / 1000.0 * 2 + 5, (elapsed, out[-3000:])
        assert "c_allreduce_sum" in out, out[-3000:]
        assert "rank(s) %d did not reach it" % victim in out, out[-3000:]
        assert "ring 0" in out
    ranks[victim].kill()


def run_rank(tmp_path, timeout=60, **env):
    cmd = [sys.executable, "-u", MODEL, "--out", str(tmp_path / "r{rank}.json"), "--steps", "2"]
    r = subprocess.run(
        cmd,
        env=child_env(TIDE_COLLECTIVE_TIMEOUT_MS=2000, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=timeout,
    )
    return r.returncode, r.stdout.decode("utf-8", "replace")


def test_unreachable_master_fails_with_the_timeout(tmp_path):
    port = free_ports(1)[0]  # nobody listens: rank 1 never reaches rank 0's store
    start = time.time()
    code, out = run_rank(
        tmp_path, TIDE_RANK=1, TIDE_WORLD_SIZE=2, TIDE_MASTER="127.0.0.1:%d" % port
    )
    assert code != 0
    assert time.time() - start < 30
    assert "127.0.0.1:%d" % port in out and "unreachable after 2000 ms" in out, out[-3000:]
    assert "c_comm_init" in out


def test_missing_rank_is_named_at_rendezvous(tmp_path):
    port = free_ports(1)[0]
    code, out = run_rank(
        tmp_path, TIDE_RANK=0, TIDE_WORLD_SIZE=2, TIDE_MASTER="127.0.0.1:%d" % port
    )
    assert code != 0
    assert "rank(s) 1 did not join within 2000 ms" in out, out[-3000:]


@pytest.mark.parametrize(
    "rank,size,needle",
    [
        (2, 2, "rank 2 from TIDE_RANK is outside the world [0, 2)"),
        (-1, 2, "rank -1 from TIDE_RANK is outside the world"),
        (0, 0, "world size 0 from TIDE_WORLD_SIZE"),
    ],
)
def test_bad_world_is_a_clear_error(tmp_path, rank, size, needle):
    code, out = run_rank(tmp_path, TIDE_RANK=rank, TIDE_WORLD_SIZE=size, TIDE_MASTER="127.0.0.1:1")
    assert code != 0 and needle in out, out[-3000:]


def test_launcher_rejects_a_bad_world():
    for args, needle in (
        (["--nproc_per_node", "0"], "must be >= 1"),
        (
            ["--nproc_per_node", "2", "--nnodes", "2", "--node_rank", "2", "--master", "h:1"],
            "--node_rank 2 is outside [0, 2)",
        ),
        (["--nproc_per_node", "2", "--nnodes", "2"], "needs --master"),
    ):
        r = subprocess.run(
            [sys.executable, "-m", "tide.distributed.launch"] + args + [MODEL],
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=60,
        )
        assert r.returncode != 0 and needle in r.stdout.decode(), r.stdout.decode()


def start_pair(procs, mode, **env):
    master = "127.0.0.1:%d" % free_ports(1)[0]
    job = os.path.join(HERE, "collective_mismatch_job.py")
    return [
        procs(
            "rank%d" % r,
            [sys.executable, "-u", job, mode],
            TIDE_RANK=r,
            TIDE_WORLD_SIZE=2,
            TIDE_MASTER=master,
            TIDE_COLLECTIVE_TIMEOUT_MS=3000,
            **env,
        )
        for r in range(2)
    ]


def test_mismatched_shapes_are_named(procs):
    # collective_check (on by default) compares the ranks' op, data type and shape first.
    for r, p in enumerate(start_pair(procs, "shape")):
        assert p.wait(60) != 0, p.output()[-3000:]
        out = p.output()
        assert "op 'c_allreduce_sum' (collective #1 on ring 0, rank %d of 2)" % r in out, out[
            -3000:
        ]
        mine, other = ("[8, 3]", "[4, 3]") if r == 0 else ("[4, 3]", "[8, 3]")
        assert (
            "this rank 'c_allreduce_sum float32%s', rank %d: 'c_allreduce_sum float32%s'"
            % (mine, 1 - r, other)
        ) in out, out[-3000:]


def test_collectives_in_another_order_are_named(procs):
    for _r, p in enumerate(start_pair(procs, "order")):
        assert p.wait(60) != 0, p.output()[-3000:]
        out = p.output()
        assert "the ranks issued different collectives (collective_check)" in out, out[-3000:]
        assert "collective #1 on ring 0" in out
        assert (
            "'c_allreduce_sum float32[8, 3]'" in out
            and "'c_broadcast float32[8, 3] from root 0'" in out
        )


def test_without_collective_check_a_mismatch_still_ends_every_rank(procs):
    # Unchecked, Gloo aborts the rank that receives too much; the other names it as missing.
    for p in start_pair(procs, "shape", TIDE_COLLECTIVE_CHECK=0):
        assert p.wait(60) != 0, p.output()[-3000:]


def test_collective_timeout_flag_rejects_bad_values():
    import tide

    with pytest.raises(Exception, match="collective_timeout_ms.*outside"):
        tide.set_flags({"collective_timeout_ms": "0"})


def test_max_restarts_resumes_from_the_checkpoint(tmp_path):
    launch = [sys.executable, "-m", "tide.distributed.launch", "--nproc_per_node", "2"]
    model = [MODEL, "--steps", "6"]
    whole = subprocess.run(
        launch + model + ["--out", str(tmp_path / "whole{rank}.json")],
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=120,
    )
    assert whole.returncode == 0, whole.stdout.decode()[-3000:]
    # Rank 1 dies before step 4 in the first attempt; the restart resumes after the last
    # checkpoint rank 0 finished (step 3's, or step 2's when the launcher stopped it mid-save).
    r = subprocess.run(
        launch
        + ["--max_restarts", "1"]
        + model
        + [
            "--out",
            str(tmp_path / "resumed{rank}.json"),
            "--die_rank",
            "1",
            "--die_step",
            "4",
            "--checkpoint_dir",
            str(tmp_path / "ckpt"),
        ],
        env=child_env(TIDE_COLLECTIVE_TIMEOUT_MS=TIMEOUT_MS),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=180,
    )
    out = r.stdout.decode()
    assert r.returncode == 0, out[-4000:]
    assert "restarting the job (restart 1 of 1)" in out and "resumes at step" in out, out[-4000:]
    import json

    for rank in range(2):
        with open(tmp_path / ("resumed%d.json" % rank)) as f:
            resumed = json.load(f)
        with open(tmp_path / ("whole%d.json" % rank)) as f:
            whole_run = json.load(f)
        first = resumed["first_step"]
        assert first in (3, 4), first
        assert resumed["params"] == whole_run["params"]
        assert resumed["losses"] == whole_run["losses"][first:]


def test_max_restarts_with_a_file_store(tmp_path):
    # Gloo's file store refuses keys a previous attempt left ("File already exists"): each
    # restart meets in a fresh subdirectory of TIDE_STORE's (restart1, ...), which every node's
    # launcher names alike.
    store = tmp_path / "store"
    store.mkdir()
    r = subprocess.run(
        [sys.executable, "-m", "tide.distributed.launch", "--nproc_per_node", "2"]
        + ["--max_restarts", "1", MODEL, "--steps", "5", "--die_rank", "1", "--die_step", "3"]
        + ["--out", str(tmp_path / "r{rank}.json"), "--checkpoint_dir", str(tmp_path / "ckpt")],
        env=child_env(TIDE_COLLECTIVE_TIMEOUT_MS=TIMEOUT_MS, TIDE_STORE="file://%s" % store),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=120,
    )
    out = r.stdout.decode()
    assert r.returncode == 0, out[-4000:]
    assert "restarting the job (restart 1 of 1)" in out and "resumes at step" in out, out[-4000:]
    assert (store / "restart1").is_dir()


def test_the_launcher_names_a_stopped_rank_and_ends_it_at_once(tmp_path):
    # Rank 1 stops (SIGSTOP): rank 0 fails at the collective timeout, naming rank 1; the
    # launcher says rank.1 is stopped and ends it at once (SIGCONT after SIGTERM), not after the
    # 5 s it grants before SIGKILL.
    p = subprocess.Popen(
        [sys.executable, "-m", "tide.distributed.launch", "--nproc_per_node", "2", MODEL]
        + ["--steps", "4", "--die_rank", "1", "--die_step", "2", "--die_signal", "STOP"]
        + ["--out", str(tmp_path / "r{rank}.json")],
        env=child_env(TIDE_COLLECTIVE_TIMEOUT_MS=2000),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    lines, stopping_at = [], None
    try:
        for line in iter(p.stdout.readline, b""):
            lines.append(line.decode("utf-8", "replace"))
            if stopping_at is None and lines[-1].startswith("[launch] stopping"):
                stopping_at = time.time()
        p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    ended_after = time.time() - stopping_at if stopping_at else None
    out = "".join(lines)
    assert p.returncode != 0, out[-4000:]
    assert "rank(s) 1 did not reach it" in out, out[-4000:]
    assert "stopping rank.1 (stopped by a signal): rank.0 exited" in out, out[-4000:]
    assert ended_after is not None and ended_after < 4, (ended_after, out[-4000:])
