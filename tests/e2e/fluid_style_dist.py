"""A parameter-server training script written as Fluid 1.x users wrote them (fit_a_line, the
PADDLE_* environment of Fluid's book): the trainers run the default startup program and end with
exe.close(), nothing else tells the pservers they are done. Run as LOCAL (no transpiling), it
trains on whole minibatches; trainer i of n feeds rows i::n of each. Prints one JSON line.

    PADDLE_TRAINING_ROLE=PSERVER|TRAINER|LOCAL PADDLE_PSERVER_ENDPOINTS=ip:port,...
    PADDLE_TRAINERS=2 PADDLE_TRAINER_ID=0 PADDLE_CURRENT_ENDPOINT=ip:port python fluid_style_dist.py
"""

import json
import os

import numpy as np

import tide as fluid

STEPS, BATCH = 12, 16


def main():
    role = os.environ.get("PADDLE_TRAINING_ROLE", "LOCAL")
    trainers = int(os.environ.get("PADDLE_TRAINERS", "1"))
    trainer_id = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    fluid.default_main_program().random_seed = 1
    fluid.default_startup_program().random_seed = 1

    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    y_predict = fluid.layers.fc(input=x, size=1, act=None)
    cost = fluid.layers.square_error_cost(input=y_predict, label=y)
    avg_cost = fluid.layers.mean(cost)
    sgd_optimizer = fluid.optimizer.SGD(learning_rate=0.05)
    sgd_optimizer.minimize(avg_cost)

    rng = np.random.RandomState(0)
    xs = rng.uniform(-1, 1, (STEPS * BATCH, 13)).astype("float32")
    ys = (xs @ rng.uniform(-1, 1, (13, 1)) + 0.5).astype("float32")

    exe = fluid.Executor(fluid.CPUPlace())
    if role == "LOCAL":
        train_prog = fluid.default_main_program()
    else:
        t = fluid.DistributeTranspiler()
        t.transpile(trainer_id, pservers=os.environ["PADDLE_PSERVER_ENDPOINTS"], trainers=trainers)
        if role == "PSERVER":
            current_endpoint = os.environ["PADDLE_CURRENT_ENDPOINT"]
            pserver_prog = t.get_pserver_program(current_endpoint)
            pserver_startup = t.get_startup_program(current_endpoint, pserver_prog)
            exe.run(pserver_startup)
            print("pserver %s serving" % current_endpoint, flush=True)
            exe.run(pserver_prog)
            print("pserver %s done" % current_endpoint, flush=True)
            return
        train_prog = t.get_trainer_program()
    exe.run(fluid.default_startup_program())
    losses = []
    for step in range(STEPS):
        rows = slice(step * BATCH + trainer_id, (step + 1) * BATCH, trainers)
        (loss,) = exe.run(train_prog, feed={"x": xs[rows], "y": ys[rows]}, fetch_list=[avg_cost])
        losses.append(float(loss[0]))
    exe.close()
    print(json.dumps({"role": role, "losses": losses}), flush=True)


if __name__ == "__main__":
    main()
