"""The busy case (issue 17): the MLP and LeNet train steps of mlp_train_step.py and
lenet_train_step.py, quiet and then while another process keeps one core busy, Tide and PyTorch
measured the same way (one process per framework, rounds interleaved). What counts is each
framework's busy throughput relative to its own quiet one: Tide must keep at least PyTorch's
share (a pool that busy-waits against a neighbour collapses here).

    benchmarks/.venv-peers/bin/python benchmarks/busy_machine.py [--threads 2] [--rounds 3]
"""

import os
import statistics
import subprocess
import sys

from common import (
    Table,
    interleaved_rounds,
    machine_line,
    parser,
    run_isolated,
    set_threads,
    setup_paths,
)

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {
    "MLP": ("mlp_train_step.py", ["tide", "tide (oneDNN)", "pytorch"]),
    "LeNet": ("lenet_train_step.py", ["tide (plain)", "tide (oneDNN)", "pytorch"]),
}
SPIN = "import os\nos.nice(0)\nwhile True:\n    pass\n"  # one core, at the benchmark's own priority


def measure_model(script, cases, args):
    extra = ["--reps", str(args.reps), "--threads", str(args.threads)]
    rounds = interleaved_rounds(
        args.rounds, cases, lambda c: run_isolated(os.path.join(HERE, script), c, extra)
    )
    return {c: statistics.median(r["steps_per_s"][0] for r in v) for c, v in rounds.items()}


def main():
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per condition")
    args = ap.parse_args()
    set_threads(args.threads)
    setup_paths()
    table = Table(
        "train steps on a busy machine (one core kept busy by another process): busy / quiet "
        "throughput",
        "busy/quiet",
        lower_is_better=False,
    )
    for model, (script, cases) in MODELS.items():
        quiet = measure_model(script, cases, args)
        spinner = subprocess.Popen([sys.executable, "-c", SPIN])
        try:
            busy = measure_model(script, cases, args)
        finally:
            spinner.kill()
            spinner.wait()
        share = {c: (busy[c] / quiet[c],) * 3 for c in cases if c in quiet and c in busy}
        for c in cases:
            if c in quiet and c in busy:
                print(
                    "%-6s %-14s quiet %7.2f steps/s, busy %7.2f steps/s"
                    % (model, c, quiet[c], busy[c])
                )
        peers = {"pytorch": share["pytorch"]} if "pytorch" in share else {}
        for c in cases:
            if c.startswith("tide") and c in share:
                table.add("%s %s" % (model, c), share[c], peers)
    machine = machine_line(
        "%d threads each, one process per framework, %d interleaved rounds per condition"
        % (args.threads, args.rounds)
    )
    table.print(machine)
    print("target: every tide row's busy/quiet >= pytorch's (tide/peer >= 1.0)")
    table.dump(args.json, machine)


if __name__ == "__main__":
    main()
