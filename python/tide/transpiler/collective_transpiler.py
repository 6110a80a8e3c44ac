"""CollectiveTranspiler: makes a program that trains in one process train data-parallel on
`nranks` processes with the collective ops (the collective plugin, on Gloo):

  startup: c_comm_init (ring 0 from the rendezvous store), then every parameter broadcast from
           rank 0, so all ranks start from the same values;
  main:    the loss gradient scaled by 1/nranks right after backward seeds it; the dense gradients
           summed over the ranks by c_allreduce_sum, fused into buckets of at most
           fuse_grad_size_in_MB, each bucket issued right after the op that finishes its last
           gradient and run on the ring's thread (use_calc_stream false) while backward goes on;
           SelectedRows gradients (sparse embeddings) gathered by c_allgather (rows and values of
           every rank, which the optimizers add up); c_sync_comm_stream before the optimizer
           waits for the buckets.

Each rank feeds its own share of the global batch with a mean loss; after the allreduce every rank
holds the gradient of the global batch's mean loss, so the ranks train like one process fed the
whole batch (to float rounding) and their parameters stay identical.

    t = CollectiveTranspiler(fuse_grad_size_in_MB=32)
    t.transpile(rank, nranks, store="tcp://127.0.0.1:6170", main_program=main, startup_program=startup)
"""

from ..framework import (
    OP_ROLE_BACKWARD,
    OP_ROLE_LOSS,
    default_main_program,
    default_startup_program,
)

__all__ = ["CollectiveTranspiler"]

_DTYPE_BYTES = {
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "float64": 8,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "int8": 1,
    "bool": 1,
}


def _numel(var):
    n = 1
    for d in var.shape or ():
        n *= max(int(d), 1)
    return n


def _dtype_name(var):
    return str(var.dtype).replace("VarType.", "").lower()


def _op_list(program):
    """The op types of every block of `program`, in order ("b0: mul, elementwise_add; b1: ...")."""
    return "; ".join(
        "b%d: %s" % (b.idx, ", ".join(op.type for op in b.ops)) for b in program.blocks
    )


class CollectiveTranspiler:
    """Rewrites a program for data-parallel training: allreduces the gradients (fused into buckets) before the update ops.

    Args:
        fuse_grad_size_in_MB (int): the size of a bucket of fused gradients.
        ring_id (int): the communicator ring the collectives use.
    """

    def __init__(self, fuse_grad_size_in_MB=32, ring_id=0):
        if fuse_grad_size_in_MB < 0:
            raise ValueError(
                "fuse_grad_size_in_MB must be >= 0 (0: one allreduce per gradient), "
                "got %r" % (fuse_grad_size_in_MB,)
            )
        self.fuse_grad_size_in_MB = fuse_grad_size_in_MB
        self.ring_id = ring_id

    def transpile(
        self,
        rank,
        nranks,
        store,
        main_program=None,
        startup_program=None,
        current_endpoint="",
        params_grads=None,
    ):
        if not isinstance(nranks, int) or nranks < 1:
            raise ValueError("transpile: nranks must be a positive int, got %r" % (nranks,))
        if not 0 <= int(rank) < nranks:
            raise ValueError("transpile: rank %r is outside [0, %d)" % (rank, nranks))
        self.rank, self.nranks, self.store = int(rank), nranks, store
        self.main = main_program if main_program is not None else default_main_program()
        self.startup = startup_program if startup_program is not None else default_startup_program()
        self.current_endpoint = current_endpoint
        if nranks == 1:  # one process: nothing to communicate, the programs stay as they are
            return
        self._transpile_startup()
        self._transpile_main(params_grads)
        # Ranks that built different models (a layer's activation chosen by rank by mistake)
        # would train on silently: c_comm_init compares the main programs' op lists and warns.
        comm_init = [op for op in self.startup.global_block().ops if op.type == "c_comm_init"]
        comm_init[-1]._set_attr("program_ops", _op_list(self.main))

    # ------------------------------------------------------------------ startup
    def _transpile_startup(self):
        block = self.startup.global_block()
        block.append_op(
            "c_comm_init",
            attrs={
                "ring_id": self.ring_id,
                "rank": self.rank,
                "nranks": self.nranks,
                "store": self.store,
                "endpoint": self.current_endpoint,
            },
        )
        params = sorted(p.name for p in self.main.global_block().all_parameters())
        names = [n for n in params if block.has_var(n)]
        for name in names:
            v = block.var(name)
            block.append_op(
                "c_broadcast",
                inputs={"X": v},
                outputs={"Out": v},
                attrs={"ring_id": self.ring_id, "root": 0},
            )
        if names:
            vs = [block.var(n) for n in names]
            block.append_op(
                "c_sync_comm_stream",
                inputs={"X": vs},
                outputs={"Out": vs},
                attrs={"ring_id": self.ring_id},
            )

    # ------------------------------------------------------------------ main
    def _grads(self, params_grads):
        block = self.main.global_block()
        if params_grads is not None:
            return [g.name if hasattr(g, "name") else g for _, g in params_grads if g is not None]
        grads = []
        for p in block.all_parameters():
            name = p.name + "@GRAD"
            if block.has_var(name):
                grads.append(name)
        return grads

    def _transpile_main(self, params_grads):
        block = self.main.global_block()
        ops = block.ops

        def role(op):
            return op.attr("op_role") if op.has_attr("op_role") else 0

        # The last backward op writing each gradient: where it is ready.
        ready = {}
        grads = set(self._grads(params_grads))
        loss_grad_op = None
        for i, op in enumerate(ops):
            r = role(op)
            if r & OP_ROLE_LOSS and r & OP_ROLE_BACKWARD and loss_grad_op is None:
                loss_grad_op = i
            if not r & OP_ROLE_BACKWARD:
                continue
            for name in op.output_arg_names:
                if name in grads:
                    ready[name] = i
        if loss_grad_op is None:
            # Backward seeds the loss gradient with the first op writing a "@GRAD" variable.
            for i, op in enumerate(ops):
                if role(op) & OP_ROLE_BACKWARD and any(
                    n.endswith("@GRAD") for n in op.output_arg_names
                ):
                    loss_grad_op = i
                    break
        if loss_grad_op is None:
            raise ValueError(
                "CollectiveTranspiler: the program has no backward pass (call it "
                "after optimizer.minimize(loss))"
            )
        missing = sorted(grads - set(ready))
        if missing:
            raise ValueError("CollectiveTranspiler: no backward op writes %s" % ", ".join(missing))

        # Buckets in the order the gradients become ready; sparse gradients on their own.
        limit = int(self.fuse_grad_size_in_MB * (1 << 20))
        order = sorted(ready, key=lambda n: (ready[n], n))
        inserts = []  # (after op index, op type, inputs, outputs, attrs)
        bucket, bucket_bytes, bucket_dtype = [], 0, None

        def close():
            if bucket:
                vs = [block.var(n) for n in bucket]
                inserts.append(
                    (
                        max(ready[n] for n in bucket),
                        "c_allreduce_sum",
                        {"X": vs},
                        {"Out": vs},
                        {"ring_id": self.ring_id},
                    )
                )

        for name in order:
            var = block.var(name)
            if var.type == "SELECTED_ROWS":
                inserts.append(
                    (
                        ready[name],
                        "c_allgather",
                        {"X": var},
                        {"Out": var},
                        {"ring_id": self.ring_id, "nranks": self.nranks},
                    )
                )
                continue
            nbytes = _numel(var) * _DTYPE_BYTES.get(_dtype_name(var), 4)
            dtype = _dtype_name(var)
            if bucket and (dtype != bucket_dtype or bucket_bytes + nbytes > limit):
                close()
                bucket, bucket_bytes = [], 0
            bucket.append(name)
            bucket_bytes += nbytes
            bucket_dtype = dtype
        close()
        last = max(ready.values())
        all_grads = [block.var(n) for n in order]
        inserts.append(
            (
                last,
                "c_sync_comm_stream",
                {"X": all_grads},
                {"Out": all_grads},
                {"ring_id": self.ring_id},
            )
        )
        # From the back, so earlier indices stay valid; ops after the same index keep their order.
        for _k, (after, typ, ins, outs, attrs) in sorted(
            enumerate(inserts), key=lambda e: (-e[1][0], -e[0])
        ):
            attrs = dict(attrs, op_role=OP_ROLE_BACKWARD)
            block._insert_op(after + 1, typ, inputs=ins, outputs=outs, attrs=attrs)
        seed = ops[loss_grad_op]
        loss_grad = [n for n in seed.output_arg_names if n.endswith("@GRAD")]
        if not loss_grad:
            raise ValueError(
                "CollectiveTranspiler: the op seeding the loss gradient (%s) writes "
                "no @GRAD variable" % seed.type
            )
        g = block.var(loss_grad[0])
        block._insert_op(
            loss_grad_op + 1,
            "scale",
            inputs={"X": g},
            outputs={"Out": g},
            attrs={"scale": 1.0 / self.nranks, "op_role": OP_ROLE_BACKWARD},
        )
