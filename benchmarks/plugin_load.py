"""Start-up cost: discovering and loading all in-tree plugins (the core's own timing, and
`import tide` in a fresh process) against `import torch`, `import paddle`, `import onnxruntime`.

    benchmarks/.venv-peers/bin/python benchmarks/plugin_load.py [--json out.json]
"""

import json
import os
import statistics
import subprocess
import sys

from common import Table, machine_line, parser, setup_paths

PROBE = (
    "import time, json; t0 = time.perf_counter(); import {mod}; t1 = time.perf_counter(); "
    "extra = {extra}; print(json.dumps({{'import_ms': (t1 - t0) * 1e3, 'extra': extra}}))"
)


def fresh_import(mod, reps, extra="None"):
    times, extras = [], []
    for _ in range(reps):
        out = subprocess.run(
            [sys.executable, "-c", PROBE.format(mod=mod, extra=extra)],
            capture_output=True,
            text=True,
            env=dict(os.environ),
        )
        lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
        if out.returncode or not lines:
            print("%s unavailable: %s" % (mod, (out.stderr.strip().splitlines() or ["?"])[-1]))
            return None, None
        r = json.loads(lines[-1])
        times.append(r["import_ms"])
        extras.append(r["extra"])
    return (statistics.median(times), min(times), max(times)), extras


def main():
    ap = parser(__doc__.splitlines()[0])
    args = ap.parse_args()
    setup_paths()
    # The core's own measure: the sum of each plugin's load + registration time.
    tide_import, plugin_ms = fresh_import(
        "tide",
        args.reps,
        "sum(p['load_ms'] for p in tide.plugins()), len([p for p in tide.plugins() if p['status'] == 'loaded'])",
    )
    numpy_import, _ = fresh_import("numpy", args.reps)
    loads = sorted(ms for ms, _ in plugin_ms)
    n_plugins = plugin_ms[0][1]
    core_ms = (statistics.median(loads), loads[0], loads[-1])
    peers = {}
    for mod in ("torch", "paddle", "onnxruntime"):
        t, _ = fresh_import(mod, args.reps)
        if t:
            peers["import " + mod] = t
    table = Table("start-up: plugin discovery + load", "ms")
    table.add(
        "core: discover + load %d plugins" % n_plugins, core_ms, peers, note="target <= 50 ms"
    )
    table.add("import tide (incl. numpy %.0f ms)" % numpy_import[0], tide_import, peers)
    machine = machine_line()
    table.print(machine)
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
