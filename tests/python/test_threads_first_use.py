"""Two threads whose first use of tide is at the same moment: making the first LoDTensor from a
numpy array initialises pybind11's numpy API table, a function-local static whose initialiser
imports numpy; two threads there at once deadlocked (one waiting on the static's guard holding
the GIL, the other's import waiting for the GIL). _C now makes it at import."""

import subprocess
import sys

SCRIPT = """
import threading
import numpy as np
import tide
start = threading.Barrier(2)
def make():
    start.wait()
    for _ in range(50):
        tide.LoDTensor(np.random.rand(4).astype("float32"))
threads = [threading.Thread(target=make) for _ in range(2)]
[t.start() for t in threads]
[t.join() for t in threads]
print("done")
"""


def test_two_threads_making_their_first_tensors_at_once_do_not_deadlock():
    # A fresh process each time (the table is made once per process); it hung 2 runs in 3.
    for _ in range(4):
        p = subprocess.run(
            [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
        )
        assert p.returncode == 0 and "done" in p.stdout, p.stdout + p.stderr
