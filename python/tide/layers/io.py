"""Fluid 1.x's reader layers: py_reader (a non-iterable loader that makes its own data
variables), create_py_reader_by_data (one over existing data layers) and read_file (the
variables a reader fills on every run)::

    reader = layers.py_reader(capacity=8, shapes=[[-1, 784], [-1, 1]], dtypes=["float32", "int64"])
    img, label = layers.read_file(reader)
    ...
    reader.decorate_paddle_reader(tide.batch(samples, 32))
    reader.start()
    try:
        while True:
            exe.run(main, fetch_list=[loss])
    except tide.core.EOFException:
        reader.reset()
"""

from .. import unique_name
from ..data_loader import GeneratorLoader
from .nn import data

__all__ = ["py_reader", "create_py_reader_by_data", "read_file"]


def py_reader(capacity, shapes, dtypes, lod_levels=None, name=None, use_double_buffer=True):
    """A reader of batches shaped `shapes` (the batch dim included, -1 for any) of `dtypes`
    (and lod_levels); read_file(reader) gives its variables. Feed it with decorate_paddle_reader
    / decorate_sample_list_generator (lists of samples) or decorate_tensor_provider /
    decorate_batch_generator (one array per variable), then start() / reset() each pass."""
    if len(shapes) != len(dtypes):
        raise ValueError("py_reader: %d shapes but %d dtypes" % (len(shapes), len(dtypes)))
    lod_levels = list(lod_levels) if lod_levels is not None else [0] * len(shapes)
    if len(lod_levels) != len(shapes):
        raise ValueError("py_reader: %d shapes but %d lod_levels" % (len(shapes), len(lod_levels)))
    prefix = name or unique_name.generate("py_reader")
    feed_list = [
        data(
            name="%s.out_%d" % (prefix, i),
            shape=list(shape),
            dtype=dtype,
            lod_level=level,
            append_batch_size=False,
        )
        for i, (shape, dtype, level) in enumerate(zip(shapes, dtypes, lod_levels))
    ]
    return GeneratorLoader(feed_list, capacity, use_double_buffer, iterable=False)


def create_py_reader_by_data(capacity, feed_list, name=None, use_double_buffer=True):
    """A py_reader that fills the given data layers."""
    return GeneratorLoader(list(feed_list), capacity, use_double_buffer, iterable=False)


def read_file(reader):
    """The variables `reader` fills on every run of the program: one, or a list."""
    if not isinstance(reader, GeneratorLoader):
        raise TypeError(
            "read_file: expects a reader from py_reader or create_py_reader_by_data, "
            "got %r" % (reader,)
        )
    out = list(reader._feed_list)
    return out[0] if len(out) == 1 else out
