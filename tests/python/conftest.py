"""Shared fixtures: every test builds into fresh default programs, names and a fresh scope.
Where tide is not importable (plain `pytest` without ctest's PYTHONPATH), every file is skipped
with the reason; what a test needs from the rest of ctest's environment is in ctest_env.py."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

try:
    import tide  # noqa: E402
except ImportError as e:
    _NO_TIDE = (
        "tide is not importable (%s): run the tests through ctest, or set "
        "PYTHONPATH=<build>/python" % e
    )

    class _NeedsTide(pytest.Item):
        def runtest(self):
            pytest.skip(_NO_TIDE)

        def reportinfo(self):
            return self.path, None, self.name

    class _SkippedModule(pytest.Module):
        """A test file not imported (it imports tide): one skipped test in its place."""

        def collect(self):
            return [_NeedsTide.from_parent(self, name="needs_tide")]

    def pytest_pycollect_makemodule(module_path, parent):
        return _SkippedModule.from_parent(parent, path=module_path)


def pytest_configure(config):
    # ctest runs the sweeps apart (py_test_conformance_sweep, label "sweep"): .ci/run runs them,
    # the README's test command leaves them out.
    config.addinivalue_line("markers", "sweep: a whole-suite run, ctest's *_sweep entry")


@pytest.fixture(autouse=True)
def fresh_programs():
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 1
    with (
        tide.unique_name.guard(),
        tide.program_guard(main, startup),
        tide.scope_guard(tide.Scope()),
    ):
        yield main, startup


@pytest.fixture
def core_flags():
    """core_flags(name=value, ...) sets core flags (tide.set_flags) until the test ends."""
    saved = {}

    def set_flags(**values):
        for name in values:
            saved.setdefault(name, tide.get_flag(name))
        tide.set_flags(values)

    yield set_flags
    tide.set_flags(saved)


@pytest.fixture
def exe():
    return tide.Executor(tide.CPUPlace())


@pytest.fixture
def rng():
    return np.random.RandomState(1234)
