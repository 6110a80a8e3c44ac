"""A LeNet-style conv net on scikit-learn's bundled 8x8 digits (no download), with or without
the oneDNN (MKLDNN) kernels.

    python examples/recognize_digits_conv.py [--use_mkldnn] [--passes 20] [--device cpu]
"""

import argparse

import numpy as np
from example_util import plot_losses, progress, require_matplotlib
from sklearn.datasets import load_digits

import tide


def load_data(seed=0):
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype("float32").reshape(-1, 1, 8, 8)
    y = y.astype("int64").reshape(-1, 1)
    idx = np.random.RandomState(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    return (x[idx[:cut]], y[idx[:cut]]), (x[idx[cut:]], y[idx[cut:]])


def lenet(img):
    """conv(16, 3x3) -> relu -> max pool 2 -> conv(32, 3x3) -> relu -> max pool 2 -> fc 64 -> fc 10."""
    c1 = tide.layers.conv2d(img, num_filters=16, filter_size=3, padding=1, act="relu")
    p1 = tide.layers.pool2d(c1, pool_size=2, pool_stride=2, pool_type="max")
    c2 = tide.layers.conv2d(p1, num_filters=32, filter_size=3, padding=1, act="relu")
    p2 = tide.layers.pool2d(c2, pool_size=2, pool_stride=2, pool_type="max")
    h = tide.layers.fc(input=p2, size=64, act="relu")
    return tide.layers.fc(input=h, size=10, act="softmax")


def place_of(device):
    if device == "cpu":
        return tide.CPUPlace()
    if device == "gpu":
        return tide.CUDAPlace(0)
    kind, _, idx = device.partition(":")
    return tide.Place(kind, int(idx or 0))


def train(
    passes=20,
    batch_size=64,
    learning_rate=0.002,
    use_mkldnn=False,
    device="cpu",
    seed=1,
    verbose=True,
    history=None,
):
    """Returns the test accuracy; `history`, a list, gets each pass's test loss."""
    tide.set_flags({"use_mkldnn": use_mkldnn})
    try:
        (train_x, train_y), (test_x, test_y) = load_data()
        main, startup = tide.Program(), tide.Program()
        main.random_seed = startup.random_seed = seed
        with tide.program_guard(main, startup), tide.unique_name.guard():
            img = tide.layers.data(name="img", shape=[1, 8, 8], dtype="float32")
            label = tide.layers.data(name="label", shape=[1], dtype="int64")
            prediction = lenet(img)
            loss = tide.layers.mean(tide.layers.cross_entropy(input=prediction, label=label))
            acc = tide.layers.accuracy(input=prediction, label=label)
            test_program = main.clone(for_test=True)
            tide.optimizer.Adam(learning_rate=learning_rate).minimize(loss)
        exe = tide.Executor(place_of(device))
        rng = np.random.RandomState(seed)
        with tide.scope_guard(tide.Scope()):
            exe.run(startup)
            for pass_id in range(passes):
                order = rng.permutation(len(train_x))
                steps = range(0, len(order), batch_size)
                for i in progress(
                    steps, len(steps), "pass %d/%d" % (pass_id, passes), None if verbose else False
                ):
                    b = order[i : i + batch_size]
                    exe.run(main, feed={"img": train_x[b], "label": train_y[b]}, fetch_list=[loss])
                test_loss, test_acc = exe.run(
                    test_program, feed={"img": test_x, "label": test_y}, fetch_list=[loss, acc]
                )
                if history is not None:
                    history.append(float(test_loss[0]))
                if verbose and (pass_id % 5 == 0 or pass_id == passes - 1):
                    print(
                        "pass %2d  test loss %.4f  test accuracy %.4f"
                        % (pass_id, test_loss[0], test_acc[0])
                    )
            if verbose:
                kernels = exe.last_run_info()["kernels"]
                print(
                    "kernels of the last run:",
                    ", ".join("%s: %s" % k for k in kernels if k[0] in ("conv2d", "fused_conv2d")),
                )
        return float(test_acc[0])
    finally:
        tide.set_flags({"use_mkldnn": False})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=20)
    ap.add_argument("--batch_size", type=int, default=64)
    ap.add_argument("--learning_rate", type=float, default=0.002)
    ap.add_argument(
        "--use_mkldnn", action="store_true", help="run conv/pool/fc/... on oneDNN kernels"
    )
    ap.add_argument("--device", default="cpu", help="cpu, gpu, or kind:index")
    ap.add_argument(
        "--plot", default=None, metavar="PNG", help="write the test loss per pass to this image"
    )
    args = ap.parse_args()
    require_matplotlib(args.plot)
    history = []
    acc = train(
        args.passes,
        args.batch_size,
        args.learning_rate,
        args.use_mkldnn,
        args.device,
        history=history,
    )
    if args.plot:
        plot_losses(args.plot, history, "test loss (cross entropy)", "recognize_digits_conv")
    print("test accuracy: %.4f" % acc)


if __name__ == "__main__":
    main()
