#!/usr/bin/env bash
# fuzz.sh [seconds]: builds the libFuzzer targets of tests/fuzz with clang, ASan and UBSan into
# build-fuzz/ (TIDE_FUZZ_BUILD), then runs each for `seconds` (default 60) from its committed seed
# corpus, growing a working corpus in build-fuzz/corpus/<target>/ (scripts/fuzz_one.sh). A finding
# (a failure whose reproducer fails again when rerun) stops that target, leaves its reproducer in
# build-fuzz/artifacts/<target>/ and fails the script, printing the reproducer and its report; a
# failure of the sanitizer runtime itself (LeakSanitizer's fatal error, a reproducer that does
# not reproduce) is a warning and the target is retried once. First, a self-test on a planted
# target checks that the script still tells the two apart (fuzz.sh --self-test runs only that).
# TIDE_FUZZ_TARGETS picks targets; TIDE_FUZZ_PLUGINS the plugins the program fuzzer loads; TIDE_JOBS
# targets run at once (default: one per core). CI (.ci/run) runs each for 60 s.
source "$(dirname "$0")/common.sh"
SELF_TEST_ONLY=0
[ "${1:-}" = --self-test ] && { SELF_TEST_ONLY=1; shift; }
SECONDS_EACH="${1:-60}"
FUZZ_BUILD="${TIDE_FUZZ_BUILD:-$TIDE_ROOT/build-fuzz}"
TARGETS=(${TIDE_FUZZ_TARGETS:-model_fuzzer dlpack_fuzzer transport_fuzzer tensor_file_fuzzer program_fuzzer})
PLUGINS=(${TIDE_FUZZ_PLUGINS:-tide_device_cpu tide_ops_math tide_ops_control})

"$TIDE_ROOT/scripts/install_deps.sh"
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  log "installing clang (libFuzzer)"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang >/dev/null
fi

SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# Plugins link with --no-undefined; their sanitizer and coverage symbols come from the fuzzer
# executable that loads them, so the fuzz build lifts it (-z undefs, last on the link line).
log "configuring $FUZZ_BUILD (clang, $SAN)"
mkdir -p "$CCACHE_DIR"
CC=clang CXX=clang++ cmake -S "$TIDE_ROOT" -B "$FUZZ_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" \
  -DCMAKE_CXX_STANDARD_LIBRARIES="-Wl,-z,undefs" \
  -DTIDE_WITH_PYTHON=OFF -DTIDE_WITH_MKLDNN=OFF -DTIDE_WITH_CUDA=OFF -DTIDE_WITH_ZMQ=ON \
  -DTIDE_BUILD_EXAMPLES=OFF -DTIDE_BUILD_FUZZERS=ON >/dev/null
BUILD_TARGETS=(planted_fuzzer)
((SELF_TEST_ONLY)) || BUILD_TARGETS+=("${TARGETS[@]}" "${PLUGINS[@]}")
log "building ${BUILD_TARGETS[*]} with $JOBS jobs"
cmake --build "$FUZZ_BUILD" -j "$JOBS" --target "${BUILD_TARGETS[@]}"

PLUGIN_PATH=""
for p in "${PLUGINS[@]}"; do PLUGIN_PATH="$PLUGIN_PATH${PLUGIN_PATH:+:}$FUZZ_BUILD/lib/tide/plugins/lib$p.so"; done
export TIDE_PLUGIN_PATH="$PLUGIN_PATH" TIDE_PLUGIN_PATH_ONLY=1  # exactly these plugins
# Huge allocations fail as out of memory (a Tide error) instead of aborting the process.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}"
export GLOG_minloglevel=3 OMP_NUM_THREADS=1

# The self-test: the planted bug must fail with its reproducer and report, the planted runtime
# failure must pass with a warning after one retry.
self_test() {
  local dir="$FUZZ_BUILD/self-test" bin="$FUZZ_BUILD/fuzz/planted_fuzzer" ok=1
  rm -rf "$dir"
  mkdir -p "$dir/seeds-bug" "$dir/seeds-none"
  printf 'PLANTED bytes' >"$dir/seeds-bug/planted"
  if TIDE_FUZZ_PLANT_BUG=1 "$TIDE_ROOT/scripts/fuzz_one.sh" planted_bug "$bin" 5 "$dir" "$dir/seeds-bug" ||
     ! grep -q "^planted_bug: FINDING" "$dir/planted_bug.result" ||
     ! grep -q "heap-buffer-overflow" "$dir/planted_bug.result" ||
     ! grep -q "planted_fuzzer.cc" "$dir/planted_bug.result" ||
     ! [ -s "$(awk '/reproducer:/ {print $2}' "$dir/planted_bug.result")" ]; then
    log "self-test: the planted bug was not reported as a finding with its reproducer:"
    cat "$dir/planted_bug.result"; ok=0
  fi
  if ! TIDE_FUZZ_PLANT_RUNTIME_FAILURE="$dir/runtime-failed-once" \
       "$TIDE_ROOT/scripts/fuzz_one.sh" planted_runtime "$bin" 3 "$dir" "$dir/seeds-none" ||
     ! grep -q "no finding (warning: the first run failed outside Tide: runtime: LeakSanitizer's fatal error, empty reproducer" \
       "$dir/planted_runtime.result" ||
     [ -n "$(ls "$dir/artifacts/planted_runtime")" ]; then
    log "self-test: the planted sanitizer runtime failure was not a warning with a clean retry:"
    cat "$dir/planted_runtime.result"; ok=0
  fi
  ((ok)) && log "self-test: a planted bug fails with its reproducer; a runtime failure warns and retries"
  ((ok))
}
self_test || exit 1
((SELF_TEST_ONLY)) && exit 0

# One target per core at a time (TIDE_JOBS): each runs single-threaded for its set time.
fuzz_target() {
  "$TIDE_ROOT/scripts/fuzz_one.sh" "$1" "$FUZZ_BUILD/fuzz/$1" "$SECONDS_EACH" "$FUZZ_BUILD" \
    "$TIDE_ROOT/tests/fuzz/corpus/$1"
}

log "fuzzing ${TARGETS[*]} for $SECONDS_EACH s each, $JOBS at a time"
status=0
running=0
for t in "${TARGETS[@]}"; do
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_target "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
for t in "${TARGETS[@]}"; do log "$(cat "$FUZZ_BUILD/$t.result")"; done
exit $status
