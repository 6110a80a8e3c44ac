"""DistributeTranspiler, as in Fluid: turns a program that trains in one process into trainer programs
(forward + backward; gradients sent to the pservers, parameters received back) and pserver programs
(listen_and_serv with one optimize sub-block per parameter block the pserver owns)::

    t = tide.DistributeTranspiler()
    t.transpile(trainer_id, pservers="127.0.0.1:6170,127.0.0.1:6171", trainers=2)
    if role == "PSERVER":
        prog = t.get_pserver_program(current_endpoint)
        exe.run(t.get_startup_program(current_endpoint, prog))
        exe.run(prog)                                  # serves until every trainer is done
    else:
        exe.run(t.get_trainer_startup_program())        # initial parameters from the pservers
        prog = t.get_trainer_program()
        ... exe.run(prog, feed=..., fetch_list=[loss]) ...
        t.send_complete(exe)

Sync mode: each pserver sums the trainers' gradients and scales them by 1/trainers (as Fluid's does), so
trainers that each feed half of a minibatch (mean loss) train exactly like one process fed all of it.
"""

import math
import os

from ..core import dtype_code
from ..framework import (
    OP_ROLE_BACKWARD,
    OP_ROLE_OPTIMIZE,
    Program,
    default_main_program,
    default_startup_program,
)

__all__ = ["DistributeTranspiler", "DistributeTranspilerConfig", "OP_ROLE_RPC"]

# Fluid's RPC role. Transpiled RPC ops also carry OPTIMIZE so clone(for_test) drops them.
OP_ROLE_RPC = 4


class DistributeTranspilerConfig:
    """How to split and serve. Defaults can come from the environment the launcher sets up:
    TIDE_PSERVER_BIND (the address pservers listen on) and TIDE_RPC_DEADLINE (ms)."""

    def __init__(self):
        self.slice_var_up = True  # slice large parameters into row blocks over the pservers
        self.min_block_size = 8192  # elements: no block smaller than this
        self.rpc_deadline = int(os.environ.get("TIDE_RPC_DEADLINE", 180000))  # ms
        self.max_message_size = 2 << 30  # bytes
        self.bind_address = os.environ.get("TIDE_PSERVER_BIND", "127.0.0.1")
        self.checkpoint_dir = ""  # pservers save here and resume from here
        self.checkpoint_interval = 0  # rounds between checkpoints (0: never)
        # CurveZMQ (optional): the pserver's certificate (secret) and the admitted trainers'
        # public keys; the trainers' side: the pserver's public key and their own certificate.
        self.curve_server_secret_key = ""
        self.curve_trainer_public_keys = []
        self.curve_server_public_key = ""
        self.curve_trainer_key = ""


class _Block:
    """One row block of a parameter (and of its gradient) and the pserver it lives on."""

    def __init__(self, param, grad, index, count, row_begin, rows, shape, endpoint):
        self.param, self.grad, self.index, self.count = param, grad, index, count
        self.row_begin, self.rows, self.shape, self.endpoint = row_begin, rows, shape, endpoint
        self.pname = param if count == 1 else "%s.block%d" % (param, index)
        self.gname = grad if count == 1 else "%s.block%d" % (grad, index)

    @property
    def sliced(self):
        return self.count > 1


def _role(op):
    return op.attr("op_role") if op.has_attr("op_role") else 0


def _copy_attrs(op, rename=None):
    attrs = {}
    for name in op.attr_names:
        value = op.attr(name)
        if name == "op_role_var" and rename:
            value = [rename.get(v, v) for v in value]
        attrs[name] = value
    return attrs


def _slice_rows(shape, slice_count, min_block_size):
    """Rows per block of a parameter: at most slice_count blocks of >= min_block_size elements,
    whole rows each (Fluid's slice_variable)."""
    numel = 1
    for d in shape:
        numel *= d
    row_width = numel // shape[0] if shape[0] else 1
    split = max(1, min(slice_count, numel // min_block_size))
    block = int(math.ceil(numel / float(split)))
    if block % row_width:
        block += row_width - block % row_width
    rows_per_block = block // row_width
    rows, left = [], shape[0]
    while left > 0:
        rows.append(min(rows_per_block, left))
        left -= rows[-1]
    return rows


class DistributeTranspiler:
    """Splits a program into trainer and pserver programs (see the module's description).

    Args:
        config (DistributeTranspilerConfig): the options, or None for the defaults.
    """

    def __init__(self, config=None):
        self.config = config or DistributeTranspilerConfig()

    # ------------------------------------------------------------------ analysis
    def transpile(
        self,
        trainer_id,
        program=None,
        pservers="127.0.0.1:6174",
        trainers=1,
        sync_mode=True,
        startup_program=None,
        current_endpoint=None,
    ):
        """Plans the split of `program` (default: the default main program): which pserver owns
        which parameter block. Nothing is built until the get_*_program calls."""
        if not isinstance(trainers, int) or trainers < 1:
            raise ValueError("transpile: trainers must be a positive int, got %r" % (trainers,))
        if not 0 <= int(trainer_id) < trainers:
            raise ValueError("transpile: trainer_id %r is outside [0, %d)" % (trainer_id, trainers))
        self.trainer_id, self.trainers, self.sync_mode = int(trainer_id), trainers, bool(sync_mode)
        self.origin_program = program if program is not None else default_main_program()
        self.origin_startup = (
            startup_program if startup_program is not None else default_startup_program()
        )
        self.current_endpoint = current_endpoint
        eps = pservers if isinstance(pservers, (list, tuple)) else pservers.split(",")
        self.pserver_endpoints = [e.strip() for e in eps if e.strip()]
        if not self.pserver_endpoints or any(":" not in e for e in self.pserver_endpoints):
            raise ValueError("transpile: pservers must be 'host:port,...', got %r" % (pservers,))
        if len(set(self.pserver_endpoints)) != len(self.pserver_endpoints):
            raise ValueError("transpile: pservers lists an endpoint twice: %r" % (pservers,))
        self._find_optimize_ops()
        self._plan_blocks()
        return self

    def _find_optimize_ops(self):
        block = self.origin_program.global_block()
        # [param, grad] pairs as the core's backward wrote them (op_role_var).
        self.backward_grad = {}
        for op in block.ops:
            if _role(op) & OP_ROLE_BACKWARD and op.has_attr("op_role_var"):
                pv = op.attr("op_role_var")
                for i in range(0, len(pv) - 1, 2):
                    self.backward_grad[pv[i]] = pv[i + 1]
        self.optimize_ops = [
            op for op in block.ops if _role(op) & OP_ROLE_OPTIMIZE and not _role(op) & OP_ROLE_RPC
        ]
        if not self.optimize_ops:
            raise ValueError(
                "transpile: the program has no optimize ops (op_role OPTIMIZE); call "
                "an optimizer's minimize() first"
            )
        self.main_op = {}  # param -> its update op
        self.params, self.grad_of = [], {}
        for op in self.optimize_ops:
            ins = op.desc.inputs()
            if ins.get("Param") and ins.get("Grad"):
                p, g = ins["Param"][0], ins["Grad"][0]
                if p in self.main_op:
                    raise ValueError(
                        "transpile: parameter '%s' has two update ops (%s, %s)"
                        % (p, self.main_op[p].type, op.type)
                    )
                if p not in self.backward_grad:
                    raise ValueError(
                        "transpile: update op '%s' of '%s' has no matching backward "
                        "gradient (no op_role_var names it)" % (op.type, p)
                    )
                self.main_op[p] = op
                self.params.append(p)
                self.grad_of[p] = (
                    g  # what the optimizer reads: the backward grad, clipped/regularised
                )
        # Which params' update ops use each variable; a variable only one uses is its own.
        users = {}
        for p, op in self.main_op.items():
            for v in op.input_arg_names + op.output_arg_names:
                users.setdefault(v, set()).add(p)
        own = {v: next(iter(ps)) for v, ps in users.items() if len(ps) == 1}
        self.ops_of = {p: [] for p in self.params}
        self.global_ops = []
        for op in self.optimize_ops:
            if op.desc.inputs().get("Param") and op.desc.inputs().get("Grad"):
                self.ops_of[op.desc.inputs()["Param"][0]].append(op)
                continue
            mine = {own[v] for v in op.input_arg_names + op.output_arg_names if v in own}
            if len(mine) == 1:
                self.ops_of[mine.pop()].append(op)
            else:  # shared by several params (a learning-rate schedule): runs once per round
                self.global_ops.append(op)
        # Variables an update block reads besides its param and grad: state to slice or copy.
        self.shared_vars = {v for v, ps in users.items() if len(ps) > 1}
        for op in self.global_ops:
            self.shared_vars.update(op.output_arg_names)

    def _var(self, name):
        return self.origin_program.global_block()._var_recursive(name)

    def _plan_blocks(self):
        cfg = self.config
        n = len(self.pserver_endpoints)
        self.blocks = []
        turn = 0
        for p in self.params:
            var, g = self._var(p), self.grad_of[p]
            shape = list(var.shape)
            sparse = self._var(g).type == "SELECTED_ROWS"
            if cfg.slice_var_up and not sparse and shape and n > 1:
                rows = _slice_rows(shape, n, int(cfg.min_block_size))
            else:
                rows = [shape[0] if shape else 1]
            begin = 0
            for i, r in enumerate(rows):
                bshape = [r] + shape[1:] if len(rows) > 1 else shape
                ep = self.pserver_endpoints[turn % n]
                turn += 1
                self.blocks.append(_Block(p, g, i, len(rows), begin, r, bshape, ep))
                begin += r

    def _rpc_attrs(self):
        cfg = self.config
        return {
            "trainer_id": self.trainer_id,
            "rpc_deadline": int(cfg.rpc_deadline),
            "max_message_size": int(cfg.max_message_size),
            "curve_server_key_file": cfg.curve_server_public_key or "",
            "curve_key_file": cfg.curve_trainer_key or "",
            "op_role": OP_ROLE_RPC | OP_ROLE_OPTIMIZE,
        }

    def _check(self):
        if not hasattr(self, "blocks"):
            raise RuntimeError("call transpile() before asking for programs")

    # ------------------------------------------------------------------ trainer side
    def _append_recv(self, block):
        """recv of every parameter (row blocks concatenated), then fetch_barrier in sync mode."""
        block.append_op(
            "recv",
            outputs={"Out": [b.param for b in self.blocks]},
            attrs=dict(
                self._rpc_attrs(),
                epmap=[b.endpoint for b in self.blocks],
                varnames=[b.pname for b in self.blocks],
                sections=[b.rows if b.sliced else 0 for b in self.blocks],
                sync_mode=self.sync_mode,
            ),
        )
        if self.sync_mode:
            block.append_op(
                "fetch_barrier", attrs=dict(self._rpc_attrs(), endpoints=self.pserver_endpoints)
            )

    def get_trainer_program(self):
        """The main program without its optimize ops, plus: send (the gradients, in row blocks to
        their pservers), send_barrier, recv (the updated parameters), fetch_barrier."""
        self._check()
        prog = self.origin_program.clone()
        block = prog.global_block()
        for i in reversed(range(len(block.ops))):
            if _role(block.ops[i]) & OP_ROLE_OPTIMIZE:
                block._remove_op(i)
        block.append_op(
            "send",
            inputs={"X": [b.grad for b in self.blocks]},
            attrs=dict(
                self._rpc_attrs(),
                epmap=[b.endpoint for b in self.blocks],
                send_varnames=[b.gname for b in self.blocks],
                sections=[b.rows if b.sliced else 0 for b in self.blocks],
                sync_mode=self.sync_mode,
            ),
        )
        if self.sync_mode:
            block.append_op(
                "send_barrier", attrs=dict(self._rpc_attrs(), endpoints=self.pserver_endpoints)
            )
        self._append_recv(block)
        return prog

    def get_trainer_startup_program(self):
        """The startup program, then the parameters' initial values from the pservers: every
        trainer starts from the same values even without fixed random seeds."""
        self._check()
        prog = self.origin_startup.clone()
        self._append_recv(prog.global_block())
        return prog

    def send_complete(self, executor):
        """Tells every pserver this trainer is done (a pserver stops once all trainers are)."""
        self._check()
        prog = Program()
        prog.global_block().append_op(
            "send_complete", attrs=dict(self._rpc_attrs(), endpoints=self.pserver_endpoints)
        )
        executor.run(prog)

    # ------------------------------------------------------------------ pserver side
    def _rename_map(self, b):
        """Names of a parameter block's update state on its pserver: the param and grad blocks,
        and per-block copies (sliced when shaped like the param) of its own optimizer state."""
        m = {b.param: b.pname, b.grad: b.gname}
        if not b.sliced:
            return m
        for op in self.ops_of[b.param]:
            for v in op.input_arg_names + op.output_arg_names:
                if v in m or v in self.shared_vars:
                    continue
                var = self._var(v)
                if var.persistable:
                    m[v] = "%s.block%d" % (v, b.index)
        return m

    def _block_shape(self, b, origin, name):
        """The shape of `name` (origin variable `origin`) in block b's update."""
        var = self._var(origin)
        if b.sliced and name != origin and list(var.shape) == list(self._var(b.param).shape):
            return list(b.shape)
        return list(var.shape)

    def _declare(self, gb, name, origin, shape, persistable=None):
        if name in gb.vars:
            return gb.vars[name]
        v = self._var(origin)
        return gb.create_var(
            name=name,
            shape=shape,
            dtype=v.dtype,
            type=v.type,
            lod_level=v.lod_level,
            persistable=v.persistable if persistable is None else persistable,
        )

    def get_pserver_program(self, endpoint):
        """listen_and_serv on `endpoint` with one optimize sub-block per parameter block it owns:
        (sync, several trainers) sum the trainers' gradients and scale by 1/trainers, then the
        optimizer ops on the block's parameter, learning rate and accumulators."""
        self._check()
        if endpoint not in self.pserver_endpoints:
            raise ValueError(
                "get_pserver_program: %r is not one of the pservers %s"
                % (endpoint, self.pserver_endpoints)
            )
        cfg = self.config
        prog = Program()
        gb = prog.global_block()
        self._origin_of = {}  # pserver var -> (origin var, block or None)
        mine = [b for b in self.blocks if b.endpoint == endpoint]
        optimize_blocks, grad_to_block = [], []
        per_trainer = self.sync_mode and self.trainers > 1
        for b in mine:
            rename = self._rename_map(b)
            inverse = {v: k for k, v in rename.items()}
            for new, old in inverse.items():  # gradients are never state, whatever the trainer says
                self._declare(
                    gb,
                    new,
                    old,
                    self._block_shape(b, old, new),
                    persistable=False if old == b.grad else None,
                )
                self._origin_of[new] = (old, b)
            sub = prog._create_block(parent_idx=0)
            if per_trainer:
                parts = ["%s.trainer_%d" % (b.gname, t) for t in range(self.trainers)]
                for name in parts:
                    self._declare(gb, name, b.grad, list(b.shape), persistable=False)
                role = {"op_role": OP_ROLE_OPTIMIZE}
                if self._var(b.grad).type == "SELECTED_ROWS":
                    sub.append_op(
                        "merge_sparse_grads",
                        inputs={"X": parts},
                        outputs={"Out": b.gname},
                        attrs=dict(role, scale=1.0 / self.trainers),
                    )
                else:
                    sub.append_op("sum", inputs={"X": parts}, outputs={"Out": b.gname}, attrs=role)
                    sub.append_op(
                        "scale",
                        inputs={"X": b.gname},
                        outputs={"Out": b.gname},
                        attrs=dict(role, scale=1.0 / self.trainers),
                    )
            for op in self.ops_of[b.param]:
                self._copy_op(sub, gb, op, rename, b)
            prog._rollback()
            optimize_blocks.append(sub)
            grad_to_block.append("%s:%d" % (b.gname, sub.idx))
        lr_block = -1
        if self.global_ops:
            sub = prog._create_block(parent_idx=0)
            for op in self.global_ops:
                self._copy_op(sub, gb, op, {}, None)
            prog._rollback()
            lr_block = sub.idx
        served = [b.pname for b in mine]
        specs = [
            "%s:%s:%d:%s"
            % (
                b.gname,
                self._var(b.grad).type,
                dtype_code(self._var(b.grad).dtype),
                ",".join(str(d) for d in b.shape),
            )
            for b in mine
        ]
        state = sorted(n for n, v in gb.vars.items() if v.persistable)
        gb.append_op(
            "listen_and_serv",
            inputs={"X": [b.gname for b in mine]},
            attrs={
                "endpoint": endpoint,
                "bind_address": cfg.bind_address or "127.0.0.1",
                "Fanin": self.trainers,
                "sync_mode": self.sync_mode,
                "optimize_blocks": [blk.desc for blk in optimize_blocks],
                "grad_to_block_id": grad_to_block,
                "grad_specs": specs,
                "lr_decay_block_id": lr_block,
                "served_vars": served,
                "checkpoint_vars": state,
                "checkpoint_dir": cfg.checkpoint_dir or "",
                "checkpoint_interval": int(cfg.checkpoint_interval),
                "rpc_deadline": int(cfg.rpc_deadline),
                "max_message_size": int(cfg.max_message_size),
                "curve_secret_key_file": cfg.curve_server_secret_key or "",
                "curve_trainer_keys": list(cfg.curve_trainer_public_keys or []),
                "op_role": OP_ROLE_RPC,
            },
        )
        prog._pserver_endpoint = endpoint
        prog._origin_of = self._origin_of
        return prog

    def _copy_op(self, sub, gb, op, rename, b):
        def names(args):
            out = {}
            for param, vs in args.items():
                new = []
                for v in vs:
                    n = rename.get(v, v)
                    if n not in gb.vars and n not in sub.vars:
                        shape = (
                            self._block_shape(b, v, n)
                            if b is not None
                            else list(self._var(v).shape)
                        )
                        self._declare(gb, n, v, shape)
                        self._origin_of.setdefault(n, (v, b if n != v else None))
                    new.append(n)
                out[param] = new
            return out

        sub.append_op(
            op.type,
            inputs=names(op.desc.inputs()),
            outputs=names(op.desc.outputs()),
            attrs=_copy_attrs(op, rename),
        )

    def get_startup_program(self, endpoint, pserver_program=None, startup_program=None):
        """Initialises `endpoint`'s parameter blocks, learning rates and accumulators exactly as
        the trainers' startup program does (the same ops and seeds; a sliced variable is made
        whole, then split_byref keeps this pserver's rows)."""
        self._check()
        if (
            pserver_program is None
            or getattr(pserver_program, "_pserver_endpoint", None) != endpoint
        ):
            pserver_program = self.get_pserver_program(endpoint)
        origin = startup_program if startup_program is not None else self.origin_startup
        origin_of = pserver_program._origin_of
        writers = {}
        for op in origin.global_block().ops:
            for out in op.output_arg_names:
                writers.setdefault(out, []).append(op)
        prog = Program()
        sb = prog.global_block()
        done = set()
        for name, var in pserver_program.global_block().vars.items():
            if not var.persistable:
                continue
            old, b = origin_of.get(name, (name, None))
            if (
                old in done
                and name != old
                and b is not None
                and b.sliced
                and list(self._var(old).shape) == list(self._var(b.param).shape)
            ):
                continue  # split_byref of `old` made it already
            ops = writers.get(old, [])
            if not ops:
                raise ValueError(
                    "get_startup_program: the startup program does not initialise "
                    "'%s' (needed by pserver %s as '%s')" % (old, endpoint, name)
                )
            whole = name == old or list(self._var(old).shape) != list(self._var(b.param).shape)
            target = name if whole else old
            sb.create_var(
                name=target,
                shape=list(self._var(old).shape),
                dtype=var.dtype,
                type=var.type,
                persistable=whole,
            )
            for op in ops:
                self._copy_init_op(sb, op, {old: target})
            if not whole:  # keep this pserver's row blocks of the whole value
                blocks = [x for x in self.blocks if x.param == b.param]
                outs = []
                for x in blocks:
                    n = "%s.block%d" % (old, x.index) if old != x.param else x.pname
                    keep = n in pserver_program.global_block().vars
                    sb.create_var(
                        name=n,
                        shape=[x.rows] + list(self._var(old).shape)[1:],
                        dtype=var.dtype,
                        persistable=keep,
                    )
                    outs.append(n)
                sb.append_op(
                    "split_byref",
                    inputs={"X": old},
                    outputs={"Out": outs},
                    attrs={"sections": [x.rows for x in blocks]},
                )
                done.add(old)
        return prog

    def _copy_init_op(self, sb, op, rename):
        ins = {}
        for param, vs in op.desc.inputs().items():
            for v in vs:
                if v not in sb.vars:
                    src = self.origin_startup.global_block()._find_var_recursive(v) or self._var(v)
                    sb.create_var(
                        name=v,
                        shape=list(src.shape),
                        dtype=src.dtype,
                        type=src.type,
                        persistable=src.persistable,
                    )
            ins[param] = vs
        outs = {p: [rename.get(v, v) for v in vs] for p, vs in op.desc.outputs().items()}
        sb.append_op(op.type, inputs=ins, outputs=outs, attrs=_copy_attrs(op))
