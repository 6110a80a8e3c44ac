"""Two ranks that disagree: `shape` allreduces 8 rows on rank 0 and 4 on rank 1; `order` issues
c_allreduce_sum then c_broadcast on rank 0 and the other way round on rank 1 (same data)."""

import sys

import numpy as np

import tide
from tide.distributed import world


def main():
    mode = sys.argv[1]
    w = world()
    startup, prog = tide.Program(), tide.Program()
    startup.global_block().append_op(
        "c_comm_init",
        attrs={"ring_id": 0, "rank": w.rank, "nranks": w.world_size, "store": w.store},
    )
    b = prog.global_block()
    rows = 8 if mode != "shape" or w.rank == 0 else 4
    x = b.create_var(name="x", shape=[rows, 3], dtype="float32", persistable=True)
    ops = [("c_allreduce_sum", {}), ("c_broadcast", {"root": 0})]
    if mode == "order" and w.rank == 1:
        ops.reverse()
    for typ, attrs in ops:
        b.append_op(typ, inputs={"X": x}, outputs={"Out": x}, attrs=dict(ring_id=0, **attrs))
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    with tide.scope_guard(scope):
        exe.run(startup)
        exe.run(prog, feed={"x": np.ones((rows, 3), "float32")})
    print("finished without an error")


if __name__ == "__main__":
    main()
