"""Executor.close() tells the parameter servers the trainer is done, as Fluid 1.x's does (issue 37,
item 5): a pserver launched Fluid-style (fluid_style_dist.py: transpile, exe.run(pserver_prog))
exits cleanly once its trainers have closed their executors, after training them to the same
losses as one process. (tests/python/test_executor.py checks what close() sends.)"""

import json
import os
import sys

import numpy as np
from e2e_util import HERE

from tide.distributed.launch import free_ports

SCRIPT = os.path.join(HERE, "fluid_style_dist.py")


def _start(procs, name, role, endpoints, trainers=2, **env):
    return procs(
        name,
        [sys.executable, "-u", SCRIPT],
        PADDLE_TRAINING_ROLE=role,
        PADDLE_PSERVER_ENDPOINTS=",".join(endpoints),
        PADDLE_TRAINERS=trainers,
        **env,
    )


def _result(proc):
    return json.loads(proc.output().strip().splitlines()[-1])


def test_pservers_exit_after_the_trainers_close_their_executors(procs):
    local = procs("local", [sys.executable, "-u", SCRIPT], PADDLE_TRAINING_ROLE="LOCAL")
    assert local.wait(120) == 0, local.output()
    eps = ["127.0.0.1:%d" % p for p in free_ports(2)]
    pservers = [
        _start(procs, "pserver.%d" % i, "PSERVER", eps, PADDLE_CURRENT_ENDPOINT=ep)
        for i, ep in enumerate(eps)
    ]
    for p in pservers:
        p.wait_for("serving", 60)
    trainers = [
        _start(procs, "trainer.%d" % i, "TRAINER", eps, PADDLE_TRAINER_ID=i) for i in range(2)
    ]
    for t in trainers:
        assert t.wait(120) == 0, t.output()[-4000:]
    # The pservers stop on their own (a hang fails here with their output).
    for p in pservers:
        assert p.wait(60) == 0, p.output()[-4000:]
        assert "done" in p.output(), p.output()[-4000:]
    # Sync mode: the trainers' halves average to the local run's whole minibatches.
    avg = np.mean([_result(t)["losses"] for t in trainers], axis=0)
    np.testing.assert_allclose(avg, _result(local)["losses"], rtol=1e-4, atol=1e-6)
    assert _result(local)["losses"][-1] < 0.5 * _result(local)["losses"][0]
