"""Run time, as in Fluid: the Executor runs a program's global block in a scope, with numpy (or
LoDTensor) feeds and fetches. Prepared programs are cached per (program version, feeds,
fetches), so repeated runs skip preparation."""

import contextlib
import threading
import weakref

import numpy as np

from . import _C
from .core import CPUPlace, LoDTensor, Place, Scope, convert_dtype
from .framework import Program, Variable, default_main_program

_global_scope = Scope()


def global_scope():
    """The scope Executor.run uses when none is given."""
    return _global_scope


@contextlib.contextmanager
def scope_guard(scope):
    """Executor.run uses `scope` by default inside."""
    global _global_scope
    prev, _global_scope = _global_scope, scope
    try:
        yield
    finally:
        _global_scope = prev


def _as_tensor(name, value, var):
    if isinstance(value, LoDTensor):
        return value
    if isinstance(value, np.ndarray):
        return LoDTensor(value)
    if isinstance(value, np.generic):  # a numpy scalar, np.float32(3): a 0-D tensor of its type
        return LoDTensor(np.asarray(value))
    if var is None:
        raise ValueError("cannot feed %r: no variable of that name in the program" % name)
    # Python data: take the variable's dtype.
    return LoDTensor(np.asarray(value, dtype=convert_dtype(var.dtype)))


def _as_feed(name, value, var):
    """_as_tensor, with a conversion error (rank, size, dtype, memory) naming the feed."""
    try:
        return _as_tensor(name, value, var)
    except (ValueError, TypeError, MemoryError) as e:
        if "feed '%s'" % name in str(e) or "cannot feed %r" % name in str(e):
            raise
        msg = "feed '%s': %s" % (name, e)
        try:
            named = type(e)(msg)
        except Exception:  # a class with another constructor (numpy's _ArrayMemoryError)
            named = next(c for c in (MemoryError, TypeError, ValueError) if isinstance(e, c))(msg)
        raise named from e


def _feed_by_name(feed):
    """`feed` keyed by variable names. Fluid takes names only, but {x_var: array} is common: a
    Variable key stands for its name (the core binding would refuse it with a pybind dump)."""
    by_name = {}
    for key, value in feed.items():
        if isinstance(key, Variable):
            name = key.name
        elif isinstance(key, str):
            name = key
        else:
            raise TypeError(
                "Executor.run: feed key %r is a %s; a key is a variable name (str) or a Variable"
                % (key, type(key).__name__)
            )
        if name in by_name:
            raise ValueError(
                "Executor.run: feed '%s' is given twice (as its name and as its Variable)" % name
            )
        by_name[name] = value
    return by_name


# The trainer side of parameter-server training (DistributeTranspiler's trainer programs): ops
# that talk to pservers, and the one that tells them the trainer is done.
_RPC_OPS = ("send", "recv", "send_barrier", "fetch_barrier", "send_complete")
_RPC_ENDPOINT_ATTRS = ("epmap", "endpoints")
# What a send_complete needs from the trainer's RPC ops besides the endpoints.
_RPC_CLIENT_ATTRS = (
    "trainer_id",
    "rpc_deadline",
    "max_message_size",
    "curve_server_key_file",
    "curve_key_file",
)


def _pserver_clients(program):
    """{(attrs of the trainer's RPC client): [pserver endpoints]} of the RPC ops of `program`'s
    global block, and the endpoints its send_complete ops tell (they are done with)."""
    clients, completed = {}, set()
    for op in program.global_block().ops:
        if op.type not in _RPC_OPS:
            continue
        endpoints = [e for a in _RPC_ENDPOINT_ATTRS if op.has_attr(a) for e in op.attr(a)]
        key = tuple((a, op.attr(a)) for a in _RPC_CLIENT_ATTRS if op.has_attr(a))
        if op.type == "send_complete":
            completed.update((key, e) for e in endpoints)
        known = clients.setdefault(key, [])
        known.extend(e for e in endpoints if e not in known)
    return clients, completed


class Executor:
    """Runs programs on `place` (tide.CPUPlace(), tide.CUDAPlace(i), tide.Place(kind, i)).

    Thread safety: one Executor may be used from several threads, but its runs (and close())
    are serialised: a run waits for the one in progress. To run concurrently, give each thread
    an Executor of its own and a Scope of its own."""

    def __init__(self, place=None):
        self.place = place if place is not None else CPUPlace()
        if not isinstance(self.place, Place):
            raise TypeError("Executor needs a tide.Place, got %r" % (self.place,))
        self._core = _C.Executor(self.place)
        # Keyed by the program itself, held weakly: a program's prepared copies go with it (a
        # server reloading a model with one Executor keeps only the live ones).
        # program -> {(version, feeds, fetches, flags version): PreparedBlock}
        self._cache = weakref.WeakKeyDictionary()
        # program -> {(version, fetches, rewrites): the rewritten copy that runs, None: itself}
        self._fused = weakref.WeakKeyDictionary()
        self._pservers = {}  # RPC client attrs -> endpoints of the pservers its programs talked to
        self._completed = set()  # (client attrs, endpoint) told this trainer is done
        # Held by run() and close(): the core executor, the caches and _last_prepared are not
        # safe to use from two threads at once (heap corruption, hangs, false errors). Reentrant:
        # close() runs send_complete programs.
        self._lock = threading.RLock()

    def close(self):
        """Tells the parameter servers this executor's trainer programs talked to that the
        trainer is done (send_complete, as Fluid's Executor.close does: a pserver stops once all
        its trainers are), unless a send_complete already did; then drops every program this
        executor prepared (and what its kernels kept with its ops)."""
        with self._lock:
            self._close()

    def _close(self):
        for key, endpoints in list(self._pservers.items()):
            endpoints = [e for e in endpoints if (key, e) not in self._completed]
            if endpoints:
                program = Program()
                program.global_block().append_op(
                    "send_complete", attrs=dict(key, endpoints=endpoints)
                )
                self.run(program, use_program_cache=False)  # marks them completed
        self._pservers = {}
        self._cache.clear()
        self._fused.clear()
        self._last_prepared = None

    def last_run_info(self):
        """The kernel each op of the last program ran with, the transforms applied (layout
        transforms, device copies, casts) in that run, and the groups of ops its place's device
        compiled (label, runs compiled and op by op)."""
        p = getattr(self, "_last_prepared", None)
        if p is None:
            return None
        return {
            "kernels": p.kernel_choices(),
            "transforms": p.transform_counts(),
            "compiled_groups": p.compiled_groups(),
        }

    def _fused_for_run(self, program, fetch_names):
        """`program`, or a copy rewritten where the run would let go of the values the rewrite
        no longer computes (on a CPU place, with --free_temporaries on, not fetched): a conv's
        bias add and activation in one fused_conv2d (transpiler.fuse_conv_bias_act, with
        --fuse_conv_bias_act), a mul's in one fc (fuse_fc_bias_act, --fuse_fc_bias_act), fully
        connected weights' gradients straight into their SGD / momentum update
        (transpiler.fuse_weight_updates, with --fuse_weight_updates). Results change by float
        rounding only."""
        from .transpiler.fuse_conv_bias_act import (  # breaks the cycle executor -> transpiler
            fuse_conv_bias_act,
            fuse_fc_bias_act,
        )
        from .transpiler.fuse_weight_updates import (  # breaks the cycle executor -> transpiler
            FUSED_OP,
            UPDATES,
            fuse_weight_updates,
        )

        if self.place.kind != "cpu" or _C.get_flag("free_temporaries") != "true":
            return program
        types = {op.type for op in program.global_block().ops}
        weights = (
            bool(types & set(UPDATES))
            and _C.get_flag("fuse_weight_updates") == "true"
            and _C.has_op(FUSED_OP)
        )
        convs = (
            bool(types & {"conv2d", "depthwise_conv2d"})
            and _C.get_flag("fuse_conv_bias_act") == "true"
            and _C.has_op("fused_conv2d")
        )
        fcs = "mul" in types and _C.get_flag("fuse_fc_bias_act") == "true" and _C.has_op("fc")
        if not (weights or convs or fcs):
            return program
        # Kept per program version, fetch list and flags even where prepared programs are not
        # (use_program_cache=False): the copy and the rewrite cost more than a small prepare.
        key = (program._version, tuple(fetch_names), weights, convs, fcs)
        kept = self._fused.setdefault(program, {})
        if key not in kept:
            for k in [k for k in kept if k[0] != program._version]:
                del kept[k]
            fused = program.clone()
            fused_any = False
            if convs:
                fused_any |= bool(fuse_conv_bias_act(fused, skip_opt_set=fetch_names))
            if fcs:
                fused_any |= bool(fuse_fc_bias_act(fused, skip_opt_set=fetch_names))
            if weights:
                fused_any |= bool(fuse_weight_updates(fused, skip_opt_set=fetch_names))
            kept[key] = fused if fused_any else None  # never the program: it is the weak key
        return program if kept[key] is None else kept[key]

    def _prepare(self, program, feed_names, fetch_names, use_cache):
        # The flags preparing reads (use_mkldnn, the rewrites' fuse_*, ...) are part of the key:
        # tide.set_flags between two runs prepares the program again instead of being ignored.
        key = (
            program._version,
            tuple(feed_names),
            tuple(fetch_names),
            _C.prepare_flags_version(),
        )
        prepared = self._cache.get(program, {}).get(key) if use_cache else None
        if prepared is None:
            run_program = self._fused_for_run(program, fetch_names)
            # The core prepares its own copy of the program: nothing here must outlive it.
            prepared = self._core.prepare(run_program.desc, 0, list(feed_names), list(fetch_names))
            self._note_pservers(program)
            if use_cache:
                # Drop this program's stale versions (a program edited since, or prepared under
                # other flags); its other feed/fetch lists stay prepared, so alternating them
                # prepares nothing again.
                kept = self._cache.setdefault(program, {})
                for k in [k for k in kept if k[0] != program._version or k[3] != key[3]]:
                    del kept[k]
                kept[key] = prepared
        return prepared

    def _note_pservers(self, program):
        """Remembers the pservers a (trainer) program talks to, for close()."""
        clients, completed = _pserver_clients(program)
        for key, endpoints in clients.items():
            known = self._pservers.setdefault(key, [])
            known.extend(e for e in endpoints if e not in known)
        self._completed |= completed

    def run(
        self,
        program=None,
        feed=None,
        fetch_list=None,
        feed_var_name="feed",
        fetch_var_name="fetch",
        scope=None,
        return_numpy=True,
        use_program_cache=True,
    ):
        """Runs `program` (default: the default main program) in `scope` (default: the global
        scope); feeds a {name: ndarray | LoDTensor | list} dict (a Variable as a key stands for
        its name); returns the fetched values, as numpy arrays unless return_numpy is False.
        Runs on one Executor from several threads wait for each other (see Executor)."""
        with self._lock:
            return self._run(program, feed, fetch_list, scope, return_numpy, use_program_cache)

    def _run(self, program, feed, fetch_list, scope, return_numpy, use_program_cache):
        program = program if program is not None else default_main_program()
        if not isinstance(program, Program):
            raise TypeError("Executor.run: program must be a tide.Program, got %r" % (program,))
        feed = feed or {}
        if isinstance(feed, (list, tuple)):  # a DataLoader's step: one feed dict per place
            if len(feed) != 1:
                raise ValueError(
                    "Executor.run: feed is a list of %d feed dicts (one per place); "
                    "an Executor runs on one place, give it one" % len(feed)
                )
            feed = feed[0]
        if not isinstance(feed, dict):
            raise TypeError(
                "Executor.run: feed must be a dict {name: value}, got %r" % (type(feed),)
            )
        feed = _feed_by_name(feed)  # a new dict: the readers' batches go in, not the caller's
        readers = getattr(program, "_py_readers", ())
        if readers:  # non-iterable DataLoaders: the program reads a batch from each on every run
            for reader in readers:
                feed.update(reader._next_feed())
        fetch_list = fetch_list or []
        if isinstance(fetch_list, (Variable, str)):
            fetch_list = [fetch_list]
        fetch_names = []
        for i, f in enumerate(fetch_list):
            if isinstance(f, Variable):
                fetch_names.append(f.name)
            elif isinstance(f, str):
                fetch_names.append(f)
            else:
                raise TypeError(
                    "Executor.run: fetch_list[%d] is a %s (%r), not a Variable or a variable name"
                    % (i, type(f).__name__, f)
                )
        block = program.global_block()
        feed_names = list(feed.keys())
        tensors = [_as_feed(n, feed[n], block.vars.get(n)) for n in feed_names]
        prepared = self._prepare(program, feed_names, fetch_names, use_program_cache)
        # A program with its own feed ops (a loaded inference model) sets the feed order.
        order = prepared.feed_names()
        if order != feed_names:
            by_name = dict(zip(feed_names, tensors))
            missing = [n for n in order if n not in by_name]
            if missing:
                raise ValueError("Executor.run: the program needs feeds %s" % missing)
            tensors = [by_name[n] for n in order]
        self._last_prepared = prepared
        results = self._core.run(prepared, scope if scope is not None else _global_scope, tensors)
        return [r.numpy() for r in results] if return_numpy else results
