#!/usr/bin/env bash
# build.sh: configures (Ninja, ccache, the venv's Python) and builds everything into build/.
# Extra arguments go to CMake, e.g. -DTIDE_WITH_CUDA=OFF or -DTIDE_CUDA_ARCHITECTURES=90.
source "$(dirname "$0")/common.sh"
mkdir -p "$CCACHE_DIR"
PY_ARGS=()
[ -x "$TIDE_VENV/bin/python" ] && PY_ARGS=(-DPython_EXECUTABLE="$TIDE_VENV/bin/python")
log "configuring $TIDE_BUILD"
cmake -S "$TIDE_ROOT" -B "$TIDE_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache "${PY_ARGS[@]}" "$@" >/dev/null
log "building with $JOBS jobs"
cmake --build "$TIDE_BUILD" -j "$JOBS"
