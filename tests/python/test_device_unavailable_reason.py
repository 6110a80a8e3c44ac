"""A device plugin that finds no device says why (TideDeviceDef.unavailable_reason, ABI 1.1), and
the user sees that reason where a place of its kind is used and in the device listings
(tide.device_unavailable_reason, tide-plugins). tests/sdk/no_device: kind "nodev", 0 devices."""

import re
import subprocess

import numpy as np
import pytest
from ctest_env import path, require

import tide

NO_DEVICE = path("TIDE_TEST_PLUGIN_DIR", "libtide_test_no_device.so")
REASON = "no nodev card on the PCI bus (is the nodev driver loaded?)"


@pytest.fixture(scope="module", autouse=True)
def no_device_loaded():
    require("TIDE_TEST_PLUGIN_DIR", "libtide_test_no_device.so", what="the no_device test plugin")
    if "nodev" not in tide._C.device_kinds():
        tide.load_plugin(NO_DEVICE)


def _no_such_place(device=0):
    return (
        r"place nodev:%d does not exist: the 'nodev' device plugin \(%s\) reports 0 device\(s\): %s"
        % (device, re.escape(NO_DEVICE), re.escape(REASON))
    )


def test_the_listing_gives_the_plugins_reason():
    assert tide.device_count("nodev") == 0
    assert tide.places("nodev") == []
    assert tide.device_unavailable_reason("nodev") == REASON


def test_a_kind_with_devices_or_without_a_plugin():
    assert tide.device_unavailable_reason("cpu") == ""
    why = tide.device_unavailable_reason("nosuchkind")
    assert "no loaded device plugin provides kind 'nosuchkind'" in why


@pytest.mark.parametrize("device", [0, 1])
def test_using_a_place_of_the_kind_names_the_kind_the_plugin_file_and_the_reason(device):
    with pytest.raises(tide.TideError, match=_no_such_place(device)):
        tide._C.check_place(tide.Place("nodev", device))


def test_an_executor_run_on_the_kind_fails_with_the_reason():
    x = tide.layers.data(name="x", shape=[3], dtype="float32")
    y = tide.layers.scale(x, scale=2.0)
    with pytest.raises(tide.TideError, match=_no_such_place()):
        exe = tide.Executor(tide.Place("nodev", 0))
        exe.run(feed={"x": np.ones((2, 3), "float32")}, fetch_list=[y])


def test_tide_plugins_shows_the_reason():
    tool = require("TIDE_PLUGINS_TOOL", what="the tide-plugins tool")
    r = subprocess.run([tool, "--plugin_path=" + NO_DEVICE], capture_output=True, text=True)
    assert "no 'nodev' device: " + REASON in r.stdout, r.stdout + r.stderr
