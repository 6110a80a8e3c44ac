#!/usr/bin/env bash
# wheel.sh: the self-contained wheel (docs/packaging.md). `pip wheel .` (scikit-build-core, the
# project's CMake, in build-wheel/ beside build/ so ccache reuses build/'s objects), then
# scripts/wheel_repair.sh: `auditwheel repair` bundles the libraries Tide, tide._C and every
# plugin need beyond the manylinux policy's (protobuf, glog, gflags, oneDNN, ZeroMQ, gloo,
# libgomp...) into tide.libs/, tags the wheel manylinux_X_Y, and every ELF file is checked to find
# what it needs. Prints the wheel's size.
#
#   scripts/wheel.sh [-o DIR] [--python-headers DIR]
#
#   -o DIR                 where the repaired wheel goes (default dist/)
#   --python-headers DIR   build for another CPython than $TIDE_VENV's: DIR holds its Python.h
#                          (e.g. Debian 13's libpython3.13-dev unpacked; fresh_machine_check.sh
#                          --wheel does that); built in build-wheel-cpXY/, tagged cpXY
#
# Environment: TIDE_VENV (its python runs pip: scikit-build-core), TIDE_JOBS, TIDE_WITH_CUDA=ON
# (the CUDA plugin in the wheel too), TIDE_WHEEL_TOOLS (the tools' venv: wheel_repair.sh).
source "$(dirname "$0")/common.sh"
OUT="$TIDE_ROOT/dist" PY_HEADERS=""
while (($#)); do
  case "$1" in
    -o) OUT="$(mkdir -p "$2" && cd "$2" && pwd)"; shift ;;
    --python-headers) PY_HEADERS="$(cd "$2" && pwd)"; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "wheel.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
PY="$TIDE_VENV/bin/python"
"$PY" -c "import scikit_build_core" 2>/dev/null ||
  { echo "wheel.sh: $PY has no scikit-build-core (scripts/install_deps.sh installs it)" >&2; exit 1; }

TOOLS=$("$TIDE_ROOT/scripts/wheel_repair.sh" --tools)  # pybind11 and wheel for --python-headers

BUILD_DIR="$TIDE_ROOT/build-wheel" DEFINES=() PY_TAG=""
if [ -n "$PY_HEADERS" ]; then
  ver=$(awk '$2 == "PY_MAJOR_VERSION" {M = $3} $2 == "PY_MINOR_VERSION" {m = $3} END {print M m}' \
    "$PY_HEADERS/patchlevel.h" 2>/dev/null)
  [ -n "$ver" ] || { echo "wheel.sh: no Python headers (patchlevel.h) in $PY_HEADERS" >&2; exit 1; }
  PY_TAG="cp$ver" BUILD_DIR="$TIDE_ROOT/build-wheel-cp$ver"
  DEFINES=(--config-settings=cmake.define.TIDE_PYTHON_HEADERS="$PY_HEADERS"
           --config-settings=cmake.define.pybind11_DIR="$("$TOOLS/bin/pybind11-config" --cmakedir)")
fi

raw="$(mktemp -d /tmp/tide-wheel-raw.XXXXXX)"
trap 'rm -rf "$raw"' EXIT
log "building the wheel in $BUILD_DIR${PY_TAG:+ for $PY_TAG} ($JOBS jobs)"
start=$SECONDS
# The compilers build/ used (ccache keys on their names; pip's build would pick g++ where CMake
# picks c++), and PYTHONCOERCECLOCALE=0 (ccache hashes the locale): tests/packaging/wheel_test.sh.
(cd "$TIDE_ROOT" && CC="${CC:-cc}" CXX="${CXX:-c++}" PYTHONCOERCECLOCALE=0 \
  CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" "$PY" -m pip wheel -q --no-build-isolation --no-deps \
  --disable-pip-version-check -w "$raw" --config-settings=build-dir="$BUILD_DIR" "${DEFINES[@]}" .)
whl=$(ls "$raw"/tide-*.whl)
if [ -n "$PY_TAG" ]; then  # pip ran under $PY: the file holds $PY_TAG's extension, say so
  "$TOOLS/bin/wheel" tags --remove --python-tag "$PY_TAG" --abi-tag "$PY_TAG" "$whl" >/dev/null
  whl=$(ls "$raw"/tide-*.whl)
fi
log "built $(basename "$whl") in $((SECONDS - start)) s; auditwheel repair"
"$TIDE_ROOT/scripts/wheel_repair.sh" "$whl" "$OUT"
