"""Fluid's collective fleet API in a training script, as scripts written for Fluid use it:
fleet.startup_program / fleet.main_program, init_worker, local_rank, save_persistables and
save_inference_model on the first worker, barrier_worker (the others wait for the save),
stop_worker. Prints one line per rank: how long the barrier held it and whether the save was
there when it passed.

    python collective_fleet_api_job.py OUT_DIR
"""

import os
import sys
import time

import numpy as np

import tide as fluid
from tide.distributed import fleet

fleet.init(is_collective=True)
x = fluid.layers.data(name="x", shape=[4])
y = fluid.layers.data(name="y", shape=[1])
pred = fluid.layers.fc(x, 1)
loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
fleet.distributed_optimizer(fluid.optimizer.SGD(0.1)).minimize(loss)
assert fleet.main_program is fluid.default_main_program()
exe = fluid.Executor(fluid.CPUPlace())
exe.run(fleet.startup_program)
fleet.init_worker()
rank, n = fleet.worker_index(), fleet.worker_num()
out = sys.argv[1]
for step in range(3):
    xb = np.arange(16, dtype="float32").reshape(4, 4) * (step + 1) / 16
    yb = np.ones((4, 1), "float32")
    exe.run(fleet.main_program, feed={"x": xb[rank::n], "y": yb[rank::n]}, fetch_list=[loss])
if fleet.is_first_worker():
    time.sleep(1.0)  # the others wait at the barrier meanwhile
    fleet.save_persistables(exe, os.path.join(out, "ckpt"))
    fleet.save_inference_model(exe, os.path.join(out, "model"), ["x"], [pred])
    with open(os.path.join(out, "saved"), "w") as f:
        f.write("1")
start = time.time()
fleet.barrier_worker()
print(
    "rank %d local_rank %d barrier %.2f s saved %s"
    % (rank, fleet.local_rank(), time.time() - start, os.path.exists(os.path.join(out, "saved"))),
    flush=True,
)
fleet.stop_worker()
