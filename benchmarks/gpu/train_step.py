"""One training step (feed a batch, forward, backward, Adam update, fetch the loss) of the digits
MLP (examples/recognize_digits_mlp.py mlp()) and the LeNet-like conv net
(examples/recognize_digits_conv.py lenet()) on the same GPU, in Tide and in PyTorch, from the
same initial weights and data (the first losses are checked to agree). Prints ms/step and
tide/pytorch.

    python benchmarks/gpu/train_step.py [--batch 64] [--reps 7] [--json out.json]

Both sides run float32 without TF32 (PyTorch's cuDNN default allows TF32; it is turned off here, as
Tide's is), unless TIDE_CUDA_ALLOW_TF32=1, which turns it on for both.
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # benchmarks/common.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples"))

from common import Table, machine_line, measure, parser, run_isolated, setup_paths, try_import  # noqa: E402

LR = 0.002
MODELS = ("mlp", "lenet")


def data(model, batch, seed=0):
    rng = np.random.RandomState(seed)
    shape = (batch, 64) if model == "mlp" else (batch, 1, 8, 8)
    x = rng.rand(*shape).astype("float32")
    y = rng.randint(0, 10, size=(batch, 1)).astype("int64")
    return x, y


def example(name):
    """An examples/ module, for its model function. The examples load their data with scikit-learn
    at import; the models do not need it, so a stand-in serves where it is not installed."""
    try:
        import sklearn.datasets  # noqa: F401
    except ImportError:
        import types

        fake = types.ModuleType("sklearn")
        fake.datasets = types.ModuleType("sklearn.datasets")
        fake.datasets.load_digits = None
        sys.modules.setdefault("sklearn", fake)
        sys.modules.setdefault("sklearn.datasets", fake.datasets)
    return __import__(name)


def tide_program(model):
    import tide

    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 1
    with tide.program_guard(main, startup), tide.unique_name.guard():
        if model == "mlp":
            mlp = example("recognize_digits_mlp").mlp
            img = tide.layers.data(name="img", shape=[64], dtype="float32")
            prediction = mlp(img)
        else:
            lenet = example("recognize_digits_conv").lenet
            img = tide.layers.data(name="img", shape=[1, 8, 8], dtype="float32")
            prediction = lenet(img)
        label = tide.layers.data(name="label", shape=[1], dtype="int64")
        loss = tide.layers.mean(tide.layers.cross_entropy(input=prediction, label=label))
        tide.optimizer.Adam(learning_rate=LR).minimize(loss)
    params = [p for p in main.global_block().all_parameters()]
    return main, startup, loss, params


def initial_weights(model):
    """The parameters' shapes (Tide's creation order) with fixed random values."""
    main, _, _, params = tide_program(model)
    rng = np.random.RandomState(7)
    return [(p.name, (rng.randn(*p.shape) * 0.1).astype("float32")) for p in params]


def tide_step(model, batch):
    import tide

    main, startup, loss, _ = tide_program(model)
    place = tide.CUDAPlace(0)
    exe = tide.Executor(place)
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    for name, value in initial_weights(model):
        scope.var(name).get_tensor().set(value, place, False)
    x, y = data(model, batch)
    feed = {"img": tide.LoDTensor(x), "label": tide.LoDTensor(y)}
    return lambda: float(
        np.asarray(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]).reshape(-1)[0]
    )


def torch_step(model, batch):
    torch = try_import("torch")
    if not torch or not torch.cuda.is_available():
        return None
    tf32 = os.environ.get("TIDE_CUDA_ALLOW_TF32") == "1"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    dev = torch.device("cuda:0")
    nn = torch.nn
    if model == "mlp":  # fc 128 relu, fc 64 relu, fc 10 softmax
        layers = [
            nn.Linear(64, 128),
            nn.ReLU(),
            nn.Linear(128, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
            nn.Softmax(dim=1),
        ]
    else:  # conv 16 relu, pool, conv 32 relu, pool, fc 64 relu, fc 10 softmax
        layers = [
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Flatten(),
            nn.Linear(128, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
            nn.Softmax(dim=1),
        ]
    net = nn.Sequential(*layers).to(dev)
    # Tide's parameters in creation order: per layer the weight (fc: [in, out]; conv: OIHW) then
    # the bias; PyTorch's Linear holds [out, in].
    weights = [w for _, w in initial_weights(model)]
    torch_params = [
        p for m in net if isinstance(m, (nn.Linear, nn.Conv2d)) for p in (m.weight, m.bias)
    ]
    assert len(weights) == len(torch_params), (len(weights), len(torch_params))
    with torch.no_grad():
        for p, w in zip(torch_params, weights):
            v = torch.from_numpy(w.T.copy() if p.dim() == 2 else w.reshape(p.shape))
            p.copy_(v.to(dev))
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    x, y = data(model, batch)

    def step():
        xt = torch.from_numpy(x).to(dev)
        yt = torch.from_numpy(y.reshape(-1)).to(dev)
        opt.zero_grad()
        prob = net(xt)
        loss = torch.nn.functional.nll_loss(torch.log(prob), yt)  # the same math as Tide's ops
        loss.backward()
        opt.step()
        return float(loss.item())

    return step


def worker(case, args):
    """Measures one (framework, model) in this process; prints {"first": loss, "ms": [...]}."""
    framework, model = case.split(":")
    step = (tide_step if framework == "tide" else torch_step)(model, args.batch)
    if step is None:
        raise SystemExit(2)
    first = step()
    t = measure(step, reps=args.reps, warmup=5, inner=20)
    print(json.dumps({"first": first, "ms": [1e3 * t[0], 1e3 * t[1], 1e3 * t[2]]}))


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--worker", default=None, help="==SUPPRESS==")
    args = ap.parse_args()
    setup_paths()
    if args.worker:
        return worker(args.worker, args)
    import tide

    if not tide.is_compiled_with_cuda():
        raise SystemExit("the CUDA device plugin is not loaded (TIDE_PLUGIN_PATH?)")
    extra = ["--reps", str(args.reps), "--batch", str(args.batch)]
    table = Table("one Adam train step on gpu:0, batch %d, float32" % args.batch, "ms/step")
    for model in MODELS:
        res = {
            fw: run_isolated(__file__, "%s:%s" % (fw, model), extra) for fw in ("tide", "pytorch")
        }
        if not res["tide"]:
            raise SystemExit("tide failed on %s" % model)
        if res["pytorch"]:
            a, b = res["tide"]["first"], res["pytorch"]["first"]
            if abs(a - b) > 1e-4 * max(1.0, abs(b)):
                raise SystemExit(
                    "%s: first losses differ (tide %.6f, pytorch %.6f): not the same computation"
                    % (model, a, b)
                )
        peers = {"pytorch": tuple(res["pytorch"]["ms"])} if res["pytorch"] else {}
        table.add(
            "%s (digits %s)" % (model, "64-128-64-10" if model == "mlp" else "LeNet-like"),
            tuple(res["tide"]["ms"]),
            peers,
        )
    torch = try_import("torch")
    gpu = torch.cuda.get_device_name(0) if torch and torch.cuda.is_available() else "?"
    machine = machine_line(
        "%s, tide %s, torch %s, TF32 %s"
        % (
            gpu,
            tide.__version__,
            getattr(torch, "__version__", "n/a"),
            "on" if os.environ.get("TIDE_CUDA_ALLOW_TF32") == "1" else "off",
        )
    )
    table.print(machine)
    print("tide/pytorch below 1.0 means Tide is faster (target: tide/pytorch <= 1.0)")
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
