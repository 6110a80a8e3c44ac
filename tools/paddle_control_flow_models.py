#!/usr/bin/env python3
"""Models whose `paddle.jit.to_static` forward has data-dependent control flow, which Paddle 3.x
saves as PIR's `pd_op.if` and `pd_op.while` (regions ending in `cf.yield`): Tide's fixtures
`pir/cond_if`, `pir/cond_while`, `pir/cond_nested`, `pir/cond_while_swap` and
`pir/cond_while_break` (tests/fixtures/paddle/README.md). Run with Paddle 3.x (PIR, its
default program format):

    /tmp/paddle3/bin/python tools/paddle_control_flow_models.py tests/fixtures/paddle

Each model goes to OUT/pir/<name>/ as tools/paddle_export.py writes PIR fixtures (inference.json,
inference.pdiparams, inputs.npz, expected.npy: Paddle's executor on the reloaded files, info.json),
plus cases.npz: more feeds (`<feed>_<i>`) that take the other branch or another trip count, with
Paddle's output for each (`out_<i>`)."""

import os
import sys

os.environ.setdefault("FLAGS_enable_pir_api", "1")  # PIR programs
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import paddle  # noqa: E402
from paddle import nn  # noqa: E402


class CondIf(nn.Layer):
    """`if x.mean() > 0:` on a tensor (pd_op.if with two results), the branches reading values
    computed before the if (free variables of the regions), the results used after it."""

    inputs = [("x", [None, 4], "float32")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        y = self.fc(x)
        if x.mean() > 0:
            a = paddle.tanh(y) * 2.0
            b = y.max(axis=1, keepdim=True)
        else:
            a = y - x.sum()
            b = paddle.exp(y).mean(axis=1, keepdim=True)
        return self.out(a * b) + b

    @staticmethod
    def example(rng):
        return {"x": (rng.standard_normal((3, 4)) + 0.5).astype(np.float32)}

    @staticmethod
    def cases(rng):
        """The false branch, the true one at batch 1 and 5."""
        return [
            {"x": (rng.standard_normal((3, 4)) - 0.5).astype(np.float32)},
            {"x": (rng.standard_normal((1, 4)) + 1.0).astype(np.float32)},
            {"x": (rng.standard_normal((5, 4)) - 1.0).astype(np.float32)},
        ]


class CondWhile(nn.Layer):
    """`while i < n:` (n a feed) carrying an RNN-like state h = tanh(h W + x U), with an `if` on
    the state inside the loop (pd_op.if in pd_op.while's body), `i` incremented in place
    (pd_op.increment_ on a value of the enclosing block), the states appended to a list (a tensor
    array: create_array, array_write_, array_length) and the last one read back (array_read)."""

    inputs = [("x", [None, 4], "float32"), ("n", [1], "int64")]

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.rec = nn.Linear(8, 8, bias_attr=False)
        self.out = nn.Linear(8, 3)

    def forward(self, x, n):
        u = self.inp(x)
        h = paddle.tanh(u)
        states = [h]
        i = paddle.zeros([1], "int64")
        while i < n:
            h = paddle.tanh(self.rec(h) + u)
            if h.mean() > 0:
                h = h * 0.5
            else:
                h = h + 0.25
            states.append(h)
            paddle.increment(i)
        last = paddle.tensor.array_read(states, i)
        return self.out(h + last) + paddle.cast(len(states), "float32")

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 4)).astype(np.float32), "n": np.array([3], np.int64)}

    @staticmethod
    def cases(rng):
        """No iteration, one, and seven (both branches of the inner if)."""
        return [
            {"x": rng.standard_normal((2, 4)).astype(np.float32), "n": np.array([k], np.int64)}
            for k in (0, 1, 7)
        ] + [
            {
                "x": (rng.standard_normal((3, 4)) - 2.0).astype(np.float32),
                "n": np.array([5], np.int64),
            }
        ]


class CondNested(nn.Layer):
    """A loop inside a branch: `if x.mean() > 0:` runs `while i < n:` over h = tanh(h W + b) + 0.3
    with an `if h.sum() > 3:` in the loop, and adds the counter after it; the other branch
    doubles x (pd_op.while in pd_op.if's true region, pd_op.if in the loop's body)."""

    inputs = [("x", [None, 4], "float32"), ("n", [1], "int64")]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, n):
        h = x
        if x.mean() > 0:
            i = paddle.zeros([1], "int64")
            while i < n:
                h = paddle.tanh(self.fc(h)) + 0.3
                if h.sum() > 3.0:
                    h = h - 1.0
                i += 1
            h = h + i.astype("float32")
        else:
            h = h * 2.0
        return h

    @staticmethod
    def example(rng):
        return {
            "x": (rng.standard_normal((2, 4)) + 1.0).astype(np.float32),
            "n": np.array([3], np.int64),
        }

    @staticmethod
    def cases(rng):
        """The other branch, and the loop's 0, 1 and 6 iterations."""
        return [
            {
                "x": (rng.standard_normal((2, 4)) + 1.0 - 2.0 * (k == 3)).astype(np.float32),
                "n": np.array([k], np.int64),
            }
            for k in (3, 0, 1, 6)
        ]


class CondWhileBreak(nn.Layer):
    """`while i < n:` over the RNN-like state, the states appended to a list, leaving with `break`
    once the activation spent (the sum of each step's mean |h|) exceeds a budget (a feed):
    Paddle writes the break as a bool carried by the loop, `logical_and` of the [1] condition
    and that 0-D flag, and an `if` around the rest of the body. After the loop the list is
    stacked and concatenated (pd_op.array_to_tensor) and read at -1 and -2 (slice_array_dense;
    -2 of a list of one is its first element, Paddle clamping the index at 0)."""

    inputs = [("x", [None, 4], "float32"), ("n", [1], "int64"), ("budget", [1], "float32")]

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.rec = nn.Linear(8, 8, bias_attr=False)
        self.out = nn.Linear(8, 3)

    def forward(self, x, n, budget):
        u = self.inp(x)
        h = paddle.tanh(u)
        states = [h]
        spent = paddle.zeros([1], "float32")
        i = paddle.zeros([1], "int64")
        while i < n:
            h = paddle.tanh(self.rec(h) + u)
            states.append(h)
            spent = spent + h.abs().mean()
            i += 1
            if spent > budget:
                break
        stacked = paddle.stack(states)
        joined = paddle.concat(states, axis=1)
        y = self.out(stacked.mean(0) + states[-1]) + states[-2].mean()
        return y + joined.sum(1, keepdim=True) * 0.1 + i.astype("float32")

    @staticmethod
    def example(rng):
        return {
            "x": rng.standard_normal((2, 4)).astype(np.float32),
            "n": np.array([6], np.int64),
            "budget": np.array([1.2], np.float32),
        }

    @staticmethod
    def cases(rng):
        """No iteration; n reached before the budget; a break at the first step; the budget
        spent in mid-loop at batch 1 and 3; n = 1 with the budget spent at once."""
        return [
            {
                "x": rng.standard_normal((b, 4)).astype(np.float32),
                "n": np.array([n], np.int64),
                "budget": np.array([budget], np.float32),
            }
            for b, n, budget in [
                (2, 0, 1.0),
                (2, 4, 50.0),
                (2, 6, 0.0),
                (1, 9, 2.0),
                (3, 9, 3.1),
                (2, 1, 0.0),
            ]
        ]


class CondWhileGru(nn.Layer):
    """A GRU cell stepped in `while i < n:` with its state fed back: nn.GRUCell splits its gates
    (pd_op.split, whose pieces are a list result) inside the loop body, and the body splits the
    state again, and leaves early when all of the state is near 0 or any of it near 1 (pd_op.all,
    pd_op.any). The pieces' ids once met the loop's block arguments' (-1, -2, ...), so a split in
    a loop overwrote the values the loop carries: a silent wrong result, or a dtype error."""

    inputs = [("x", [None, 4], "float32"), ("n", [1], "int64")]

    def __init__(self):
        super().__init__()
        self.init = nn.Linear(4, 6)
        self.cell = nn.GRUCell(4, 6)
        self.back = nn.Linear(6, 4)
        self.out = nn.Linear(6, 3)

    def forward(self, x, n):
        h = paddle.tanh(self.init(x))
        inp = x
        i = paddle.zeros([1], "int64")
        while i < n:
            _, h = self.cell(inp, h)
            a, b = paddle.split(h, 2, axis=1)
            inp = paddle.tanh(self.back(h)) + paddle.concat([b, a], axis=1)[:, :4]
            i += 1
            if paddle.all(paddle.abs(h) < 0.05) or paddle.any(h > 0.995):  # pd_op.all / any
                break
        return self.out(h) + i.astype("float32")

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 4)).astype(np.float32), "n": np.array([3], np.int64)}

    @staticmethod
    def cases(rng):
        """No step, one, several, at batch 1 and 3."""
        return [
            {"x": rng.standard_normal((b, 4)).astype(np.float32), "n": np.array([n], np.int64)}
            for b, n in [(2, 0), (1, 1), (3, 4), (1, 6)]
        ]


class CondWhileReshape(nn.Layer):
    """Shape ops inside control flow: `while i < n:` steps h through a linear layer whose output
    is reshaped to [B, 2, 3], transposed, flattened back and squeezed / unsqueezed, and an `if`
    after the loop reshapes its state. Paddle 3.x writes these without Fluid's XShape outputs
    (which the grads of reshape2 / transpose2 / squeeze2 / unsqueeze2 read), inside the regions
    of pd_op.while and pd_op.if: fine-tuning such a model needs them bound there too."""

    inputs = [("x", [None, 6], "float32"), ("n", [1], "int64")]

    def __init__(self):
        super().__init__()
        self.step = nn.Linear(6, 6)
        self.out = nn.Linear(6, 3)

    def forward(self, x, n):
        h = x
        i = paddle.zeros([1], "int64")
        while i < n:
            t = paddle.transpose(paddle.reshape(self.step(h), [-1, 2, 3]), [0, 2, 1])
            h = paddle.tanh(paddle.flatten(t, 1)) + paddle.squeeze(paddle.unsqueeze(h, 1), 1) * 0.5
            i += 1
        if h.mean() > 0:
            h = paddle.reshape(paddle.reshape(h, [-1, 3, 2]).transpose([0, 2, 1]), [-1, 6]) * 2.0
        else:
            h = h - 1.0
        return self.out(h)

    @staticmethod
    def example(rng):
        return {"x": rng.standard_normal((2, 6)).astype(np.float32), "n": np.array([3], np.int64)}

    @staticmethod
    def cases(rng):
        """No step, one, several, at batch 1 and 3 (both branches of the `if`)."""
        return [
            {
                "x": (rng.standard_normal((b, 6)) + s).astype(np.float32),
                "n": np.array([n], np.int64),
            }
            for b, n, s in [(2, 0, 1.0), (1, 1, -1.0), (3, 4, 0.0), (2, 2, 2.0)]
        ]


def while_swap_program():
    """paddle.static.nn.while_loop carrying (i, a, b) to (i + 1, b, a + b / 2): a loop-carried value
    yielded as another's next value (a swap), no parameters. Returns (program, feeds, fetches) and
    the feeds: x float32 [2, 3], n int64 [1] (0, 1 and 4 iterations)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, 3], "float32")
        n = paddle.static.data("n", [1], "int64")
        i = paddle.full([1], 0, "int64")
        _, a, b = paddle.static.nn.while_loop(
            lambda i, a, b: i < n, lambda i, a, b: [i + 1, b, a + b * 0.5], [i, x, x * 2.0]
        )
        y = a - b
    return main, [x, n], [y]


def while_swap_feeds(rng):
    return [
        {"x": rng.standard_normal((2, 3)).astype(np.float32), "n": np.array([k], np.int64)}
        for k in (3, 0, 1, 4)
    ]


MODELS = {
    "cond_if": CondIf,
    "cond_while": CondWhile,
    "cond_nested": CondNested,
    "cond_while_swap": None,
    "cond_while_break": CondWhileBreak,
    "cond_while_gru": CondWhileGru,
    "cond_while_reshape": CondWhileReshape,
}


def paddle_outputs(path, feed):
    """Paddle's executor on the saved files, reloaded. (Paddle 3.3.1's predictor does not finish
    cond_while: its tensor array hangs it, so the reference is the executor's, checked against the
    dygraph net.)"""
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        prog, feeds, fetches = paddle.static.load_inference_model(path, exe)
        assert sorted(feeds) == sorted(feed), (feeds, list(feed))
        return exe.run(prog, feed=feed, fetch_list=fetches)


def build_net(export, nn_models, name):
    """The model `name` with the weights its fixture has (the export's seed and draws), its
    parameters named from 0 as in a fresh process; and the feeds: the example, then the cases."""
    rng = np.random.default_rng(export.SEED + sum(map(ord, name)))
    paddle.disable_static()
    paddle.seed(export.SEED)
    with paddle.utils.unique_name.guard():
        net = MODELS[name]()
    net.eval()
    nn_models.randomize(net, rng)
    return net, [net.example(rng)] + net.cases(rng)


def save_grads(export, nn_models, name, out_dir):
    """grads.npz beside the fixture: for each feed (the example, then the cases), a random R@<i>
    of the output's shape and, for every parameter p, p@GRAD@<i>: the gradient of sum(out * R)
    by Paddle's dygraph, the reference for fine-tuning the loaded program."""
    net, feeds = build_net(export, nn_models, name)
    expected = np.load(os.path.join(out_dir, "expected.npy"))
    rng = np.random.default_rng(export.SEED + 1)
    saved = {}
    for i, feed in enumerate(feeds):
        out = net(*[paddle.to_tensor(feed[n]) for n, _, _ in net.inputs])
        if i == 0:  # the weights are the fixture's
            assert export.rel_gap(out.numpy(), expected) < 1e-5, name
        r = rng.standard_normal(out.shape).astype(np.float32)
        net.clear_gradients()
        (out * paddle.to_tensor(r)).sum().backward()
        saved["R@%d" % i] = r
        for p in net.parameters():
            g = p.grad  # None where this feed's path misses p (no loop step)
            saved["%s@GRAD@%d" % (p.name, i)] = (
                np.zeros(p.shape, "float32") if g is None else g.numpy()
            )
    np.savez(os.path.join(out_dir, "grads.npz"), **saved)


# Models whose fixtures carry grads.npz. Not cond_while_swap (no parameters), nor cond_while
# and cond_while_break, whose dygraph forwards differ from their programs (a cast of a Python
# int, the length of a list; a list of one read at -2, which only the program clamps), and
# Paddle 3.3.1's to_static backward of cond_while fails ("result and operand type is not equal"
# on its tensor array).
GRAD_MODELS = [
    "cond_if",
    "cond_nested",
    "cond_while_gru",
    "cond_while_reshape",
]


def main():
    import paddle_export as export  # after the flag: it reads FLAGS_enable_pir_api
    import paddle_nn_models as nn_models

    out_root = os.path.join(sys.argv[1], "pir")
    if sys.argv[2:3] == ["--grads"]:  # only grads.npz, beside fixtures made before
        for name in sys.argv[3:] or GRAD_MODELS:
            save_grads(export, nn_models, name, os.path.join(out_root, name))
        return
    for name in sys.argv[2:] or list(MODELS):
        ctor = MODELS[name]
        out_dir = export.fresh_dir(out_root, name)
        rng = np.random.default_rng(export.SEED + sum(map(ord, name)))
        path = os.path.join(out_dir, "inference")
        if ctor is None:  # the static-graph swap
            paddle.enable_static()
            program, feed_vars, fetch_vars = while_swap_program()
            exe = paddle.static.Executor(paddle.CPUPlace())
            paddle.static.save_inference_model(path, feed_vars, fetch_vars, exe, program=program)
            feeds = while_swap_feeds(rng)
            direct = [exe.run(program, feed=f, fetch_list=fetch_vars)[0] for f in feeds]
            save_cases(export, name, out_dir, path, feeds, direct, STATIC_SAVED_BY)
            continue
        net, feeds = build_net(export, nn_models, name)
        spec = [paddle.static.InputSpec(shape, dtype, n) for n, shape, dtype in net.inputs]
        paddle.jit.save(paddle.jit.to_static(net, input_spec=spec, full_graph=True), path)
        dygraph = [net(*[paddle.to_tensor(f[n]) for n, _, _ in net.inputs]).numpy() for f in feeds]
        paddle.enable_static()
        save_cases(export, name, out_dir, path, feeds, dygraph)
        if name in GRAD_MODELS:
            save_grads(export, nn_models, name, out_dir)


STATIC_SAVED_BY = "paddle.static.save_inference_model (PIR program: inference.json)"


def save_cases(export, name, out_dir, path, feeds, direct, saved_by=None):
    """Paddle's executor on the reloaded files for each feed, checked against `direct` (the
    dygraph net's outputs, or the static program's before saving): the first as the fixture's
    feed and expected.npy, the others in cases.npz."""
    outs = [paddle_outputs(path, f)[0] for f in feeds]
    gap = max(export.rel_gap(o, d) for o, d in zip(outs, direct))
    assert gap < 1e-5, gap
    export.record(
        name,
        "pir",
        out_dir,
        path,
        feeds[0],
        outs=[outs[0]],
        extra={
            "cases": len(feeds) - 1,
            "direct_rel_gap": gap,
            "expected_from": "Paddle's executor on the reloaded PIR program",
            **({"saved_by": saved_by} if saved_by else {}),
        },
    )
    cases = {}
    for i, (case, out) in enumerate(zip(feeds[1:], outs[1:])):
        cases.update({"%s_%d" % (k, i): v for k, v in case.items()})
        cases["out_%d" % i] = out
    np.savez(os.path.join(out_dir, "cases.npz"), **cases)


if __name__ == "__main__":
    main()
