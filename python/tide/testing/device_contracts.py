"""The device-contract checks of the conformance kit: whether a device keeps the rules of the
device contract it declares (TideDeviceDef.contract in tide/plugin_api.h) for `copy` (a host
buffer changed right after a host-to-device copy returns must not change what arrives) and
`free` (a block freed while the stream is busy must still be read by the work queued before the
free), and those of the optional entries it has: `event_timing` (a finite, non-negative elapsed
time no longer than the host waited), `memory_stats` (an allocated block shows in bytes_in_use,
the figures ordered), `tracer` (a queued copy is recorded, on a clock mapped onto the host's),
`copy_stream` (work the compute context queues after waiting for the copy stream's event sees
its upload), `graphs` (a captured copy runs at every launch, not while capturing, on the bytes
there at that launch), `host_func` (host functions run once each, in order, after the work queued
before them) and, on a device that compiles groups of ops, `compiler` (a group computes what its ops compute
one by one; tide.testing.subgraph_check).
An optional entry the device lacks is reported as skipped. The checks run in the core (tide._C.check_device_contracts) on a busy stream; this module
runs them in a process of their own, so a device that crashes fails its check instead of the kit.

    python -m tide.testing.device_contracts --place sim:0 --plugin libtide_device_sim.so
"""

import argparse
import json
import os
import subprocess
import sys

import tide
from tide import _C

from . import subgraph_check

CONTRACTS = ("copy", "free")
# optional entries (issues 33 and 34)
ENTRIES = ("event_timing", "memory_stats", "tracer", "copy_stream", "graphs", "host_func")
# Checked only on a device that has the entry (not reported as skipped on the others).
COMPILER = "compiler"


def check(place, plugins=(), env=None, timeout=300):
    """Runs the contract checks on `place` in a new process; returns (declared contract,
    [{contract, rule, passed, message}]). A process that dies fails every check it did not
    report."""
    declared, contracts, _ = check_with_entries(place, plugins, env, timeout)
    return declared, contracts


def check_with_entries(place, plugins=(), env=None, timeout=300):
    """Like check(), then the checks of the optional entries (ENTRIES) the device has, in the same
    process; returns (declared contract, contract checks, entry checks). An entry the device lacks
    is {..., passed: True, skipped: True}."""
    cmd = [sys.executable, "-m", "tide.testing.device_contracts", "--place", place, "--worker"]
    cmd += [a for p in plugins for a in ("--plugin", os.path.abspath(p))]
    try:
        p = subprocess.run(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout
        )
        out, why = p.stdout, "the check process died with status %s" % p.returncode
        tail = "\n".join(p.stderr.strip().splitlines()[-4:])
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
        why, tail = "the check process was stopped after %ss (a hung copy or free)" % timeout, ""
    declared, done = None, []
    for line in reversed(out.strip().splitlines()):
        try:
            result = json.loads(line)
            declared, done = result["contract"], result["checks"]
            break
        except (ValueError, KeyError, TypeError):
            continue
    reported = {c["contract"] for c in done}
    died = why + ("\n" + tail if tail else "")
    done += [
        {"contract": c, "rule": "", "passed": False, "message": died}
        for c in CONTRACTS + ENTRIES
        if c not in reported
    ]
    return (
        declared,
        [c for c in done if c["contract"] in CONTRACTS],
        [c for c in done if c["contract"] in ENTRIES + (COMPILER,)],
    )


def _worker(place, plugins):
    for path in plugins:
        tide.load_plugin(path)
    p = _C.parse_place(place)
    result = {"contract": _C.device_contract(p), "checks": []}
    for c in _C.check_device_contracts(p) + _C.check_device_entries(p):
        result["checks"].append(dict(c))
        print(json.dumps(result), flush=True)  # what is done so far, should the next one crash
    if _C.device_has_compiler(p):
        # Failed until it reports: a fused kernel that crashes the process fails it.
        died = "the check process died while a compiled group ran"
        result["checks"].append(
            {"contract": COMPILER, "rule": subgraph_check.RULE, "passed": False, "message": died}
        )
        print(json.dumps(result), flush=True)
        result["checks"][-1] = subgraph_check.check(p)
        print(json.dumps(result), flush=True)


def main(argv=None):
    """Checks a device's contracts from the command line (`--help`); returns the exit status.

    Args:
        argv (list): the arguments; None: sys.argv[1:].
    """
    ap = argparse.ArgumentParser(
        prog="python -m tide.testing.device_contracts",
        description="Checks a device's copy and free contracts and its optional entries.",
    )
    ap.add_argument("--place", required=True)
    ap.add_argument("--plugin", action="append", default=[])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(args.place, args.plugin)
        return 0
    contract, checks, entries = check_with_entries(args.place, args.plugin)
    for c in checks + entries:
        print(
            "%s %s%s"
            % (
                ("skip" if c.get("skipped") else "pass") if c["passed"] else "FAIL",
                c["contract"],
                "" if c["passed"] else ": " + c["message"],
            )
        )
    return 0 if all(c["passed"] for c in checks + entries) else 1


if __name__ == "__main__":
    sys.exit(main())
