#!/usr/bin/env bash
# wheel_test.sh SOURCE_DIR WHEEL_BUILD_DIR PYTHON: Tide as a pip user and a vendor get it.
#  1. pip wheel SOURCE_DIR with scikit-build-core (PYTHON's, no build isolation), building in
#     WHEEL_BUILD_DIR (beside build/: ccache reuses its objects, CCACHE_BASEDIR=SOURCE_DIR, when
#     CC and CXX name the compilers build/ used: ccache keys on the compiler's name, and pip's
#     build picks g++ where CMake alone picks c++; ctest sets them);
#     with TIDE_WHEEL_REPAIR=1, then scripts/wheel_repair.sh: auditwheel repair bundles the libraries the wheel's ELF files
#     need into tide.libs/ (manylinux tag) and every file is checked to find them (wheel_libs_check.py);
#  2. a fresh venv (no system site-packages) gets the wheel and numpy/scikit-learn (wheels cached
#     in ~/.cache/tide-wheels, fetched once from PyPI); with no build tree around (cd to a temporary
#     directory, no PYTHONPATH / TIDE_PLUGIN_PATH) it trains fit_a_line and runs tide-plugins;
#  3. the acme_ops op pack built against the pip-installed SDK (tide.sdk.cmake_prefix_path()) as a
#     second wheel with a "tide.plugins" entry point: `import tide` loads it, its op runs;
#  4. tide.utils.cpp_extension.load of an op with a gradient, trained (cpp_extension_check.py).
# Prints each step's wall time.
set -euo pipefail
src="$(cd "$1" && pwd)"; wheel_build="$2"; py="$3"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d /tmp/tide-wheel-test.XXXXXX)"
trap '[ -n "${TIDE_KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT  # TIDE_KEEP_WORK=1: keep
trap 'echo "wheel_test: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
wheels="${TIDE_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tide-wheels}"
export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=1
export CCACHE_DIR="${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tide-ccache}"
unset PYTHONPATH TIDE_PLUGIN_PATH TIDE_PLUGIN_PATH_ONLY TIDE_BUILD_DIR
export CMAKE_BUILD_PARALLEL_LEVEL="${TIDE_JOBS:-2}"
t=$SECONDS
step() { echo "[wheel_test] $* ($((SECONDS - t)) s so far)"; }

"$py" -c "import scikit_build_core" 2>/dev/null ||
  { echo "wheel_test: $py has no scikit-build-core (scripts/install_deps.sh installs it)"; exit 77; }
# ccache's hit and miss counters (direct + preprocessed hits, misses), to tell how much was reused.
ccache_counts() {
  ccache --print-stats 2>/dev/null | awk '$1 ~ /^(direct_cache_hit|preprocessed_cache_hit)$/ {h += $2}
    $1 == "cache_miss" {m = $2} END {print h + 0, m + 0}'
}
step "building the tide wheel in $wheel_build (CXX=${CXX:-unset})"
read -r hits0 misses0 < <(ccache_counts)
# PYTHONCOERCECLOCALE=0: under the C locale (a bare login) Python would export LC_CTYPE=C.UTF-8 to
# the compilers it starts, and ccache hashes the locale, so no object of build/ would be reused.
(cd "$src" && PYTHONCOERCECLOCALE=0 "$py" -m pip wheel -q --no-build-isolation --no-deps \
   --disable-pip-version-check -w "$work/dist" --config-settings=build-dir="$wheel_build" .)
whl=$(ls "$work"/dist/tide-*.whl)
read -r hits1 misses1 < <(ccache_counts)
step "built $(basename "$whl") ($(du -h "$whl" | cut -f1)); ccache: $((hits1 - hits0)) hits," \
  "$((misses1 - misses0)) compiled (other builds running at the same time count too)"
# The repair (auditwheel) only with TIDE_WHEEL_REPAIR=1, as scripts/wheel.sh and
# fresh_machine_check.sh --wheel run it: once, under heavy load, auditwheel exited non-zero after
# writing the wheel, cause unknown; CI's test command stays off it until that is understood.
repaired=0
if [ "${TIDE_WHEEL_REPAIR:-0}" = 1 ]; then
  step "auditwheel repair (scripts/wheel_repair.sh)"
  "$src/scripts/wheel_repair.sh" "$whl" "$work/repaired"
  whl=$(ls "$work"/repaired/tide-*manylinux*.whl)
  repaired=1
fi
# What is in it: the core, the in-tree plugins, the SDK, the bundled libraries; never a test-only
# plugin.
"$py" - "$whl" "$repaired" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
repaired = sys.argv[2] == "1"
need = ["tide/__init__.py", "tide/lib/libtide_core.so", "tide/lib/tide/plugins/libtide_ops_math.so",
        "tide/lib/tide/plugins/libtide_device_cpu.so", "tide/include/tide/plugin_api.h",
        "tide/lib/cmake/Tide/TideConfig.cmake", "tide/bin/tide-plugins", "tide/sdk.py",
        "tide/utils/cpp_extension.py", "tide/share/tide/examples/acme_ops/acme_ops.cc",
        "tide/share/tide/examples/sim_device/sim_device.cc"]
missing = [n for n in need if n not in names]
assert not missing, "not in the wheel: %s" % missing
assert any(n.startswith("tide/_C") and n.endswith(".so") for n in names)
assert not repaired or any(n.startswith("tide.libs/libprotobuf-") for n in names), "protobuf not bundled"
test_only = [n for n in names if any(k in n for k in ("sim", "acme", "sloppy", "noinfer", "test_plugin"))
             and n.endswith(".so")]
assert not test_only, "test-only plugins in the wheel: %s" % test_only
assert not any("_build_paths" in n for n in names)
PY

step "making a fresh venv"
base_py=$("$py" -c "import sys; print(getattr(sys, '_base_executable', sys.executable))")
"$base_py" -m venv "$work/venv"
vpy="$work/venv/bin/python"
if ! "$vpy" -m pip install -q --disable-pip-version-check --no-index --find-links "$wheels" numpy scikit-learn 2>/dev/null; then
  mkdir -p "$wheels"
  "$vpy" -m pip download -q --disable-pip-version-check -d "$wheels" numpy scikit-learn
  "$vpy" -m pip install -q --disable-pip-version-check --no-index --find-links "$wheels" numpy scikit-learn
fi
"$vpy" -m pip install -q --disable-pip-version-check --no-index --find-links "$wheels" "$whl"

cd "$work"  # no build tree, no source tree on the path
step "fit_a_line from the installed wheel"
"$vpy" - "$src/examples" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])   # the example script only; tide comes from the venv
import tide, fit_a_line
assert tide.__file__.startswith(sys.prefix), tide.__file__
names = {p["name"] for p in tide.plugins() if p["status"] == "loaded"}
assert {"ops_math", "ops_nn", "device_cpu", "ops_optimizers"} <= names, names
assert all(p["status"] == "loaded" for p in tide.plugins()), tide.plugins()
loss, optimum, pred, test_y = fit_a_line.train(passes=20, verbose=False)
assert loss <= optimum * 1.10, (loss, optimum)
print("fit_a_line: %d plugins, loss %.4f (optimum %.4f)" % (len(names), loss, optimum))
PY
"$work/venv/bin/tide-plugins" > "$work/plugins.txt"
grep -q "ops_math" "$work/plugins.txt"
grep -q "^  $work/venv/lib/python.*/site-packages/tide/lib/tide/plugins$" "$work/plugins.txt"
"$work/venv/bin/tide-plugins" --timing | tee "$work/timing.txt"
grep -q "^import tide:" "$work/timing.txt" && grep -q "share" "$work/timing.txt"

step "the acme_ops plugin wheel, built against the pip-installed SDK"
prefix=$("$vpy" -c "import tide.sdk; print(tide.sdk.cmake_prefix_path())")
test -f "$prefix/lib/cmake/Tide/TideConfig.cmake"
test -f "$("$vpy" -c "import tide.sdk; print(tide.sdk.examples_dir())")/acme_ops/CMakeLists.txt"
cp -r "$here/vendor_wheel" "$work/vendor"
sed -i "s|\${CMAKE_CURRENT_SOURCE_DIR}/../../sdk/acme_ops/acme_ops.cc|$src/tests/sdk/acme_ops/acme_ops.cc|" \
  "$work/vendor/CMakeLists.txt"
(cd "$work/vendor" && CMAKE_PREFIX_PATH="$prefix" "$py" -m pip wheel -q --no-build-isolation --no-deps \
   --disable-pip-version-check -w "$work/dist" .)
"$vpy" -m pip install -q --disable-pip-version-check --no-index --no-deps "$work"/dist/acme_tide-*.whl
"$vpy" - <<'PY'
import sys, numpy as np
import tide
acme = [p for p in tide.plugins() if p["name"] == "acme_ops"]
assert acme and acme[0]["status"] == "loaded", tide.plugins()
assert "/acme_tide/plugins/" in acme[0]["file"], acme[0]["file"]
assert "acme_tide" not in sys.modules  # found by its entry point, never imported
assert tide.entry_point_plugin_dirs() and tide.entry_point_plugin_dirs()[0].endswith("acme_tide/plugins")
x = tide.layers.data(name="x", shape=[3], dtype="float32")
y = tide.layers.acme_axpb(x, a=2.0, b=0.5)
exe = tide.Executor(tide.CPUPlace())
xs = np.arange(6, dtype="float32").reshape(2, 3)
out, = exe.run(feed={"x": xs}, fetch_list=[y])
np.testing.assert_allclose(out, 2.0 * xs + 0.5)
print("acme_ops from its wheel's entry point: loaded from", acme[0]["file"])
PY
TIDE_PLUGIN_PATH_ONLY=1 TIDE_PLUGIN_PATH= "$vpy" -c "
import tide; assert tide.plugins() == [], tide.plugins()"
"$work/venv/bin/tide-plugins" | grep -q acme_ops

step "cpp_extension.load from the installed wheel"
"$vpy" "$here/cpp_extension_check.py" "$work/extensions"
step "done"
