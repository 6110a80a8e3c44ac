"""Shared benchmark plumbing (BENCHMARKS.md): warm up, repeat, median (min-max) of >= 5 reps,
a table `case | tide | peer | tide/peer`, a machine line, and --json FILE."""

import argparse
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def setup_paths():
    """Makes the build tree's tide importable (PYTHONPATH=build/python by default)."""
    build = os.environ.get("TIDE_BUILD", os.path.join(ROOT, "build"))
    pkg = os.path.join(build, "python")
    sys.path.insert(0, pkg)
    os.environ["PYTHONPATH"] = pkg + os.pathsep + os.environ.get("PYTHONPATH", "")  # for workers
    os.environ.setdefault("TIDE_PLUGIN_PATH", os.path.join(build, "lib", "tide", "plugins"))


def parser(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--reps", type=int, default=7, help="timed repetitions (median reported)")
    ap.add_argument("--threads", type=int, default=2, help="threads for every framework")
    ap.add_argument("--json", default=None, help="also write the results here")
    return ap


def set_threads(n):
    """n threads for every framework's own pool. OpenBLAS stays single-threaded: under PyTorch's
    OpenMP threads its own pool oversubscribes the cores (10x slower here), so this is the peer's
    best configuration."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TIDE_CPU_THREADS"):
        os.environ[var] = str(n)
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


def measure(fn, reps=7, warmup=2, inner=1):
    """Seconds per call of fn (called `inner` times per rep): (median, min, max)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times), min(times), max(times)


def cpu_flags():
    """The CPU's feature flags from /proc/cpuinfo (empty where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            return set(next(line for line in f if line.startswith("flags")).split(":")[1].split())
    except (OSError, StopIteration, IndexError):
        return set()


def machine_line(extra=""):
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "machine: %d cores, %s, %s, python %s%s" % (
        os.cpu_count(),
        cpu,
        platform.platform(),
        platform.python_version(),
        (", " + extra) if extra else "",
    )


class Table:
    """Rows of (case, tide, {peer: value}); prints `case | tide | peer | tide/peer` per peer."""

    def __init__(self, title, unit, lower_is_better=True):
        self.title, self.unit, self.lower = title, unit, lower_is_better
        self.rows = []

    def add(self, case, tide, peers, note=""):
        self.rows.append({"case": case, "tide": tide, "peers": peers, "note": note})

    def print(self, machine):
        print(
            "\n%s (%s; %s is better)" % (self.title, self.unit, "lower" if self.lower else "higher")
        )
        head = "%-40s | %12s | %-22s | %12s | %9s" % (
            "case",
            "tide",
            "peer",
            "peer value",
            "tide/peer",
        )
        print(head)
        print("-" * len(head))
        for r in self.rows:
            peers = r["peers"] or {"-": None}
            for name, value in peers.items():
                ratio = (
                    (r["tide"][0] / value[0]) if value and r["tide"] and value[0] else float("nan")
                )
                print(
                    "%-40s | %12s | %-22s | %12s | %9s"
                    % (
                        r["case"],
                        _fmt(r["tide"]),
                        name,
                        _fmt(value),
                        "%.2f" % ratio if value else "-",
                    )
                )
            if r["note"]:
                print("    note: " + r["note"])
        print(machine)

    def dump(self, path, machine):
        if not path:
            return
        with open(path, "w") as f:
            json.dump(
                {"title": self.title, "unit": self.unit, "machine": machine, "rows": self.rows},
                f,
                indent=1,
            )


def _fmt(v):
    if not v:
        return "n/a"
    med = v[0]
    return ("%.3g" % med) if med >= 1e-3 or med == 0 else ("%.3e" % med)


def run_isolated(script, case, extra_args=(), timeout=900, env=None):
    """Runs `script --worker case` in a fresh process (so frameworks' thread pools never share the
    cores at once) and returns the JSON it prints last, or None when that peer is unavailable."""
    import subprocess

    cmd = [sys.executable, script, "--worker", case] + list(extra_args)
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=dict(os.environ, **(env or {}))
    )
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        print("%s: %s failed: %s" % (os.path.basename(script), case, " | ".join(tail)))
        return None
    return json.loads(lines[-1])


def best_of_blas_settings(script, case, extra_args, key, threads, higher_is_better=True):
    """A peer's result at its best: OpenBLAS single-threaded, or with its own pool of `threads`."""
    results = [
        r
        for r in (
            run_isolated(script, case, extra_args, env={"OPENBLAS_NUM_THREADS": str(n)})
            for n in sorted({1, threads})
        )
        if r
    ]
    if not results:
        return None
    pick = max if higher_is_better else min
    return pick(results, key=lambda r: r[key][0])


def interleaved_rounds(rounds, cases, run_case):
    """Runs run_case(case) for every case, `rounds` times, interleaved (A B C A B C ...), so drift
    on a shared machine hits every framework alike. Returns {case: [result, ...]} (failures left
    out: run_case returns None)."""
    out = {c: [] for c in cases}
    for _ in range(rounds):
        for c in cases:
            r = run_case(c)
            if r:
                out[c].append(r)
    return {c: v for c, v in out.items() if v}


def median_of_rounds(results, key):
    """(median, min, max) over rounds of each round's median value results[i][key][0]."""
    values = [r[key][0] for r in results]
    return statistics.median(values), min(values), max(values)


def check_losses(losses, ref, rtol=1e-3):
    """Every framework's loss at every checked step against the reference framework's: the same
    computation, step after step, not only at the first."""
    base = losses[ref]
    for name, seq in losses.items():
        if len(seq) != len(base):
            raise SystemExit("%s checked %d steps, %s %d" % (name, len(seq), ref, len(base)))
        for i, (a, b) in enumerate(zip(seq, base)):
            if abs(a - b) > rtol * max(1.0, abs(b)):
                raise SystemExit(
                    "%s's loss at step %d is %.6f, %s's %.6f: not the same computation"
                    % (name, i, a, ref, b)
                )
    print("losses agree with %s's at every one of %d steps (rtol %g)" % (ref, len(base), rtol))


def try_import(name):
    try:
        return __import__(name)
    except Exception as e:  # a missing peer is reported, not fatal
        print(
            "peer %s unavailable: %s"
            % (name, str(e).splitlines()[0] if str(e) else type(e).__name__)
        )
        return None
