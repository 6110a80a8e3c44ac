"""Which kernel libraries a test runs on: the plain CPU kernels always, oneDNN's where the
device_mkldnn plugin loaded (a build without oneDNN skips those cases, naming why)."""

import pytest

import tide

MKLDNN_SKIP_REASON = "device_mkldnn is not loaded"


def has_mkldnn():
    return any(p["name"] == "device_mkldnn" and p["status"] == "loaded" for p in tide.plugins())


# pytest parameters for a test taking `lib` ("plain" or "mkldnn").
LIBS = [
    "plain",
    pytest.param("mkldnn", marks=pytest.mark.skipif(not has_mkldnn(), reason=MKLDNN_SKIP_REASON)),
]
