"""The PaddleOCR (DB detection, CRNN and SVTR recognition), PaddleClas (MobileNetV3, PP-LCNet,
ResNet-vd) and PaddleNLP (ERNIE 3.0 classification, UIE) families, small versions saved by
PaddlePaddle 2.6 (legacy .pdmodel) and 3.3 (PIR .json) by tools/paddle_export.py: each loads and
matches Paddle's outputs, every output, on the plain CPU kernels and with oneDNN."""

import json
import os

import numpy as np
import pytest
import test_paddle_models as fixtures

import tide

# tools/paddle_family_models.py's FAMILIES.
FAMILIES = [
    "ocr_db_mv3",
    "ocr_db_r18vd",
    "ocr_crnn",
    "ocr_svtr",
    "clas_mobilenet_v3",
    "clas_pplcnet",
    "clas_resnet_vd",
    "nlp_ernie_cls",
    "nlp_uie",
]


def expected_outputs(d):
    """Paddle's outputs in fetch order: expected.npy, or expected.npz's out0, out1, ..."""
    if os.path.exists(os.path.join(d, "expected.npy")):
        return [np.load(os.path.join(d, "expected.npy"))]
    with np.load(os.path.join(d, "expected.npz")) as f:
        return [f["out%d" % i] for i in range(len(f.files))]


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", fixtures.LIBS)
@pytest.mark.parametrize("fmt", ["legacy", "pir"])
@pytest.mark.parametrize("name", FAMILIES)
def test_family_matches_paddle(tmp_path, name, fmt, lib, optimize):
    d = os.path.join(fixtures.FIXTURES, *(["pir", name] if fmt == "pir" else [name]))
    info = json.load(open(os.path.join(d, "info.json")))
    assert info["paddle"].startswith("3." if fmt == "pir" else "2.6"), info["paddle"]
    path = fixtures.pir_model(tmp_path, name) if fmt == "pir" else fixtures.model_path(name)
    feed, expected = fixtures.load_feed(d), expected_outputs(d)
    assert [list(e.shape) for e in expected] == info.get("output_shapes", [info["output_shape"]])
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        program, feeds, fetches = tide.io.load_inference_model(path, exe, optimize=optimize)
        assert sorted(feeds) == sorted(feed) and len(fetches) == len(expected)
        tide.set_flags({"use_mkldnn": lib == "mkldnn"})
        try:
            outs = exe.run(program, feed=feed, fetch_list=fetches)
        finally:
            tide.set_flags({"use_mkldnn": False})
    for out, want in zip(outs, expected):
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    kernels = [k for _, k in exe.last_run_info()["kernels"]]
    assert any("mkldnn" in k for k in kernels) == (lib == "mkldnn"), kernels
