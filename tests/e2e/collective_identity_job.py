"""c_identity on every rank of a ring, as a tensor-parallel layer uses it: Out = c_identity(W),
loss = sum(Out * C) with C this rank's (coefficients()); writes Out and W's gradient as JSON.
test_collective_ops.py checks them against numpy: Out is W, and W@GRAD is the sum of every
rank's C (the grad of c_identity is c_allreduce_sum).

    python collective_identity_job.py out{rank}.json"""

import json
import sys

import numpy as np

import tide
from tide.distributed import world

W0 = np.arange(12, dtype="float32").reshape(4, 3) / 10.0


def coefficients(rank):
    return (np.arange(12, dtype="float32").reshape(4, 3) + 1.0) * (rank + 1) - rank


def main():
    w = world()
    rank, nranks = w.rank, w.world_size
    main_prog, startup = tide.Program(), tide.Program()
    with tide.program_guard(main_prog, startup):
        param = tide.layers.create_parameter(
            [4, 3],
            "float32",
            name="w",
            default_initializer=tide.initializer.Constant(0.0),
        )
        c = tide.layers.data(name="c", shape=[4, 3], append_batch_size=False)
        block = main_prog.global_block()
        out = block.create_var(name="identity_out", dtype="float32", shape=[4, 3])
        block.append_op(
            "c_identity", inputs={"X": param}, outputs={"Out": out}, attrs={"ring_id": 0}
        )
        loss = tide.layers.reduce_sum(tide.layers.elementwise_mul(out, c))
        grads = dict((p.name, g) for p, g in tide.append_backward(loss))
    startup.global_block().append_op(
        "c_comm_init", attrs={"ring_id": 0, "rank": rank, "nranks": nranks, "store": w.store}
    )
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        exe.run(startup)
        scope.find_var("w").get_tensor().set(W0, tide.CPUPlace())
        got_out, got_grad = exe.run(
            main_prog, feed={"c": coefficients(rank)}, fetch_list=[out, grads["w"]]
        )
    ops = [op.type for op in main_prog.global_block().ops]
    with open(sys.argv[1].format(rank=rank), "w") as f:
        json.dump(
            {"out": np.array(got_out).tolist(), "grad": np.array(got_grad).tolist(), "ops": ops}, f
        )


if __name__ == "__main__":
    main()
