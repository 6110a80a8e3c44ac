"""Collectives on a device's tensors, through the device ABI's collective extension
(tide/collective.h): the test-only sim device publishes a library ("SimGloo": each collective
queued on the device's stream, staged through host memory to Gloo), so the path a GPU takes
through NCCL is tested without one. With TIDE_SIM_NO_COLLECTIVE=1 the device publishes none, and
the op pack stages the tensors through host memory itself, saying so once per ring. Where there
are GPUs, the same ops and training go through NCCL (skipped without: NCCL puts one rank per GPU,
so training needs two)."""

import os
import sys

import numpy as np
import pytest
from e2e_util import HERE, load
from e2e_util import run_ok as run
from test_collective_ops import check_outputs, launch
from test_collective_training import assert_data_parallel

import tide

SIM = os.path.join(
    os.environ.get("TIDE_BUILD_DIR", ""), "tests", "plugins", "sim_device", "libtide_device_sim.so"
)
pytestmark = pytest.mark.skipif(
    not os.path.exists(SIM), reason="the sim device plugin is not built"
)

MODEL = HERE + "/collective_model.py"
STAGED = "the collectives on sim:0 tensors are staged through host memory and run on Gloo"
THROUGH_LIBRARY = "SimGloo on sim:0"  # in the ring's connection line (an INFO line)


def train(tmp_path, out, n, *args, **env):
    """The collective MLP on sim:0: alone (n = 0) or n ranks under the launcher."""
    script = [MODEL, "--out", tmp_path / out, "--steps", 6, "--plugin", SIM] + list(args)
    script = [str(a) for a in script]
    if n == 0:
        return run([sys.executable, "-u"] + script, tmp_path, **env)
    launcher = [sys.executable, "-m", "tide.distributed.launch", "--nproc_per_node", str(n)]
    return run(launcher + script, tmp_path, GLOG_minloglevel="0", **env)


@pytest.mark.parametrize("fuse_mb", [32, 0])  # one group of 6 allreduces; 6 single ones
def test_the_sim_device_trains_data_parallel_through_its_collective_library(tmp_path, fuse_mb):
    train(tmp_path, "local.json", 0, "--place", "sim")
    # Random delays before each task of the device's streams: a collective queued before the
    # kernels that make its input are done must still read their results (stream order).
    args = ["--place", "sim", "--fuse_mb", fuse_mb]
    out = train(tmp_path, "rank{rank}.json", 2, *args, TIDE_SIM_MAX_DELAY_US="200")
    assert out.count(THROUGH_LIBRARY) == 2, out[-6000:]  # each rank's ring joined the library
    assert STAGED not in out, out[-6000:]
    ranks = [load(tmp_path / ("rank%d.json" % r)) for r in range(2)]
    # Bit-identical across ranks, equal to one process on the global batch to float rounding.
    assert_data_parallel(load(tmp_path / "local.json"), ranks)
    # And what the CPU reaches on the same data, to float rounding (the sim sums in its order).
    run([sys.executable, "-u", MODEL, "--out", tmp_path / "cpu.json", "--steps", "6"], tmp_path)
    for name, value in load(tmp_path / "cpu.json")["params"].items():
        np.testing.assert_allclose(ranks[0]["params"][name], value, rtol=1e-4, atol=1e-5)


def test_a_device_without_a_collective_library_trains_through_host_staging(tmp_path):
    train(tmp_path, "local.json", 0, "--place", "sim", TIDE_SIM_NO_COLLECTIVE="1")
    out = train(tmp_path, "rank{rank}.json", 2, "--place", "sim", TIDE_SIM_NO_COLLECTIVE="1")
    # One line per ring (one ring per rank here), naming why.
    assert out.count(STAGED) == 2, out[-6000:]
    assert "sim publishes no collective library" in out, out[-6000:]
    assert THROUGH_LIBRARY not in out
    ranks = [load(tmp_path / ("rank%d.json" % r)) for r in range(2)]
    assert_data_parallel(load(tmp_path / "local.json"), ranks)


@pytest.mark.parametrize("library", ["1", "0"])
def test_every_op_moves_device_tensors(tmp_path, library):
    # allreduce sum/max/min/prod (float32, float64, int64), broadcast, allgather, reducescatter
    # and a fused bucket on sim:0 tensors, through the library or staged, against numpy; random
    # delays before each task of the sim's streams, so that a collective on the communication
    # stream that did not wait for its input, or an op that read its output before the device's
    # stream waited for it, reads stale values.
    env = {"GLOG_minloglevel": "0", "TIDE_SIM_MAX_DELAY_US": "300"}
    if library == "0":
        env["TIDE_SIM_NO_COLLECTIVE"] = "1"
    r = launch(tmp_path, 2, tmp_path / "out{rank}.json", SIM, "sim", **env)
    out = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 0, out[-6000:]
    assert set(check_outputs(tmp_path, 2).values()) == {"sim:0"}
    # Through the library, the allreduces with use_calc_stream = false (sum, min, prod, the
    # float64 sum, the int64 max and the fused pair: 7 calls) ran on the sim's communication
    # stream, ordered with its stream by events: the values above are right (and again under
    # random delays below).
    comm_stream = 7 if library == "1" else 0
    for rank in range(2):
        assert load(tmp_path / ("out%d.json" % rank))["_comm_stream_collectives"] == comm_stream
    assert (THROUGH_LIBRARY in out) == (library == "1"), out[-6000:]
    assert (STAGED in out) == (library == "0"), out[-6000:]


GPUS = tide.device_count("gpu")
needs_gpu = pytest.mark.skipif(GPUS == 0, reason="no GPU (or no CUDA plugin) here")


@needs_gpu
def test_gpu_tensors_go_through_nccl(tmp_path):
    n = min(GPUS, 2)  # one rank: NCCL's communicator of one still runs every collective
    r = launch(tmp_path, n, tmp_path / "out{rank}.json", "-", "gpu", GLOG_minloglevel="0")
    out = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 0, out[-6000:]
    assert set(check_outputs(tmp_path, n).values()) == {"gpu:0"}
    assert out.count("NCCL on gpu:") == n and "staged through host memory" not in out, out[-6000:]


@pytest.mark.skipif(GPUS < 2, reason="training data-parallel through NCCL needs two GPUs")
def test_two_gpus_train_data_parallel_through_nccl(tmp_path):
    model = [sys.executable, "-u", MODEL, "--steps", "6", "--place", "gpu"]
    run(model + ["--out", str(tmp_path / "local.json")], tmp_path)
    launcher = [sys.executable, "-m", "tide.distributed.launch", "--nproc_per_node", "2"]
    out = run(launcher + model + ["--out", str(tmp_path / "rank{rank}.json")], tmp_path)
    assert "staged through host memory" not in out, out[-6000:]
    ranks = [load(tmp_path / ("rank%d.json" % r)) for r in range(2)]
    assert_data_parallel(load(tmp_path / "local.json"), ranks)


def test_the_watchdog_aborts_a_device_collective_a_rank_never_joins(tmp_path):
    # Rank 1 never issues the allreduce; with collective_check off nothing on the host notices,
    # and SimGloo would wait three timeouts: the op pack's watchdog aborts it at one, naming the
    # op, the ring, the rank and the time elapsed, and the ring is unusable afterwards.
    timeout_ms = 3000
    r = launch(
        tmp_path,
        2,
        tmp_path / "out.json",
        SIM,
        job=HERE + "/collective_watchdog_job.py",
        timeout=120,
        TIDE_COLLECTIVE_TIMEOUT_MS=str(timeout_ms),
        TIDE_COLLECTIVE_CHECK="0",
    )
    out = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 3, out[-6000:]
    got = load(tmp_path / "out.json")
    error = got["error"]
    assert "collective watchdog: op 'c_allreduce_sum' (collective #1 on ring 0, rank 0 of 2)" in (
        error
    ), error
    assert "did not finish within %d ms on sim:0 (" % timeout_ms in error, error
    assert " ms elapsed" in error and "SimGloo's communicator was aborted" in error, error
    # Within the timeout (and the watchdog's polling), well before SimGloo's own (3x).
    assert timeout_ms / 1000 <= got["seconds"] < 2 * timeout_ms / 1000, got
    assert "ring 0's SimGloo communicator is unusable: collective watchdog" in got["again"], got
    assert got["again_seconds"] < 1.0, got
