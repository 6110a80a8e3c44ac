"""The conformance kit's check of a device's compiler (TideDeviceCompiler in tide/plugin_api.h,
issue 33): a chain of float32 elementwise ops the device has kernels for runs twice on the
device, with its claims (the groups it compiles) and with TIDE_DISABLE_DEVICE_COMPILE's flag on
(the same ops one by one, through its kernels); every fetched value, the chain's end and an
intermediate, must agree. A disagreement fails naming the group (the device, its plugin file,
the block and the ops) and the variable. A device that takes no group of the chain is skipped.
"""

import numpy as np

import tide
from tide import _C, layers

from . import coverage

RULE = (
    "a group of ops the device compiles computes what the same ops compute one by one on the "
    "device (float32: rtol 1e-5, atol 1e-6)"
)
SHAPE = (4, 16)


def _chain(kernels):
    """A program whose ops are the float32 elementwise ops the device has kernels for, each on
    the last one's result; returns (program, startup, feed, [fetched variables]) or None when
    fewer than two such ops exist."""

    def has(op):
        return "float32" in kernels.get(op, ())

    steps = [
        ("elementwise_add", lambda h, y: layers.elementwise_add(h, y)),
        ("relu", lambda h, y: layers.relu(h)),
        ("scale", lambda h, y: layers.scale(h, 1.5, bias=-0.25)),
        ("elementwise_mul", lambda h, y: layers.elementwise_mul(h, y)),
        ("tanh", lambda h, y: layers.tanh(h)),
        ("elementwise_sub", lambda h, y: layers.elementwise_sub(h, y)),
        ("sigmoid", lambda h, y: layers.sigmoid(h)),
    ]
    usable = [s for s in steps if has(s[0])]
    if len(usable) < 2:
        return None
    program, startup = tide.Program(), tide.Program()
    with tide.program_guard(program, startup):
        x = layers.data(name="x", shape=list(SHAPE), dtype="float32", append_batch_size=False)
        y = layers.data(name="y", shape=list(SHAPE), dtype="float32", append_batch_size=False)
        h, fetched = x, []
        for _, make in usable:
            h = make(h, y)
            if not fetched:
                fetched.append(h)  # an intermediate, read outside the group
        fetched.append(h)
    rng = np.random.RandomState(7)
    feed = {n: rng.uniform(-1, 1, SHAPE).astype("float32") for n in ("x", "y")}
    return program, feed, fetched


def _run(place, program, feed, fetched, compile_groups):
    _C.set_flag("disable_device_compile", "false" if compile_groups else "true")
    try:
        exe = tide.Executor(place)
        out = exe.run(program.clone(), feed=feed, fetch_list=[v.name for v in fetched])
        return [np.asarray(o) for o in out], exe.last_run_info()["compiled_groups"]
    finally:
        _C.set_flag("disable_device_compile", "false")


def check(place):
    """Checks the compiler of `place`'s device; returns {contract: "compiler", rule, passed,
    message, skipped?}."""
    result = {"contract": "compiler", "rule": RULE, "passed": True, "message": ""}
    chain = _chain(coverage.device_kernels(place.kind))
    if chain is None:
        return dict(result, skipped=True, message="fewer than two elementwise ops have kernels")
    program, feed, fetched = chain
    with tide.scope_guard(tide.Scope()):
        expected, _ = _run(place, program, feed, fetched, compile_groups=False)
        got, groups = _run(place, program, feed, fetched, compile_groups=True)
    if not groups:
        return dict(result, skipped=True, message="the device took no group of the kit's chain")
    for var, want, have in zip(fetched, expected, got):
        if have.shape != want.shape or not np.allclose(have, want, rtol=1e-5, atol=1e-6):
            diff = (
                float(np.max(np.abs(have.astype("float64") - want)))
                if have.shape == want.shape
                else "shape %s, not %s" % (have.shape, want.shape)
            )
            return dict(
                result,
                passed=False,
                message="%s computes '%s' differently from its ops run one by one (max abs "
                "difference %s)" % ("; ".join(g["label"] for g in groups), var.name, diff),
            )
    return result
