"""Sparse (SelectedRows) gradients through send / merge_sparse_grads / sparse sgd, and CurveZMQ:
only trainers whose keys the pserver admits get through."""

import json
import sys
import time

import numpy as np
import zmq
import zmq.auth
from e2e_util import assert_same_training, load, model_cmd, start_job

from tide.distributed.launch import free_ports

SPARSE_JOB = r"""
import json, sys
import numpy as np
import tide, tide.distributed
from tide import layers
from tide.framework import OP_ROLE_BACKWARD, op_role_guard

STEPS, LR = 5, 0.5


def grads(step, trainer):
    rng = np.random.RandomState(100 * step + trainer)
    return rng.randint(0, 8, size=4), rng.uniform(-1, 1, (4, 3)).astype("float32")


main, startup = tide.Program(), tide.Program()
with tide.program_guard(main, startup), tide.unique_name.guard():
    w = layers.create_parameter(shape=[8, 3], dtype="float32", name="w",
                                default_initializer=tide.initializer.Constant(1.0))
    block = main.global_block()
    # A sparse gradient, set from here each step (persistable so the run's scope is ours).
    g = block.create_var(name="w@GRAD", type="SELECTED_ROWS", shape=[8, 3], dtype="float32",
                         persistable=True)
    marker = block.create_var(name="marker", shape=[1], dtype="float32")
    with op_role_guard(OP_ROLE_BACKWARD):  # the [param, grad] pair a backward op would carry
        block.append_op("fill_constant", outputs={"Out": marker},
                        attrs={"shape": [1], "dtype": 5, "value": 0.0, "op_role_var": ["w", "w@GRAD"]})
    tide.optimizer.SGD(LR).apply_gradients([(w, g)])

role = tide.distributed.env()
t = tide.DistributeTranspiler().transpile(role.trainer_id, program=main, startup_program=startup,
                                          pservers=role.pserver_endpoints, trainers=role.trainers)
exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
with tide.scope_guard(scope):
    if role.role == "PSERVER":
        prog = t.get_pserver_program(role.current_endpoint)
        assert "merge_sparse_grads" in [op.type for op in prog.block(1).ops]
        exe.run(t.get_startup_program(role.current_endpoint, prog))
        exe.run(prog)
        sys.exit(0)
    exe.run(t.get_trainer_startup_program())
    prog = t.get_trainer_program()
    for step in range(STEPS):
        rows, vals = grads(step, role.trainer_id)
        sr = scope.var("w@GRAD").get_selected_rows()
        sr.set_rows(rows.tolist())
        sr.set_height(8)
        sr.get_tensor().set(vals, tide.CPUPlace(), False)
        exe.run(prog)
    t.send_complete(exe)
    json.dump(np.array(scope.find_var("w").get_tensor()).tolist(), open(sys.argv[1] % role.trainer_id, "w"))
"""


def test_sparse_gradients_are_merged_and_averaged(procs, tmp_path):
    script = tmp_path / "sparse_job.py"
    script.write_text(SPARSE_JOB)
    ep = "127.0.0.1:%d" % free_ports(1)[0]
    common = dict(TIDE_PSERVER_ENDPOINTS=ep, TIDE_TRAINERS=2)
    out = str(tmp_path / "w%d.json")
    cmd = [sys.executable, "-u", str(script), out]
    ps = procs("pserver", cmd, TIDE_ROLE="PSERVER", TIDE_CURRENT_ENDPOINT=ep, **common)
    ts = [
        procs("trainer.%d" % i, cmd, TIDE_ROLE="TRAINER", TIDE_TRAINER_ID=i, **common)
        for i in range(2)
    ]
    for p in ts + [ps]:
        assert p.wait(60) == 0, p.output()[-4000:]
    # Expected: each round w[rows] -= lr * (sum of both trainers' rows) / 2, repeated rows adding up.
    expected = np.ones((8, 3))
    for step in range(5):
        for trainer in range(2):
            rng = np.random.RandomState(100 * step + trainer)
            rows, vals = rng.randint(0, 8, size=4), rng.uniform(-1, 1, (4, 3)).astype("float32")
            for r, v in zip(rows, vals):
                expected[r] -= 0.5 * 0.5 * v
    for i in range(2):
        np.testing.assert_allclose(json.load(open(out % i)), expected, rtol=1e-5, atol=1e-6)


def test_curve_admits_only_listed_trainers(procs, tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir()
    for name in ("server", "trainer0", "trainer1", "intruder"):
        zmq.auth.create_certificates(str(keys), name)
    eps = ["127.0.0.1:%d" % p for p in free_ports(2)]
    args = ["--model", "fit_a_line", "--passes", "2", "--step_sleep", "0.01", "--curve_dir", keys]
    local = procs(
        "local",
        model_cmd("--model", "fit_a_line", "--passes", "2", "--out", tmp_path / "local.json"),
    )
    ps, ts = start_job(procs, eps, 2, args + ["--out", tmp_path / "{role}{id}.json"])
    ts[0].wait_for("step 2 ", 60)
    ctx = zmq.Context.instance()
    server_public, _ = zmq.auth.load_certificate(str(keys / "server.key"))
    socks = []
    for cert in ("intruder.key_secret", None):  # a CurveZMQ client not admitted; a plain one
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        if cert:
            pub, sec = zmq.auth.load_certificate(str(keys / cert))
            s.curve_publickey, s.curve_secretkey, s.curve_serverkey = pub, sec, server_public
        s.connect("tcp://" + eps[0])
        s.send(b"hello")
        socks.append(s)
    time.sleep(1.0)
    for s in socks:
        assert not s.poll(100), "an unauthenticated client got an answer"
        s.close()
    for p in ts + ps + [local]:
        assert p.wait(90) == 0, p.name + ":\n" + p.output()[-4000:]
    log = ps[0].output()
    assert "is not admitted" in log and "authentication refused" in log, log[-3000:]
    # ... and the plain client's handshakes fail too (how libzmq words it varies).
    assert log.count("rejected a connection: handshake failed") > log.count(
        "(authentication refused)"
    ), log[-3000:]
    assert_same_training(
        load(tmp_path / "local.json"), [load(tmp_path / ("trainer%d.json" % i)) for i in range(2)]
    )
