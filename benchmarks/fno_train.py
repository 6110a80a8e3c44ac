"""Fourier neural operator train step: two 2-D Fourier layers (rfft2 over the grid, the lowest
modes x modes bins mixed across channels by complex weights with einsum, irfft2 back, plus a
pointwise linear path and gelu), a lifting and a projection layer, mean squared error, Adam; a
[batch, grid, grid, 1] float32 field in, channels last. In Tide (tide.fft, a complex parameter per
Fourier layer), PyTorch eager (torch.fft, complex parameters, as neuraloperator's FNO) and
PaddlePaddle's static executor (paddle.fft; Paddle has no complex Adam, so each complex weight is
paddle.complex of two real parameters, PaddleScience's way: the same Adam update). Same initial
values and data everywhere; every framework's loss at every checked step is compared with
Tide's before anything is timed.

    benchmarks/.venv-peers/bin/python benchmarks/fno_train.py [--rounds 3] [--json out.json]
"""

import argparse
import json

import numpy as np
from common import (
    Table,
    check_losses,
    interleaved_rounds,
    machine_line,
    measure,
    median_of_rounds,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
    try_import,
)

CHECK_STEPS = 5
LR = 1e-3
CASES = {  # name: (batch, grid, width, modes)
    "b8 64x64 w16 m12": (8, 64, 16, 12),
    "b4 128x128 w32 m16": (4, 128, 32, 16),
}


def init_values(batch, grid, width, modes):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, grid, grid, 1)).astype(np.float32)
    y = np.tanh(np.roll(x, 3, axis=1) - x).astype(np.float32)
    scale = 1.0 / (width * width)

    def cw():
        return (
            scale
            * (
                rng.random((width, width, modes, modes))
                + 1j * rng.random((width, width, modes, modes))
            )
        ).astype(np.complex64)

    def lin(i, o):
        return (rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32)

    return {
        "x": x,
        "y": y,
        "lift": lin(1, width),
        "proj": lin(width, 1),
        "layers": [{"spec": cw(), "point": lin(width, width)} for _ in range(2)],
    }


# --- Tide ---------------------------------------------------------------------------------------


def tide_fn(batch, grid, width, modes, v):
    import tide

    main, startup = tide.Program(), tide.Program()
    scope = tide.Scope()
    values = {}
    with tide.program_guard(main, startup):
        x = tide.layers.data(name="x", shape=[batch, grid, grid, 1], append_batch_size=False)
        y = tide.layers.data(name="y", shape=[batch, grid, grid, 1], append_batch_size=False)

        def param(name, value):
            values[name] = value
            return tide.layers.create_parameter(list(value.shape), value.dtype.name, name=name)

        h = tide.layers.matmul(x, param("lift", v["lift"]))
        block = main.global_block()
        for i, layer in enumerate(v["layers"]):
            w = param("spec%d" % i, layer["spec"])
            spec = tide.fft.rfft2(h, axes=(1, 2))
            low = tide.layers.slice(spec, axes=[1, 2], starts=[0, 0], ends=[modes, modes])
            mixed = block.create_var(name="mixed%d" % i, dtype="complex64")
            block.append_op(
                "einsum",
                inputs={"Operands": [low, w]},
                outputs={"Out": [mixed]},
                attrs={"equation": "bxyi,ioxy->bxyo"},
            )
            spectral = tide.fft.irfft2(mixed, s=(grid, grid), axes=(1, 2))
            point = tide.layers.matmul(h, param("point%d" % i, layer["point"]))
            h = tide.layers.gelu(tide.layers.elementwise_add(spectral, point))
        out = tide.layers.matmul(h, param("proj", v["proj"]))
        loss = tide.layers.reduce_mean(tide.layers.square(tide.layers.elementwise_sub(out, y)))
        tide.optimizer.Adam(learning_rate=LR).minimize(loss)
    exe = tide.Executor(tide.CPUPlace())
    exe.run(startup, scope=scope)
    for name, value in values.items():
        scope.find_var(name).get_tensor().set(value, tide.CPUPlace())
    feed = {"x": tide.LoDTensor(v["x"]), "y": tide.LoDTensor(v["y"])}
    return lambda: exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0].item()


# --- PyTorch ------------------------------------------------------------------------------------


def torch_fn(batch, grid, width, modes, v):
    torch = try_import("torch")
    if not torch:
        return None
    p = {"lift": v["lift"], "proj": v["proj"]}
    for i, layer in enumerate(v["layers"]):
        p["spec%d" % i], p["point%d" % i] = layer["spec"], layer["point"]
    params = {k: torch.nn.Parameter(torch.from_numpy(a.copy())) for k, a in p.items()}
    opt = torch.optim.Adam(params.values(), lr=LR)
    x, y = torch.from_numpy(v["x"]), torch.from_numpy(v["y"])

    def step():
        h = x @ params["lift"]
        for i in range(2):
            spec = torch.fft.rfft2(h, dim=(1, 2))[:, :modes, :modes, :]
            mixed = torch.einsum("bxyi,ioxy->bxyo", spec, params["spec%d" % i])
            spectral = torch.fft.irfft2(mixed, s=(grid, grid), dim=(1, 2))
            h = torch.nn.functional.gelu(spectral + h @ params["point%d" % i])
        loss = torch.mean((h @ params["proj"] - y) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step


# --- PaddlePaddle static ------------------------------------------------------------------------


def paddle_fn(batch, grid, width, modes, v):
    paddle = try_import("paddle")
    if not paddle:
        return None
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    values = {}
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [batch, grid, grid, 1], "float32")
        y = paddle.static.data("y", [batch, grid, grid, 1], "float32")

        def param(name, value):
            values[name] = value
            return paddle.static.create_parameter(list(value.shape), "float32", name=name)

        h = paddle.matmul(x, param("lift", v["lift"]))
        for i, layer in enumerate(v["layers"]):
            w = paddle.complex(
                param("spec%d_re" % i, layer["spec"].real.copy()),
                param("spec%d_im" % i, layer["spec"].imag.copy()),
            )
            spec = paddle.fft.rfft2(h, axes=(1, 2))[:, :modes, :modes, :]
            mixed = paddle.einsum("bxyi,ioxy->bxyo", spec, w)
            spectral = paddle.fft.irfft2(mixed, s=(grid, grid), axes=(1, 2))
            point = paddle.matmul(h, param("point%d" % i, layer["point"]))
            h = paddle.nn.functional.gelu(spectral + point)
        out = paddle.matmul(h, param("proj", v["proj"]))
        loss = paddle.mean((out - y) ** 2)
        paddle.optimizer.Adam(learning_rate=LR).minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()
    for name, value in values.items():
        scope.find_var(name).get_tensor().set(value, paddle.CPUPlace())
    feed = {"x": v["x"], "y": v["y"]}
    return lambda: float(exe.run(main, feed=feed, fetch_list=[loss])[0])


FRAMEWORKS = {"tide": tide_fn, "pytorch": torch_fn, "paddle static": paddle_fn}


def worker(spec, args):
    """One framework and case in this process: its first losses, then seconds per step."""
    name, case = spec.split(":", 1)
    dims = CASES[case]
    step = FRAMEWORKS[name](*dims, init_values(*dims))
    if step is None:
        raise SystemExit("%s is not installed" % name)
    losses = [step() for _ in range(CHECK_STEPS)]
    t = measure(step, reps=args.reps, warmup=1)
    print(json.dumps({"losses": losses, "ms": [s * 1e3 for s in t]}))


def main():
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per framework")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    if args.worker:
        return worker(args.worker, args)
    extra = ["--reps", str(args.reps), "--threads", str(args.threads)]
    table = Table("FNO train step (2 Fourier layers, Adam), float32", "ms per step")
    for case in CASES:
        specs = ["%s:%s" % (f, case) for f in FRAMEWORKS]
        results = interleaved_rounds(args.rounds, specs, lambda s: run_isolated(__file__, s, extra))
        losses = {s.split(":")[0]: results[s][0]["losses"] for s in results}
        if "tide" in losses:
            check_losses(losses, "tide", rtol=1e-3)
        tide = median_of_rounds(results[specs[0]], "ms") if specs[0] in results else None
        peers = {
            s.split(":")[0]: median_of_rounds(results[s], "ms") for s in specs[1:] if s in results
        }
        table.add(case, tide, peers, "")
    machine = machine_line("%d threads" % args.threads)
    table.print(machine)
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
