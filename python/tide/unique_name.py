"""Unique variable and parameter names: "fc_0.w_0", "fc_0.tmp_1", ..."""

import collections
import contextlib


class UniqueNameGenerator:
    """Names made unique by a counter per key: generate("fc") gives fc_0, fc_1, ...

    Args:
        prefix (str): put before every name.
    """

    def __init__(self, prefix=""):
        self.ids = collections.defaultdict(int)
        self.prefix = prefix

    def __call__(self, key):
        n = self.ids[key]
        self.ids[key] += 1
        return self.prefix + "%s_%d" % (key, n)


_generator = UniqueNameGenerator()


def generate(key):
    """A name "<key>_<n>" not handed out before in this generator."""
    return _generator(key)


@contextlib.contextmanager
def guard(new_generator=None):
    """Names made inside start afresh (or from `new_generator`, a generator or a prefix)."""
    global _generator
    if isinstance(new_generator, str):
        new_generator = UniqueNameGenerator(new_generator)
    old = _generator
    _generator = new_generator or UniqueNameGenerator()
    try:
        yield
    finally:
        _generator = old
