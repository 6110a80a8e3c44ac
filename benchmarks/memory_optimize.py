"""Peak memory of a training step: every temporary kept (--free_temporaries=false); temporaries
freed after their last use but every weight gradient stored (--fuse_weight_updates=false);
Tide's default (both: the executor also computes each fc weight's gradient straight into its
momentum update, never storing it; results equal to float rounding: the losses are compared);
the default after tide.memory_optimize; against PyTorch.

For each model (an MLP, LeNet, a ResNet-18-sized residual conv net at 32x32), each configuration
runs in its own process (run by this script with --child) and trains 3 steps:
- Tide: the allocator's peak bytes in use (tide.memory.stats(place)["peak_used"]) and the
  process's peak RSS growth over training (resource.getrusage, which counts what the allocator
  keeps cached too);
- PyTorch (CPU, eager, same model, batch and SGD-momentum step): its peak RSS growth (PyTorch
  keeps no CPU allocator statistics).

    python benchmarks/memory_optimize.py              # the table
    python benchmarks/memory_optimize.py --models mlp

Run it with the peers' venv's python for the PyTorch column (benchmarks/.venv-peers); Tide comes
from the build tree (TIDE_BUILD overrides), as in the other benchmarks.
"""

import argparse
import json
import os
import resource
import subprocess
import sys

import numpy as np
from common import setup_paths

BATCH = {"mlp": 64, "lenet": 32, "resnet": 16}


def rss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def tide_child(model, optimize, free_temporaries=True, fuse=True):
    import tide

    tide.set_flags({"free_temporaries": free_temporaries, "fuse_weight_updates": fuse})
    from tide import layers

    def residual(h, ch, stride):
        y = layers.conv2d(
            h, num_filters=ch, filter_size=3, stride=stride, padding=1, bias_attr=False
        )
        y = layers.batch_norm(y, act="relu")
        y = layers.conv2d(y, num_filters=ch, filter_size=3, padding=1, bias_attr=False)
        y = layers.batch_norm(y)
        if stride != 1 or h.shape[1] != ch:
            h = layers.batch_norm(
                layers.conv2d(h, num_filters=ch, filter_size=1, stride=stride, bias_attr=False)
            )
        return layers.relu(layers.elementwise_add(y, h))

    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 1
    with tide.program_guard(main, startup):
        if model == "mlp":
            x = layers.data(name="x", shape=[784], dtype="float32")
            h = layers.fc(layers.fc(x, size=1024, act="relu"), size=1024, act="relu")
        elif model == "lenet":
            x = layers.data(name="x", shape=[1, 28, 28], dtype="float32")
            h = layers.pool2d(
                layers.conv2d(x, num_filters=20, filter_size=5, act="relu"), 2, pool_stride=2
            )
            h = layers.pool2d(
                layers.conv2d(h, num_filters=50, filter_size=5, act="relu"), 2, pool_stride=2
            )
            h = layers.fc(h, size=500, act="relu")
        else:
            x = layers.data(name="x", shape=[3, 32, 32], dtype="float32")
            h = layers.batch_norm(
                layers.conv2d(x, num_filters=64, filter_size=3, padding=1, bias_attr=False),
                act="relu",
            )
            for ch, stride in (
                (64, 1),
                (64, 1),
                (128, 2),
                (128, 1),
                (256, 2),
                (256, 1),
                (512, 2),
                (512, 1),
            ):
                h = residual(h, ch, stride)
            h = layers.pool2d(h, pool_type="avg", global_pooling=True)
        logits = layers.fc(h, size=10)
        label = layers.data(name="label", shape=[1], dtype="int64")
        loss = layers.mean(layers.softmax_with_cross_entropy(logits, label))
        tide.optimizer.Momentum(learning_rate=0.01, momentum=0.9).minimize(loss)
    if optimize:
        tide.memory_optimize(main, skip_opt_set=[loss], skip_grads=False)
    place = tide.Place("cpu", 0)
    exe = tide.Executor(place)
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    xs, ys = feeds(model)
    before = rss_kb()
    losses = [
        float(exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss], scope=scope)[0][0])
        for _ in range(3)
    ]
    return {
        "peak_used": tide.memory.stats(place)["peak_used"],
        "rss": (rss_kb() - before) * 1024,
        "losses": losses,
    }


def torch_child(model):
    import torch
    from torch import nn

    torch.manual_seed(1)

    class Residual(nn.Module):
        def __init__(self, cin, ch, stride):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, ch, 3, stride, 1, bias=False),
                nn.BatchNorm2d(ch),
                nn.ReLU(),
                nn.Conv2d(ch, ch, 3, 1, 1, bias=False),
                nn.BatchNorm2d(ch),
            )
            self.skip = (
                nn.Sequential(nn.Conv2d(cin, ch, 1, stride, bias=False), nn.BatchNorm2d(ch))
                if stride != 1 or cin != ch
                else nn.Identity()
            )

        def forward(self, x):
            return torch.relu(self.body(x) + self.skip(x))

    if model == "mlp":
        net = nn.Sequential(
            nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
        )
    elif model == "lenet":
        net = nn.Sequential(
            nn.Conv2d(1, 20, 5),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(20, 50, 5),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(800, 500),
            nn.ReLU(),
            nn.Linear(500, 10),
        )
    else:
        blocks, cin = [], 64
        for ch, stride in (
            (64, 1),
            (64, 1),
            (128, 2),
            (128, 1),
            (256, 2),
            (256, 1),
            (512, 2),
            (512, 1),
        ):
            blocks.append(Residual(cin, ch, stride))
            cin = ch
        net = nn.Sequential(
            nn.Conv2d(3, 64, 3, 1, 1, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            *blocks,
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(512, 10),
        )
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    xs, ys = feeds(model)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys[:, 0])
    before = rss_kb()
    for _ in range(3):
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    return {"rss": (rss_kb() - before) * 1024}


def feeds(model):
    rng = np.random.default_rng(0)
    shape = {"mlp": (784,), "lenet": (1, 28, 28), "resnet": (3, 32, 32)}[model]
    xs = rng.standard_normal((BATCH[model],) + shape, dtype="float32")
    return xs, rng.integers(0, 10, (BATCH[model], 1)).astype("int64")


def run_child(*args):
    p = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1")),
    )
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"
    return json.loads(p.stdout.strip().splitlines()[-1]), None


def mib(n):
    return "%.1f" % (n / 2**20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mlp,lenet,resnet")
    ap.add_argument("--child", nargs="+")
    a = ap.parse_args()
    setup_paths()
    if a.child:
        kind, model = a.child[0], a.child[1]
        out = (
            torch_child(model)
            if kind == "torch"
            else tide_child(model, kind == "tide-opt", kind != "tide-keep", kind != "tide-stored")
        )
        print(json.dumps(out))
        return
    print(
        "%-7s %10s %10s %7s %10s %7s %10s %7s %10s %10s %9s"
        % (
            "model",
            "keep all",
            "grads kept",
            "ratio",
            "default",
            "ratio",
            "+memopt",
            "ratio",
            "tide rss",
            "torch rss",
            "vs torch",
        )
    )
    for model in a.models.split(","):
        keep, _ = run_child("tide-keep", model)
        default, _ = run_child("tide", model)
        stored, _ = run_child("tide-stored", model)
        opt, _ = run_child("tide-opt", model)
        peer, why = run_child("torch", model)
        torch_rss = mib(peer["rss"]) if peer else "n/a"
        vs = "%.2fx" % (default["rss"] / peer["rss"]) if peer and peer["rss"] else "n/a"
        print(
            "%-7s %10s %10s %6.2fx %10s %6.2fx %10s %6.2fx %10s %10s %9s"
            % (
                model,
                mib(keep["peak_used"]),
                mib(stored["peak_used"]),
                stored["peak_used"] / keep["peak_used"],
                mib(default["peak_used"]),
                default["peak_used"] / keep["peak_used"],
                mib(opt["peak_used"]),
                opt["peak_used"] / keep["peak_used"],
                mib(default["rss"]),
                torch_rss,
                vs,
            )
        )
        drift = max(abs(a - b) / abs(a) for a, b in zip(default["losses"], stored["losses"]))
        print("  losses of default against grads kept's: max relative difference %.1e" % drift)
        if why:
            print("  (PyTorch: %s)" % why)
    print(
        "MiB of peak bytes in use; 'ratio' = that case's peak / keep all's (target <= 0.7x); "
        "'grads kept' = temporaries freed, every weight gradient stored "
        "(--fuse_weight_updates=false); "
        "'tide rss' and 'vs torch' = Tide's default peak RSS growth, and over PyTorch's "
        "(target <= 1.0x)."
    )


if __name__ == "__main__":
    main()
