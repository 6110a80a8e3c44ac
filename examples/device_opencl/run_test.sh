#!/usr/bin/env bash
# run_test.sh BUILD_DIR PYTHON: the OpenCL device example as a vendor builds and checks it. Installs
# Tide's SDK alone from BUILD_DIR to a prefix in BUILD_DIR/device_opencl_out_of_tree, builds the
# plugin out of tree with find_package(Tide) against it, trains fit_a_line and an MLP on opencl:0
# against the CPU (train_opencl.py), then runs the conformance kit on the plugin's ops, Tide's own
# op tests and the example's (conformance/). Exits 77 (ctest's SKIP_RETURN_CODE), saying why,
# where there is no OpenCL SDK to build against or no OpenCL device to run on (install
# ocl-icd-opencl-dev, opencl-c-headers and a driver, e.g. pocl-opencl-icd).
# The environment: PYTHONPATH (BUILD_DIR/python) and TIDE_PLUGIN_PATH (Tide's plugins), as ctest
# sets them.
set -euo pipefail
build="$(cd "$1" && pwd)"; python="$2"
here="$(cd "$(dirname "$0")" && pwd)"
work="$build/device_opencl_out_of_tree"
skip() { echo "SKIP: $*"; exit 77; }

rm -rf "$work/prefix" && mkdir -p "$work"
cmake -DCMAKE_INSTALL_PREFIX="$work/prefix" -P "$build/sdk/cmake_install.cmake" >/dev/null
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The build directory stays between runs (an incremental rebuild); the prefix is fresh.
if ! cmake -S "$here" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >"$work/configure.log" 2>&1; then
  if grep -q "OpenCL" "$work/configure.log"; then
    skip "no OpenCL SDK to build the plugin against: $(grep -m1 -i "opencl" "$work/configure.log")"
  fi
  cat "$work/configure.log"; exit 1
fi
cmake --build "$work/build"
plugin="$work/build/libtide_device_opencl.so"
test -f "$plugin"

# Train on the device (77 from here: the plugin found no OpenCL device).
"$python" "$here/train_opencl.py" --plugin "$plugin" --steps 40

# The conformance kit on the ops the plugin has kernels for: Tide's op tests, then the example's.
ops=elementwise_add,elementwise_sub,elementwise_mul,relu,square,scale,fill_constant,mul
ops+=,matmul_v2,mean,softmax_with_cross_entropy,sgd
"$python" -m tide.testing.conformance --plugin "$plugin" --place opencl:0 --ops "$ops" \
  --json "$work/conformance.json"
"$python" -m tide.testing.conformance --plugin "$plugin" --place opencl:0 --ops "$ops" \
  --tests "$here/conformance" --json "$work/conformance_extra.json"
