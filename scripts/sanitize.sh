#!/usr/bin/env bash
# sanitize.sh [ctest args...]: builds Tide with AddressSanitizer + UndefinedBehaviorSanitizer (gcc)
# into build-asan/ (TIDE_ASAN_BUILD) and runs the C++ tests, then the Python suites, under them.
# Every tensor is its own system allocation (TIDE_USE_SYSTEM_ALLOCATOR=1: the buddy allocator
# would hide overflows inside its arenas). Python itself is not instrumented: libasan and
# libstdc++ are preloaded into it, and leak checking is off there (the interpreter's own
# allocations would drown real reports). TIDE_SANITIZE_E2E=1 runs the multi-process suites too;
# TIDE_SANITIZE_TARGETS builds only those targets (then pass ctest -R to run what they cover).
source "$(dirname "$0")/common.sh"
ASAN_BUILD="${TIDE_ASAN_BUILD:-$TIDE_ROOT/build-asan}"
"$TIDE_ROOT/scripts/install_deps.sh"

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
log "configuring $ASAN_BUILD ($SAN)"
mkdir -p "$CCACHE_DIR"
PY_ARGS=()
[ -x "$TIDE_VENV/bin/python" ] && PY_ARGS=(-DPython_EXECUTABLE="$TIDE_VENV/bin/python")
cmake -S "$TIDE_ROOT" -B "$ASAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" \
  -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" -DCMAKE_MODULE_LINKER_FLAGS="$SAN" \
  -DTIDE_WITH_PYTHON=ON -DTIDE_WITH_MKLDNN=ON -DTIDE_WITH_ZMQ=ON -DTIDE_WITH_CUDA=OFF \
  -DTIDE_BUILD_EXAMPLES=OFF "${PY_ARGS[@]}" >/dev/null
TARGET_ARGS=()
[ -n "${TIDE_SANITIZE_TARGETS:-}" ] && TARGET_ARGS=(--target $TIDE_SANITIZE_TARGETS)
log "building ${TIDE_SANITIZE_TARGETS:-everything} with $JOBS jobs"
cmake --build "$ASAN_BUILD" -j "$JOBS" "${TARGET_ARGS[@]}"

export TIDE_USE_SYSTEM_ALLOCATOR=1 OMP_NUM_THREADS=1
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
cd "$ASAN_BUILD"
status=0
log "C++ tests under ASan/UBSan (leak checking on)"
ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}" \
  ctest --output-on-failure -j "$JOBS" -E '^(py_|e2e_)' "$@" || status=1
log "Python suites under ASan/UBSan (libasan preloaded, leak checking off)"
PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libstdc++.so)"
PATTERN='^py_'
[ "${TIDE_SANITIZE_E2E:-0}" = 1 ] && PATTERN='^(py_|e2e_)'
LD_PRELOAD="$PRELOAD" ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:${ASAN_OPTIONS:-}" \
  ctest --output-on-failure -j "$JOBS" -R "$PATTERN" "$@" || status=1
exit $status
