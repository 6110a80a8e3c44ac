"""fit_a_line with parameter servers: the same script is a pserver or a trainer, as the launcher's
environment says (run alone, it trains locally).

    python -m tide.distributed.launch --pservers 2 --trainers 2 examples/fit_a_line_dist.py

On several hosts, start the launcher on each with the same --pserver_endpoints and --trainers and
the processes that host runs (see python -m tide.distributed.launch --help).
"""

import argparse
import os
import sys

import tide

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_a_line import build, load_data  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=30)
    ap.add_argument("--batch_size", type=int, default=20)
    ap.add_argument("--async", dest="sync", action="store_false", help="async updates")
    args = ap.parse_args()
    (train_x, train_y), _ = load_data()
    main_prog, startup = tide.Program(), tide.Program()
    main_prog.random_seed = startup.random_seed = 1
    with tide.program_guard(main_prog, startup), tide.unique_name.guard():
        _, _, _, avg_cost = build(learning_rate=0.02)
    exe = tide.Executor(tide.CPUPlace())
    env = tide.distributed.env()
    trainer_id, trainers = (env.trainer_id, env.trainers) if env else (0, 1)
    if env:
        t = tide.DistributeTranspiler()
        t.transpile(
            trainer_id,
            program=main_prog,
            startup_program=startup,
            pservers=env.pserver_endpoints,
            trainers=trainers,
            sync_mode=args.sync,
        )
        if env.role == "PSERVER":
            prog = t.get_pserver_program(env.current_endpoint)
            exe.run(t.get_startup_program(env.current_endpoint, prog))
            exe.run(prog)  # until every trainer has sent send_complete
            return
        startup, main_prog = t.get_trainer_startup_program(), t.get_trainer_program()
    exe.run(startup)
    # Each trainer takes its share of every minibatch (sync mode averages the gradients).
    for pass_id in range(args.passes):
        for i in range(0, len(train_x) - args.batch_size + 1, args.batch_size):
            rows = slice(i + trainer_id, i + args.batch_size, trainers)
            (loss,) = exe.run(
                main_prog, feed={"x": train_x[rows], "y": train_y[rows]}, fetch_list=[avg_cost]
            )
        if pass_id % 10 == 0 or pass_id == args.passes - 1:
            print(
                "pass %d, trainer %d: minibatch loss %.4f" % (pass_id, trainer_id, float(loss[0]))
            )
    if env:
        t.send_complete(exe)


if __name__ == "__main__":
    main()
