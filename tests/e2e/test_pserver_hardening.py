"""A pserver under well-formed but wrong control traffic: barriers before any gradient are refused
(the round cannot finish on gradients that never came, and the pserver does not exit); a get for a
far-future round is answered with an error after rpc_deadline instead of being parked forever; with
CurveZMQ, a client may only speak for the trainer whose key it holds; a NaN or Inf gradient is
refused (not applied) naming its trainer, and the pserver serves on."""

import time

import numpy as np
import pytest
import zmq
import zmq.auth
from e2e_util import start_job
from test_bad_input import request, var_message

from tide.distributed.launch import free_ports

SEND_VARS, GET_VARS, SEND_BARRIER, COMPLETE = 1, 2, 3, 5
GRADS = (("fc_0.w_0@GRAD", np.full((10, 1), 0.5, "float32")), ("fc_0.b_0@GRAD", [0.5]))
DEADLINE_MS = 3000


def _pserver(procs, tmp_path, *extra, **env):
    """One pserver of a 2-trainer fit_a_line job, no trainers: the test speaks for them."""
    ep = "127.0.0.1:%d" % free_ports(1)[0]
    args = ["--model", "fit_a_line", "--out", tmp_path / "{role}{id}.json"] + list(extra)
    ps, _ = start_job(
        lambda name, cmd, **e: procs(name, cmd, **e) if name.startswith("pserver") else None,
        [ep],
        2,
        args,
        TIDE_RPC_DEADLINE=DEADLINE_MS,
        **env,
    )
    ps[0].wait_for("serving", 60)
    return ep, ps[0]


def _socket(ep, keys=None, cert=None):
    s = zmq.Context.instance().socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    if cert:
        pub, sec = zmq.auth.load_certificate(str(keys / cert))
        s.curve_publickey, s.curve_secretkey = pub, sec
        s.curve_serverkey, _ = zmq.auth.load_certificate(str(keys / "server.key"))
    s.connect("tcp://" + ep)
    return s


def _answer(s, timeout_s):
    assert s.poll(int(timeout_s * 1000)), "no answer within %s s" % timeout_s
    return b"".join(s.recv_multipart())


def test_barriers_before_any_gradient_are_refused_and_the_pserver_stays(procs, tmp_path):
    ep, ps = _pserver(procs, tmp_path)
    s = _socket(ep)
    for t in (0, 1):
        s.send(request(SEND_BARRIER, 10 + t, trainer_id=t))
        assert b"before its gradient(s)" in _answer(s, 10)
    time.sleep(0.5)
    assert ps.p.poll() is None, "the pserver exited:\n" + ps.output()[-3000:]
    # A get for a round that will never come is answered with an error after rpc_deadline.
    start = time.time()
    s.send(request(GET_VARS, 20, names=["fc_0.w_0"], round=1 << 40))
    answer = _answer(s, DEADLINE_MS / 1000 + 10)
    assert b"waited rpc_deadline 3000 ms" in answer, answer
    assert DEADLINE_MS / 1000 - 0.5 <= time.time() - start
    for t in (0, 1):  # the trainers finish: the pserver ends cleanly
        s.send(request(COMPLETE, 30 + t, trainer_id=t))
        _answer(s, 10)
    assert ps.wait(30) == 0, ps.output()[-3000:]
    assert "pserver %s done" % ep in ps.output()


def test_with_curve_a_client_speaks_only_for_its_own_trainer(procs, tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir()
    for name in ("server", "trainer0", "trainer1"):
        zmq.auth.create_certificates(str(keys), name)
    ep, ps = _pserver(procs, tmp_path, "--curve_dir", keys)
    s0 = _socket(ep, keys, "trainer0.key_secret")
    for kind in (COMPLETE, SEND_BARRIER):
        s0.send(request(kind, 40 + kind, trainer_id=1))  # trainer 0's key, trainer 1's id
        assert b"does not hold trainer 1's CurveZMQ key" in _answer(s0, 10)
    assert ps.p.poll() is None
    s0.send(request(COMPLETE, 50, trainer_id=0))
    assert b"does not hold" not in _answer(s0, 10)
    s1 = _socket(ep, keys, "trainer1.key_secret")
    s1.send(request(COMPLETE, 51, trainer_id=1))
    _answer(s1, 10)
    assert ps.wait(30) == 0, ps.output()[-3000:]
    assert "refused a request from trainer 1" in ps.output()


def _gradient(name, values, trainer, seq, round=0):
    data = np.asarray(values, "float32").tobytes()
    return [
        request(
            SEND_VARS,
            seq,
            [var_message(name, list(np.shape(values)), len(data))],
            trainer_id=trainer,
            round=round,
        ),
        data,
    ]


@pytest.mark.parametrize("check_nan_inf", ["0", "1"])
def test_a_non_finite_gradient_is_refused_naming_the_trainer_and_the_pserver_serves_on(
    procs, tmp_path, check_nan_inf
):
    # It was applied: the pserver served NaN parameters to every trainer, or with check_nan_inf
    # its optimize block failed and it stopped serving. One client could stop the job.
    ep, ps = _pserver(procs, tmp_path, TIDE_CHECK_NAN_INF=check_nan_inf)
    s = _socket(ep)
    w = np.full((10, 1), 0.5, "float32")
    s.send_multipart(_gradient("fc_0.b_0@GRAD", [float("nan")], 0, 1))
    assert b"gradient 'fc_0.b_0@GRAD' from trainer 0 holds NaN at element 0: refused" in _answer(
        s, 10
    )
    bad = w.copy()
    bad[3] = np.inf
    s.send_multipart(_gradient("fc_0.w_0@GRAD", bad, 1, 2))
    assert b"gradient 'fc_0.w_0@GRAD' from trainer 1 holds Inf at element 3: refused" in _answer(
        s, 10
    )
    # Finite gradients from both trainers finish the round.
    seq = 10
    for t in (0, 1):
        for name, value in (("fc_0.w_0@GRAD", w), ("fc_0.b_0@GRAD", [0.5])):
            s.send_multipart(_gradient(name, value, t, seq))
            assert b"refused" not in _answer(s, 10)
            seq += 1
    for t in (0, 1):
        s.send(request(SEND_BARRIER, 20 + t, trainer_id=t))
    for _ in (0, 1):
        assert b"refused" not in _answer(s, 30)
    s.send(request(GET_VARS, 30, names=["fc_0.w_0", "fc_0.b_0"], round=1))
    assert s.poll(10000), "no answer to the get"
    frames = s.recv_multipart()
    assert len(frames) == 3, frames[0]
    for data in frames[1:]:
        values = np.frombuffer(data, "float32")
        assert values.size and np.isfinite(values).all(), values
    assert ps.p.poll() is None, "the pserver exited:\n" + ps.output()[-3000:]
    for t in (0, 1):
        s.send(request(COMPLETE, 40 + t, trainer_id=t))
        _answer(s, 10)
    assert ps.wait(30) == 0, ps.output()[-3000:]
    log = ps.output()
    assert (
        "refused a request from trainer 0: gradient 'fc_0.b_0@GRAD' from trainer 0 holds NaN" in log
    ), log[-3000:]


def test_a_restarted_pserver_takes_the_highest_round_its_trainers_report(procs, tmp_path):
    # A pserver killed right after answering a round's barriers may have reached one trainer
    # with the answer and not the other. Restarted from its checkpoint, it hears trainer 1 resend
    # round 3's gradients and barrier and trainer 0 ask for round 4's parameters. It took the
    # first round it heard (3) and parked the get until round 3 finished, which needed trainer
    # 0's barrier, long answered: both trainers waited out rpc_deadline (seen in a fresh root).
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    ep, ps = _pserver(procs, tmp_path, "--checkpoint_dir", ckpt, "--checkpoint_interval", "1")
    s = _socket(ep)
    seq = 1
    for t in (0, 1):  # round 0, then its checkpoint (of round 1)
        for name, value in GRADS:
            s.send_multipart(_gradient(name, value, t, seq))
            assert b"refused" not in _answer(s, 10)
            seq += 1
    for t in (0, 1):
        s.send(request(SEND_BARRIER, seq + t, trainer_id=t))
    for _ in (0, 1):
        assert b"refused" not in _answer(s, 30)
    deadline = time.time() + 30
    while not [f for f in ckpt.iterdir() if f.suffix == ".ckpt"] and time.time() < deadline:
        time.sleep(0.05)
    ps.kill()
    restarted = procs("pserver.0.restarted", ps.p.args, **ps.extra_env)
    restarted.wait_for("serving", 60)
    s = _socket(ep)
    seq = 100
    for name, value in GRADS:
        s.send_multipart(_gradient(name, value, 1, seq, round=3))
        assert b"refused" not in _answer(s, 10)
        seq += 1
    s.send(request(SEND_BARRIER, seq, trainer_id=1, round=3))
    s.send(request(GET_VARS, seq + 1, names=["fc_0.w_0", "fc_0.b_0"], trainer_id=0, round=4))
    answers = []
    for _ in range(2):  # well within rpc_deadline, and neither an error
        assert s.poll(DEADLINE_MS // 2), "no answer: %s\n%s" % (answers, restarted.output()[-3000:])
        answers.append(s.recv_multipart())
    get = [a for a in answers if len(a) == 3]
    assert len(get) == 1, answers
    for data in get[0][1:]:
        assert np.frombuffer(data, "float32").size
    barrier = [a for a in answers if len(a) == 1][0][0]
    assert b"refused" not in barrier and b"rpc_deadline" not in barrier, barrier
    out = restarted.output()
    assert "resumed from checkpoint" in out, out[-3000:]
    assert "trainer 0 is at round 4" in out, out[-3000:]
    s.send(request(GET_VARS, seq + 2, names=["fc_0.w_0"], trainer_id=1, round=4))
    assert len(s.recv_multipart() if s.poll(10000) else []) == 2
    for t in (0, 1):
        s.send(request(COMPLETE, 200 + t, trainer_id=t))
        _answer(s, 10)
    assert restarted.wait(30) == 0, restarted.output()[-3000:]
