"""Bad input on a pserver port while 2 trainers train: random bytes, a truncated message, oversized
ones and non-ZeroMQ garbage are each rejected (and logged), the pserver answers what it can with an
error, and training goes on to the same result as the local run."""

import os
import socket
import struct
import time

import zmq
from e2e_util import assert_same_training, load, model_cmd, start_job

from tide.distributed.launch import free_ports

MAX = 1 << 20  # the pservers' max_message_size in this test


# --- a minimal protobuf encoder for tide.transport.Request (see proto/transport.proto) ---
def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _field(num, wire, payload):
    return _varint(num << 3 | wire) + payload


def _bytes_field(num, data):
    return _field(num, 2, _varint(len(data)) + data)


def var_message(name, dims, data_bytes, dtype=5):
    m = _bytes_field(1, name.encode()) + _field(3, 0, _varint(dtype))
    for d in dims:
        m += _field(4, 0, _varint(d))
    return m + _field(8, 0, _varint(data_bytes))


def request(kind, seq, vars=(), trainer_id=0, names=(), round=0):
    m = _field(1, 5, struct.pack("<I", 0x45444954)) + _field(2, 0, _varint(1))
    m += (
        _field(3, 0, _varint(kind)) + _field(4, 0, _varint(seq)) + _field(5, 0, _varint(trainer_id))
    )
    if round:
        m += _field(6, 0, _varint(round))
    for v in vars:
        m += _bytes_field(7, v)
    for n in names:
        m += _bytes_field(8, n.encode())
    return m


def test_bad_messages_are_rejected_and_training_goes_on(procs, tmp_path):
    eps = ["127.0.0.1:%d" % p for p in free_ports(2)]
    common = [
        "--model",
        "fit_a_line",
        "--passes",
        "3",
        "--step_sleep",
        "0.01",
        "--max_message_size",
        MAX,
    ]
    local = procs("local", model_cmd(*common, "--out", tmp_path / "local.json"))
    ps, ts = start_job(procs, eps, 2, common + ["--out", tmp_path / "{role}{id}.json"])
    ts[0].wait_for("step 3 ", 60)

    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect("tcp://" + eps[0])
    sends = [
        [os.urandom(300)],  # random bytes
        [os.urandom(64), os.urandom(64)],  # random multipart
        [request(1, 11, [var_message("fc_0.w_0@GRAD", [10, 1], 40)]), b"\0" * 12],  # truncated data
        [request(1, 12, [var_message("fc_0.w_0@GRAD", [10, 1], 40)])],  # data frame missing
        [
            request(1, 13, [var_message("fc_0.w_0@GRAD", [1 << 40, 1 << 40], 1)]),
            b"\0",
        ],  # lying dims
        [
            request(1, 19, [var_message("fc_0.b_0@GRAD", [0, 1 << 40, 1 << 40], 0)]),
            b"",
        ],  # empty, but a row of it overflows
        [request(1, 14), os.urandom(MAX // 2), os.urandom(MAX // 2 + 4096)],  # oversized in all
        [request(1, 15, trainer_id=7)],  # no such trainer
        [request(1, 17, [var_message("fc_0.b_0@GRAD", [5, 2], 40)]), b"\0" * 40],  # wrong shape
        [request(1, 18, [var_message("fc_0.w_0@GRAD", [10, 1], 40)]), b"\0" * 40],  # not its grad
        [request(2, 16, names=["fc_0.w_0@GRAD"])],  # a GET of what is not served
    ]
    for frames in sends:
        s.send_multipart(frames)
    answers = 0
    deadline = time.time() + 20
    while answers < len(sends) and time.time() < deadline:
        if s.poll(500):
            s.recv_multipart()
            answers += 1
    assert answers == len(sends), "the pserver answered %d of %d bad requests" % (
        answers,
        len(sends),
    )
    # One frame over max_message_size: ZeroMQ drops the connection before the pserver sees it.
    big = ctx.socket(zmq.DEALER)
    big.setsockopt(zmq.LINGER, 0)
    big.connect("tcp://" + eps[0])
    big.send(os.urandom(MAX + 1))
    # Not ZeroMQ: a ZMTP 3 signature with a bogus greeting fails the handshake; random bytes (libzmq
    # may take them for ZMTP 1.0 frames, then each is rejected as a message).
    host, port = eps[0].rsplit(":", 1)
    for junk in (
        b"\xff" + b"\0" * 8 + b"\x7f\x03\x00XYZZY" + b"\0" * 15 + b"\0" * 32,
        os.urandom(4096),
    ):
        raw = socket.create_connection((host, int(port)))
        raw.sendall(junk)
        time.sleep(0.2)
        raw.close()
    time.sleep(0.5)
    s.close()
    big.close()

    for p in ts + ps + [local]:
        assert p.wait(90) == 0, p.name + ":\n" + p.output()[-4000:]
    log = ps[0].output()
    for why in (
        "not a Tide transport request",
        "truncated or padded data frame",
        "the header lists 1 variable(s), 0 data frame(s) came",
        "variable 'fc_0.w_0@GRAD': dims overflow",
        "variable 'fc_0.b_0@GRAD': dims overflow",
        "over max_message_size 1048576",
        "trainer id 7 is outside [0, Fanin=2)",
        "serves no variable",
        "is float32[5, 2], the program's is float32[1]",
        "takes no variable 'fc_0.w_0@GRAD'",
    ):
        assert why in log, "no rejection logged for %r:\n%s" % (why, log[-5000:])
    assert "rejected a connection" in log, log[-5000:]
    local_r = load(tmp_path / "local.json")
    assert_same_training(local_r, [load(tmp_path / ("trainer%d.json" % i)) for i in range(2)])
