"""Faults: a trainer killed mid-run makes the others (and the pservers) fail with a clear error
within the RPC deadline instead of hanging; a pserver killed mid-run and restarted resumes from its
checkpoint and training finishes."""

import os
import re
import time

import numpy as np
from e2e_util import load, start_job

from tide.distributed.launch import free_ports


def test_killed_trainer_stops_the_others_with_a_clear_error(procs, tmp_path):
    eps = ["127.0.0.1:%d" % p for p in free_ports(2)]
    ps, ts = start_job(
        procs,
        eps,
        2,
        [
            "--model",
            "fit_a_line",
            "--passes",
            "50",
            "--step_sleep",
            "0.02",
            "--out",
            tmp_path / "{role}{id}.json",
        ],
        TIDE_RPC_DEADLINE=3000,
    )
    ts[1].wait_for("step 5 ", 60)
    ts[1].kill()
    killed_at = time.time()
    assert ts[0].wait(30) != 0
    out = ts[0].output()
    assert "no answer within rpc_deadline 3000 ms" in out, out[-3000:]
    assert re.search(r"pserver 127\.0\.0\.1:\d+ \((send_barrier|get|send)", out), out[-3000:]
    assert "trainer 0" in out
    for p in ps:  # the pservers notice the missing trainer too, and stop
        assert p.wait(30) != 0
        assert "trainer(s) 1 sent no send_barrier within rpc_deadline 3000 ms" in p.output()
    assert time.time() - killed_at < 30


def test_pserver_restarts_from_its_checkpoint(procs, tmp_path):
    eps = ["127.0.0.1:%d" % p for p in free_ports(2)]
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    args = [
        "--model",
        "fit_a_line",
        "--passes",
        "3",
        "--step_sleep",
        "0.03",
        "--checkpoint_dir",
        ckpt,
        "--checkpoint_interval",
        "4",
        "--out",
        tmp_path / "{role}{id}.json",
    ]
    ps, ts = start_job(procs, eps, 2, args, TIDE_RPC_DEADLINE=60000)
    ts[0].wait_for("step 30 ", 90)
    ps[1].kill()
    saved = [f for f in os.listdir(ckpt) if f.endswith(".ckpt")]
    assert len(saved) == 2, saved  # both pservers checkpointed
    time.sleep(0.5)  # the trainers wait (and retry) while it is down
    restarted = procs("pserver.1.restarted", ps[1].p.args, **ps[1].extra_env)
    for t in ts:
        assert t.wait(120) == 0, t.output()[-4000:]
    assert restarted.wait(60) == 0, restarted.output()[-4000:]
    assert ps[0].wait(60) == 0
    out = restarted.output()
    assert re.search(
        r"resumed from checkpoint .*pserver_127\.0\.0\.1_\d+\.ckpt .*round \d+", out
    ), out[-3000:]
    # A pserver lost mid-job is news (the clean end of a job is not: test_launcher.py).
    assert "lost the connection to pserver" in ts[0].output() + ts[1].output()
    assert "reconnected to pserver" in ts[0].output() + ts[1].output()
    # The checkpoints are tide.io tensor files (plus the round).
    import tide.io

    names = set()
    for f in saved:
        with open(ckpt / f, "rb") as fh:
            while True:
                r = tide.io._read_record(fh)
                if r is None:
                    break
                names.add(r[0])
    assert {"@TIDE_PSERVER_ROUND@", "fc_0.w_0", "fc_0.b_0", "learning_rate_0"} <= names, names
    results = [load(tmp_path / ("trainer%d.json" % i)) for i in range(2)]
    for r in results:
        assert np.isfinite(r["final_loss"]) and r["final_loss"] < 0.8, r["final_loss"]
    np.testing.assert_allclose(results[0]["final_loss"], results[1]["final_loss"], rtol=1e-6)
