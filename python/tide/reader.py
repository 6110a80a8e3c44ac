"""Reader decorators (Paddle's paddle.reader): a reader is a function returning an iterator
of samples; these wrap readers."""

import random


def batch(reader, batch_size, drop_last=False):
    """Groups samples into lists of batch_size (the last may be shorter unless drop_last)."""
    if batch_size <= 0:
        raise ValueError("batch_size must be > 0, got %r" % (batch_size,))

    def batched():
        buf = []
        for sample in reader():
            buf.append(sample)
            if len(buf) == batch_size:
                yield buf
                buf = []
        if buf and not drop_last:
            yield buf

    return batched


def shuffle(reader, buf_size, seed=None):
    """Shuffles within windows of buf_size samples."""

    def shuffled():
        rng = random.Random(seed)
        buf = []
        for sample in reader():
            buf.append(sample)
            if len(buf) >= buf_size:
                rng.shuffle(buf)
                yield from buf
                buf = []
        rng.shuffle(buf)
        yield from buf

    return shuffled


def buffered(reader, size):
    """Reads ahead up to `size` samples on a background thread."""
    import queue
    import threading

    end = object()

    def read_ahead():
        q = queue.Queue(maxsize=size)
        errors = []

        def fill():
            try:
                for sample in reader():
                    q.put(sample)
            except BaseException as e:  # handed to the consumer
                errors.append(e)
            finally:
                q.put(end)

        threading.Thread(target=fill, daemon=True).start()
        while True:
            sample = q.get()
            if sample is end:
                if errors:
                    raise errors[0]
                return
            yield sample

    return read_ahead


def firstn(reader, n):
    """A reader of the first `n` samples of `reader`.

    Args:
        reader (callable): a reader (a function returning an iterable of samples).
        n (int): how many samples.
    """

    def first():
        for i, sample in enumerate(reader()):
            if i >= n:
                return
            yield sample

    return first


def map_readers(func, *readers):
    """A reader of ``func(*samples)``, the samples taken from `readers` in step.

    Args:
        func (callable): applied to one sample of each reader.
        *readers (callable): the readers.
    """

    def mapped():
        for samples in zip(*[r() for r in readers]):
            yield func(*samples)

    return mapped


def chain(*readers):
    """A reader of the samples of each reader in turn.

    Args:
        *readers (callable): the readers.
    """

    def chained():
        for r in readers:
            yield from r()

    return chained
