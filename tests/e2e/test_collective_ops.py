"""The collective ops (plugins/collective, on Gloo) on 2 and 4 real processes started by the
launcher, against numpy: allreduce sum/max/min/prod, broadcast, allgather, reducescatter, a fused
two-tensor allreduce, barrier."""

import subprocess
import sys

import numpy as np
import pytest
from e2e_util import HERE, child_env, load

sys.path.insert(0, HERE)
from collective_ops_job import inputs  # noqa: E402

JOB = HERE + "/collective_ops_job.py"


def launch(tmp_path, n, *script_args, timeout=120, prefix=(), job=JOB, **env):
    cmd = list(prefix)
    cmd += [sys.executable, "-m", "tide.distributed.launch", "--nproc_per_node", str(n), job]
    cmd += [str(a) for a in script_args]
    return subprocess.run(
        cmd,
        env=child_env(**env),
        cwd=str(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=timeout,
    )


def check_outputs(tmp_path, n):
    """Every rank's outputs (out<rank>.json) against numpy on all ranks' inputs."""
    xs = [inputs(k) for k in range(n)]
    f32 = np.stack([x["f32"] for x in xs])
    for rank in range(n):
        got = {k: np.array(v) for k, v in load(tmp_path / ("out%d.json" % rank)).items()}
        np.testing.assert_allclose(got["allreduce_sum"], f32.sum(0), rtol=1e-6)
        np.testing.assert_array_equal(got["allreduce_max"], f32.max(0))
        np.testing.assert_array_equal(got["allreduce_min"], f32.min(0))
        np.testing.assert_allclose(got["allreduce_prod"], f32.prod(0), rtol=1e-5)
        np.testing.assert_allclose(got["allreduce_sum_f64"], sum(x["f64"] for x in xs), rtol=1e-12)
        np.testing.assert_array_equal(got["allreduce_max_i64"], np.max([x["i64"] for x in xs], 0))
        np.testing.assert_array_equal(got["broadcast_root1"], xs[min(1, n - 1)]["f32"])
        np.testing.assert_array_equal(got["allgather"], np.concatenate([x["f32"] for x in xs]))
        part = 8 // n
        np.testing.assert_allclose(
            got["reducescatter"], f32.sum(0)[rank * part : (rank + 1) * part], rtol=1e-6
        )
        np.testing.assert_allclose(got["fused_a"], f32.sum(0), rtol=1e-6)
        np.testing.assert_allclose(got["fused_b"], 2 * f32.sum(0), rtol=1e-6)
    # Every rank holds bit-identical sums.
    first = load(tmp_path / "out0.json")
    for rank in range(1, n):
        assert load(tmp_path / ("out%d.json" % rank))["allreduce_sum"] == first["allreduce_sum"]
    return first["_places"]


@pytest.mark.parametrize("n", [2, 4])
def test_ops_match_numpy(tmp_path, n):
    r = launch(tmp_path, n, tmp_path / "out{rank}.json")
    out = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 0, out[-6000:]
    assert set(check_outputs(tmp_path, n).values()) == {"cpu:0"}


def test_file_store_rendezvous(tmp_path):
    # Gloo's FileStore on a shared directory in place of rank 0's TCP store.
    store = tmp_path / "store"
    store.mkdir()
    r = launch(tmp_path, 2, tmp_path / "out{rank}.json", TIDE_STORE="file://%s" % store)
    assert r.returncode == 0, r.stdout.decode("utf-8", "replace")[-6000:]
    xs = [inputs(k) for k in range(2)]
    got = load(tmp_path / "out1.json")
    np.testing.assert_allclose(got["allreduce_sum"], xs[0]["f32"] + xs[1]["f32"], rtol=1e-6)


def _with_hostname(name):
    """A command prefix that runs the command under a host name of its own (a UTS namespace):
    skips where this user may not make one."""
    probe = subprocess.run(["unshare", "--uts", "hostname", name], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("cannot make a UTS namespace here (unshare --uts needs root)")
    return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', name]


def test_file_store_rendezvous_where_the_host_name_does_not_resolve(tmp_path):
    # A container or chroot whose /etc/hosts lacks the host's name: Gloo's default address (the
    # host name) fails there, so the ranks listen on the default route's interface instead.
    store = tmp_path / "store"
    store.mkdir()
    prefix = _with_hostname("tide-no-such-host-4f1c")
    r = launch(
        tmp_path, 2, tmp_path / "out{rank}.json", prefix=prefix, TIDE_STORE="file://%s" % store
    )
    assert r.returncode == 0, r.stdout.decode("utf-8", "replace")[-6000:]
    xs = [inputs(k) for k in range(2)]
    got = load(tmp_path / "out0.json")
    np.testing.assert_allclose(got["allreduce_sum"], xs[0]["f32"] + xs[1]["f32"], rtol=1e-6)


def test_gloo_socket_ifname_names_the_interface(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    r = launch(
        tmp_path,
        2,
        tmp_path / "out{rank}.json",
        TIDE_STORE="file://%s" % store,
        GLOO_SOCKET_IFNAME="lo",
    )
    assert r.returncode == 0, r.stdout.decode("utf-8", "replace")[-6000:]
    store2 = tmp_path / "store2"
    store2.mkdir()
    r = launch(
        tmp_path,
        2,
        tmp_path / "bad{rank}.json",
        TIDE_STORE="file://%s" % store2,
        GLOO_SOCKET_IFNAME="tide_no_if0",
        timeout=60,
    )
    out = r.stdout.decode("utf-8", "replace")
    assert r.returncode != 0, out[-6000:]
    assert "Gloo cannot listen on interface tide_no_if0 (GLOO_SOCKET_IFNAME)" in out, out[-6000:]
    assert "c_comm_init" in out, out[-6000:]


def test_c_identity_forward_and_grad(tmp_path):
    # Tensor parallelism's entry op: Out is X; X's gradient is the sum over the ring of Out's.
    from collective_identity_job import W0, coefficients

    r = launch(tmp_path, 2, tmp_path / "out{rank}.json", job=HERE + "/collective_identity_job.py")
    assert r.returncode == 0, r.stdout.decode("utf-8", "replace")[-6000:]
    grad = coefficients(0) + coefficients(1)
    for rank in range(2):
        got = load(tmp_path / ("out%d.json" % rank))
        np.testing.assert_array_equal(np.array(got["out"], dtype="float32"), W0)
        np.testing.assert_allclose(np.array(got["grad"]), grad, rtol=1e-6)
        assert "c_allreduce_sum" in got["ops"], got["ops"]  # c_identity's grad
