"""Memory of a place, as its allocator sees it (Fluid's memory API).

    tide.memory.stats(tide.Place("cpu", 0))
    # {'used': ..., 'peak_used': ..., 'reserved': ..., 'budget': ..., 'live_blocks': ...,
    #  'total_allocs': ..., 'arenas': ...}
    tide.memory.empty_cache(place)   # give cached, unused memory back to the device

`used` counts bytes handed to tensors now, `peak_used` the most ever, `reserved` what the
allocator took from the device plugin (used, plus blocks kept for reuse). The budget is
`fraction_of_<kind>_memory_to_use` of the device's memory; `initial_<kind>_memory_in_mb` sizes the
first arena. Both are read when the place's first allocation is made.

Where the device plugin reports its own allocator's figures (TideDeviceDef.memory_stats), they
are under `device`, beside the core's: {'bytes_in_use', 'bytes_reserved', 'peak_bytes_in_use',
'bytes_limit'} (the core's arenas are part of the device's bytes in use).
"""

from . import _C
from .core import Place


def _place(place):
    return _C.parse_place(place) if isinstance(place, str) else place


def stats(place):
    """The allocator statistics of `place` (a Place or "kind:N") as a dict; with `device`, the
    device plugin's own figures, where it reports them."""
    return dict(_C.memory_stats(_place(place)))


def empty_cache(place):
    """Returns memory `place`'s allocator keeps for reuse (freed large blocks, wholly free
    arenas) to the device plugin. Tensors in use are untouched."""
    _C.memory_empty_cache(_place(place))


__all__ = ["stats", "empty_cache", "Place"]
