"""Two "hosts": network namespaces made by the test, each with its own address on the two ends of
a veth pair, one launcher per namespace (--nnodes 2, two ranks each, the master on the first
host's address). The four ranks train to the parameters of one process fed the global batch.
Skipped, with the reason, where network namespaces cannot be made (not root, no `ip`)."""

import os
import random
import shutil
import subprocess
import sys

import pytest
from e2e_util import HERE, child_env, load, run_ok

sys.path.insert(0, HERE)
from test_collective_training import assert_data_parallel  # noqa: E402

MODEL = os.path.join(HERE, "collective_model.py")


def sh(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)


@pytest.fixture
def two_hosts():
    if not shutil.which("ip"):
        pytest.skip("no `ip` command (iproute2) to make network namespaces")
    tag = "%d_%d" % (os.getpid() % 100000, random.randrange(1000))
    ns = ["tide_a_" + tag, "tide_b_" + tag]
    net = "10.%d.%d" % (random.randrange(64, 128), random.randrange(1, 255))
    made = []
    try:
        for n in ns:
            r = sh("ip", "netns", "add", n)
            if r.returncode != 0:
                pytest.skip(
                    "cannot make a network namespace (needs root / CAP_SYS_ADMIN): %s"
                    % r.stdout.decode().strip()
                )
            made.append(n)
        veth = ["tva" + tag[-8:], "tvb" + tag[-8:]]
        steps = [("ip", "link", "add", veth[0], "type", "veth", "peer", "name", veth[1])]
        for i, n in enumerate(ns):
            steps += [
                ("ip", "link", "set", veth[i], "netns", n),
                ("ip", "-n", n, "addr", "add", "%s.%d/24" % (net, i + 1), "dev", veth[i]),
                ("ip", "-n", n, "link", "set", veth[i], "up"),
                ("ip", "-n", n, "link", "set", "lo", "up"),
            ]
        for step in steps:
            r = sh(*step)
            if r.returncode != 0:
                pytest.skip(
                    "cannot set up the veth pair (%s): %s"
                    % (" ".join(step), r.stdout.decode().strip())
                )
        yield ns, ["%s.1" % net, "%s.2" % net]
    finally:
        for n in made:
            sh("ip", "netns", "del", n)


def test_two_hosts_train_like_one_process(tmp_path, two_hosts):
    ns, addrs = two_hosts
    args = ["--steps", "6", "--model", "mlp"]
    run_ok([sys.executable, "-u", MODEL, "--out", str(tmp_path / "local.json")] + args, tmp_path)
    master = "%s:%d" % (addrs[0], random.randrange(20000, 30000))
    procs = []
    for node in range(2):
        cmd = [
            "ip",
            "netns",
            "exec",
            ns[node],
            sys.executable,
            "-m",
            "tide.distributed.launch",
            "--nproc_per_node",
            "2",
            "--nnodes",
            "2",
            "--node_rank",
            str(node),
            "--master",
            master,
            MODEL,
            "--out",
            str(tmp_path / "rank{rank}.json"),
        ] + args
        procs.append(
            subprocess.Popen(
                cmd,
                env=child_env(TIDE_COLLECTIVE_TIMEOUT_MS=60000),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        )
    outs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        outs.append(out.decode("utf-8", "replace"))
        assert p.returncode == 0, out.decode("utf-8", "replace")[-4000:]
    ranks = [load(tmp_path / ("rank%d.json" % r)) for r in range(4)]
    assert_data_parallel(load(tmp_path / "local.json"), ranks)
    assert "ranks 2..3" in outs[1]
