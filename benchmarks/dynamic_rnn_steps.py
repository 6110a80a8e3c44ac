"""Time per step of a DynamicRNN's forward + backward over one long sequence, against a StaticRNN
running the same cell over the same steps (the linear anchor: its recurrent_grad does O(1) work
per step). A ratio that grows with the step count means the DynamicRNN's backward is not linear
in the steps (while_grad's tensor-array bookkeeping was O(steps) per step).

    TIDE_BUILD=build python benchmarks/dynamic_rnn_steps.py [--steps 1000,2000,4000,8000] [--reps 3]
"""

import os
import sys

import numpy as np
from common import Table, cpu_flags, machine_line, measure, parser, set_threads, setup_paths

HIDDEN, WIDTH = 8, 4


def isa():
    """The widest vector ISA the CPU offers (what the plain kernels' Eigen and oneDNN can pick)."""
    flags = cpu_flags()
    for name in ("avx512f", "avx2", "avx", "sse4_2"):
        if name in flags:
            return name
    return "no AVX" if flags else "unknown ISA"


def _cell(tide, x_t, prev):
    return tide.layers.fc(
        input=[x_t, prev],
        size=HIDDEN,
        act="tanh",
        param_attr=[tide.ParamAttr(name="wx"), tide.ParamAttr(name="wh")],
        bias_attr=tide.ParamAttr(name="b"),
    )


def dynamic_rnn(steps, xs):
    import tide
    from tide import layers

    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[WIDTH], dtype="float32", lod_level=1)
        drnn = layers.DynamicRNN()
        with drnn.block():
            x_t = drnn.step_input(x)
            prev = drnn.memory(shape=[HIDDEN], value=0.0)
            h = _cell(tide, x_t, prev)
            drnn.update_memory(prev, h)
            drnn.output(h)
        loss = layers.mean(drnn())
        tide.append_backward(loss)
    feed = tide.LoDTensor(xs)
    feed.set_recursive_sequence_lengths([[steps]])
    return main, startup, {"x": feed}


def static_rnn(steps, xs):
    import tide
    from tide import layers

    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[steps, 1, WIDTH], dtype="float32", append_batch_size=False)
        rnn = layers.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            prev = rnn.memory(shape=[-1, HIDDEN], batch_ref=x_t)
            h = _cell(tide, x_t, prev)
            rnn.update_memory(prev, h)
            rnn.step_output(h)
        loss = layers.mean(rnn())
        tide.append_backward(loss)
    return main, startup, {"x": xs.reshape(steps, 1, WIDTH)}


def seconds_per_step(make, steps, reps):
    import tide

    xs = np.random.RandomState(0).uniform(-1, 1, (steps, WIDTH)).astype("float32")
    main, startup, feed = make(steps, xs)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    grad = main.global_block().var("wh@GRAD")
    run = lambda: exe.run(main, feed=feed, fetch_list=[grad], scope=scope)  # noqa: E731
    median, lo, hi = measure(run, reps=reps, warmup=1)
    return median / steps, lo / steps, hi / steps


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--steps", default="1000,2000,4000,8000")
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    import tide

    table = Table(
        "DynamicRNN forward + backward over one sequence (hidden %d, input %d), "
        "StaticRNN the same cell as the peer" % (HIDDEN, WIDTH),
        "us per step",
    )
    for steps in (int(s) for s in args.steps.split(",")):
        d = tuple(v * 1e6 for v in seconds_per_step(dynamic_rnn, steps, args.reps))
        s = tuple(v * 1e6 for v in seconds_per_step(static_rnn, steps, args.reps))
        table.add("%d steps" % steps, d, {"StaticRNN": s})
        sys.stdout.flush()
    table.print(
        machine_line("tide %s, %d threads, ISA %s" % (tide.__version__, args.threads, isa()))
    )
    table.dump(args.json, machine_line())


if __name__ == "__main__":
    os.environ.setdefault("TIDE_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
    main()
