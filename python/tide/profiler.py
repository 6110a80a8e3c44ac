"""Per-op timing and a timeline.

Usage::

    with tide.profiler.profile(profile_path="/tmp/trace.json"):
        exe.run(...)
    print(tide.profiler.report())          # op kernels by total time

    with tide.profiler.profiler("All", "total", "/tmp/trace.json"):   # Fluid's form: prints the
        exe.run(...)                                                  # report at the end

The trace file is Chrome's trace-event JSON: open it in chrome://tracing or ui.perfetto.dev. Each
op run is a box on the thread that ran it (a control-flow op's box holds its block's ops); the
kernel key and the run's start are in its args.

How ops are timed: on a device with event timing (TideDeviceDef.event_elapsed_ms) the core records
an event before and after each op on its stream and resolves them when the run ends, so the
profiled run does not wait for the device after every op. The op's time in `report()` is then the
device's, and the trace shows it twice: on the host thread (the enqueue, with the device time in
its args) and on the device's own "ops" row at the device's time. Elsewhere (no event timing, or
TIDE_SYNC_OPS=1 / --sync_ops, or --check_nan_inf) the device is synchronised after every op and the
time is the host's. `otherData.op_timing` in the trace says which, per place.

A device with a tracer (TideDeviceDef.tracer) adds its own records (kernels, copies, other work):
one row per stream under the device's process, beside its "ops" row. Clocks: everything is on the
host's steady clock, in us since the profile started. A tracer's clock is mapped with an offset
read between two host clock readings (`otherData.device_clocks`: the offset and its uncertainty);
event times with an anchor event per device, bounded by when the host recorded and saw markers
(`otherData.op_timing[place].alignment_us`).
"""

import contextlib
import json
import os
import sys

from . import _C


@contextlib.contextmanager
def profile(profile_path=None):
    """Times every op run inside (the --profile_ops flag), from a clean slate; with
    `profile_path`, writes the timeline there as a Chrome trace when the block ends. The devices
    finish the work queued before it first (a run returns once its fetches are down, with the rest
    of its work still queued), so every device record belongs to an op the profile saw."""
    _C.start_profile()
    _C.set_flag("profile_ops", "true")
    try:
        yield
    finally:
        _C.set_flag("profile_ops", "false")
        _C.stop_profile()
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
    """The op runs of the last profile: dicts of name, kernel, start_us, dur_us, thread (on the
    host), and place, device_start_us, device_dur_us where the device timed the op with events
    (else "", -1, -1)."""
    runs, _ = _C.op_events()
    keys = ("name", "kernel", "start_us", "dur_us", "thread", "place", "device_start_us")
    return [dict(zip(keys + ("device_dur_us",), r)) for r in runs]


def device_records():
    """The device tracers' records of the last profile: dicts of name, place, stream, start_us,
    dur_us, bytes and kind ("kernel", "copy" or "other"), on the profile's clock."""
    return _C.device_traces()


def export_chrome_trace(path):
    """Writes the last profile's timeline to `path` as Chrome trace-event JSON: the host threads
    under the process "tide", and each device place that timed ops or traced itself as a process
    of its own, with an "ops" row (event-timed ops) and a row per stream (the tracer's records)."""
    runs, dropped = _C.op_events()
    pid = os.getpid()
    trace = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": "tide"}}]
    devices = {}  # place -> the pid of its rows in the trace

    def device_pid(place):
        if place not in devices:
            devices[place] = pid * 100 + len(devices) + 1
            trace.append(
                {"name": "process_name", "ph": "M", "pid": devices[place], "args": {"name": place}}
            )
            trace.append(
                {
                    "name": "thread_name",
                    "ph": "M",
                    "pid": devices[place],
                    "tid": 0,
                    "args": {"name": "ops (device time)"},
                }
            )
        return devices[place]

    for name, kernel, start, dur, thread, place, dev_start, dev_dur in runs:
        args = {"kernel": kernel}
        if place:
            args.update(place=place, device_dur_us=dev_dur)
        trace.append(
            {
                "name": name,
                "cat": "op",
                "ph": "X",
                "ts": start,
                "dur": dur,
                "pid": pid,
                "tid": thread,
                "args": args,
            }
        )
        if place:
            trace.append(
                {
                    "name": name,
                    "cat": "op",
                    "ph": "X",
                    "ts": dev_start,
                    "dur": dev_dur,
                    "pid": device_pid(place),
                    "tid": 0,
                    "args": {"kernel": kernel, "host_start_us": start},
                }
            )
    streams = set()
    for r in _C.device_traces():
        p = device_pid(r["place"])
        tid = 1 + r["stream"]
        if (p, tid) not in streams:
            streams.add((p, tid))
            trace.append(
                {
                    "name": "thread_name",
                    "ph": "M",
                    "pid": p,
                    "tid": tid,
                    "args": {"name": "stream %d" % r["stream"]},
                }
            )
        trace.append(
            {
                "name": r["name"],
                "cat": r["kind"],
                "ph": "X",
                "ts": r["start_us"],
                "dur": r["dur_us"],
                "pid": p,
                "tid": tid,
                "args": {"bytes": r["bytes"]} if r["bytes"] else {},
            }
        )
    meta = {
        "op_timing": {
            t["place"]: (
                {"method": "events", "alignment_us": t["alignment_us"]}
                if t["method"] == "events"
                else {"method": "synchronised after each op (the host's time)"}
            )
            for t in _C.op_timings()
        },
        "device_clocks": {
            c["kind"]: {"offset_ns": c["offset_ns"], "uncertainty_us": c["uncertainty_us"]}
            for c in _C.device_trace_clocks()
        },
    }
    if dropped:
        meta["dropped_events"] = dropped
    with open(path, "w") as f:
        json.dump({"traceEvents": trace, "displayTimeUnit": "ms", "otherData": meta}, f)
    return path
