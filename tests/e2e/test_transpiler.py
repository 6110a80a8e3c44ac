"""DistributeTranspiler's programs, without running them: what the trainer sends and receives, how
parameters are split over the pservers (round robin; large ones in row blocks), what each pserver's
optimize blocks hold, and its startup program."""

import pytest

import tide
from tide import layers
from tide.framework import OP_ROLE_OPTIMIZE

EPS = "127.0.0.1:6170,127.0.0.1:6171,127.0.0.1:6172"


def build(opt=None, hidden=100):
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 3
    with tide.program_guard(main, startup), tide.unique_name.guard():
        x = layers.data(name="x", shape=[50])
        h = layers.fc(input=x, size=hidden, act="relu")
        y = layers.fc(input=h, size=1)
        loss = layers.mean(y)
        (opt or tide.optimizer.SGD(0.1)).minimize(loss)
    return main, startup


def transpile(main, startup, trainers=2, sync=True, eps=EPS, **cfg_kw):
    cfg = tide.DistributeTranspilerConfig()
    for k, v in cfg_kw.items():
        setattr(cfg, k, v)
    t = tide.transpiler.DistributeTranspiler(cfg)
    return t.transpile(
        0, program=main, startup_program=startup, pservers=eps, trainers=trainers, sync_mode=sync
    )


def test_trainer_program_sends_grads_and_receives_params():
    main, startup = build()
    t = transpile(main, startup, slice_var_up=False)
    prog = t.get_trainer_program()
    types = [op.type for op in prog.global_block().ops]
    assert "sgd" not in types
    assert types[-4:] == ["send", "send_barrier", "recv", "fetch_barrier"]
    send, recv = prog.global_block().ops[-4], prog.global_block().ops[-2]
    params = sorted(p.name for p in main.all_parameters())
    assert sorted(send.input("X")) == sorted(p + "@GRAD" for p in params)
    assert sorted(recv.output("Out")) == params
    # Round robin over the pservers, in the optimizer's order.
    eps = EPS.split(",")
    assert send.attr("epmap") == [eps[i % 3] for i in range(len(params))]
    assert send.attr("sections") == [0] * len(params)
    # The original program is untouched.
    assert "sgd" in [op.type for op in main.global_block().ops]


def test_async_mode_has_no_barriers():
    main, startup = build()
    types = [
        op.type
        for op in transpile(main, startup, sync=False).get_trainer_program().global_block().ops
    ]
    assert "send_barrier" not in types and "fetch_barrier" not in types
    assert types[-2:] == ["send", "recv"]


def test_large_parameters_are_sliced_in_row_blocks():
    main, startup = build()
    t = transpile(main, startup, min_block_size=1000)
    w = [b for b in t.blocks if b.param == "fc_0.w_0"]  # 50 x 100 = 5000 elements, 3 pservers
    assert [b.rows for b in w] == [17, 17, 16]
    assert [b.pname for b in w] == ["fc_0.w_0.block%d" % i for i in range(3)]
    assert len({b.endpoint for b in w}) == 3
    send = t.get_trainer_program().global_block().ops[-4]
    at = send.input("X").index("fc_0.w_0@GRAD")
    assert send.input("X")[at : at + 3] == ["fc_0.w_0@GRAD"] * 3
    assert send.attr("send_varnames")[at : at + 3] == [
        "fc_0.w_0@GRAD.block%d" % i for i in range(3)
    ]
    assert send.attr("sections")[at : at + 3] == [17, 17, 16]
    small = [b for b in t.blocks if b.param == "fc_1.b_0"]
    assert len(small) == 1 and not small[0].sliced


def test_pserver_program_averages_then_optimizes():
    main, startup = build(tide.optimizer.Adam(0.01))
    t = transpile(main, startup, min_block_size=1000)
    ep = EPS.split(",")[0]
    prog = t.get_pserver_program(ep)
    serv = prog.global_block().ops[-1]
    assert serv.type == "listen_and_serv"
    assert serv.attr("Fanin") == 2 and serv.attr("sync_mode") is True
    mine = [b for b in t.blocks if b.endpoint == ep]
    assert serv.attr("served_vars") == [b.pname for b in mine]
    grad_to_block = dict(s.rsplit(":", 1) for s in serv.attr("grad_to_block_id"))
    assert sorted(grad_to_block) == sorted(b.gname for b in mine)
    for b in mine:
        sub = prog.block(int(grad_to_block[b.gname]))
        types = [op.type for op in sub.ops]
        assert types[:3] == ["sum", "scale", "adam"], types
        assert sub.ops[0].input("X") == ["%s.trainer_%d" % (b.gname, i) for i in range(2)]
        assert abs(sub.ops[1].attr("scale") - 0.5) < 1e-7
        adam = sub.ops[2]
        assert adam.input("Param") == [b.pname] and adam.input("Grad") == [b.gname]
        if b.sliced:  # per-block optimizer state, shaped like the block
            m1 = adam.input("Moment1")[0]
            assert m1.endswith(".block%d" % b.index)
            assert list(prog.global_block().var(m1).shape) == b.shape
        assert types[3:] == ["scale", "scale"]  # the beta powers of this block's Adam
    state = serv.attr("checkpoint_vars")
    assert "learning_rate_0" in state and all(b.pname in state for b in mine)


def test_pserver_startup_initialises_like_the_trainer():
    main, startup = build()
    t = transpile(main, startup, min_block_size=1000)
    ep = EPS.split(",")[1]
    prog = t.get_pserver_program(ep)
    s = t.get_startup_program(ep, prog)
    types = [op.type for op in s.global_block().ops]
    assert "split_byref" in types
    init = [op for op in s.global_block().ops if op.type == "uniform_random"]
    origin = {
        op.output("Out")[0]: op for op in startup.global_block().ops if op.type == "uniform_random"
    }
    for op in init:  # the very same op and seed as the trainers' startup program
        assert op.attr("seed") == origin[op.output("Out")[0]].attr("seed") != 0
    persist = {n for n, v in s.global_block().vars.items() if v.persistable}
    assert {n for n, v in prog.global_block().vars.items() if v.persistable} <= persist


def test_one_trainer_needs_no_averaging():
    main, startup = build()
    t = transpile(main, startup, trainers=1, slice_var_up=False)
    prog = t.get_pserver_program(EPS.split(",")[0])
    for blk in prog.blocks[1:]:
        assert [op.type for op in blk.ops] == ["sgd"]


def test_errors():
    main, startup = build()
    with pytest.raises(ValueError, match="not one of the pservers"):
        transpile(main, startup).get_pserver_program("127.0.0.1:1")
    with pytest.raises(ValueError, match="trainer_id"):
        tide.DistributeTranspiler().transpile(5, program=main, pservers=EPS, trainers=2)
    with pytest.raises(ValueError, match="host:port"):
        tide.DistributeTranspiler().transpile(0, program=main, pservers="nowhere", trainers=1)
    plain = tide.Program()
    with tide.program_guard(plain, tide.Program()):
        layers.mean(layers.data(name="x", shape=[3]))
    with pytest.raises(ValueError, match="no optimize ops"):
        tide.DistributeTranspiler().transpile(0, program=plain, pservers=EPS, trainers=1)
    with pytest.raises(RuntimeError, match="transpile"):
        tide.DistributeTranspiler().get_trainer_program()


def test_rpc_ops_are_dropped_by_clone_for_test():
    main, startup = build()
    prog = transpile(main, startup).get_trainer_program()
    types = [op.type for op in prog.clone(for_test=True).global_block().ops]
    assert not {"send", "recv", "send_barrier", "fetch_barrier"} & set(types)
    assert all(op.attr("op_role") & OP_ROLE_OPTIMIZE for op in prog.global_block().ops[-4:])
