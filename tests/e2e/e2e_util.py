"""Helpers of the multi-process tests (the procs fixture is registered by conftest.py): processes on 127.0.0.1 with free ports, each with a
timeout and killed at the end of its test, so a failure never hangs the run."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "dist_model.py")
sys.path.insert(0, HERE)


def child_env(**extra):
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    for var in ("PYTHONPATH", "TIDE_PLUGIN_PATH"):  # children may run elsewhere
        if env.get(var):
            env[var] = os.pathsep.join(os.path.abspath(p) for p in env[var].split(os.pathsep) if p)
    for k in ("TIDE_ROLE", "TIDE_TRAINER_ID", "TIDE_CURRENT_ENDPOINT"):
        env.pop(k, None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Proc:
    """A child process whose output (stdout + stderr) goes to a file we can read while it runs."""

    def __init__(self, name, cmd, env, tmp_path):
        self.name = name
        self.log_path = os.path.join(str(tmp_path), name + ".log")
        self.log = open(self.log_path, "wb")
        self.p = subprocess.Popen(
            cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def output(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait(self, timeout):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                "%s did not finish within %s s; its output:\n%s"
                % (self.name, timeout, self.output()[-4000:])
            ) from None

    def wait_for(self, text, timeout):
        end = time.time() + timeout
        while time.time() < end:
            if text in self.output():
                return
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(
            "%s never printed %r; its output:\n%s" % (self.name, text, self.output()[-4000:])
        )

    def kill(self, sig=signal.SIGKILL):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, sig)
            except ProcessLookupError:
                pass
            self.p.wait(10)


@pytest.fixture
def procs(tmp_path):
    """Starts processes: procs(name, cmd, **env); all are killed when the test ends."""
    started = []

    def start(name, cmd, **env):
        p = Proc(name, cmd, child_env(**env), tmp_path)
        p.extra_env = env
        started.append(p)
        return p

    yield start
    for p in started:
        p.kill()
        p.log.close()


def run_ok(cmd, tmp_path, timeout=120, **env):
    """Runs cmd in tmp_path to the end; asserts it succeeded and returns its output."""
    r = subprocess.run(
        cmd,
        env=child_env(**env),
        cwd=str(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=timeout,
    )
    out = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 0, out[-6000:]
    return out


def model_cmd(*args):
    return [sys.executable, "-u", MODEL] + [str(a) for a in args]


def launch_cmd(pservers, trainers, *args, endpoints=None):
    cmd = [
        sys.executable,
        "-m",
        "tide.distributed.launch",
        "--trainers",
        str(trainers),
        "--grace",
        "20",
    ]
    cmd += (
        ["--pserver_endpoints", ",".join(endpoints)] if endpoints else ["--pservers", str(pservers)]
    )
    return cmd + [MODEL] + [str(a) for a in args]


def start_job(procs, endpoints, trainers, args, **env):
    """Pservers and trainers of dist_model.py as separate processes (no launcher)."""
    common = dict(TIDE_PSERVER_ENDPOINTS=",".join(endpoints), TIDE_TRAINERS=trainers, **env)
    ps = [
        procs(
            "pserver.%d" % i,
            model_cmd(*args),
            TIDE_ROLE="PSERVER",
            TIDE_CURRENT_ENDPOINT=ep,
            **common,
        )
        for i, ep in enumerate(endpoints)
    ]
    ts = [
        procs("trainer.%d" % i, model_cmd(*args), TIDE_ROLE="TRAINER", TIDE_TRAINER_ID=i, **common)
        for i in range(trainers)
    ]
    return ps, ts


def load(path):
    with open(path) as f:
        return json.load(f)


def assert_same_training(local, trainers, rtol=1e-4, atol=2e-6):
    """The trainers' per-step losses average to the local run's, and the parameters match."""
    avg = np.mean([t["losses"] for t in trainers], axis=0)
    np.testing.assert_allclose(avg, local["losses"], rtol=rtol, atol=atol, err_msg="per-step loss")
    for t in trainers:
        np.testing.assert_allclose(t["final_loss"], local["final_loss"], rtol=rtol, atol=atol)
        for name, value in local["params"].items():
            np.testing.assert_allclose(t["params"][name], value, rtol=rtol, atol=atol, err_msg=name)
