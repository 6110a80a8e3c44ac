"""Fluid's linear regression (fit_a_line) on scikit-learn's diabetes data (bundled, no
download): describe the forward pass, let minimize() add backward and SGD, train, then save the
inference model, load it back and predict.

    python examples/fit_a_line.py [--passes 300] [--device cpu] [--model_dir /tmp/fit_a_line]
"""

import argparse
import tempfile

import numpy as np
from example_util import plot_losses, progress, require_matplotlib
from sklearn.datasets import load_diabetes

import tide


def load_data(seed=0):
    """Standardised features and target, split 80/20."""
    x, y = load_diabetes(return_X_y=True)
    x = ((x - x.mean(0)) / x.std(0)).astype("float32")
    y = ((y - y.mean()) / y.std()).astype("float32").reshape(-1, 1)
    idx = np.random.RandomState(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    return (x[idx[:cut]], y[idx[:cut]]), (x[idx[cut:]], y[idx[cut:]])


def reader(x, y):
    def samples():
        for a, b in zip(x, y):
            yield a, b

    return samples


def build(learning_rate):
    x = tide.layers.data(name="x", shape=[10], dtype="float32")
    y = tide.layers.data(name="y", shape=[1], dtype="float32")
    y_predict = tide.layers.fc(input=x, size=1, act=None)
    cost = tide.layers.square_error_cost(input=y_predict, label=y)
    avg_cost = tide.layers.mean(cost)
    tide.optimizer.SGD(learning_rate=learning_rate).minimize(avg_cost)
    return x, y, y_predict, avg_cost


def place_of(device):
    return (
        tide.CPUPlace()
        if device == "cpu"
        else tide.Place(*device.split(":"))
        if ":" in device
        else tide.CUDAPlace(0)
        if device == "gpu"
        else tide.Place(device, 0)
    )


def train(
    passes=300,
    batch_size=20,
    learning_rate=0.02,
    device="cpu",
    model_dir=None,
    seed=1,
    verbose=True,
    history=None,
):
    """Trains; returns (final training loss over the whole training set, least-squares optimum,
    test predictions from the reloaded inference model, test targets). `history`, a list, gets
    each pass's training loss."""
    (train_x, train_y), (test_x, test_y) = load_data()
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = seed
    with tide.program_guard(main, startup), tide.unique_name.guard():
        x, y, y_predict, avg_cost = build(learning_rate)
    test_program = main.clone(for_test=True)
    place = place_of(device)
    exe = tide.Executor(place)
    scope = tide.Scope()
    with tide.scope_guard(scope):
        exe.run(startup)
        feeder = tide.DataFeeder(feed_list=[x, y], place=place, program=main)
        batches = tide.batch(
            tide.reader.shuffle(reader(train_x, train_y), buf_size=500, seed=seed),
            batch_size=batch_size,
        )
        n_batches = (len(train_x) + batch_size - 1) // batch_size
        for pass_id in range(passes):
            for data in progress(
                batches(), n_batches, "pass %d/%d" % (pass_id, passes), None if verbose else False
            ):
                exe.run(main, feed=feeder.feed(data), fetch_list=[avg_cost])
            (loss,) = exe.run(
                test_program, feed={"x": train_x, "y": train_y}, fetch_list=[avg_cost]
            )
            if history is not None:
                history.append(float(loss[0]))
            if verbose and (pass_id % 30 == 0 or pass_id == passes - 1):
                print("pass %3d  train loss %.6f" % (pass_id, float(loss[0])))
        model_dir = model_dir or tempfile.mkdtemp(prefix="fit_a_line_")
        tide.io.save_inference_model(model_dir, ["x"], [y_predict], exe, main_program=main)

    # The least-squares optimum of the same model (with a bias) on the same data.
    a = np.hstack([train_x.astype(np.float64), np.ones((len(train_x), 1))])
    w, *_ = np.linalg.lstsq(a, train_y.astype(np.float64), rcond=None)
    optimum = float(np.mean((a @ w - train_y) ** 2))

    # Reload the inference model into a fresh scope and predict.
    with tide.scope_guard(tide.Scope()):
        program, feed_names, fetch_targets = tide.io.load_inference_model(model_dir, exe)
        (pred,) = exe.run(program, feed={feed_names[0]: test_x}, fetch_list=fetch_targets)
    if verbose:
        print(
            "final train loss %.6f, least-squares optimum %.6f (%.2f%% above)"
            % (float(loss[0]), optimum, 100 * (float(loss[0]) / optimum - 1))
        )
        print(
            "inference model in %s; test MSE %.4f"
            % (model_dir, float(np.mean((pred - test_y) ** 2)))
        )
        for p, t in list(zip(pred[:5, 0], test_y[:5, 0])):
            print("  predicted %+.3f  actual %+.3f" % (p, t))
    return float(loss[0]), optimum, pred, test_y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=300)
    ap.add_argument("--batch_size", type=int, default=20)
    ap.add_argument("--learning_rate", type=float, default=0.02)
    ap.add_argument("--device", default="cpu", help="cpu, gpu, or kind:index")
    ap.add_argument("--model_dir", default=None)
    ap.add_argument(
        "--plot", default=None, metavar="PNG", help="write the training loss per pass to this image"
    )
    args = ap.parse_args()
    require_matplotlib(args.plot)
    print(
        "plugins:",
        ", ".join(
            "%s %s" % (p["name"], p["version"]) for p in tide.plugins() if p["status"] == "loaded"
        ),
    )
    history = []
    train(
        args.passes,
        args.batch_size,
        args.learning_rate,
        args.device,
        args.model_dir,
        history=history,
    )
    if args.plot:
        plot_losses(args.plot, history, "training loss (MSE)", "fit_a_line")


if __name__ == "__main__":
    main()
