"""An Executor's prepared programs live as long as the programs: a server that loads a model
again and again (hot reload) with one long-lived Executor, or builds a program per request,
does not keep every program it ever ran (each one's prepared ops, fused copy and kernels)."""

import gc
import weakref

import numpy as np

import tide
from tide import layers


def _save_model(path):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[3, 8, 8])
        y = layers.conv2d(x, num_filters=4, filter_size=3, act="relu")  # fused_conv2d at run
        y = layers.fc(y, size=5, act="relu")  # fc at run
        y = layers.fc(y, size=2)
    exe = tide.Executor(tide.CPUPlace())
    scope = tide.Scope()
    exe.run(startup, scope=scope)
    tide.io.save_inference_model(str(path), ["x"], [y], exe, main_program=main, scope=scope)


def test_a_reloaded_model_is_dropped_once_the_program_is(tmp_path):
    _save_model(tmp_path / "m")
    exe = tide.Executor(tide.CPUPlace())
    xs = np.random.RandomState(0).rand(2, 3, 8, 8).astype("float32")
    dead, first = [], None
    for cached in (True, False):
        for _ in range(3):
            scope = tide.Scope()
            program, feeds, fetches = tide.io.load_inference_model(
                str(tmp_path / "m"), exe, scope=scope
            )
            (out,) = exe.run(
                program,
                feed={feeds[0]: xs},
                fetch_list=fetches,
                scope=scope,
                use_program_cache=cached,
            )
            first = out if first is None else first
            np.testing.assert_array_equal(out, first)
            dead.append(weakref.ref(program))
            del program, fetches
    gc.collect()
    alive = [r for r in dead if r() is not None]
    assert not alive, "the Executor keeps %d of the %d programs it ran" % (len(alive), len(dead))


def test_the_cache_still_serves_a_live_program_and_sees_its_edits(exe):
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[4])
        y = layers.scale(x, scale=2.0)
    xs = np.ones((2, 4), "float32")
    (a,) = exe.run(main, feed={"x": xs}, fetch_list=[y])
    (b,) = exe.run(main, feed={"x": xs}, fetch_list=[y])
    np.testing.assert_array_equal(a, b)
    with tide.program_guard(main, startup):
        z = layers.scale(y, scale=3.0)  # the program changes: prepared again
    (c,) = exe.run(main, feed={"x": xs}, fetch_list=[z])
    np.testing.assert_array_equal(c, xs * 6)
    # another program created after the first is gone never reads its prepared copy
    del main, y, z
    gc.collect()
    for scale in (5.0, 7.0):
        main2, startup2 = tide.Program(), tide.Program()
        with tide.program_guard(main2, startup2):
            x2 = layers.data(name="x", shape=[4])
            y2 = layers.scale(x2, scale=scale)
        (d,) = exe.run(main2, feed={"x": xs}, fetch_list=[y2])
        np.testing.assert_array_equal(d, xs * scale)
        del main2, startup2, x2, y2
        gc.collect()
