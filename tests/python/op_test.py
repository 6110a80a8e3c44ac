"""OpTest lives in the installed package (tide.testing.op_test), where the conformance kit runs
these tests on a device; this module keeps `from op_test import OpTest, make` working here."""

from tide.testing.op_test import *  # noqa: F401,F403
from tide.testing.op_test import OpTest, _as_list, _expected, _is_float, make  # noqa: F401
