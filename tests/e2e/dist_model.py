"""The e2e tests' training script: fit_a_line or the digits MLP, run locally or as a pserver /
trainer (role from tide.distributed.env(), i.e. the launcher's environment). Every trainer takes
its share of each minibatch (trainer i: rows i::trainers of it), so with sync-mode gradient
averaging the distributed run equals the local one fed whole minibatches. Writes a JSON result.

    python dist_model.py --model fit_a_line --out result.json [--passes 3] [--async]
"""

import argparse
import json
import os
import sys
import time

import numpy as np

import tide

BATCH = {"fit_a_line": 20, "digits": 64}


def load(model):
    if model == "fit_a_line":
        from sklearn.datasets import load_diabetes

        x, y = load_diabetes(return_X_y=True)
        x = ((x - x.mean(0)) / x.std(0)).astype("float32")
        y = ((y - y.mean()) / y.std()).astype("float32").reshape(-1, 1)
    else:
        from sklearn.datasets import load_digits

        x, y = load_digits(return_X_y=True)
        x = (x / 16.0).astype("float32")
        y = y.astype("int64").reshape(-1, 1)
    idx = np.random.RandomState(0).permutation(len(x))
    cut = int(0.8 * len(x))
    return (x[idx[:cut]], y[idx[:cut]]), (x[idx[cut:]], y[idx[cut:]])


def build(model):
    """Returns (feed names, loss, prediction, optimizer)."""
    layers = tide.layers
    if model == "fit_a_line":
        x = layers.data(name="x", shape=[10])
        y = layers.data(name="y", shape=[1])
        pred = layers.fc(input=x, size=1)
        loss = layers.mean(layers.square_error_cost(input=pred, label=y))
        return ["x", "y"], loss, pred, tide.optimizer.SGD(learning_rate=0.02)
    img = layers.data(name="img", shape=[64])
    h = layers.fc(input=img, size=128, act="relu")
    h = layers.fc(input=h, size=64, act="relu")
    pred = layers.fc(input=h, size=10, act="softmax")
    if tide._C.has_op("cross_entropy"):
        label = layers.data(name="label", shape=[1], dtype="int64")
        loss = layers.mean(layers.cross_entropy(input=pred, label=label))
    else:  # the Brier score against one-hot labels, where ops_nn has no cross_entropy yet
        label = layers.data(name="label", shape=[10])
        loss = layers.mean(layers.square_error_cost(input=pred, label=label))
    return ["img", "label"], loss, pred, tide.optimizer.Adam(learning_rate=0.002)


def feed_of(model, names, x, y):
    if model == "digits" and not tide._C.has_op("cross_entropy"):
        y = np.eye(10, dtype="float32")[y[:, 0]]
    return {names[0]: x, names[1]: y}


def batches(n, batch, passes, seed=1):
    rng = np.random.RandomState(seed)
    for _ in range(passes):
        order = rng.permutation(n)
        for i in range(0, n - batch + 1, batch):  # whole batches only: every share is equal
            yield order[i : i + batch]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=sorted(BATCH), default="fit_a_line")
    ap.add_argument("--out", required=True, help="result file; {role} and {id} are filled in")
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--max_steps", type=int, default=0)
    ap.add_argument("--async", dest="sync", action="store_false")
    ap.add_argument("--no_slice", dest="slice", action="store_false")
    ap.add_argument("--min_block_size", type=int, default=1024)
    ap.add_argument("--checkpoint_dir", default="")
    ap.add_argument("--checkpoint_interval", type=int, default=0)
    ap.add_argument("--max_message_size", type=int, default=0)
    ap.add_argument("--step_sleep", type=float, default=0.0)
    ap.add_argument(
        "--curve_dir",
        default="",
        help="CurveZMQ certificates: server.key(_secret), trainer<i>.key(_secret)",
    )
    args = ap.parse_args()

    role = tide.distributed.env()
    (train_x, train_y), (test_x, test_y) = load(args.model)
    main_prog, startup = tide.Program(), tide.Program()
    main_prog.random_seed = startup.random_seed = 7
    with tide.program_guard(main_prog, startup), tide.unique_name.guard():
        names, loss, pred, opt = build(args.model)
        test_prog = main_prog.clone(for_test=True)
        opt.minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    result = {"role": role.role if role else "LOCAL", "losses": []}
    with tide.scope_guard(scope):
        if role is None:
            train_prog, trainer_id, trainers = main_prog, 0, 1
            exe.run(startup)
        else:
            cfg = tide.DistributeTranspilerConfig()
            cfg.slice_var_up = args.slice
            cfg.min_block_size = args.min_block_size
            cfg.checkpoint_dir = args.checkpoint_dir
            cfg.checkpoint_interval = args.checkpoint_interval
            if args.max_message_size:
                cfg.max_message_size = args.max_message_size
            if args.curve_dir:
                d = args.curve_dir
                cfg.curve_server_secret_key = os.path.join(d, "server.key_secret")
                cfg.curve_trainer_public_keys = [
                    os.path.join(d, "trainer%d.key" % i) for i in range(role.trainers)
                ]
                cfg.curve_server_public_key = os.path.join(d, "server.key")
                cfg.curve_trainer_key = os.path.join(d, "trainer%d.key_secret" % role.trainer_id)
            t = tide.DistributeTranspiler(cfg)
            t.transpile(
                role.trainer_id,
                program=main_prog,
                startup_program=startup,
                pservers=role.pserver_endpoints,
                trainers=role.trainers,
                sync_mode=args.sync,
            )
            if role.role == "PSERVER":
                prog = t.get_pserver_program(role.current_endpoint)
                exe.run(t.get_startup_program(role.current_endpoint, prog))
                print("pserver %s serving" % role.current_endpoint, flush=True)
                exe.run(prog)
                print("pserver %s done" % role.current_endpoint, flush=True)
                return
            trainer_id, trainers = role.trainer_id, role.trainers
            exe.run(t.get_trainer_startup_program())
            train_prog = t.get_trainer_program()
        batch = BATCH[args.model]
        for step, b in enumerate(batches(len(train_x), batch, args.passes)):
            if args.max_steps and step >= args.max_steps:
                break
            part = b[trainer_id::trainers]
            (value,) = exe.run(
                train_prog,
                feed=feed_of(args.model, names, train_x[part], train_y[part]),
                fetch_list=[loss],
            )
            result["losses"].append(float(value[0]))
            print("step %d loss %.6f" % (step, value[0]), flush=True)
            if args.step_sleep:
                time.sleep(args.step_sleep)
        (final,) = exe.run(
            test_prog, feed=feed_of(args.model, names, train_x, train_y), fetch_list=[loss]
        )
        (p,) = exe.run(
            test_prog, feed=feed_of(args.model, names, test_x, test_y), fetch_list=[pred]
        )
        result["final_loss"] = float(final[0])
        if args.model == "digits":
            result["accuracy"] = float(np.mean(np.argmax(p, 1) == test_y[:, 0]))
        result["params"] = {
            v.name: np.array(scope.find_var(v.name).get_tensor()).tolist()
            for v in main_prog.all_parameters()
        }
        if role is not None:
            t.send_complete(exe)
    with open(args.out.format(role=result["role"].lower(), id=trainer_id), "w") as f:
        json.dump(result, f)
    print("done: final loss %.6f" % result["final_loss"], flush=True)


if __name__ == "__main__":
    sys.exit(main())
