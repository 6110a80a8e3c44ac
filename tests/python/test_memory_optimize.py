"""Temporaries freed after their last use, by tide.memory_optimize's delete_var ops or by the
executor itself (--free_temporaries, on by default), never change a result (every loss and
parameter bit for bit) and lower the peak; a run keeps what it fetches, also a variable
memory_optimize frees (Fluid's developer guide fetches after memory_optimize without a skip_opt_set).
Each training case runs in a subprocess so that its peak memory is its own."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tide
from tide import layers

TRAIN = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tide
    from tide import layers
    # keep_all, memory_optimize, memory_optimize_no_skip (the developer guide's flow) or executor
    model, mode = sys.argv[1], sys.argv[2]
    # Bit for bit: every mode computes the same ops (the Executor's weight-update fusion, which
    # changes rounding, is test_fuse_weight_updates.py's).
    tide.set_flags({"free_temporaries": mode == "executor", "fuse_weight_updates": False})
    optimize = mode.startswith("memory_optimize")
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 3
    with tide.program_guard(main, startup):
        if model == "mlp":
            x = layers.data(name="x", shape=[256], dtype="float32")
            h = layers.fc(x, size=512, act="relu")
            h = layers.fc(h, size=512, act="relu")
            logits = layers.fc(h, size=10)
            feed_x = lambda rng: rng.standard_normal((64, 256), dtype="float32")
        else:  # a LeNet-sized conv net
            x = layers.data(name="x", shape=[1, 28, 28], dtype="float32")
            h = layers.conv2d(x, num_filters=16, filter_size=5, act="relu")
            h = layers.pool2d(h, pool_size=2, pool_stride=2)
            h = layers.conv2d(h, num_filters=32, filter_size=5, act="relu")
            h = layers.pool2d(h, pool_size=2, pool_stride=2)
            logits = layers.fc(h, size=10)
            feed_x = lambda rng: rng.standard_normal((32, 1, 28, 28), dtype="float32")
        label = layers.data(name="label", shape=[1], dtype="int64")
        loss = layers.mean(layers.softmax_with_cross_entropy(logits, label))
        tide.optimizer.Momentum(learning_rate=0.05, momentum=0.9).minimize(loss)
    skip = [] if mode == "memory_optimize_no_skip" else [loss]
    freed = tide.memory_optimize(main, skip_opt_set=skip, skip_grads=False) if optimize else []
    if mode == "memory_optimize_no_skip":
        assert loss.name in freed, freed
    place = tide.Place("cpu", 0)
    exe = tide.Executor(place)
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(4):
        xs = feed_x(rng)
        ys = rng.integers(0, 10, (xs.shape[0], 1)).astype("int64")
        out, = exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss], scope=scope)
        losses.append(out.tobytes().hex())
    params = {p.name: np.array(scope.find_var(p.name).get_tensor()).tobytes().hex()
              for p in main.global_block().all_parameters()}
    print(json.dumps({"losses": losses, "params": params, "freed": len(freed),
                      "peak": tide.memory.stats(place)["peak_used"]}))
""")


def _train(model, mode):
    p = subprocess.run(
        [sys.executable, "-c", TRAIN, model, mode],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("model", ["mlp", "lenet"])
@pytest.mark.parametrize("mode", ["memory_optimize", "executor"])
def test_training_is_bit_identical_and_holds_less(model, mode):
    plain, optimized = _train(model, "keep_all"), _train(model, mode)
    assert optimized["losses"] == plain["losses"]
    assert optimized["params"] == plain["params"]
    assert (optimized["freed"] > 0) == (mode == "memory_optimize")
    assert optimized["peak"] < plain["peak"], (optimized["peak"], plain["peak"])


def _small_program():
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[4], dtype="float32")
        h = layers.relu(layers.scale(x, 2.0))
        out = layers.mean(layers.scale(h, 3.0))
    return main, h, out


def test_training_that_fetches_what_memory_optimize_freed_is_bit_identical():
    # Fluid's developer guide: memory_optimize(main) with no skip_opt_set, then fetch the loss (it used to be
    # an error asking for skip_opt_set).
    plain, optimized = _train("mlp", "keep_all"), _train("mlp", "memory_optimize_no_skip")
    assert optimized["losses"] == plain["losses"]
    assert optimized["params"] == plain["params"]


def test_a_run_keeps_what_it_fetches_and_frees_it_when_it_does_not():
    main, h, out = _small_program()
    freed = tide.memory_optimize(main)
    assert h.name in freed and out.name in freed
    exe = tide.Executor(tide.Place("cpu", 0))
    xs = np.arange(8, dtype="float32").reshape(2, 4) - 3
    got_h, got = exe.run(main, feed={"x": xs}, fetch_list=[h, out])
    np.testing.assert_array_equal(got_h, np.maximum(xs * 2, 0))
    np.testing.assert_allclose(got, [np.mean(np.maximum(xs * 2, 0) * 3)], rtol=1e-6)
    assert [op.type for op in main.global_block().ops].count(
        "delete_var"
    ) > 0  # the program is as it was
    (got,) = exe.run(main, feed={"x": xs}, fetch_list=[out])
    np.testing.assert_allclose(got, [np.mean(np.maximum(xs * 2, 0) * 3)], rtol=1e-6)


def test_it_runs_once_and_keeps_what_sub_blocks_read():
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        i = layers.fill_constant(shape=[1], dtype="int64", value=0)
        limit = layers.fill_constant(shape=[1], dtype="int64", value=5)
        acc = layers.fill_constant(shape=[1], dtype="float32", value=1.0)
        step = layers.fill_constant(shape=[1], dtype="float32", value=2.0)  # read inside the loop
        cond = layers.less_than(i, limit)
        loop = layers.While(cond)
        with loop.block():
            layers.assign(layers.elementwise_mul(acc, step), acc)
            layers.increment(i, in_place=True)
            layers.less_than(i, limit, cond=cond)
        out = layers.scale(acc, 1.0)
    freed = tide.memory_optimize(main, skip_opt_set=[out])
    assert tide.memory_optimize(main, skip_opt_set=[out]) == freed  # a second pass adds nothing
    deletes = [op for op in main.global_block().ops if op.type == "delete_var"]
    ops = main.global_block().ops
    while_at = next(k for k, op in enumerate(ops) if op.type == "while")
    for op in deletes:  # nothing the loop reads is freed before it runs
        if step.name in op.input("X"):
            assert ops.index(op) > while_at
    (got,) = tide.Executor(tide.Place("cpu", 0)).run(main, fetch_list=[out])
    assert float(got[0]) == 32.0
