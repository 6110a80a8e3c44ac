#!/usr/bin/env bash
# sanitize.sh [ctest args...]: builds Tide under sanitizers and runs the C++ tests, then the Python
# suites, under them.
#   TIDE_SANITIZER=address (default): AddressSanitizer + UndefinedBehaviorSanitizer (gcc) in
#     build-asan/ (TIDE_ASAN_BUILD), leak checking on for the C++ tests.
#   TIDE_SANITIZER=thread: ThreadSanitizer in build-tsan/ (TIDE_TSAN_BUILD), oneDNN off and the
#     CPU device's pool on Eigen instead of OpenMP (libgomp is not instrumented, so TSan would
#     report its own barriers).
# Every tensor is its own system allocation (TIDE_USE_SYSTEM_ALLOCATOR=1: the buddy allocator
# would hide overflows inside its arenas and its reuse from TSan). Python itself is not
# instrumented: the sanitizer runtime and libstdc++ are preloaded into it, and leak checking is
# off there (the interpreter's own allocations would drown real reports). TIDE_SANITIZE_E2E=1
# runs the multi-process suites too (with TSan: the pserver and trainers' transport threads);
# TIDE_SANITIZE_TARGETS builds only those targets (then pass ctest -R to run what they cover).
# The packaging tests (a second build of the project each) do not run here.
source "$(dirname "$0")/common.sh"
"$TIDE_ROOT/scripts/install_deps.sh"

case "${TIDE_SANITIZER:-address}" in
  address)
    BUILD="${TIDE_ASAN_BUILD:-$TIDE_ROOT/build-asan}"
    SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    RUNTIME=libasan.so MKLDNN=ON OPENMP=ON ;;
  thread)
    BUILD="${TIDE_TSAN_BUILD:-$TIDE_ROOT/build-tsan}"
    SAN="-fsanitize=thread -fno-omit-frame-pointer"
    RUNTIME=libtsan.so MKLDNN=OFF OPENMP=OFF ;;
  *) echo "TIDE_SANITIZER must be address or thread, not '$TIDE_SANITIZER'" >&2; exit 2 ;;
esac
log "configuring $BUILD ($SAN)"
mkdir -p "$CCACHE_DIR"
PY_ARGS=()
[ -x "$TIDE_VENV/bin/python" ] && PY_ARGS=(-DPython_EXECUTABLE="$TIDE_VENV/bin/python")
cmake -S "$TIDE_ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" \
  -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" -DCMAKE_MODULE_LINKER_FLAGS="$SAN" \
  -DTIDE_WITH_PYTHON=ON -DTIDE_WITH_MKLDNN=$MKLDNN -DTIDE_WITH_ZMQ=ON -DTIDE_WITH_CUDA=OFF \
  -DTIDE_CPU_OPENMP=$OPENMP -DTIDE_BUILD_EXAMPLES=OFF "${PY_ARGS[@]}" >/dev/null
TARGET_ARGS=()
[ -n "${TIDE_SANITIZE_TARGETS:-}" ] && TARGET_ARGS=(--target $TIDE_SANITIZE_TARGETS)
log "building ${TIDE_SANITIZE_TARGETS:-everything} with $JOBS jobs"
cmake --build "$BUILD" -j "$JOBS" "${TARGET_ARGS[@]}"

export TIDE_USE_SYSTEM_ALLOCATOR=1 OMP_NUM_THREADS=1
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$TIDE_ROOT/scripts/tsan.supp:${TSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$TIDE_ROOT/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
cd "$BUILD"
status=0
log "C++ tests under ${TIDE_SANITIZER:-address} sanitizer"
ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}" \
  ctest --output-on-failure -j "$JOBS" -E '^(py_|e2e_|packaging_)' "$@" || status=1
log "Python suites under ${TIDE_SANITIZER:-address} sanitizer (runtime preloaded, leak checking off)"
PRELOAD="$(gcc -print-file-name=$RUNTIME):$(gcc -print-file-name=libstdc++.so)"
PATTERN='^py_'
[ "${TIDE_SANITIZE_E2E:-0}" = 1 ] && PATTERN='^(py_|e2e_)'
LD_PRELOAD="$PRELOAD" ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:${ASAN_OPTIONS:-}" \
  ctest --output-on-failure -j "$JOBS" -R "$PATTERN" -E '^(tide|core_|sdk_|packaging_)' "$@" || status=1
exit $status
