"""What the tests take from ctest's environment (tests/python/CMakeLists.txt sets it): a file run
by plain `pytest tests/python/<file>` skips, saying why, what needs a part only ctest points to
(the test plugins, the sim device, the build tree's tools), and runs the rest."""

import os

import pytest

import tide


def _path(var, parts):
    base = os.environ.get(var, "")
    return os.path.join(base, *parts) if base else ""


def _reason(var, path, what):
    if not path:
        return "needs %s: $%s is unset (ctest sets it; run the file through ctest)" % (what, var)
    return "needs %s: %s does not exist (not built)" % (what, path)


def needs(var, *parts, what):
    """A skipif marker for tests that need the file $var/parts... (`what` says what it is)."""
    path = _path(var, parts)
    return pytest.mark.skipif(not path or not os.path.exists(path), reason=_reason(var, path, what))


def require(var, *parts, what):
    """The path of the file $var/parts..., or a skip of the running test saying why not."""
    path = _path(var, parts)
    if not path or not os.path.exists(path):
        pytest.skip(_reason(var, path, what))
    return path


def path(var, *parts):
    """$var/parts... ("" when $var is unset), for tests that check it exists themselves."""
    return _path(var, parts)


def plugin_file(name):
    """The file the loaded plugin `name` came from: from ctest's TIDE_PLUGIN_PATH, or the
    package's own plugin directory under plain pytest."""
    for record in tide.plugins():
        if record["name"] == name and record["status"] == "loaded":
            return record["file"]
    pytest.skip("needs the %s plugin, which did not load" % name)
