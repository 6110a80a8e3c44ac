"""The CPU threading environment Tide sets before its plugins (and an OpenMP runtime they bring,
as oneDNN does) load: a brief spin (GOMP_SPINCOUNT=5000) unless --cpu_spin_wait, OMP_NUM_THREADS
from --cpu_threads; what the user set is kept (a wait policy of theirs decides the spin). Each
case is a fresh process (the runtime reads its environment once)."""
import os
import subprocess
import sys

import pytest

PROBE = ("import ctypes, tide\n"
         "getenv = ctypes.CDLL(None).getenv\n"
         "getenv.restype = ctypes.c_char_p\n"
         "print([(getenv(v) or b'').decode() for v in (b'GOMP_SPINCOUNT', b'OMP_NUM_THREADS')])\n")


def probe(**env):
    base = {k: v for k, v in os.environ.items()
            if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "TIDE_CPU_THREADS",
                         "TIDE_CPU_SPIN_WAIT")}
    r = subprocess.run([sys.executable, "-c", PROBE], env=dict(base, **env), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return eval(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("env,want", [
    ({}, ["5000", ""]),                                  # default: spin ~50 us, then sleep
    ({"TIDE_CPU_SPIN_WAIT": "true"}, ["", ""]),           # the runtime's own default
    ({"TIDE_CPU_THREADS": "3"}, ["5000", "3"]),
    ({"GOMP_SPINCOUNT": "77", "OMP_NUM_THREADS": "1", "TIDE_CPU_THREADS": "3"}, ["77", "1"]),
    ({"OMP_WAIT_POLICY": "ACTIVE"}, ["", ""]),            # the user's policy decides
])
def test_threading_environment(env, want):
    assert probe(**env) == want


def test_a_spinning_cpu_pool_still_computes(tmp_path):
    code = ("import numpy as np, tide\n"
            "x = tide.layers.data(name='x', shape=[64], dtype='float32')\n"
            "y = tide.layers.reduce_sum(tide.layers.relu(x))\n"
            "exe = tide.Executor(tide.CPUPlace())\n"
            "a = np.arange(-64 * 8, 64 * 8, dtype='float32').reshape(16, 64)\n"
            "print(float(exe.run(feed={'x': a}, fetch_list=[y])[0].reshape(-1)[0]), float(np.maximum(a, 0).sum()))\n")
    for spin in ("true", "false"):
        r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, TIDE_CPU_SPIN_WAIT=spin,
                                                                  TIDE_CPU_THREADS="2"),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        got, want = map(float, r.stdout.split())
        assert got == want
