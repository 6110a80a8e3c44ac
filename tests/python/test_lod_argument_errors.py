"""Sequence lengths and LoDs given from Python in the wrong form get errors that say what is
wrong and where (they were pybind's 'incompatible function arguments' signature dumps)."""

import numpy as np
import pytest

import tide


def _tensor(rows=3):
    return tide.LoDTensor(np.zeros((rows, 2), "float32"))


def test_a_flat_list_of_lengths_says_how_one_level_is_written():
    with pytest.raises(TypeError, match=r"level 0 is 2 \(one level is written \[\[2, 3\]\]"):
        _tensor(5).set_recursive_sequence_lengths([2, 3])


def test_a_negative_length_names_its_level_and_element():
    with pytest.raises(
        ValueError, match=r"sequence lengths: level 0 element 1 is -1; it must be >= 0"
    ):
        _tensor().set_recursive_sequence_lengths([[4, -1]])


def test_a_non_int_names_itself():
    with pytest.raises(TypeError, match=r"level 0 element 0 is 1.5, not an int"):
        _tensor().set_recursive_sequence_lengths([[1.5, 1.5]])
    with pytest.raises(TypeError, match=r"lod must be a list of levels.*got str"):
        _tensor().set_lod("0,3")


def test_numpy_ints_and_tuples_are_lengths_too():
    t = _tensor(5)
    t.set_recursive_sequence_lengths((np.array([2, 3]),))
    assert t.recursive_sequence_lengths() == [[2, 3]]
    t.set_lod([[0, np.int64(1), 5]])
    assert t.lod() == [[0, 1, 5]]
    with pytest.raises(tide.TideError, match="invalid LoD"):  # still checked against the rows
        t.set_recursive_sequence_lengths([[2, 2]])
