"""Exporting a family of small models as PIR fixtures with Paddle 3.x, the way
tools/paddle_seg_models.py and tools/paddle_gen_models.py do: each model saved by paddle.jit.save
with Paddle's outputs (paddle_export.record), its dygraph gradients of sum(out0 * R) for every
parameter (grads.npz) and its outputs at the model's other `shapes` (others.npz). A family's
models have the interface of tools/paddle_family_models.py (`inputs`, `example(rng, **shape)`,
`randomize_weights(rng)`) and `shapes`."""

import argparse
import os
import sys

import numpy as np
import paddle


def paddle_grads(net, feed, rng):
    """Paddle's dygraph gradients of sum(out0 * R) w.r.t. every trainable parameter (the net in
    eval mode, as saved): {"R": R, parameter name: gradient}."""
    paddle.disable_static()
    args = [paddle.to_tensor(feed[name]) for name, _, _ in net.inputs]
    outs = net(*args)
    out = outs[0] if isinstance(outs, (list, tuple)) else outs
    r = rng.standard_normal(out.shape).astype(np.float32)
    loss = paddle.sum(out * paddle.to_tensor(r))
    for p in net.parameters():
        p.clear_gradient()
    loss.backward()
    grads = {"R": r}
    for p in net.parameters():
        if not p.stop_gradient and p.grad is not None:
            grads[p.name] = p.grad.numpy()
    paddle.enable_static()
    return grads, [o.numpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]


def export_one(ctor, name, out_root, no_onednn_predictor=()):
    """The model `ctor` as fixture `name` in out_root/name."""
    import paddle_export as pe

    pe.NO_ONEDNN_PREDICTOR.update(no_onednn_predictor)
    out_dir = pe.fresh_dir(out_root, name)
    rng = np.random.default_rng(pe.SEED + sum(map(ord, name)))
    paddle.disable_static()
    paddle.seed(pe.SEED)
    net = ctor()
    net.eval()
    net.randomize_weights(rng)
    spec = [paddle.static.InputSpec(shape, dtype, n) for n, shape, dtype in net.inputs]
    prefix = os.path.join(out_dir, "inference")
    paddle.jit.save(net, prefix, input_spec=spec)
    feed = net.example(rng)
    grads, dygraph = paddle_grads(net, feed, rng)
    np.savez(os.path.join(out_dir, "grads.npz"), **grads)
    # Paddle's outputs at the other shapes too (dygraph, the saved net): others.npz holds
    # feed<i>_<name> and out<i>_<k>.
    others = {}
    for i, kw in enumerate(getattr(ctor, "shapes", [])):
        f = net.example(np.random.default_rng(i), **kw)
        paddle.disable_static()
        with paddle.no_grad():
            outs = net(*[paddle.to_tensor(f[n]) for n, _, _ in net.inputs])
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        paddle.enable_static()
        others.update({"feed%d_%s" % (i, k): v for k, v in f.items()})
        others.update({"out%d_%d" % (i, k): o.numpy() for k, o in enumerate(outs)})
    if others:
        np.savez(os.path.join(out_dir, "others.npz"), **others)
    paddle.enable_static()
    pe.record(name, "pir", out_dir, prefix, feed)
    expected = (
        [np.load(os.path.join(out_dir, "expected.npy"))]
        if os.path.exists(os.path.join(out_dir, "expected.npy"))
        else [v for _, v in sorted(np.load(os.path.join(out_dir, "expected.npz")).items())]
    )
    gap = max(
        pe.rel_gap(e.astype(np.float64), d.astype(np.float64)) for e, d in zip(expected, dygraph)
    )
    print("  dygraph vs executor gap %.2e, %d parameter gradients" % (gap, len(grads) - 1))


def main(models, fixtures, description, no_onednn_predictor=()):
    """The command line of a family's tools file: OUT [--only NAME ...]."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("out", help="output directory (tests/fixtures/paddle/pir)")
    ap.add_argument("--only", action="append", help="export only these models")
    args = ap.parse_args()
    sys.argv = [sys.argv[0], "--pir"]  # paddle_export reads its program format from argv
    for name in args.only or fixtures:
        export_one(models[name], name, args.out, no_onednn_predictor)
