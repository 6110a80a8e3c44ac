"""The device conformance kit: runs the op tests (OpTest cases, forward and gradient) of every op
a device has kernels for on that device, against the same numpy references and finite
differences the CPU kernels pass, and judges only the device's own kernels: a check whose op ran
another place's kernel (the executor's fallback, with copies) is "not covered", never a pass.

    tide-conformance --plugin libmy_device.so --place mydev:0 [--ops a,b] [--json out.json]
    python -m tide.testing.conformance --place cpu:0

First checks the device contract (tide.testing.device_contracts: a host buffer changed right
after `copy` returns must not change what arrives; a free on a busy stream must not corrupt work
queued before it), then the optional entries the device has (event timing, memory statistics, its
tracer, its compiler of subgraphs; a planted negative elapsed time fails naming `event_timing`, a
wrong fused kernel fails naming `compiler` and the group). Prints those checks and a
coverage table (op, dtype, forward, gradient) and exits non-zero when a contract or entry check or a
check the device covers fails (or the kit could not run). Each test module runs in its own process
(tide.testing.runner), so a kernel that crashes is reported as a failure of its op and the rest
of the module still runs.
"""

import argparse
import concurrent.futures
import glob
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile

import tide
from tide import _C

from . import coverage, device_contracts

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
MAX_RESTARTS = 50


def default_tests_dir():
    """The build tree's sources when run there (TIDE_SOURCE_DIR), else the installed cases."""
    src = os.environ.get("TIDE_SOURCE_DIR")
    if src and os.path.isdir(os.path.join(src, "tests", "python")):
        return os.path.join(src, "tests", "python")
    return CASES_DIR


def _worker_env():
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(tide.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the cases directory may be read-only
    return env


def _read_events(path):
    events = []
    with open(path) as f:
        for line in f:
            try:
                events.append(json.loads(line))
            except ValueError:  # a line cut short by a crash
                pass
    return events


def run_module(module, args, log):
    """Runs one test module's checks in worker processes (a new one after each crash, without
    the tests already run); returns (check records, errors)."""
    checks, errors, skip = [], [], set()
    with tempfile.TemporaryDirectory(prefix="tide-conformance-") as tmp:
        for attempt in range(MAX_RESTARTS + 1):
            out, deselect = os.path.join(tmp, "events%d.jsonl" % attempt), os.path.join(tmp, "skip")
            with open(deselect, "w") as f:
                f.write("".join(t + "\n" for t in sorted(skip)))
            cmd = [
                sys.executable,
                "-m",
                "tide.testing.runner",
                "--place",
                args.place,
                "--module",
                os.path.basename(module),
                "--out",
                out,
                "--deselect",
                deselect,
            ]
            cmd += [a for p in args.plugin for a in ("--plugin", os.path.abspath(p))]
            if args.ops:
                cmd += ["--ops", ",".join(args.ops)]
            try:
                proc = subprocess.run(
                    cmd,
                    cwd=os.path.dirname(module),
                    env=_worker_env(),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    timeout=args.timeout,
                )
                output, status = proc.stdout, proc.returncode
            except subprocess.TimeoutExpired as e:  # its output comes back as bytes
                output = (
                    e.stdout.decode(errors="replace")
                    if isinstance(e.stdout, bytes)
                    else e.stdout or ""
                )
                status = "timeout after %ss" % args.timeout
            log.write(output)
            events = _read_events(out) if os.path.exists(out) else []
            checks += [e for e in events if e["event"] == "check"]
            if any(e["event"] == "finished" for e in events):
                return checks, errors
            # The worker died (or hung): blame the check in flight, skip its test, go on.
            started = [e["test"] for e in events if e["event"] == "start"]
            finished = {e["test"] for e in events if e["event"] == "done"}
            skip |= finished
            running = next((t for t in reversed(started) if t not in finished), None)
            why = "the test process %s" % (
                "died with status %s" % status
                if isinstance(status, int)
                else "was stopped: " + status
            )
            lines = output.strip().splitlines()
            fatal = [l[l.index("Fatal Python error") :] for l in lines if "Fatal Python error" in l]
            tail = "\n".join(fatal[:1] or lines[-6:])  # faulthandler's line names the signal
            if running is None:
                errors.append({"module": os.path.basename(module), "error": why + "\n" + tail})
                return checks, errors
            skip.add(running)
            begun = [e for e in events if e["event"] == "begin" and e["test"] == running]
            if begun:
                b = begun[-1]
                checks.append(
                    {
                        "event": "check",
                        "test": running,
                        "op": b["op"],
                        "kind": b["kind"],
                        "on_device": b["on_device"],
                        "dtype": b["dtype"],
                        "coverage": "device" if b["on_device"] else "no device kernel",
                        "details": [],
                        "outcome": "fail",
                        "message": "%s while this check ran\n%s" % (why, tail),
                    }
                )
            else:
                errors.append(
                    {
                        "module": os.path.basename(module),
                        "test": running,
                        "error": why + " outside any op check\n" + tail,
                    }
                )
        errors.append(
            {"module": os.path.basename(module), "error": "gave up after %d crashes" % MAX_RESTARTS}
        )
    return checks, errors


def _cell(records):
    """One (op, dtype, kind) cell: {"status": pass | FAIL | not covered, ...}."""
    judged = [r for r in records if r["coverage"] in ("device", "partial")]
    fails = [r for r in judged if r["outcome"] == "fail"]
    passes = [r for r in judged if r["outcome"] == "pass" and r["coverage"] == "device"]
    if fails:
        return {
            "status": "FAIL",
            "checks": len(judged),
            "failed": len(fails),
            "message": fails[0]["message"],
            "test": fails[0]["test"],
        }
    if passes:
        return {"status": "pass", "checks": len(passes)}
    return {"status": "not covered", "reason": _why_not_covered(records)}


def _why_not_covered(records):
    if not records:
        return "no test"
    reasons = set()
    for r in records:
        if r["coverage"] == "no device kernel" or not r["details"]:
            reasons.add(r["coverage"])
        else:
            reasons.update(r["details"])
    return "; ".join(sorted(reasons))[:300]


def summarize(checks, kernels):
    """Rows {op, dtype, forward, gradient} from the check records, plus the device's kernels no
    check exercised."""
    by_cell = {}
    for r in checks:
        if r["coverage"] == "no kernel":  # no kernel ran: judged only when it failed on the device
            if not (r["on_device"] and r["outcome"] == "fail"):
                continue
            r = dict(r, coverage="device")
        by_cell.setdefault((r["op"], r["dtype"] or "-"), {}).setdefault(r["kind"], []).append(r)
    rows = []
    for (op, dtype), kinds in sorted(by_cell.items()):
        rows.append(
            {
                "op": op,
                "dtype": dtype,
                "forward": _cell(kinds.get("forward", [])),
                "gradient": _cell(kinds.get("gradient", [])),
            }
        )
    tested = {(r["op"], r["dtype"]) for r in checks}
    untested = {
        op: [d for d in kernels.get(op, []) if (op, d) not in tested]
        for op in coverage.tested_ops(kernels)
    }
    return rows, {op: dtypes for op, dtypes in untested.items() if dtypes}


def _short(cell, width=72):
    if cell["status"] == "pass":
        return "pass (%d)" % cell["checks"]
    if cell["status"] == "FAIL":
        # numpy's mismatch report: the line naming the op's output, and how many elements differ
        lines = [l.strip() for l in cell["message"].splitlines()] or [""]
        named = [l for l in lines if " output " in l or "gradient of" in l][:1]
        counted = [l for l in lines if l.startswith("Mismatched elements")][:1]
        first = "; ".join(named + counted) or lines[0]
        text = "FAIL %d/%d: %s" % (cell["failed"], cell["checks"], first)
        return text if len(text) <= width else text[: width - 3] + "..."
    return "no test" if cell["reason"] == "no test" else "not covered"


def print_contracts(place, declared, contracts, out=sys.stdout):
    """The device-contract checks and those of the optional entries: one line each, then each
    failure naming its contract or entry."""
    out.write(
        "Device contract of %s: %s\n"
        % (
            place,
            "contract %s" % declared
            if declared is not None
            else "unknown (the check process died)",
        )
    )
    for c in contracts:
        state = "FAIL"
        if c["passed"]:
            state = "skip (the device has none)" if c.get("skipped") else "pass"
        out.write("  %-12s %s\n" % (c["contract"], state))
    for c in contracts:
        if not c["passed"]:
            out.write(
                "\nFAIL device contract '%s'%s:\n  %s\n"
                % (
                    c["contract"],
                    " (%s)" % c["rule"] if c["rule"] else "",
                    c["message"].replace("\n", "\n  "),
                )
            )
    out.write("\n")


def print_report(place, rows, untested, errors, out=sys.stdout):
    """Prints the conformance kit's table: for each op, each check's outcome on the device.

    Args:
        place (str): the place judged.
        rows (list): the checks' results.
        untested (list): the device's ops no test covered.
        errors (list): modules that failed to run.
        out (file): where to print.
    """
    table = [("op", "dtype", "forward", "gradient")] + [
        (r["op"], r["dtype"], _short(r["forward"]), _short(r["gradient"])) for r in rows
    ]
    widths = [max(len(t[i]) for t in table) for i in range(4)]
    out.write("Conformance of %s (device kernels judged; fallbacks not covered)\n" % place)
    for i, t in enumerate(table):
        out.write("  ".join(c.ljust(w) for c, w in zip(t, widths)).rstrip() + "\n")
        if i == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")
    fails = [(r, k) for r in rows for k in ("forward", "gradient") if r[k]["status"] == "FAIL"]
    for r, k in fails:
        out.write(
            "\nFAIL %s %s %s (%s):\n  %s\n"
            % (r["op"], r["dtype"], k, r[k]["test"], r[k]["message"].replace("\n", "\n  "))
        )
    if untested:
        out.write(
            "\nKernels no test exercised: %s\n"
            % ", ".join("%s (%s)" % (op, ", ".join(d)) for op, d in sorted(untested.items()))
        )
    for e in errors:
        out.write("\nERROR in %s: %s\n" % (e["module"], e["error"]))

    def count(kind):
        shown = [_short(r[kind]).split(" ")[0] for r in rows]
        return "%d pass, %d FAIL, %d not covered, %d no test" % (
            shown.count("pass"),
            shown.count("FAIL"),
            shown.count("not"),
            shown.count("no"),
        )

    out.write(
        "\n%s, %d ops: forward %s; gradient %s%s\n"
        % (
            place,
            len({r["op"] for r in rows}),
            count("forward"),
            count("gradient"),
            "; %d errors" % len(errors) if errors else "",
        )
    )


def main(argv=None):
    """tide-conformance's entry point (`--help` lists its options); returns the exit status.

    Args:
        argv (list): the arguments; None: sys.argv[1:].
    """
    ap = argparse.ArgumentParser(
        prog="tide-conformance",
        description="Runs the op tests of every op a device has kernels for on that device and "
        "judges its own kernels (fallbacks to another place are not covered).",
    )
    ap.add_argument("--place", default="cpu:0", help="KIND:N, the place to test (default cpu:0)")
    ap.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="PATH",
        help="a device plugin (or op pack) to load first; repeatable",
    )
    ap.add_argument(
        "--tests",
        default=None,
        metavar="DIR",
        help="the directory of test_ops_*.py modules (default: %s, or "
        "$TIDE_SOURCE_DIR/tests/python)" % CASES_DIR,
    )
    ap.add_argument(
        "--ops",
        default="",
        help="only these ops (comma-separated), and only the tests that name them",
    )
    ap.add_argument("--json", default=None, metavar="PATH", help="write the results as JSON")
    ap.add_argument(
        "--timeout",
        type=float,
        default=900,
        metavar="S",
        help="stop a test module's process after S seconds (default 900): the check "
        "in flight fails (a hung kernel)",
    )
    ap.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="test modules run at once, each in its own processes (default: one per "
        "CPU, %(default)s here)",
    )
    ap.add_argument("--verbose", "-v", action="store_true", help="show pytest's output")
    args = ap.parse_args(argv)
    args.ops = [o for o in args.ops.split(",") if o]

    if importlib.util.find_spec("pytest") is None:
        sys.stderr.write(
            "tide-conformance: the op tests run under pytest, which this Python "
            "(%s) lacks: pip install pytest\n" % sys.executable
        )
        return 2
    try:
        for path in args.plugin:
            tide.load_plugin(path)
        place = coverage.parse_place(args.place)
    except (ValueError, tide.TideError) as e:
        sys.stderr.write("tide-conformance: %s\n" % e)
        return 2
    kind = args.place.split(":")[0]
    devices = {d for r in tide.plugins() if r["status"] == "loaded" for d in r["devices"]}
    if kind not in devices:
        sys.stderr.write(
            "tide-conformance: no loaded plugin provides the place kind '%s' (loaded: "
            "%s); load its device plugin with --plugin PATH\n" % (kind, ", ".join(sorted(devices)))
        )
        return 2
    try:
        _C.check_place(place)  # e.g. gpu:0 on a machine without one
    except tide.TideError as e:
        sys.stderr.write("tide-conformance: %s\n" % e)
        return 2
    kernels = coverage.device_kernels(kind)
    if args.ops:
        kernels = {
            op: d
            for op, d in kernels.items()
            if op in args.ops or (op.endswith("_grad") and op[:-5] in args.ops)
        }
    tests_dir = os.path.abspath(args.tests or default_tests_dir())
    modules = sorted(glob.glob(os.path.join(tests_dir, "test_ops_*.py")))
    if not modules:
        sys.stderr.write("tide-conformance: no test_ops_*.py modules in %s\n" % tests_dir)
        return 2

    if args.jobs < 1:
        sys.stderr.write("tide-conformance: --jobs must be at least 1, not %d\n" % args.jobs)
        return 2
    # The device contract first (copy and free on a busy stream), then the optional entries the
    # device has (event timing, memory statistics, the tracer), in a process of their own.
    declared, contracts, entries = device_contracts.check_with_entries(
        args.place, args.plugin, env=_worker_env(), timeout=args.timeout
    )
    print_contracts(args.place, declared, contracts + entries)
    contract_failed = not all(c["passed"] for c in contracts + entries)
    checks, errors = [], []
    # Modules run side by side (each in its own worker processes); their results and, with
    # --verbose, their output are taken in the modules' order.
    logs = [io.StringIO() for _ in modules]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda m, log: run_module(m, args, log), modules, logs))
    for (c, e), log in zip(results, logs):
        checks += c
        errors += e
        if args.verbose:
            sys.stdout.write(log.getvalue())
    rows, untested = summarize(checks, kernels)
    print_report(args.place, rows, untested, errors)
    failed = contract_failed or any(
        r[k]["status"] == "FAIL" for r in rows for k in ("forward", "gradient")
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "place": args.place,
                    "tests": tests_dir,
                    "ops": args.ops or None,
                    "device_contract": declared,
                    "contracts": contracts,
                    "device_entries": entries,
                    "kernels": kernels,
                    "rows": rows,
                    "untested_kernels": untested,
                    "errors": errors,
                    "checks": checks,
                    "passed": not failed and not errors,
                },
                f,
                indent=1,
            )
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
