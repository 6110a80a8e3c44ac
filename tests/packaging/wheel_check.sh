#!/usr/bin/env bash
# wheel_check.sh DIR: run as root in a fresh Debian 13 root that has only python3 and python3-venv
# (scripts/fresh_machine_check.sh --wheel DIR), from a clean clone's directory. DIR holds the
# repaired tide wheel (scripts/wheel.sh, built on Debian 12 for this root's CPython) and the acme
# plugin wheel (tests/packaging/vendor_wheel, built against that wheel's SDK). In a venv: pip
# installs the tide wheel (numpy from PyPI, scikit-learn for the example's data); `import tide`
# loads every plugin with the wheel's bundled libraries (no -dev package, no system protobuf,
# oneDNN...); fit_a_line trains; a Paddle model (tests/fixtures/paddle) loads and matches Paddle's
# output; the plugin wheel's entry point loads acme_ops and its op runs. Prints the wheel's size
# and the `import tide` time (median of 7 fresh processes).
set -euo pipefail
dir="$1" src="$PWD"
trap 'echo "wheel_check: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
whl=$(ls "$dir"/tide-*manylinux*.whl) acme=$(ls "$dir"/acme_tide-*.whl)
echo "wheel: $(basename "$whl"), $(du -h "$whl" | cut -f1) ($(stat -c %s "$whl") bytes)"
echo "python: $(python3 -VV | head -1); glibc $(ldd --version | head -1 | awk '{print $NF}')"
if dpkg-query -W -f='${Package}\n' 2>/dev/null | grep -E -- '-dev$'; then
  echo "wheel_check: -dev packages installed (above): not the machine this check means" >&2
  exit 1
fi
python3 -m venv /root/venv
py=/root/venv/bin/python
"$py" -m pip install -q --disable-pip-version-check "$whl" scikit-learn
cd /tmp  # no source tree on the path

"$py" - "$src" <<'PY'
import os, sys
import numpy as np
import tide
assert tide.__file__.startswith(sys.prefix), tide.__file__
plugins = tide.plugins()
bad = [p for p in plugins if p["status"] != "loaded"]
assert not bad, bad
names = sorted(p["name"] for p in plugins)
assert {"ops_math", "ops_nn", "device_cpu", "device_mkldnn", "ops_optimizers"} <= set(names), names
# The libraries come from the wheel (tide.libs), not from the system.
maps = open("/proc/self/maps").read()
for lib in ("libprotobuf", "libglog", "libdnnl", "libgomp"):
    paths = {l.split()[-1] for l in maps.splitlines() if "/" + lib in l}
    assert paths and all("/site-packages/tide.libs/" in p for p in paths), (lib, paths)
print("import tide: %d plugins loaded (%s); protobuf, glog, oneDNN, libgomp from tide.libs"
      % (len(names), ", ".join(names)))
if "device_cuda" in names:  # TIDE_WITH_CUDA=ON: loads without CUDA, and offers no gpu place
    gpus = tide.device_count("gpu")
    assert gpus == 0 or os.path.exists("/dev/nvidia0"), gpus
    assert not any("libcud" in l or "libcublas" in l for l in maps.splitlines()), "CUDA mapped"
    print("CUDA plugin: loaded, %d gpu place(s)%s" % (gpus, "" if gpus else
          " (no CUDA driver here: unavailable, not a failure; no CUDA library bundled or opened)"))

sys.path.insert(0, os.path.join(sys.argv[1], "examples"))  # the example script only
import fit_a_line
loss, optimum, pred, test_y = fit_a_line.train(passes=20, verbose=False)
assert loss <= optimum * 1.10, (loss, optimum)
print("fit_a_line: loss %.4f (least-squares optimum %.4f)" % (loss, optimum))

fixtures = os.path.join(sys.argv[1], "tests", "fixtures", "paddle")
for model, mkldnn in (("lenet", False), ("resnet18", True)):
    d = os.path.join(fixtures, model)
    x, expected = np.load(os.path.join(d, "input.npy")), np.load(os.path.join(d, "expected.npy"))
    exe = tide.Executor(tide.CPUPlace())
    program, feeds, fetches = tide.io.load_inference_model(d, exe)
    tide.set_flags({"use_mkldnn": mkldnn})
    (out,) = exe.run(program, feed={feeds[0]: x}, fetch_list=fetches)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    print("Paddle model %s%s: output %s matches Paddle's" % (model, " (oneDNN)" if mkldnn else "",
                                                              list(out.shape)))
PY

"$py" -m pip install -q --disable-pip-version-check --no-index --no-deps "$acme"
"$py" - <<'PY'
import sys
import numpy as np
import tide
acme = [p for p in tide.plugins() if p["name"] == "acme_ops"]
assert acme and acme[0]["status"] == "loaded", tide.plugins()
assert "/acme_tide/plugins/" in acme[0]["file"] and "acme_tide" not in sys.modules, acme
x = tide.layers.data(name="x", shape=[3], dtype="float32")
y = tide.layers.acme_axpb(x, a=2.0, b=0.5)
xs = np.arange(6, dtype="float32").reshape(2, 3)
(out,) = tide.Executor(tide.CPUPlace()).run(feed={"x": xs}, fetch_list=[y])
np.testing.assert_allclose(out, 2.0 * xs + 0.5)
print("plugin wheel: acme_ops loaded by its tide.plugins entry point from", acme[0]["file"])
PY
/root/venv/bin/tide-plugins | grep -q acme_ops

# `import tide` in a fresh process, wall time: median of 7 (and `import numpy`'s, its share).
"$py" - <<'PY'
import statistics, subprocess, sys, time
def wall(code):
    ts = []
    for _ in range(7):
        t = time.perf_counter(); subprocess.run([sys.executable, "-c", code], check=True)
        ts.append(time.perf_counter() - t)
    return 1000 * statistics.median(ts)
print("import tide: %.0f ms wall (median of 7 processes; python -c pass %.0f ms, import numpy %.0f ms)"
      % (wall("import tide"), wall("pass"), wall("import numpy")))
PY
echo "wheel_check: passed"
