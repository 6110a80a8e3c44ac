#!/usr/bin/env bash
# build.sh: configures (Ninja, ccache, the venv's Python) and builds into build/: everything, or
# the targets in TIDE_BUILD_TARGETS (quickstart.sh builds only what the main job needs).
# Extra arguments go to CMake, e.g. -DTIDE_WITH_CUDA=OFF or -DTIDE_CUDA_ARCHITECTURES=90.
# The parts install_deps.sh provides for are required (ON), so a missing one stops the configure
# with the package to install instead of being skipped; CUDA stays AUTO (built where nvcc is).
source "$(dirname "$0")/common.sh"
mkdir -p "$CCACHE_DIR"
PY_ARGS=()
[ -x "$TIDE_VENV/bin/python" ] && PY_ARGS=(-DPython_EXECUTABLE="$TIDE_VENV/bin/python")
log "configuring $TIDE_BUILD"
cmake -S "$TIDE_ROOT" -B "$TIDE_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache \
  -DTIDE_WITH_PYTHON=ON -DTIDE_WITH_MKLDNN=ON -DTIDE_WITH_ZMQ=ON -DTIDE_WITH_GLOO=ON "${PY_ARGS[@]}" "$@" >/dev/null
TARGET_ARGS=()
[ -n "${TIDE_BUILD_TARGETS:-}" ] && TARGET_ARGS=(--target $TIDE_BUILD_TARGETS)
log "building ${TIDE_BUILD_TARGETS:-everything} with $JOBS jobs"
cmake --build "$TIDE_BUILD" -j "$JOBS" "${TARGET_ARGS[@]}"
