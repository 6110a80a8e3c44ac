"""Digits classification with control flow in training: a hidden state refined by the same
layer several times in a While loop (its weights shared by every iteration, their gradients
summed over them by while_grad), and a learning rate that follows piecewise_decay (a Switch run
by the program each step). Run:

    PYTHONPATH=build/python python examples/recognize_digits_loop.py
"""

import argparse

import numpy as np
from sklearn.datasets import load_digits

import tide
from tide import layers


def load_data(seed=0):
    digits = load_digits()
    x = (digits.data / 16.0).astype("float32")
    y = digits.target.astype("int64").reshape(-1, 1)
    order = np.random.RandomState(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_train = int(0.8 * len(x))
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def build(steps, hidden):
    x = layers.data(name="x", shape=[64], dtype="float32")
    label = layers.data(name="label", shape=[1], dtype="int64")
    h = layers.fc(input=x, size=hidden, act="tanh")
    i = layers.fill_constant([1], "int64", 0)
    n = layers.fill_constant([1], "int64", steps)
    cond = layers.less_than(i, n)
    loop = layers.While(cond)
    with loop.block():  # h = tanh(W h + b) + h, `steps` times, one W for every iteration
        refined = layers.fc(
            input=h, size=hidden, act="tanh", param_attr="refine.w", bias_attr="refine.b"
        )
        layers.assign(layers.elementwise_add(refined, h), h)
        layers.increment(i, in_place=True)
        layers.less_than(i, n, cond=cond)
    prediction = layers.fc(input=h, size=10, act="softmax")
    loss = layers.mean(layers.cross_entropy(input=prediction, label=label))
    accuracy = layers.accuracy(input=prediction, label=label)
    return loss, accuracy


def train(passes=15, batch_size=32, steps=3, hidden=32, seed=1, verbose=True):
    """Trains; returns the test accuracy."""
    (train_x, train_y), (test_x, test_y) = load_data()
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = seed
    with tide.program_guard(main, startup), tide.unique_name.guard():
        loss, accuracy = build(steps, hidden)
        test_program = main.clone(for_test=True)
        batches_per_pass = (len(train_x) + batch_size - 1) // batch_size
        lr = layers.piecewise_decay(
            boundaries=[5 * batches_per_pass, 10 * batches_per_pass], values=[0.1, 0.03, 0.01]
        )
        tide.optimizer.Momentum(learning_rate=lr, momentum=0.9).minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        exe.run(startup)
        rng = np.random.RandomState(seed)
        for pass_id in range(passes):
            order = rng.permutation(len(train_x))
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                cost, rate = exe.run(
                    main, feed={"x": train_x[idx], "label": train_y[idx]}, fetch_list=[loss, lr]
                )
            (acc,) = exe.run(
                test_program, feed={"x": test_x, "label": test_y}, fetch_list=[accuracy]
            )
            if verbose:
                print(
                    "pass %2d  loss %.4f  learning rate %.3f  test accuracy %.4f"
                    % (pass_id, float(cost[0]), float(rate[0]), float(acc[0]))
                )
    return float(acc[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=15)
    ap.add_argument(
        "--steps", type=int, default=3, help="loop iterations refining the hidden state"
    )
    args = ap.parse_args()
    train(passes=args.passes, steps=args.steps)


if __name__ == "__main__":
    main()
