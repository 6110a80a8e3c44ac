"""The CPU threading environment Tide sets before its plugins (and an OpenMP runtime they bring,
as oneDNN does) load: a brief spin (GOMP_SPINCOUNT=5000) unless --cpu_spin_wait, OMP_NUM_THREADS
from --cpu_threads; what the user set is kept (a wait policy of theirs decides the spin). Each
case is a fresh process (the runtime reads its environment once)."""

import os
import subprocess
import sys

import numpy as np
import pytest

PROBE = (
    "import ctypes, tide\n"
    "getenv = ctypes.CDLL(None).getenv\n"
    "getenv.restype = ctypes.c_char_p\n"
    "print([(getenv(v) or b'').decode() for v in (b'GOMP_SPINCOUNT', b'OMP_NUM_THREADS')])\n"
)


def probe(**env):
    base = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "OMP_WAIT_POLICY",
            "GOMP_SPINCOUNT",
            "OMP_NUM_THREADS",
            "TIDE_CPU_THREADS",
            "TIDE_CPU_SPIN_WAIT",
        )
    }
    r = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=dict(base, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return eval(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "env,want",
    [
        ({}, ["5000", ""]),  # default: spin ~50 us, then sleep
        ({"TIDE_CPU_SPIN_WAIT": "true"}, ["", ""]),  # the runtime's own default
        ({"TIDE_CPU_THREADS": "3"}, ["5000", "3"]),
        ({"GOMP_SPINCOUNT": "77", "OMP_NUM_THREADS": "1", "TIDE_CPU_THREADS": "3"}, ["77", "1"]),
        ({"OMP_WAIT_POLICY": "ACTIVE"}, ["", ""]),  # the user's policy decides
    ],
)
def test_threading_environment(env, want):
    assert probe(**env) == want


def test_a_spinning_cpu_pool_still_computes(tmp_path):
    code = (
        "import numpy as np, tide\n"
        "x = tide.layers.data(name='x', shape=[64], dtype='float32')\n"
        "y = tide.layers.reduce_sum(tide.layers.relu(x))\n"
        "exe = tide.Executor(tide.CPUPlace())\n"
        "a = np.arange(-64 * 8, 64 * 8, dtype='float32').reshape(16, 64)\n"
        "print(float(exe.run(feed={'x': a}, fetch_list=[y])[0].reshape(-1)[0]), float(np.maximum(a, 0).sum()))\n"
    )
    for spin in ("true", "false"):
        r = subprocess.run(
            [sys.executable, "-c", code],
            env=dict(os.environ, TIDE_CPU_SPIN_WAIT=spin, TIDE_CPU_THREADS="2"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        got, want = map(float, r.stdout.split())
        assert got == want


# Kernels that split their work over the CPU pool (ParallelFor / EigenEval: activations,
# elementwise, scale, mean, batch_norm, pool, the optimizers, the float64 GEMM) must compute the
# same with any number of threads. Printed with repr so every bit is compared.
SPLIT_KERNELS = """
import numpy as np, tide
rng = np.random.RandomState(0)
x = tide.layers.data(name='x', shape=[64, 32, 32], dtype='float32')
img = tide.layers.data(name='img', shape=[16, 32, 32], dtype='float32')
a = tide.layers.data(name='a', shape=[300], dtype='float64')
b = tide.layers.data(name='b', shape=[200], dtype='float64')
y = tide.layers.scale(tide.layers.relu(x), scale=1.5, bias=0.25)
z = tide.layers.elementwise_add(y, tide.layers.sigmoid(x))
m = tide.layers.mean(z)
bn = tide.layers.batch_norm(img)
pool = tide.layers.pool2d(img, pool_size=2, pool_stride=2, pool_type='avg')
mm = tide.layers.matmul(a, b, transpose_x=True)
w = tide.layers.create_parameter([64 * 32 * 32], 'float32', name='w',
                                 default_initializer=tide.initializer.Constant(0.5))
loss = tide.layers.mean(tide.layers.elementwise_mul(tide.layers.reshape(x, [-1, 64 * 32 * 32]), w))
tide.optimizer.Adam(learning_rate=0.01).minimize(loss)
exe = tide.Executor(tide.CPUPlace())
exe.run(tide.default_startup_program())
feed = {'x': rng.randn(4, 64, 32, 32).astype('float32'), 'img': rng.randn(8, 16, 32, 32).astype('float32'),
        'a': rng.randn(300, 300), 'b': rng.randn(300, 200)}
out = exe.run(feed=feed, fetch_list=[z, m, bn, pool, mm, 'w'])
print(repr([o.tolist() for o in out]))
"""


def run_with_threads(threads):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "TIDE_CPU_THREADS")}
    r = subprocess.run(
        [sys.executable, "-c", SPLIT_KERNELS],
        env=dict(env, TIDE_CPU_THREADS=str(threads)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return [np.array(o) for o in eval(r.stdout.strip().splitlines()[-1])]


def test_split_kernels_compute_the_same_with_any_thread_count():
    one = run_with_threads(1)
    for threads in (2, 3):
        many = run_with_threads(threads)
        for name, got, want in zip(
            ["elementwise", "mean", "batch_norm", "pool2d", "matmul", "adam"], many, one
        ):
            # The mean's float32 partial sums (one per thread) are added in another grouping.
            if name == "mean":
                np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=name)
            elif name == "matmul":
                np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)
            else:
                np.testing.assert_array_equal(got, want, err_msg=name)


THREAD_COUNT = """
import os, numpy as np, tide
def threads():
    return len(os.listdir('/proc/self/task'))
before = threads()
x = tide.layers.data(name='x', shape=[512], dtype='float32')
h = tide.layers.fc(tide.layers.relu(x), size=512, act='relu')
exe = tide.Executor(tide.CPUPlace())
exe.run(tide.default_startup_program())
for _ in range(3):
    exe.run(feed={'x': np.random.rand(256, 512).astype('float32')}, fetch_list=[h])
print(before, threads())
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc")
def test_kernels_and_the_gemm_share_one_pool():
    """relu and the elementwise bias run on the CPU pool's parallel_for, the fc's GEMM on oneDNN's
    OpenMP: with one pool, running them adds only OpenMP's team (threads - 1 workers), not a
    second pool of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "TIDE_CPU_THREADS")}
    r = subprocess.run(
        [sys.executable, "-c", THREAD_COUNT],
        env=dict(env, TIDE_CPU_THREADS="3"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    before, after = map(int, r.stdout.split())
    assert after - before <= 2, (before, after)
