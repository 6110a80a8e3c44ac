"""Fluid 1.5+'s input pipeline (issue 37, item 4): tide.io.DataLoader.from_generator, PyReader and
layers.py_reader. A background thread fills a bounded queue with batches already copied into
LoDTensors; iterable loaders are for-loops, non-iterable ones are read by the program on every
run until EOFException; a generator's error reaches the training loop; no batch is lost or seen
twice; and no thread outlives a pass, even one left early."""

import threading

import numpy as np
import pytest

import tide
from tide import layers


def _loader_threads():
    return [t for t in threading.enumerate() if t.name.startswith("data_loader")]


def _finishes(fn, timeout=60):
    """Runs fn in a thread; its result, or a failure if it hangs (a test must never block)."""
    box = {}

    def run():
        try:
            box["result"] = fn()
        except BaseException as e:  # re-raised below, in the test's thread
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "did not finish within %s s (a hang)" % timeout
    if "error" in box:
        raise box["error"]
    return box.get("result")


@pytest.fixture(autouse=True)
def no_thread_left_behind():
    yield
    assert _loader_threads() == []


def _net():
    x = layers.data(name="x", shape=[3])
    y = layers.data(name="y", shape=[1], dtype="int64")
    out = layers.scale(x, 2.0)
    return x, y, out


def _numbered_batches(n, rows=2):
    """Batch i: x filled with i, y = i; the same buffers every time (the loader must copy)."""

    def gen():
        x = np.zeros((rows, 3), "float32")
        y = np.zeros((rows, 1), "int64")
        for i in range(n):
            x[:] = i
            y[:] = i
            yield [x, y]

    return gen


def test_iterable_loader_gives_every_batch_once_in_order(exe):
    x, y, out = _net()
    loader = tide.io.DataLoader.from_generator(feed_list=[x, y], capacity=2)
    loader.set_batch_generator(_numbered_batches(25), places=tide.CPUPlace())
    for _ in range(2):  # each pass runs the generator again
        seen = []
        for data in loader():
            assert isinstance(data, list) and len(data) == 1 and set(data[0]) == {"x", "y"}
            got_out, got_y = exe.run(feed=data, fetch_list=[out, y])
            np.testing.assert_array_equal(got_out, np.full((2, 3), 2.0 * got_y[0, 0]))
            seen.append(int(got_y[0, 0]))
        assert seen == list(range(25))  # capacity 2: the queue wraps many times, nothing lost
    assert _loader_threads() == []


def test_sample_generators_batch_and_build_lod(exe):
    words = layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
    label = layers.data(name="label", shape=[1], dtype="int64")
    total = layers.reduce_sum(layers.sequence_pool(layers.cast(words, "float32"), "sum"))

    def samples():
        for i in range(7):  # sample i: the sequence [i, i, ...] of length i + 1, label i
            yield [i] * (i + 1), [i]

    loader = tide.io.DataLoader.from_generator(feed_list=[words, label], capacity=3)
    loader.set_sample_generator(samples, batch_size=3, places=[tide.CPUPlace()])  # drop_last
    batches = [d[0] for d in loader()]
    assert len(batches) == 2
    assert batches[1]["words"].recursive_sequence_lengths() == [[4, 5, 6]]
    got = [float(exe.run(feed=b, fetch_list=[total])[0][0]) for b in batches]
    assert got == [0 * 1 + 1 * 2 + 2 * 3, 3 * 4 + 4 * 5 + 5 * 6]
    loader.set_sample_generator(samples, batch_size=3, drop_last=False)
    assert [len(np.array(d[0]["label"])) for d in loader()] == [3, 3, 1]
    # A list of samples per batch (paddle.batch's output).
    loader.set_sample_list_generator(tide.batch(samples, 4))
    assert [np.array(d[0]["label"])[:, 0].tolist() for d in loader()] == [[0, 1, 2, 3], [4, 5, 6]]


def test_non_iterable_loader_is_read_by_the_program(exe):
    x, y, out = _net()
    loader = tide.io.DataLoader.from_generator(feed_list=[x, y], capacity=4, iterable=False)
    loader.set_batch_generator(_numbered_batches(5))
    with pytest.raises(tide.PreconditionError, match="not started.*start\\(\\)"):
        exe.run(fetch_list=[out])
    test_program = tide.default_main_program().clone(for_test=True)
    for _ in range(2):
        loader.start()
        with pytest.raises(tide.PreconditionError, match="twice"):
            loader.start()
        seen = []
        try:
            while True:
                seen.append(int(exe.run(fetch_list=[y])[0][0, 0]))
                if len(seen) == 2:  # a clone (the test program) reads from it too
                    seen.append(int(exe.run(test_program, fetch_list=[y])[0][0, 0]))
        except tide.core.EOFException:
            loader.reset()
        assert seen == [0, 1, 2, 3, 4]
    assert issubclass(tide.core.EOFException, tide.core.OutOfRangeError)
    with pytest.raises(tide.PreconditionError, match="non-iterable"):
        iter(loader)


def test_a_generator_error_reaches_the_training_loop(exe):
    x, y, out = _net()

    def failing():
        yield [np.zeros((2, 3), "float32"), np.zeros((2, 1), "int64")]
        raise KeyError("bad sample 17")

    loader = tide.io.DataLoader.from_generator(feed_list=[x, y], capacity=2)
    loader.set_batch_generator(failing)

    def iterate():
        steps = 0
        for data in loader():
            exe.run(feed=data, fetch_list=[out])
            steps += 1
        return steps

    with pytest.raises(KeyError, match="bad sample 17"):
        _finishes(iterate)
    reader = tide.io.DataLoader.from_generator(feed_list=[x, y], capacity=2, iterable=False)
    reader.set_batch_generator(failing)
    reader.start()
    exe.run(fetch_list=[out])
    with pytest.raises(KeyError, match="bad sample 17"):
        _finishes(lambda: exe.run(fetch_list=[out]))
    with pytest.raises(tide.core.EOFException):  # the pass is over
        exe.run(fetch_list=[out])
    reader.reset()
    # A batch that does not fit the feed list is an error too, not a hang.
    bad = tide.io.DataLoader.from_generator(feed_list=[x, y], capacity=2)
    bad.set_batch_generator(lambda: iter([[np.zeros((2, 3), "float32")]]))
    with pytest.raises(ValueError, match="must hold 2 values"):
        _finishes(lambda: list(bad()))


def test_leaving_a_pass_early_leaves_no_thread(exe):
    x, y, out = _net()
    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield [np.full((1, 3), i, "float32"), np.full((1, 1), i, "int64")]
            i += 1

    before = set(threading.enumerate())
    loader = tide.io.DataLoader.from_generator(feed_list=[x, y], capacity=3)
    loader.set_batch_generator(endless)
    for k, _data in enumerate(loader()):
        if k == 4:
            break
    assert set(threading.enumerate()) == before
    count = len(produced)
    assert count <= 5 + 3 + 2  # read, queued, in hand: the thread stopped filling
    # A non-iterable pass reset in the middle, its thread blocked on a full queue.
    reader = tide.io.DataLoader.from_generator(feed_list=[x, y], capacity=2, iterable=False)
    reader.set_batch_generator(endless)
    reader.start()
    exe.run(fetch_list=[out])
    _finishes(reader.reset, timeout=60)  # a hang, not a slow machine
    assert set(threading.enumerate()) == before
    # An iterator dropped before its first batch starts nothing.
    it = iter(loader())
    del it
    assert set(threading.enumerate()) == before


def test_training_from_a_loader_matches_feeding(exe):
    x = layers.data(name="x", shape=[4])
    y = layers.data(name="y", shape=[1])
    loss = layers.mean(layers.square_error_cost(layers.fc(x, 1), y))
    tide.optimizer.SGD(0.1).minimize(loss)
    rng = np.random.RandomState(3)
    batches = [
        (rng.rand(8, 4).astype("float32"), rng.rand(8, 1).astype("float32")) for _ in range(6)
    ]
    losses = {}
    for mode in ("feed", "iterable", "non_iterable"):  # the last one stays attached to main
        scope = tide.Scope()
        with tide.scope_guard(scope):
            exe.run(tide.default_startup_program())
            if mode == "feed":
                losses[mode] = [
                    exe.run(feed={"x": a, "y": b}, fetch_list=[loss])[0] for a, b in batches
                ]
            elif mode == "iterable":
                loader = tide.io.PyReader(feed_list=[x, y], capacity=2)
                loader.decorate_batch_generator(lambda: iter(batches))
                losses[mode] = [exe.run(feed=d, fetch_list=[loss])[0] for d in loader()]
            else:
                reader = tide.io.DataLoader.from_generator(
                    feed_list=[x, y], capacity=2, iterable=False
                )
                reader.set_batch_generator(lambda: iter(batches))
                reader.start()
                losses[mode] = []
                try:
                    while True:
                        losses[mode].append(exe.run(fetch_list=[loss])[0])
                except tide.core.EOFException:
                    reader.reset()
    assert len(losses["feed"]) == 6
    np.testing.assert_array_equal(losses["iterable"], losses["feed"])
    np.testing.assert_array_equal(losses["non_iterable"], losses["feed"])


def test_py_reader_and_read_file(exe):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        reader = layers.py_reader(
            capacity=4, shapes=[[-1, 3], [-1, 1]], dtypes=["float32", "int64"], lod_levels=[0, 0]
        )
        img, label = layers.read_file(reader)
        assert img.shape == (-1, 3) and label.dtype == "int64"
        doubled = layers.scale(img, 2.0)

    def samples():
        for i in range(5):
            yield np.full([3], i, "float32"), [i]

    reader.decorate_paddle_reader(tide.batch(samples, 2))
    seen = []
    reader.start()
    try:
        while True:
            d, lab = exe.run(main, fetch_list=[doubled, label])
            np.testing.assert_array_equal(d[:, 0], 2.0 * lab[:, 0])
            seen.extend(lab[:, 0].tolist())
    except tide.core.EOFException:
        reader.reset()
    assert seen == [0, 1, 2, 3, 4]
    # decorate_tensor_provider: whole batches; create_py_reader_by_data: existing data layers.
    reader.decorate_tensor_provider(
        lambda: iter([[np.ones((2, 3), "float32"), np.zeros((2, 1), "int64")]])
    )
    reader.start()
    assert exe.run(main, fetch_list=[doubled])[0].tolist() == [[2.0] * 3] * 2
    reader.reset()
    with tide.program_guard(tide.Program(), tide.Program()):
        x = layers.data(name="x", shape=[2])
        by_data = layers.create_py_reader_by_data(capacity=2, feed_list=[x])
        assert layers.read_file(by_data) is x


def test_executor_takes_one_feed_dict_per_place(exe):
    x, y, out = _net()
    xs = np.ones((2, 3), "float32")
    (got,) = exe.run(feed=[{"x": xs}], fetch_list=[out])
    np.testing.assert_array_equal(got, 2 * xs)
    with pytest.raises(ValueError, match="one per place"):
        exe.run(feed=[{"x": xs}, {"x": xs}], fetch_list=[out])
    with pytest.raises(ValueError, match="capacity"):
        tide.io.DataLoader.from_generator(feed_list=[x], capacity=0)
    with pytest.raises(TypeError, match="feed_list"):
        tide.io.DataLoader.from_generator(feed_list=["x"], capacity=2)
