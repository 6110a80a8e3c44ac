"""Per-op timing and a timeline.

Usage::

    with tide.profiler.profile(profile_path="/tmp/trace.json"):
        exe.run(...)
    print(tide.profiler.report())          # op kernels by total time

    with tide.profiler.profiler("All", "total", "/tmp/trace.json"):   # Fluid's form: prints the
        exe.run(...)                                                  # report at the end

The trace file is Chrome's trace-event JSON: open it in chrome://tracing or ui.perfetto.dev. Each
op run is a box on the thread that ran it (a control-flow op's box holds its block's ops); the
kernel key and the run's start are in its args. Profiling synchronises the device after every
kernel, so device time is charged to the op that launched it.
"""

import contextlib
import json
import os
import sys

from . import _C


@contextlib.contextmanager
def profile(profile_path=None):
    """Times every op run inside (the --profile_ops flag), from a clean slate; with
    `profile_path`, writes the timeline there as a Chrome trace when the block ends."""
    _C.reset_op_profiles()
    _C.set_flag("profile_ops", "true")
    try:
        yield
    finally:
        _C.set_flag("profile_ops", "false")
        if profile_path:
            export_chrome_trace(profile_path)


@contextlib.contextmanager
def profiler(state="All", sorted_key=None, profile_path=None):
    """Fluid's fluid.profiler.profiler: profiles the block, then prints the report (sorted by
    total time; `sorted_key` is accepted for compatibility) and writes the trace to
    `profile_path` when given. `state` is "CPU", "GPU" or "All" (every op is timed either way)."""
    if state not in ("CPU", "GPU", "All"):
        raise ValueError("profiler: state must be 'CPU', 'GPU' or 'All', got %r" % (state,))
    with profile(profile_path):
        yield
    sys.stdout.write(report())


def report():
    """A table of op kernels by total time."""
    return _C.op_profile_report()


def profiles():
    """The per-op times recorded so far (profile_ops): one row per op and kernel."""
    return _C.op_profiles()


def events():
    """The op runs of the last profile: dicts of name, kernel, start_us, dur_us, thread."""
    runs, _ = _C.op_events()
    return [dict(name=n, kernel=k, start_us=s, dur_us=d, thread=t) for n, k, s, d, t in runs]


def export_chrome_trace(path):
    """Writes the last profile's timeline to `path` as Chrome trace-event JSON."""
    runs, dropped = _C.op_events()
    trace = [{"name": "process_name", "ph": "M", "pid": os.getpid(), "args": {"name": "tide"}}]
    for name, kernel, start, dur, thread in runs:
        trace.append(
            {
                "name": name,
                "cat": "op",
                "ph": "X",
                "ts": start,
                "dur": dur,
                "pid": os.getpid(),
                "tid": thread,
                "args": {"kernel": kernel},
            }
        )
    meta = {"dropped_events": dropped} if dropped else {}
    with open(path, "w") as f:
        json.dump({"traceEvents": trace, "displayTimeUnit": "ms", "otherData": meta}, f)
    return path
