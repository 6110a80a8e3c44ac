"""Shared fixtures: every test builds into fresh default programs, names and a fresh scope."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import tide  # noqa: E402


def pytest_configure(config):
    # ctest runs the sweeps apart (py_test_conformance_sweep, label "sweep"): .ci/run runs them,
    # the README's test command leaves them out.
    config.addinivalue_line("markers", "sweep: a whole-suite run, ctest's *_sweep entry")


@pytest.fixture(autouse=True)
def fresh_programs():
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 1
    with tide.unique_name.guard(), tide.program_guard(main, startup), tide.scope_guard(tide.Scope()):
        yield main, startup


@pytest.fixture
def exe():
    return tide.Executor(tide.CPUPlace())


@pytest.fixture
def rng():
    return np.random.RandomState(1234)
