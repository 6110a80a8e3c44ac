"""pytest fixtures of the multi-process tests; the helpers live in e2e_util.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from e2e_util import procs  # noqa: E402,F401  (a fixture)
