"""The suite runs under plain `pytest tests/python/<file>` too (issue 37): without ctest's
environment, what needs it (the test plugins, the sim device, the build tree's tools) is skipped
with a reason that names the variable, everything else runs and passes; without tide on the path,
every file is skipped with the reason."""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Set by tests/python/CMakeLists.txt and only there (TIDE_SOURCE_DIR has a fallback: this tree).
CTEST_ONLY = ("TIDE_TEST_PLUGIN_DIR", "TIDE_BUILD_DIR", "TIDE_PLUGINS_TOOL", "TIDE_PLUGIN_PATH")
HELPERS = ("conftest.py", "ctest_env.py", os.path.basename(__file__))


def _files_reading_ctest_env():
    files = []
    for name in sorted(os.listdir(HERE)):
        if name.startswith("test_") and name.endswith(".py") and name not in HELPERS:
            with open(os.path.join(HERE, name)) as f:
                text = f.read()
            if any(var in text for var in CTEST_ONLY):
                files.append(name)
    return files


def _pytest(files, env):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-m", "not sweep"]
        + files,
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )


def test_files_that_use_ctests_environment_pass_or_skip_without_it():
    files = _files_reading_ctest_env()
    assert "test_plugins_runtime.py" in files and "test_robustness.py" in files, files
    env = {k: v for k, v in os.environ.items() if k not in CTEST_ONLY}
    p = _pytest(files, env)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-6000:]
    skips = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert skips, out[-3000:]  # the test plugins and the sim device are ctest's
    for line in skips:
        if any(
            var in line for var in ("TIDE_TEST_PLUGIN_DIR", "TIDE_BUILD_DIR", "TIDE_PLUGINS_TOOL")
        ):
            assert "is unset (ctest sets it" in line, line


def test_without_tide_on_the_path_every_file_is_skipped_with_the_reason():
    env = {k: v for k, v in os.environ.items() if k not in CTEST_ONLY + ("PYTHONPATH",)}
    probe = subprocess.run([sys.executable, "-c", "import tide"], env=env, capture_output=True)
    if probe.returncode == 0:  # installed in this interpreter: nothing to skip
        return
    p = _pytest(["test_program.py", "test_io.py"], env)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    assert re.search(r"2 skipped", out), out[-3000:]
    assert "tide is not importable" in out and "PYTHONPATH=<build>/python" in out, out[-3000:]
