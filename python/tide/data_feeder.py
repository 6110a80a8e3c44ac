"""DataFeeder: turns a minibatch of samples (tuples, one entry per fed variable) into the feed
dict, converting dtypes and shapes and building LoD for sequence inputs."""

import numpy as np

from .core import LoDTensor
from .framework import Variable, default_main_program, to_numpy_dtype


def _flatten(var, sample_idx, value, level, lens, rows):
    """Appends one sequence of LoD level `level` (nested lists `lod_level - level` deep) to the
    lengths and its rows to `rows`."""
    if not hasattr(value, "__len__"):
        raise ValueError(
            "DataFeeder: sample %d of '%s' (lod_level %d) is not a sequence at level %d: %r"
            % (sample_idx, var.name, var.lod_level, level, value)
        )
    lens[level].append(len(value))
    if level + 1 == var.lod_level:
        if len(value):
            rows.append(value)
        return
    for sub in value:
        _flatten(var, sample_idx, sub, level + 1, lens, rows)


class DataFeeder:
    """Turns minibatches of samples (tuples, one item per feed variable) into the feed dict of Executor.run, as Fluid's DataFeeder.

    Args:
        feed_list (list): the data variables (or their names), in the order of a sample's items.
        place (Place): kept for Fluid's API: the executor moves the feeds to its place.
        program (Program): the program the names are looked up in; None: the default main program.
    """

    def __init__(self, feed_list, place=None, program=None):
        program = program or default_main_program()
        self.feed_vars = []
        for v in feed_list:
            if isinstance(v, str):
                v = program.global_block().var(v)
            if not isinstance(v, Variable):
                raise TypeError("DataFeeder: feed_list holds %r, not a Variable or a name" % (v,))
            self.feed_vars.append(v)
        self.place = place

    def feed(self, iterable):
        """[(slot0, slot1, ...), ...] -> {name: LoDTensor or ndarray}."""
        columns = [[] for _ in self.feed_vars]
        for i, sample in enumerate(iterable):
            if len(sample) != len(self.feed_vars):
                raise ValueError(
                    "DataFeeder: sample %d has %d fields, the feed list %d"
                    % (i, len(sample), len(self.feed_vars))
                )
            for col, value in zip(columns, sample):
                col.append(value)
        out = {}
        for var, col in zip(self.feed_vars, columns):
            dtype = to_numpy_dtype(var.dtype)
            shape = [d for d in var.shape]
            if var.lod_level == 0:
                arr = np.asarray(col, dtype=dtype)
                want = [len(col)] + [d if d >= 0 else -1 for d in shape[1:]]
                try:
                    arr = arr.reshape(want)
                except ValueError:
                    raise ValueError(
                        "DataFeeder: cannot shape the data of '%s' (%s) as %s"
                        % (var.name, arr.shape, shape)
                    ) from None
                out[var.name] = arr
            else:  # lod_level levels of nested sequences: concatenate, record the lengths
                lens = [[] for _ in range(var.lod_level)]
                rows = []
                for i, sample in enumerate(col):
                    _flatten(var, i, sample, 0, lens, rows)
                row_shape = [d for d in shape[1:] if d >= 0] or [1]
                try:
                    data = (
                        np.concatenate(
                            [np.asarray(r, dtype=dtype).reshape([-1] + row_shape) for r in rows]
                        )
                        if rows
                        else np.zeros([0] + row_shape, dtype)
                    )
                except ValueError:
                    raise ValueError(
                        "DataFeeder: cannot shape the sequences of '%s' as rows of %s"
                        % (var.name, row_shape)
                    ) from None
                t = LoDTensor(np.ascontiguousarray(data))
                t.set_recursive_sequence_lengths(lens)
                out[var.name] = t
        return out
