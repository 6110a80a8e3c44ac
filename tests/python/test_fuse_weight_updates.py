"""fused_mul_weight_update and memory_optimize(fuse_weight_updates=True): a fully connected
layer's weight gradient computed straight into its SGD / momentum update. The op against a
float64 numpy reference; the rewrite trains to the parameters the unfused program reaches (float
rounding apart), leaves alone every program where something else reads the gradient, and lowers
the step's peak memory by the gradients it no longer stores."""

import contextlib
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from op_test import make

import tide
from tide import layers

TOL = {"float32": 1e-5, "float64": 1e-12}


def reference(x, dout, p, lr, x_num_col_dims, v=None, mu=0.0):
    k = int(np.prod(x.shape[x_num_col_dims:]))
    g = x.astype("float64").reshape(-1, k).T @ dout.astype("float64").reshape(-1, p.shape[1])
    if v is None:
        return {"ParamOut": p - lr * g}
    v_out = mu * v + g
    return {"ParamOut": p - lr * v_out, "VelocityOut": v_out}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("momentum", [False, True])
@pytest.mark.parametrize("x_shape,x_num_col_dims", [((6, 5), 1), ((2, 3, 5), 2), ((2, 3, 4, 5), 2)])
def test_op_against_float64_reference(dtype, momentum, x_shape, x_num_col_dims):
    rng = np.random.default_rng(0)
    k = int(np.prod(x_shape[x_num_col_dims:]))
    m = int(np.prod(x_shape[:x_num_col_dims]))
    x = rng.standard_normal(x_shape).astype(dtype)
    dout = rng.standard_normal((m, 7)).astype(dtype)
    p = rng.standard_normal((k, 7)).astype(dtype)
    lr = np.array([0.1], "float32")
    inputs = {"X": x, "OutGrad": dout, "Param": p, "LearningRate": lr}
    attrs = {"x_num_col_dims": x_num_col_dims}
    v = None
    if momentum:
        v = rng.standard_normal((k, 7)).astype(dtype)
        inputs["Velocity"] = v
        attrs["mu"] = 0.9
    want = reference(x, dout, p, float(lr[0]), x_num_col_dims, v, float(np.float32(0.9)))
    outputs = {name: value.astype(dtype) for name, value in want.items()}
    make("fused_mul_weight_update", inputs, outputs, attrs).check_output(
        atol=TOL[dtype], rtol=TOL[dtype]
    )


def test_op_refuses_a_param_that_does_not_fit_x():
    rng = np.random.default_rng(1)
    t = make(
        "fused_mul_weight_update",
        {
            "X": rng.random((4, 6), dtype="float32"),
            "OutGrad": rng.random((4, 3), dtype="float32"),
            "Param": rng.random((5, 3), dtype="float32"),
            "LearningRate": np.array([0.1], "float32"),
        },
        {"ParamOut": np.zeros((5, 3), "float32")},
    )
    with pytest.raises(Exception, match=r"fused_mul_weight_update.*Param.*\[5, 3\].*6 columns"):
        t.check_output()


def mlp(optimizer, hidden=(64, 32), shared=False, **opt_args):
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 5
    with tide.program_guard(main, startup), tide.unique_name.guard():
        x = layers.data(name="x", shape=[20], dtype="float32")
        h = x
        for i, size in enumerate(hidden):
            h = layers.fc(h, size=size, act="relu", param_attr="w%d" % i)
        if shared:  # a weight two layers use: its gradient is a sum of two
            h = layers.fc(h, size=hidden[-1], act="relu", param_attr="w%d" % (len(hidden) - 1))
        logits = layers.fc(h, size=4, param_attr="w_out")
        label = layers.data(name="label", shape=[1], dtype="int64")
        loss = layers.mean(layers.softmax_with_cross_entropy(logits, label))
        optimizer(**opt_args).minimize(loss)
    return main, startup, loss


@contextlib.contextmanager
def flags(**values):
    before = {name: tide.get_flag(name) for name in values}
    tide.set_flags(values)
    try:
        yield
    finally:
        tide.set_flags(before)


def train(main, startup, loss, steps=6, fetch=(), executor_fuses=False, info=None):
    """Losses and weights after `steps` steps; the Executor's own fusion off unless
    `executor_fuses`; `info` (a list) gets the last run's kernels and the fetched `fetch`."""
    rng = np.random.default_rng(2)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    losses = []
    with flags(fuse_weight_updates=executor_fuses):
        for _ in range(steps):
            feed = {
                "x": rng.standard_normal((16, 20), dtype="float32"),
                "label": rng.integers(0, 4, (16, 1)).astype("int64"),
            }
            out = exe.run(main, feed=feed, fetch_list=[loss, *fetch], scope=scope)
            losses.append(float(out[0][0]))
    if info is not None:
        info.extend([[k for k, _ in exe.last_run_info()["kernels"]], out[1:]])
    params = {
        v.name: np.array(scope.find_var(v.name).get_tensor())
        for v in main.global_block().vars.values()
        if v.persistable and scope.find_var(v.name) is not None and v.name.startswith("w")
    }
    return losses, params


def op_types(program):
    return [op.type for op in program.global_block().ops]


OPTIMIZERS = {
    "sgd": (tide.optimizer.SGD, {"learning_rate": 0.1}),
    "momentum": (tide.optimizer.Momentum, {"learning_rate": 0.1, "momentum": 0.9}),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_fused_training_reaches_the_same_parameters(name):
    opt, args = OPTIMIZERS[name]
    plain = train(*mlp(opt, **args))
    main, startup, loss = mlp(opt, **args)
    tide.memory_optimize(main, skip_opt_set=[loss], skip_grads=False, fuse_weight_updates=True)
    types = op_types(main)
    assert types.count("fused_mul_weight_update") == 3  # w0, w1, w_out; the biases stay
    assert types.count(name) == 3
    assert types.count("mul_grad") == 2  # the first layer's had only the weight's to compute
    assert not any(v.endswith("@GRAD") and v.startswith("w") for v in main.global_block().vars)
    losses, params = train(main, startup, loss)
    np.testing.assert_allclose(losses, plain[0], rtol=1e-5)
    for w, value in plain[1].items():
        np.testing.assert_allclose(params[w], value, rtol=1e-5, atol=1e-6, err_msg=w)


def test_fuse_weight_updates_returns_what_it_fused():
    main, _, _ = mlp(*OPTIMIZERS["momentum"][:1], **OPTIMIZERS["momentum"][1])
    assert sorted(tide.transpiler.fuse_weight_updates(main)) == ["w0", "w1", "w_out"]
    assert tide.transpiler.fuse_weight_updates(main) == []  # nothing left to fuse


@pytest.mark.parametrize(
    "case",
    ["nesterov", "adam", "l2_decay", "global_norm_clip", "skip_opt_set", "shared_weight"],
)
def test_programs_that_need_the_gradient_are_left_alone(case):
    momentum = OPTIMIZERS["momentum"]
    if case == "nesterov":
        built = mlp(momentum[0], use_nesterov=True, **momentum[1])
    elif case == "adam":
        built = mlp(tide.optimizer.Adam, learning_rate=0.01)
    elif case == "l2_decay":
        built = mlp(momentum[0], regularization=tide.regularizer.L2Decay(1e-3), **momentum[1])
    elif case == "global_norm_clip":
        built = mlp(momentum[0], grad_clip=tide.clip.GradientClipByGlobalNorm(1.0), **momentum[1])
    else:
        shared = case == "shared_weight"
        built = mlp(momentum[0], hidden=(32, 32), shared=shared, **momentum[1])
    main, startup, loss = built
    skip = ["w0@GRAD", "w1@GRAD", "w_out@GRAD"] if case == "skip_opt_set" else []
    before = op_types(main)
    fused = tide.transpiler.fuse_weight_updates(main, skip_opt_set=skip)
    if case == "shared_weight":  # the shared weight's gradient is a sum: only the others fuse
        assert sorted(fused) == ["w0", "w_out"]
    else:
        assert fused == [] and op_types(main) == before


PEAK = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tide
    from tide import layers
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[512], dtype="float32")
        h = layers.fc(layers.fc(x, size=1024, act="relu"), size=1024, act="relu")
        loss = layers.mean(layers.fc(h, size=1))
        tide.optimizer.Momentum(learning_rate=0.01, momentum=0.9).minimize(loss)
    tide.set_flags({"fuse_weight_updates": sys.argv[1] == "executor"})
    tide.memory_optimize(main, skip_opt_set=[loss], skip_grads=False,
                         fuse_weight_updates=sys.argv[1] == "fused")
    place = tide.Place("cpu", 0)
    exe, scope = tide.Executor(place), tide.Scope()
    exe.run(startup, scope=scope)
    for _ in range(2):
        exe.run(main, feed={"x": np.ones((8, 512), "float32")}, fetch_list=[loss], scope=scope)
    print(json.dumps(tide.memory.stats(place)["peak_used"]))
""")


def peak(mode):
    out = subprocess.run(
        [sys.executable, "-c", PEAK, mode], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_fusion_lowers_the_peak_by_the_gradients_it_no_longer_stores():
    # The weights: 512x1024 and 1024x1024 floats (6 MiB); held with their velocities (12 MiB).
    # Unfused, the step's peak also holds at least the largest gradient (4 MiB); fused, none.
    plain, fused = peak("plain"), peak("fused")
    assert fused <= plain - 1024 * 1024 * 4 * 0.9, (plain, fused)
    assert peak("executor") <= plain - 1024 * 1024 * 4 * 0.9  # the Executor's own fusion


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_the_executor_fuses_what_it_would_let_go_of(name):
    opt, args = OPTIMIZERS[name]
    main, startup, loss = mlp(opt, **args)
    before = op_types(main)
    plain_info, fused_info = [], []
    plain = train(main, startup, loss, info=plain_info)
    fused = train(main, startup, loss, executor_fuses=True, info=fused_info)
    assert op_types(main) == before  # the user's program is not rewritten; a copy runs
    assert plain_info[0].count("fused_mul_weight_update") == 0
    assert fused_info[0].count("fused_mul_weight_update") == 3  # w0, w1, w_out
    assert fused_info[0].count(name) == 3  # the biases' updates stay
    np.testing.assert_allclose(fused[0], plain[0], rtol=1e-5)
    for w, value in plain[1].items():
        np.testing.assert_allclose(fused[1][w], value, rtol=1e-5, atol=1e-6, err_msg=w)


def test_the_executor_keeps_a_fetched_gradient():
    main, startup, loss = mlp(*OPTIMIZERS["momentum"][:1], **OPTIMIZERS["momentum"][1])
    plain_info, fused_info = [], []
    plain = train(main, startup, loss, fetch=["w1@GRAD"], info=plain_info)
    fused = train(main, startup, loss, fetch=["w1@GRAD"], executor_fuses=True, info=fused_info)
    assert fused_info[0].count("fused_mul_weight_update") == 2  # w0 and w_out only
    np.testing.assert_allclose(fused_info[1][0], plain_info[1][0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(fused[0], plain[0], rtol=1e-5)


def test_the_executor_stores_every_gradient_when_temporaries_are_kept():
    # --free_temporaries off: a user inspects the scope's temporaries after a run, gradients too.
    main, startup, loss = mlp(*OPTIMIZERS["sgd"][:1], **OPTIMIZERS["sgd"][1])
    info = []
    with flags(free_temporaries=False):
        train(main, startup, loss, steps=1, executor_fuses=True, info=info)
    assert "fused_mul_weight_update" not in info[0]


def test_a_gradient_a_sub_block_reads_is_not_fused():
    main, _, _ = mlp(*OPTIMIZERS["sgd"][:1], **OPTIMIZERS["sgd"][1])
    sub = main._create_block()  # a control-flow op's block (gradient merging, say) reads w1@GRAD
    sub.append_op(
        "scale", inputs={"X": ["w1@GRAD"]}, outputs={"Out": ["w1@GRAD"]}, attrs={"scale": 0.5}
    )
    main._rollback()
    assert sorted(tide.transpiler.fuse_weight_updates(main)) == ["w0", "w_out"]


def test_flags_set_between_runs_prepare_the_program_again():
    # A cached prepared program keeps the flags it was prepared under; set_flags between runs
    # must reach the next run, not be ignored (and a set that changes nothing, or a flag no
    # preparation reads, must not throw the prepared program and its kernels' state away).
    main, startup, loss = mlp(*OPTIMIZERS["sgd"][:1], **OPTIMIZERS["sgd"][1])
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(3)
    feed = {
        "x": rng.standard_normal((16, 20), dtype="float32"),
        "label": rng.integers(0, 4, (16, 1)).astype("int64"),
    }

    def run():
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
        return [k for k, _ in exe.last_run_info()["kernels"]], exe._last_prepared

    with flags(fuse_weight_updates=True):
        kernels, prepared = run()
        assert kernels.count("fused_mul_weight_update") == 3
        tide.set_flags({"fuse_weight_updates": True})  # no change
        with flags(check_nan_inf=True):  # read by each run, not by preparing
            assert run()[1] is prepared
        tide.set_flags({"fuse_weight_updates": False})
        kernels, _ = run()
        assert "fused_mul_weight_update" not in kernels and kernels.count("mul_grad") == 3
        tide.set_flags({"fuse_weight_updates": True})
        assert run()[0].count("fused_mul_weight_update") == 3
