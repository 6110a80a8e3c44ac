"""Building LoDTensors from Python data (Fluid's fluid.create_lod_tensor).

    t = tide.create_lod_tensor([[1, 2], [3]], [[2, 1]], tide.CPUPlace())   # int64 [3, 1]
    t = tide.create_lod_tensor(np.zeros((5, 8), "float32"), [[2, 3]], place)
    t = tide.create_random_int_lodtensor([[2, 3]], base_shape=[1], place=place, low=0, high=9)

`recursive_seq_lens` are lengths per level, outermost first: [[2, 1], [1, 2, 3]] is two
paragraphs of 2 and 1 sentences, whose sentences have 1, 2 and 3 words (6 rows).
"""

import numpy as np

from .core import LoDTensor, Place


def _check_lens(recursive_seq_lens, rows, what):
    if not isinstance(recursive_seq_lens, (list, tuple)) or not all(
        isinstance(level, (list, tuple)) for level in recursive_seq_lens
    ):
        raise TypeError(
            "create_lod_tensor: recursive_seq_lens must be a list of lists of lengths, "
            "got %r" % (recursive_seq_lens,)
        )
    for k, level in enumerate(recursive_seq_lens):
        if any((not isinstance(n, (int, np.integer))) or n < 0 for n in level):
            raise ValueError(
                "create_lod_tensor: level %d of recursive_seq_lens holds a length that "
                "is not a non-negative int: %r" % (k, level)
            )
        if k + 1 < len(recursive_seq_lens) and sum(level) != len(recursive_seq_lens[k + 1]):
            raise ValueError(
                "create_lod_tensor: level %d's lengths add up to %d, but level %d has "
                "%d sequences" % (k, sum(level), k + 1, len(recursive_seq_lens[k + 1]))
            )
    if recursive_seq_lens and sum(recursive_seq_lens[-1]) != rows:
        raise ValueError(
            "create_lod_tensor: the last level's lengths add up to %d, but %s has %d rows"
            % (sum(recursive_seq_lens[-1]), what, rows)
        )


def create_lod_tensor(data, recursive_seq_lens, place=None):
    """A LoDTensor on `place` (default the CPU) holding `data` with `recursive_seq_lens`.

    `data` is a numpy array (its first dim is the rows), a LoDTensor (its data is copied), or a
    list of sequences of ints (one per last-level sequence: they become an int64 [rows, 1]
    tensor, and their lengths must be the last level)."""
    place = place if place is not None else Place("cpu", 0)
    if isinstance(data, LoDTensor):
        return create_lod_tensor(np.array(data), recursive_seq_lens, place)
    if isinstance(data, list):
        lengths = [len(seq) for seq in data]
        if not recursive_seq_lens or list(recursive_seq_lens[-1]) != lengths:
            raise ValueError(
                "create_lod_tensor: the sequences have lengths %s, which must be the "
                "last level of recursive_seq_lens %r" % (lengths, recursive_seq_lens)
            )
        flat = [x for seq in data for x in seq]
        data = np.asarray(flat, dtype="int64").reshape([len(flat), 1])
    if not isinstance(data, np.ndarray):
        raise TypeError(
            "create_lod_tensor: data must be a numpy array, a LoDTensor or a list of "
            "sequences, got %s" % type(data).__name__
        )
    if data.ndim == 0:
        raise ValueError("create_lod_tensor: data must have a rows dim, got a scalar")
    _check_lens(recursive_seq_lens, data.shape[0], "data")
    t = LoDTensor(np.ascontiguousarray(data), place, False)
    t.set_recursive_sequence_lengths([list(map(int, level)) for level in recursive_seq_lens])
    return t


def create_random_int_lodtensor(recursive_seq_lens, base_shape, place=None, low=0, high=1):
    """A LoDTensor of int64 drawn uniformly from [low, high], shaped [rows] + base_shape."""
    rows = sum(recursive_seq_lens[-1]) if recursive_seq_lens else 0
    data = np.random.randint(low, high + 1, size=[rows] + list(base_shape)).astype("int64")
    return create_lod_tensor(data, recursive_seq_lens, place)


__all__ = ["create_lod_tensor", "create_random_int_lodtensor"]
