"""Fluid 1.5+'s input pipeline: tide.io.DataLoader.from_generator, tide.io.PyReader (and
layers.py_reader, built on the same loader). A background thread runs the user's generator,
turns each batch into LoDTensors on the target place and puts it in a bounded queue, so the next
batch is ready (copied) while the current step runs.

Iterable (the default): iterate the loader, one feed per step::

    loader = tide.io.DataLoader.from_generator(feed_list=[img, label], capacity=8)
    loader.set_sample_list_generator(tide.batch(reader, 32), places=tide.CPUPlace())
    for data in loader():
        exe.run(main, feed=data, fetch_list=[loss])      # data: [ {name: LoDTensor} ]

Non-iterable (iterable=False): the program itself reads a batch on every Executor.run, and the
run raises tide.core.EOFException when the pass is over::

    loader.start()
    try:
        while True:
            exe.run(main, fetch_list=[loss])
    except tide.core.EOFException:
        loader.reset()

An exception in the generator is raised by the step that would have read the batch after the
last good one; reset() (or leaving a for loop early) stops and joins the thread.
"""

import queue
import threading

import numpy as np

from . import reader as _reader
from . import unique_name
from .core import CPUPlace, EOFException, LoDTensor, Place, PreconditionError
from .data_feeder import DataFeeder
from .framework import Variable, default_main_program

__all__ = ["DataLoader", "GeneratorLoader", "PyReader"]

_END = object()  # the generator is exhausted
_POLL_S = 0.05  # how often a blocked put/get looks at the stop flag / the thread


class _Failure:
    """The generator's exception, carried through the queue to the consumer."""

    def __init__(self, error):
        self.error = error


def _places_of(places):
    if places is None:
        return [CPUPlace()]
    if isinstance(places, Place):
        return [places]
    places = list(places)
    if not places or not all(isinstance(p, Place) for p in places):
        raise TypeError(
            "places must be a tide.Place or a non-empty list of them, got %r" % (places,)
        )
    return places


def _to_place(value, place):
    """A LoDTensor on `place` holding a copy of `value` (ndarray, list or LoDTensor), so the
    generator may reuse its buffers once it has yielded them."""
    if isinstance(value, LoDTensor):
        lod, arr = value.lod(), np.array(value)
    else:
        lod, arr = [], np.asarray(value)
    t = LoDTensor()
    t.set(np.ascontiguousarray(arr), place, False)
    if lod:
        t.set_lod(lod)
    return t


class _Worker:
    """One pass: a daemon thread filling a bounded queue from `batches()` (a generator of
    steps), until exhausted, failed, or stopped."""

    def __init__(self, batches, capacity, name):
        self.queue = queue.Queue(maxsize=capacity)
        self.stop = threading.Event()
        self.done = False  # the consumer has seen the end (or the failure)
        self.thread = threading.Thread(target=self._fill, args=(batches,), name=name, daemon=True)
        self.thread.start()

    def _put(self, item):
        while not self.stop.is_set():
            try:
                self.queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _fill(self, batches):
        try:
            for item in batches():
                if not self._put(item):
                    return
            self._put(_END)
        except BaseException as e:  # handed to the consumer, raised in its thread
            self._put(_Failure(e))

    def next(self):
        """The next step, or None at the end of the pass; the generator's exception is raised
        here, in the consumer's thread."""
        if self.done:
            return None
        while True:
            try:
                item = self.queue.get(timeout=_POLL_S)
                break
            except queue.Empty:
                if not self.thread.is_alive() and self.queue.empty():
                    item = _END  # stopped before it could say so
                    break
        if item is _END or isinstance(item, _Failure):
            self.done = True
            self.close()
            if isinstance(item, _Failure):
                raise item.error
            return None
        return item

    def close(self):
        """Stops the thread (after the batch it is converting) and waits for it."""
        self.stop.set()
        while self.thread.is_alive():
            try:
                while True:  # free a put blocked on a full queue
                    self.queue.get_nowait()
            except queue.Empty:
                pass
            self.thread.join(_POLL_S)


class GeneratorLoader:
    """DataLoader.from_generator's loader (Fluid 1.6's GeneratorLoader). Give it a source with
    one of set_sample_generator / set_sample_list_generator / set_batch_generator."""

    def __init__(
        self,
        feed_list=None,
        capacity=None,
        use_double_buffer=True,
        iterable=True,
        return_list=False,
        drop_last=True,
    ):
        if not feed_list or not all(isinstance(v, Variable) for v in feed_list):
            raise TypeError(
                "DataLoader: feed_list must be a non-empty list of Variables (the "
                "data layers it fills), got %r" % (feed_list,)
            )
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise ValueError(
                "DataLoader: capacity (the number of batches queued ahead) must be a "
                "positive int, got %r" % (capacity,)
            )
        self._feed_list = list(feed_list)
        self._capacity = capacity
        self._use_double_buffer = use_double_buffer  # batches are always prepared ahead
        self._iterable = bool(iterable)
        self._return_list = bool(return_list)
        self._drop_last = bool(drop_last)
        self._source = None  # () -> iterator of batches: lists of values, one per feed variable
        self._places = None
        self._worker = None  # the running pass's
        self._name = unique_name.generate("data_loader")
        if not self._iterable:  # the program reads from it on every run (Fluid's read op)
            program = default_main_program()
            if not hasattr(program, "_py_readers"):
                program._py_readers = []
            program._py_readers.append(self)

    @property
    def iterable(self):
        return self._iterable

    # ---------------------------------------------------------------- sources
    def set_sample_generator(self, reader, batch_size, drop_last=True, places=None):
        """`reader()` yields samples (one value per feed variable); they are batched by
        batch_size (a last short batch is dropped unless drop_last is False)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                "set_sample_generator: batch_size must be a positive int, got %r" % (batch_size,)
            )
        return self.set_sample_list_generator(_reader.batch(reader, batch_size, drop_last), places)

    def set_sample_list_generator(self, reader, places=None):
        """`reader()` yields lists of samples (paddle.batch's output): each list is a batch."""
        feeder = DataFeeder(feed_list=self._feed_list)

        def batches():
            for samples in reader():
                feed = feeder.feed(samples)
                yield [feed[v.name] for v in self._feed_list]

        return self._set_source(batches, places)

    def set_batch_generator(self, reader, places=None):
        """`reader()` yields batches: one ndarray or LoDTensor per feed variable (a list or
        tuple, or a dict by name)."""
        names = [v.name for v in self._feed_list]

        def batches():
            for i, batch in enumerate(reader()):
                if isinstance(batch, dict):
                    missing = [n for n in names if n not in batch]
                    if missing:
                        raise ValueError("DataLoader: batch %d has no value for %s" % (i, missing))
                    batch = [batch[n] for n in names]
                if not isinstance(batch, (list, tuple)) or len(batch) != len(names):
                    raise ValueError(
                        "DataLoader: batch %d must hold %d values (for %s), got %r"
                        % (
                            i,
                            len(names),
                            names,
                            type(batch).__name__
                            if not isinstance(batch, (list, tuple))
                            else len(batch),
                        )
                    )
                yield list(batch)

        return self._set_source(batches, places)

    # Fluid 1.5's PyReader / py_reader names of the same.
    decorate_sample_generator = set_sample_generator
    decorate_sample_list_generator = set_sample_list_generator
    decorate_batch_generator = set_batch_generator
    decorate_paddle_reader = set_sample_list_generator
    decorate_tensor_provider = set_batch_generator

    def _set_source(self, batches, places):
        if self._worker is not None:
            raise PreconditionError(
                "DataLoader: cannot change the source while a pass is running; reset() first"
            )
        self._source = batches
        self._places = _places_of(places)
        return self

    # ---------------------------------------------------------------- one pass
    def _steps(self):
        """Each step's tensors: one batch per place (a step the places cannot all fill is
        dropped), each a list of LoDTensors on its place."""
        places, names = self._places, [v.name for v in self._feed_list]
        step = []
        for batch in self._source():
            place = places[len(step)]
            step.append([self._tensor(names[k], value, place) for k, value in enumerate(batch)])
            if len(step) == len(places):
                yield step
                step = []

    @staticmethod
    def _tensor(name, value, place):
        try:
            return _to_place(value, place)
        except (TypeError, ValueError) as e:
            raise type(e)("DataLoader: the value for '%s': %s" % (name, e)) from e

    def _start_pass(self):
        if self._source is None:
            raise PreconditionError(
                "DataLoader: no data source; call set_sample_generator, "
                "set_sample_list_generator or set_batch_generator first"
            )
        self._worker = _Worker(self._steps, self._capacity, self._name)
        return self._worker

    def _reset(self):
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    # ---------------------------------------------------------------- non-iterable
    def start(self):
        """Non-iterable: starts a pass (the thread begins filling the queue)."""
        if self._iterable:
            raise PreconditionError(
                "DataLoader: start() is for a non-iterable loader "
                "(iterable=False); iterate this one: for data in loader()"
            )
        if self._worker is not None:
            raise PreconditionError(
                "DataLoader: start() called twice; reset() after a pass "
                "(on EOFException) before starting the next"
            )
        self._start_pass()

    def reset(self):
        """Ends the pass (at its end, or early): stops and joins the thread, drops what is
        queued."""
        self._reset()

    def _next_feed(self):
        """Executor.run's feed from a non-iterable loader: {name: LoDTensor}; EOFException at
        the end of the pass."""
        if self._worker is None:
            raise PreconditionError(
                "DataLoader: the program reads from a loader that is not "
                "started (feeding %s); call start() before running it"
                % [v.name for v in self._feed_list]
            )
        step = self._worker.next()
        if step is None:
            raise EOFException(
                "DataLoader: the pass is over (no batch left for %s); call reset(), "
                "then start() for the next pass" % [v.name for v in self._feed_list]
            )
        return {v.name: t for v, t in zip(self._feed_list, step[0])}

    # ---------------------------------------------------------------- iterable
    def __call__(self):
        return iter(self)

    def __iter__(self):
        if not self._iterable:
            raise PreconditionError(
                "DataLoader: a non-iterable loader (iterable=False) is read "
                "by the program: start() it and run until EOFException"
            )
        return self._iterate()

    def _iterate(self):
        self._reset()  # a pass left unfinished ends here
        worker = self._start_pass()
        try:
            while True:
                step = worker.next()
                if step is None:
                    return
                yield self._format(step)
        finally:  # the end of the pass, or a loop left early: no thread stays behind
            if self._worker is worker:
                self._reset()
            else:  # a newer pass replaced this one
                worker.close()

    def _format(self, step):
        names = [v.name for v in self._feed_list]
        if self._return_list:
            return step[0] if len(step) == 1 else step
        return [dict(zip(names, tensors)) for tensors in step]


class DataLoader:
    """Fluid 1.6's fluid.io.DataLoader: from_generator builds a GeneratorLoader."""

    @staticmethod
    def from_generator(
        feed_list=None,
        capacity=None,
        use_double_buffer=True,
        iterable=True,
        return_list=False,
        use_multiprocess=False,
        drop_last=True,
    ):
        """A loader of the batches a Python generator makes (set_*_generator), prepared by a
        background thread (use_multiprocess is accepted; the thread does the work)."""
        return GeneratorLoader(
            feed_list, capacity, use_double_buffer, iterable, return_list, drop_last
        )


class PyReader(GeneratorLoader):
    """Fluid 1.5's fluid.io.PyReader: the same loader, with decorate_* for set_*."""

    def __init__(
        self,
        feed_list=None,
        capacity=None,
        use_double_buffer=True,
        iterable=True,
        return_list=False,
    ):
        super().__init__(feed_list, capacity, use_double_buffer, iterable, return_list)
