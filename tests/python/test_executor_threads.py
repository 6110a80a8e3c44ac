"""One Executor used from several Python threads: its runs are serialised (a lock around prepare
and run), so each thread's results are what the same runs give one after another; Executors of
their own (each with its own Scope) run side by side."""

import threading

import numpy as np

import tide
from tide import layers

RUNS = 30
ROUNDS = 5


def _training_program():
    x = layers.data(name="x", shape=[4], dtype="float32")
    y = layers.data(name="y", shape=[1], dtype="float32")
    pred = layers.fc(input=x, size=1, param_attr="w", bias_attr="b")
    loss = layers.mean(layers.square_error_cost(input=pred, label=y))
    tide.optimizer.SGD(0.05).minimize(loss)
    return loss


def _batches(seed):
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(RUNS):
        xs = rng.rand(8, 4).astype("float32")
        out.append({"x": xs, "y": xs.sum(axis=1, keepdims=True).astype("float32")})
    return out


def _train(exe, main, scope, batches, loss, losses, errors=None, start=None):
    try:
        if start is not None:
            start.wait()
        for feed in batches:
            (value,) = exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
            losses.append(float(value.reshape(-1)[0]))
    except BaseException as e:  # noqa: BLE001  reported by the main thread
        if errors is None:
            raise
        errors.append(e)


def _started_scope(exe, startup):
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    return scope


def _run_in_threads(make_exe, fresh_programs):
    main, startup = fresh_programs
    loss = _training_program()
    shared = make_exe()
    # The first LoDTensor made (in C++) and a first run, here rather than in two threads at once.
    tide.LoDTensor(np.zeros((1,), "float32"))
    seeds = (1, 2)
    expected = []
    for seed in seeds:
        losses = []
        _train(shared, main, _started_scope(shared, startup), _batches(seed), loss, losses)
        expected.append(losses)

    # A few rounds: one lets the two threads overlap too little to show a race.
    for _ in range(ROUNDS):
        exes = [make_exe() for _ in seeds]
        scopes = [_started_scope(e, startup) for e in exes]
        got, errors = [[] for _ in seeds], []
        start = threading.Barrier(len(seeds))
        threads = [
            threading.Thread(
                target=_train,
                args=(exes[i], main, scopes[i], _batches(seed), loss, got[i], errors, start),
                daemon=True,  # a hung run does not keep pytest from exiting
            )
            for i, seed in enumerate(seeds)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads), "a run hung"
        assert errors == []
        for g, e in zip(got, expected):
            assert len(g) == RUNS
            np.testing.assert_array_equal(g, e)


def test_two_threads_on_one_executor_give_the_sequential_losses(fresh_programs):
    exe = tide.Executor(tide.CPUPlace())
    _run_in_threads(lambda: exe, fresh_programs)


def test_an_executor_per_thread_runs_side_by_side(fresh_programs):
    _run_in_threads(lambda: tide.Executor(tide.CPUPlace()), fresh_programs)


def test_the_docstring_says_so():
    doc = tide.Executor.__doc__
    assert "serialised" in doc and "an Executor of its own and a Scope of its own" in doc
