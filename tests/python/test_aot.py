"""tide.aot (issue 34, docs/aot.md): a program frozen into a plan and run by tide.aot.FrozenModel
gives outputs bit-identical (np.array_equal) to the executor's on the same kernels, at two batch
sizes inside the declared range: fit_a_line, the digits conv net, the LSTM sentiment model (LoD
feeds, the fused lstm op) and a ResNet from a Paddle model fixture. A feed outside the range, a
missing plugin, control flow, and a corrupted, truncated or wrong-version file are refused with
errors naming what is wrong."""

import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from ctest_env import plugin_file
from test_fluid_model_ops import recognize_digits_conv_prediction
from test_paddle_models import model_path

import tide
from tide import layers

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import understand_sentiment  # noqa: E402

PLACE = tide.CPUPlace()


def freeze_and_load(tmp_path, program, feeds, fetches, shapes, name="model"):
    path = str(tmp_path / (name + ".tideaot"))
    assert tide.aot.freeze(program, feeds, fetches, PLACE, shapes, path) == path
    return tide.aot.FrozenModel(path, PLACE), path


def assert_bit_identical(exe, program, model, feed, fetches):
    want = exe.run(program, feed=feed, fetch_list=fetches)
    got = model.run(feed)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.shape, w.shape)
        assert np.array_equal(g, w), np.abs(g - w).max()


def fit_a_line():
    x = layers.data(name="x", shape=[13], dtype="float32")
    return layers.fc(input=x, size=1, act=None)


def test_fit_a_line_frozen_is_bit_identical(tmp_path):
    y = fit_a_line()
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    main = tide.default_main_program()
    model, _ = freeze_and_load(tmp_path, main, ["x"], [y], {"x": [(1, 16), 13]})
    assert model.feed_names == ["x"] and model.fetch_names == [y.name]
    assert model.batch_range == (1, 16)
    rng = np.random.RandomState(0)
    for batch in (3, 16):
        xs = rng.standard_normal((batch, 13)).astype("float32")
        assert_bit_identical(exe, main, model, {"x": xs}, [y])


def test_digits_conv_frozen_is_bit_identical_and_reuses_memory(tmp_path):
    prediction = recognize_digits_conv_prediction()
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    test = tide.default_main_program().clone(for_test=True)
    model, _ = freeze_and_load(tmp_path, test, ["img"], [prediction], {"img": [(1, 8), 1, 28, 28]})
    rng = np.random.RandomState(1)
    for batch in (8, 2, 5):
        imgs = rng.uniform(-1, 1, (batch, 1, 28, 28)).astype("float32")
        assert_bit_identical(exe, test, model, {"img": imgs}, [prediction])
    # The first conv's output alone is 8 x 20 x 24 x 24 floats; with every temporary apart the
    # arena would hold each activation of the net: reuse keeps it well under their sum.
    conv1 = 8 * 20 * 24 * 24 * 4
    assert conv1 <= model.arena_bytes < 2.5 * conv1, model.arena_bytes


def test_lstm_sentiment_with_lod_feeds_frozen_is_bit_identical(tmp_path):
    words = layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
    prediction = understand_sentiment.lstm_net(words)
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    test = tide.default_main_program().clone(for_test=True)
    ops = [op.type for op in test.global_block().ops]
    assert "lstm" in ops, ops  # the fused op: no sub-block, so the plan holds all of it
    model, _ = freeze_and_load(tmp_path, test, ["words"], [prediction], {"words": [(1, 64), 1]})
    for seed, n in ((0, 3), (1, 5)):
        seqs, _ = understand_sentiment.make_data(n, seed, min_len=4, max_len=12)
        feed = {"words": understand_sentiment.to_lod_tensor(seqs)}
        assert_bit_identical(exe, test, model, feed, [prediction])


def test_resnet_from_a_paddle_model_frozen_is_bit_identical(tmp_path):
    exe = tide.Executor(PLACE)
    program, feeds, fetches = tide.io.load_inference_model(model_path("resnet18"), exe)
    assert feeds == ["x"]
    model, _ = freeze_and_load(tmp_path, program, feeds, fetches, {"x": [(1, 4), 3, 32, 32]})
    rng = np.random.RandomState(2)
    for batch in (2, 3):
        xs = rng.standard_normal((batch, 3, 32, 32)).astype("float32")
        assert_bit_identical(exe, program, model, {"x": xs}, fetches)

    # Its in-place residual fused_conv2d and the pool2d that first wrote their variable give it
    # the same dims at every probe: nothing infers shapes at run time.
    assert model.num_ops_inferring_shapes == 0


def two_writers(second_dims_differ):
    """A program in which two ops write one variable `v`, with a reader between them: v = 2x,
    y = relu(v), then v = v + x in place (the same dims) or v = concat(x, x) (twice as wide)."""
    x = layers.data(name="x", shape=[4], dtype="float32")
    block = tide.default_main_program().global_block()
    v = block.create_var(name="v", dtype="float32")
    block.append_op(
        "scale", inputs={"X": [x.name]}, outputs={"Out": [v.name]}, attrs={"scale": 2.0}
    )
    y = layers.relu(v)
    if second_dims_differ:
        block.append_op(
            "concat", inputs={"X": [x.name, x.name]}, outputs={"Out": [v.name]}, attrs={"axis": 1}
        )
    else:
        block.append_op(
            "elementwise_add", inputs={"X": [v.name], "Y": [x.name]}, outputs={"Out": [v.name]}
        )
    return [y, v]


@pytest.mark.parametrize("second_dims_differ", [False, True])
def test_a_variable_two_ops_write_infers_shapes_only_where_their_dims_differ(
    tmp_path, second_dims_differ
):
    # Two writers that give the variable the same dims at every probe run as any other step;
    # where the second one's differ ([b, 8] after [b, 4]), both infer their shapes at run time,
    # and the reader between them still sees the first one's dims.
    fetches = two_writers(second_dims_differ)
    exe = tide.Executor(PLACE)
    main = tide.default_main_program()
    model, _ = freeze_and_load(tmp_path, main, ["x"], fetches, {"x": [(1, 6), 4]})
    assert model.num_ops_inferring_shapes == (2 if second_dims_differ else 0)
    rng = np.random.RandomState(5)
    for batch in (6, 2, 5):
        xs = rng.standard_normal((batch, 4)).astype("float32")
        assert_bit_identical(exe, main, model, {"x": xs}, fetches)
    (_, v) = model.run({"x": rng.standard_normal((3, 4)).astype("float32")})
    assert v.shape == ((3, 8) if second_dims_differ else (3, 4))


# --- refusals ------------------------------------------------------------------------------


@pytest.fixture
def frozen_line(tmp_path):
    y = fit_a_line()
    tide.Executor(PLACE).run(tide.default_startup_program())
    return freeze_and_load(tmp_path, tide.default_main_program(), ["x"], [y], {"x": [(2, 4), 13]})


def test_a_feed_outside_the_range_names_the_feed_dimension_and_range(frozen_line):
    model, _ = frozen_line
    for batch in (1, 5):
        with pytest.raises(
            tide.TideError,
            match=r"feed 'x' dimension 0 is %d, outside the range \[2, 4\]" % batch,
        ):
            model.run({"x": np.zeros((batch, 13), "float32")})
    with pytest.raises(tide.TideError, match=r"feed 'x' dimension 1 is 12; .* frozen for 13"):
        model.run({"x": np.zeros((3, 12), "float32")})
    with pytest.raises(tide.TideError, match="feed 'x' is float64; .* frozen for float32"):
        model.run({"x": np.zeros((3, 13), "float64")})
    model.run({"x": np.zeros((3, 13), "float32")})  # and inside it, it still runs
    seqs = tide.LoDTensor(np.zeros((3, 13), "float32"))
    seqs.set_recursive_sequence_lengths([[1, 2]])
    with pytest.raises(tide.TideError, match="feed 'x' has 1 LoD level.*a dense input"):
        model.run({"x": seqs})  # sequences would be read as plain rows


def test_corrupted_truncated_and_wrong_version_files_are_refused(frozen_line, tmp_path):
    _, path = frozen_line
    good = open(path, "rb").read()

    def load(data):
        bad = str(tmp_path / "bad.tideaot")
        with open(bad, "wb") as f:
            f.write(data)
        return tide.aot.FrozenModel(bad, PLACE)

    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x40
    with pytest.raises(tide.TideError, match="bad.tideaot' is corrupted or truncated"):
        load(bytes(flipped))
    with pytest.raises(tide.TideError, match="corrupted or truncated"):
        load(good[: len(good) - 100])
    version = bytearray(good)
    version[8:12] = struct.pack("<I", 7)
    with pytest.raises(tide.TideError, match="has format version 7; this Tide reads version 1"):
        load(bytes(version))
    with pytest.raises(tide.TideError, match="not a frozen plan"):
        load(b"PK\x03\x04 a zip file, say")
    with pytest.raises(tide.TideError, match="cannot open frozen plan"):
        tide.aot.FrozenModel(str(tmp_path / "absent.tideaot"), PLACE)


def test_a_missing_plugin_names_the_op_the_kernel_and_its_plugin_file(frozen_line):
    _, path = frozen_line
    cpu = plugin_file("device_cpu")
    code = "import tide\ntide.aot.FrozenModel(%r, tide.CPUPlace())\n" % path
    env = dict(os.environ, TIDE_PLUGIN_PATH=cpu, TIDE_PLUGIN_PATH_ONLY="1")
    p = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert p.returncode != 0
    err = p.stderr
    assert "frozen plan '%s': op '" % path in err, err
    assert "{cpu, float32, ANY, plain}" in err and "when frozen" in err, err
    assert "no loaded plugin registers op" in err, err
    assert ".so" in err, err  # the plugin file the kernel came from at freeze time


def test_control_flow_is_refused_naming_the_op(tmp_path):
    x = layers.data(name="x", shape=[3], dtype="float32")
    s = layers.fill_constant([2, 3], "float32", 1.0)
    i = layers.fill_constant([1], "int64", 0)
    limit = layers.fill_constant([1], "int64", 3)
    cond = layers.less_than(i, limit)
    loop = layers.While(cond)
    with loop.block():
        layers.assign(layers.elementwise_add(s, x), s)
        layers.increment(i, in_place=True)
        layers.less_than(i, limit, cond=cond)
    with pytest.raises(tide.TideError, match=r"op 'while' \(block 0, #\d+\) runs a sub-block"):
        tide.aot.freeze(
            tide.default_main_program(), ["x"], [s], PLACE, {"x": [2, 3]}, str(tmp_path / "w")
        )


def test_a_range_that_differs_between_feeds_is_refused(tmp_path):
    x = layers.data(name="x", shape=[4], dtype="float32")
    y = layers.data(name="y", shape=[4], dtype="float32")
    out = layers.elementwise_add(x, y)
    with pytest.raises(tide.TideError, match="one range for all feeds"):
        tide.aot.freeze(
            tide.default_main_program(),
            ["x", "y"],
            [out],
            PLACE,
            {"x": [(1, 8), 4], "y": [(1, 4), 4]},
            str(tmp_path / "p"),
        )


def test_freezing_leaves_the_parameters_in_the_scope_as_they_were(tmp_path):
    # batch_norm outside is_test updates its running statistics on every run: the probe runs on
    # zeros must not leave theirs in the caller's scope, and the plan holds the values before.
    x = layers.data(name="x", shape=[3], dtype="float32")
    y = layers.batch_norm(layers.fc(input=x, size=4))
    exe = tide.Executor(PLACE)
    exe.run(tide.default_startup_program())
    main = tide.default_main_program()
    stats = [
        op.input(name)[0]
        for op in main.global_block().ops
        if op.type == "batch_norm"
        for name in ("Mean", "Variance")
    ]
    scope = tide.global_scope()
    before = [scope.find_var(n).get_tensor().numpy().copy() for n in stats]
    model, _ = freeze_and_load(tmp_path, main, ["x"], [y], {"x": [(1, 4), 3]})
    after = [scope.find_var(n).get_tensor().numpy().copy() for n in stats]
    for b, a in zip(before, after):
        assert np.array_equal(b, a)
    xs = np.random.RandomState(3).standard_normal((4, 3)).astype("float32")
    assert_bit_identical(exe, main, model, {"x": xs}, [y])
