"""Fine-tuning a model PaddlePaddle trained and saved (paddle.jit.save, save_inference_model; the
legacy .pdmodel or Paddle 3's PIR .json) on your own data in Tide: load it as saved, put it in
training mode, add a loss and an optimizer, train, then save the result as an inference model and
load it back. docs/paddle_models.md, "Training a loaded model further", says what each step does.

    python examples/finetune_paddle_model.py [--model PREFIX] [--passes 6] [--freeze-bn]

Without --model it takes the small ResNet-18 Paddle saved for Tide's tests
(tests/fixtures/paddle/resnet18: random weights, 10 classes, 3x32x32 images) and scikit-learn's
8x8 digits (no download), scaled to 32x32 and repeated over 3 channels. A model of yours needs
images of its input shape and a first output of one logit per class.
"""

import argparse
import os
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import tide

FIXTURE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "paddle", "resnet18"
)


def load_data(seed=0, size=32):
    """The digits as [N, 3, size, size] float32 images in [-1, 1] and int64 labels [N, 1]."""
    x, y = load_digits(return_X_y=True)
    x = x.reshape(-1, 8, 8) / 8.0 - 1.0
    x = np.kron(x, np.ones((size // 8, size // 8)))[:, None].repeat(3, axis=1).astype("float32")
    y = y.astype("int64").reshape(-1, 1)
    idx = np.random.RandomState(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    return (x[idx[:cut]], y[idx[:cut]]), (x[idx[cut:]], y[idx[cut:]])


def accuracy(exe, program, feed_name, logits, scope, x, y, batch=256):
    right = 0
    for i in range(0, len(x), batch):
        (out,) = exe.run(
            program, feed={feed_name: x[i : i + batch]}, fetch_list=[logits], scope=scope
        )
        right += int((out.argmax(axis=1) == y[i : i + batch, 0]).sum())
    return right / len(x)


def train(model=None, passes=6, batch=32, lr=0.05, freeze_bn=False, save_dir=None, verbose=True):
    """Returns (test accuracy before, after fine-tuning, of the saved model reloaded)."""
    (train_x, train_y), (test_x, test_y) = load_data()
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    with tide.scope_guard(scope):
        # As saved: the inference rewrites (batch norm folded, ops fused) have no gradients.
        program, feeds, fetches = tide.io.load_inference_model(
            model or os.path.join(FIXTURE, "inference"), exe, optimize=False
        )
    feed, logits = feeds[0], fetches[0]
    test_program = program.clone(for_test=True)  # evaluation: dropout off, running statistics
    before = accuracy(exe, test_program, feed, logits.name, scope, test_x, test_y)

    tide.io.set_training(program, freeze_batch_norm=freeze_bn)  # as the model's train() was
    startup = tide.Program()
    with tide.program_guard(program, startup):
        label = tide.layers.data(
            name="label", shape=[-1, 1], dtype="int64", append_batch_size=False
        )
        loss = tide.layers.mean(tide.layers.softmax_with_cross_entropy(logits, label))
        tide.optimizer.Momentum(learning_rate=lr, momentum=0.9).minimize(loss)
    exe.run(startup, scope=scope)  # the optimizer's state; the loaded weights stay

    rng = np.random.RandomState(1)
    for epoch in range(passes):
        order = rng.permutation(len(train_x))
        losses = []
        for i in range(0, len(order) - batch + 1, batch):
            idx = order[i : i + batch]
            (value,) = exe.run(
                program,
                feed={feed: train_x[idx], "label": train_y[idx]},
                fetch_list=[loss],
                scope=scope,
            )
            losses.append(value.item())
        if verbose:
            print("pass %d: loss %.4f" % (epoch, np.mean(losses)))
    after = accuracy(exe, test_program, feed, logits.name, scope, test_x, test_y)

    # The fine-tuned model as an inference model of Tide's, loaded back into a scope of its own.
    save_dir = save_dir or tempfile.mkdtemp(prefix="tide_finetuned_")
    tide.io.save_inference_model(
        save_dir, [feed], [logits], exe, main_program=test_program, scope=scope
    )
    reloaded_scope = tide.Scope()
    with tide.scope_guard(reloaded_scope):
        saved, saved_feeds, saved_fetches = tide.io.load_inference_model(save_dir, exe)
    reloaded = accuracy(
        exe, saved, saved_feeds[0], saved_fetches[0].name, reloaded_scope, test_x, test_y
    )
    if verbose:
        print(
            "test accuracy: %.3f before, %.3f after, %.3f reloaded from %s"
            % (before, after, reloaded, save_dir)
        )
    return before, after, reloaded


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="a Paddle model's path prefix (dir/inference)")
    ap.add_argument("--passes", type=int, default=6)
    ap.add_argument("--freeze-bn", action="store_true", help="batch norms on their statistics")
    ap.add_argument("--save-dir", help="where the fine-tuned model goes (a temporary directory)")
    args = ap.parse_args()
    train(args.model, args.passes, freeze_bn=args.freeze_bn, save_dir=args.save_dir)


if __name__ == "__main__":
    main()
