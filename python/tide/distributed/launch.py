"""Starts a training job's processes on this host. Collective (data-parallel) jobs:

    python -m tide.distributed.launch --nproc_per_node N [--nnodes M --node_rank R \\
        --master HOST:PORT] train.py [args]

Each of the N processes runs `train.py args` with TIDE_RANK (node_rank * N + i), TIDE_WORLD_SIZE
(M * N), TIDE_LOCAL_RANK (i) and TIDE_MASTER (where rank 0 hosts the rendezvous store; on one
node a free port of 127.0.0.1 by default) set, which tide.distributed.world() and
tide.distributed.fleet read. When one process fails the others are stopped; with --max_restarts K
the job is then started again, up to K times, with TIDE_RESTART_COUNT set to the attempt (the
script resumes from its last checkpoint, e.g. one tide.io.save_persistables per epoch).

Parameter-server jobs:

    python -m tide.distributed.launch --pservers 2 --trainers 2 [--start_port N] script.py [args]

Each process runs `script.py args` with TIDE_ROLE, TIDE_TRAINER_ID, TIDE_TRAINERS,
TIDE_PSERVER_ENDPOINTS and TIDE_CURRENT_ENDPOINT set (see tide.distributed); their output is
collected with a prefix ("[trainer.0] ..."). When one process fails (non-zero exit) the others are
stopped and the launcher exits non-zero; when the trainers are done the pservers get --grace
seconds to stop by themselves (they stop once every trainer has called
DistributeTranspiler.send_complete). Ports: --start_port N gives pserver i port N+i; else free ports
are picked (by binding port 0).

Several hosts: give every host the same --pserver_endpoints and --trainers, and say which
processes run where, e.g. with pservers on hosts A and B and a trainer on each:

    A$ python -m tide.distributed.launch --pserver_endpoints A:6170,B:6170 --trainers 2 \\
           --start_pservers 0 --trainer_ids 0 --bind 0.0.0.0 train.py
    B$ python -m tide.distributed.launch --pserver_endpoints A:6170,B:6170 --trainers 2 \\
           --start_pservers 1 --trainer_ids 1 --bind 0.0.0.0 train.py

(--bind sets TIDE_PSERVER_BIND, the address pservers listen on; by default 127.0.0.1.)
"""

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time


def _ephemeral_range():
    """The kernel's range for outgoing connections' local ports (Linux), else IANA's."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
            return lo, hi
    except (OSError, ValueError):
        return 49152, 65535


def free_ports(n, host="127.0.0.1"):
    """n distinct ports free now, chosen at random below the ephemeral range.

    A port the OS hands out for port 0 comes from the range outgoing connections use, so another
    process's connection could take it between this call and the server's bind (seen under
    `ctest -j`). Below that range only explicit binds take ports, and a random pick makes two
    callers choosing at once unlikely to collide.
    """
    eph_lo, eph_hi = _ephemeral_range()
    lo, hi = (10000, eph_lo) if eph_lo - 10000 >= 1000 else (eph_hi + 1, 65536)
    rng = random.SystemRandom()
    ports = []
    for _ in range(200 * n):
        if len(ports) == n:
            return ports
        port = rng.randrange(lo, hi)
        if port in ports:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
        ports.append(port)
    raise RuntimeError("no %d free ports on %s between %d and %d" % (n, host, lo, hi - 1))


def _ids(text, n, what):
    if text is None:
        return list(range(n))
    ids = [int(x) for x in text.split(",") if x.strip()]
    bad = [i for i in ids if not 0 <= i < n]
    if bad:
        raise SystemExit("launch: %s %s outside [0, %d)" % (what, bad, n))
    return ids


def parse_args(argv):
    """Parses the launcher's command line (`python -m tide.distributed.launch --help` lists it).

    Args:
        argv (list): the arguments, without the program name.

    Returns:
        argparse.Namespace: the options.
    """
    ap = argparse.ArgumentParser(
        prog="python -m tide.distributed.launch",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--nproc_per_node",
        type=int,
        default=None,
        help="collective job: processes on this node (ranks node_rank * N + i)",
    )
    ap.add_argument("--nnodes", type=int, default=1, help="collective job: nodes in the job")
    ap.add_argument("--node_rank", type=int, default=0, help="collective job: this node's index")
    ap.add_argument(
        "--master",
        default=None,
        help="collective job: host:port of rank 0's rendezvous store (required with "
        "--nnodes > 1; default 127.0.0.1 and a free port)",
    )
    ap.add_argument(
        "--max_restarts",
        type=int,
        default=0,
        help="collective job: start the job again after a failure, at most this often",
    )
    ap.add_argument("--pservers", type=int, default=1, help="pservers on 127.0.0.1 (default 1)")
    ap.add_argument("--trainers", type=int, default=1, help="trainers in the job (default 1)")
    ap.add_argument(
        "--start_port",
        type=int,
        default=None,
        help="pserver i listens on start_port + i (default: free ports)",
    )
    ap.add_argument(
        "--pserver_endpoints",
        default=None,
        help="every pserver of the job, host:port,... (several hosts)",
    )
    ap.add_argument(
        "--start_pservers",
        default=None,
        help="indices of the pservers to start here (default: all)",
    )
    ap.add_argument(
        "--trainer_ids", default=None, help="ids of the trainers to start here (default: all)"
    )
    ap.add_argument("--bind", default=None, help="address pservers listen on (TIDE_PSERVER_BIND)")
    ap.add_argument("--log_dir", default=None, help="also write each process's output here")
    ap.add_argument("--timeout", type=float, default=0, help="stop everything after this many s")
    ap.add_argument(
        "--grace",
        type=float,
        default=30.0,
        help="s the pservers get to stop after the trainers finish (default 30)",
    )
    ap.add_argument("script")
    ap.add_argument("script_args", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.trainers < 1 or args.pservers < 1:
        ap.error("--pservers and --trainers must be >= 1")
    if args.nproc_per_node is not None:
        if args.nproc_per_node < 1 or args.nnodes < 1:
            ap.error("--nproc_per_node and --nnodes must be >= 1 (a world size of 0 is no job)")
        if not 0 <= args.node_rank < args.nnodes:
            ap.error("--node_rank %d is outside [0, %d) (--nnodes)" % (args.node_rank, args.nnodes))
        if args.nnodes > 1 and not args.master:
            ap.error(
                "--nnodes > 1 needs --master HOST:PORT (an address of node 0 every node reaches)"
            )
        if args.max_restarts < 0:
            ap.error("--max_restarts must be >= 0")
        if args.master and (":" not in args.master or not args.master.rsplit(":", 1)[1].isdigit()):
            ap.error("--master must be HOST:PORT, got %r" % args.master)
    return args


# Run before the script, in its process: asks Linux for SIGTERM when the launcher dies (killed by
# SIGKILL, the OOM killer, a scheduler's hard stop), which its own signal handlers never see; its
# children run in sessions of their own, so nothing else would end them. Then execs the script.
_PDEATHSIG_SHIM = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit('tide.distributed.launch: the launcher ended before this process started')\n"
    "os.execv(sys.executable, [sys.executable] + sys.argv[2:])\n"
)


def _dies_with_launcher(cmd):
    """cmd (a Python command line) run so that the process ends when the launcher dies."""
    if not sys.platform.startswith("linux"):
        return cmd
    return [sys.executable, "-c", _PDEATHSIG_SHIM, str(os.getpid())] + cmd[1:]


def _stopped(pid):
    """Whether process pid is stopped (state T or t in /proc; False where /proc is not)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("State:"):
                    return line.split()[1] in ("T", "t")
    except (OSError, IndexError):
        pass
    return False


class Job:
    """The processes of one launch (pservers and trainers, or collective workers), started, watched and ended together.

    Args:
        args (argparse.Namespace): the options from parse_args.
    """

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.procs = []  # (name, Popen, is_trainer)
        self.threads = []
        self.collective = args.nproc_per_node is not None
        if self.collective:
            self.endpoints = []
            self.master = args.master or "127.0.0.1:%d" % free_ports(1)[0]
        elif args.pserver_endpoints:
            self.endpoints = [e.strip() for e in args.pserver_endpoints.split(",") if e.strip()]
        else:
            ports = (
                [args.start_port + i for i in range(args.pservers)]
                if args.start_port
                else free_ports(args.pservers)
            )
            self.endpoints = ["127.0.0.1:%d" % p for p in ports]

    def say(self, text):
        with self.lock:
            sys.stdout.write("[launch] %s\n" % text)
            sys.stdout.flush()

    def _pump(self, name, stream, log):
        for line in iter(stream.readline, b""):
            text = line.decode("utf-8", "replace")
            with self.lock:
                sys.stdout.write("[%s] %s" % (name, text if text.endswith("\n") else text + "\n"))
                sys.stdout.flush()
            if log:
                log.write(text)
                log.flush()
        stream.close()
        if log:
            log.close()

    def start(self, name, env_extra, is_trainer):
        env = dict(os.environ)
        env.update(env_extra)
        if not self.collective:
            env.update(
                {
                    "TIDE_TRAINERS": str(self.args.trainers),
                    "TIDE_PSERVER_ENDPOINTS": ",".join(self.endpoints),
                }
            )
        if self.args.bind:
            env["TIDE_PSERVER_BIND"] = self.args.bind
        cmd = _dies_with_launcher([sys.executable, "-u", self.args.script] + self.args.script_args)
        p = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        log = None
        if self.args.log_dir:
            os.makedirs(self.args.log_dir, exist_ok=True)
            log = open(os.path.join(self.args.log_dir, name + ".log"), "w")
        t = threading.Thread(target=self._pump, args=(name, p.stdout, log), daemon=True)
        t.start()
        self.threads.append(t)
        self.procs.append((name, p, is_trainer))

    def stop(self, procs, why):
        live = [(n, p) for n, p, _ in procs if p.poll() is None]
        if not live:
            return
        # A process stopped by a signal (SIGSTOP, a debugger, ^Z) is most often why the others
        # failed (they name it as missing from a collective): say so.
        names = [n + (" (stopped by a signal)" if _stopped(p.pid) else "") for n, p in live]
        self.say("stopping %s: %s" % (", ".join(names), why))
        for _, p in live:
            try:
                os.killpg(p.pid, signal.SIGTERM)
                os.killpg(p.pid, signal.SIGCONT)  # a stopped process then takes the SIGTERM
            except ProcessLookupError:
                pass
        end = time.time() + 5
        for _, p in live:
            try:
                p.wait(max(0.1, end - time.time()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()

    def start_collective(self, attempt):
        a = self.args
        world = a.nnodes * a.nproc_per_node
        first = a.node_rank * a.nproc_per_node
        self.say(
            "collective job: %d process(es) of %d here (ranks %d..%d), master %s"
            % (a.nproc_per_node, world, first, first + a.nproc_per_node - 1, self.master)
        )
        extra = {}
        store = os.environ.get("TIDE_STORE", "")
        if attempt and store.startswith("file://"):
            # Gloo's file store refuses the keys the last attempt left there ("File already
            # exists"): each restart meets in its own subdirectory, named alike on every node.
            path = os.path.join(store[len("file://") :], "restart%d" % attempt)
            os.makedirs(path, exist_ok=True)
            extra["TIDE_STORE"] = "file://" + path
            self.say("restart %d meets in the file store %s" % (attempt, path))
        for i in range(a.nproc_per_node):
            self.start(
                "rank.%d" % (first + i),
                dict(
                    extra,
                    TIDE_RANK=str(first + i),
                    TIDE_WORLD_SIZE=str(world),
                    TIDE_LOCAL_RANK=str(i),
                    TIDE_MASTER=self.master,
                    TIDE_RESTART_COUNT=str(attempt),
                ),
                True,
            )

    def run(self):
        a = self.args
        if self.collective:
            for attempt in range(a.max_restarts + 1):
                if attempt:
                    self.say("restarting the job (restart %d of %d)" % (attempt, a.max_restarts))
                    if not a.master:  # the last master's port may linger: take a fresh one
                        self.master = "127.0.0.1:%d" % free_ports(1)[0]
                self.procs = []
                self.start_collective(attempt)
                code = self.wait(len(self.procs))
                if code in (0, 124):
                    break
            return code
        pservers = _ids(a.start_pservers, len(self.endpoints), "--start_pservers")
        trainers = _ids(a.trainer_ids, a.trainers, "--trainer_ids")
        self.say(
            "pservers %s, %d trainer(s); starting pserver(s) %s and trainer(s) %s here"
            % (",".join(self.endpoints), a.trainers, pservers, trainers)
        )
        for i in pservers:
            self.start(
                "pserver.%d" % i,
                {
                    "TIDE_ROLE": "PSERVER",
                    "TIDE_CURRENT_ENDPOINT": self.endpoints[i],
                    "TIDE_PSERVER_ID": str(i),
                },
                False,
            )
        for i in trainers:
            self.start("trainer.%d" % i, {"TIDE_ROLE": "TRAINER", "TIDE_TRAINER_ID": str(i)}, True)
        return self.wait(len(trainers))

    def wait(self, trainers_here):
        """Until every process finished, one failed (the others are stopped) or --timeout."""
        a = self.args
        start = time.time()
        trainers_done_at = None
        while True:
            for name, p, _ in self.procs:
                code = p.poll()
                if code is not None and code != 0:
                    self.stop(self.procs, "%s exited with code %d" % (name, code))
                    self._join()
                    return code if code > 0 else 128 - code
            running = [(n, p, t) for n, p, t in self.procs if p.poll() is None]
            if not running:
                self._join()
                self.say("all processes finished")
                return 0
            # The grace period applies when every trainer of the job ran here; else the pservers
            # still serve trainers on other hosts.
            if not any(t for _, _, t in running) and trainers_here == a.trainers:
                trainers_done_at = trainers_done_at or time.time()
                if time.time() - trainers_done_at > a.grace:
                    self.stop(running, "the trainers finished %.0f s ago" % a.grace)
                    self._join()
                    return 0
            if a.timeout and time.time() - start > a.timeout:
                self.stop(self.procs, "--timeout %.0f s reached" % a.timeout)
                self._join()
                return 124
            time.sleep(0.05)

    def _join(self):
        for t in self.threads:
            t.join(timeout=5)


def main(argv=None):
    """The launcher's entry point: starts the job that `argv` describes and returns its exit status.

    Args:
        argv (list): the arguments; None: sys.argv[1:].
    """
    args = parse_args(sys.argv[1:] if argv is None else argv)
    job = Job(args)

    def on_signal(signum, _frame):
        job.stop(job.procs, "the launcher got signal %d" % signum)
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return job.run()


if __name__ == "__main__":
    sys.exit(main())
