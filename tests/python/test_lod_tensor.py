"""tide.create_lod_tensor / create_random_int_lodtensor and DataFeeder's sequences (Fluid's
ways of feeding LoD from Python data)."""

import numpy as np
import pytest

import tide
from tide import layers


def test_from_a_list_of_sequences():
    t = tide.create_lod_tensor([[1, 2], [3]], [[2, 1]], tide.CPUPlace())
    assert t.recursive_sequence_lengths() == [[2, 1]]
    np.testing.assert_array_equal(np.array(t), [[1], [2], [3]])
    assert np.array(t).dtype == np.int64


def test_from_an_array_with_two_levels():
    data = np.arange(12, dtype="float32").reshape(6, 2)
    t = tide.create_lod_tensor(data, [[2, 1], [1, 2, 3]], tide.CPUPlace())
    assert t.recursive_sequence_lengths() == [[2, 1], [1, 2, 3]]
    assert t.lod() == [[0, 2, 3], [0, 1, 3, 6]]
    np.testing.assert_array_equal(np.array(t), data)
    again = tide.create_lod_tensor(t, [[3, 3]])  # from a LoDTensor: its data, new lengths
    assert again.recursive_sequence_lengths() == [[3, 3]]
    np.testing.assert_array_equal(np.array(again), data)


def test_random_int_lodtensor():
    t = tide.create_random_int_lodtensor([[2, 3]], base_shape=[4], low=1, high=3)
    a = np.array(t)
    assert a.shape == (5, 4) and a.dtype == np.int64 and a.min() >= 1 and a.max() <= 3


@pytest.mark.parametrize(
    "data,lens,match",
    [
        (np.zeros((4, 1), "float32"), [[2, 1]], "add up to 3, but data has 4 rows"),
        (
            np.zeros((3, 1), "float32"),
            [[1, 1], [1, 1, 1]],
            "level 0's lengths add up to 2, but level 1 has 3",
        ),
        ([[1, 2], [3]], [[1, 2]], r"lengths \[2, 1\], which must be the last level"),
        (np.zeros((3, 1), "float32"), [[2, -1, 2]], "not a non-negative int"),
    ],
)
def test_lengths_that_do_not_fit_are_refused(data, lens, match):
    with pytest.raises(ValueError, match=match):
        tide.create_lod_tensor(data, lens)


def test_data_of_another_kind_is_a_type_error():
    with pytest.raises(TypeError, match="numpy array, a LoDTensor or a list"):
        tide.create_lod_tensor("abc", [[3]])


def test_data_feeder_builds_two_level_lod_and_a_sequence_op_reads_it():
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        words = layers.data(name="words", shape=[1], dtype="int64", lod_level=2)
        label = layers.data(name="label", shape=[1], dtype="int64")
        pooled = layers.sequence_pool(layers.cast(words, "float32"), "sum")
    feeder = tide.DataFeeder([words, label])
    # Two samples: paragraphs of sentences of word ids.
    feed = feeder.feed([([[1, 2], [3]], [0]), ([[4, 5, 6]], [1])])
    t = feed["words"]
    assert t.recursive_sequence_lengths() == [[2, 1], [2, 1, 3]]
    np.testing.assert_array_equal(np.array(t).ravel(), [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(feed["label"], [[0], [1]])
    exe = tide.Executor(tide.CPUPlace())
    (out,) = exe.run(main, feed=feed, fetch_list=[pooled])
    # sequence_pool pools the last level: one row per sentence.
    np.testing.assert_allclose(np.array(out).ravel(), [3, 3, 15])


def test_data_feeder_names_a_sample_that_is_not_nested_deep_enough():
    words = layers.data(name="w2", shape=[1], dtype="int64", lod_level=2)
    with pytest.raises(ValueError, match="sample 0 of 'w2' .* is not a sequence at level 1"):
        tide.DataFeeder([words]).feed([([1, 2],)])
