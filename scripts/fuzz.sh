#!/usr/bin/env bash
# fuzz.sh [seconds]: builds the libFuzzer targets of tests/fuzz with clang, ASan and UBSan into
# build-fuzz/ (TIDE_FUZZ_BUILD), then runs each for `seconds` (default 60) from its committed seed
# corpus, growing a working corpus in build-fuzz/corpus/<target>/. A finding stops that target and
# leaves its reproducer in build-fuzz/artifacts/<target>/ (re-run it: build-fuzz/fuzz/<target> FILE).
# TIDE_FUZZ_TARGETS picks targets; TIDE_FUZZ_PLUGINS the plugins the program fuzzer loads; TIDE_JOBS
# targets run at once (default: one per core). CI (.ci/run) runs each for 60 s.
source "$(dirname "$0")/common.sh"
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
log "building ${TARGETS[*]} and plugins ${PLUGINS[*]} with $JOBS jobs"
cmake --build "$FUZZ_BUILD" -j "$JOBS" --target "${TARGETS[@]}" "${PLUGINS[@]}"

PLUGIN_PATH=""
for p in "${PLUGINS[@]}"; do PLUGIN_PATH="$PLUGIN_PATH${PLUGIN_PATH:+:}$FUZZ_BUILD/lib/tide/plugins/lib$p.so"; done
export TIDE_PLUGIN_PATH="$PLUGIN_PATH" TIDE_PLUGIN_PATH_ONLY=1  # exactly these plugins
# Huge allocations fail as out of memory (a Tide error) instead of aborting the process.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}"
export GLOG_minloglevel=3 OMP_NUM_THREADS=1
# One target per core at a time (TIDE_JOBS): each runs single-threaded for its set time.
fuzz_one() {
  local t="$1" work="$FUZZ_BUILD/corpus/$1" art="$FUZZ_BUILD/artifacts/$1"
  mkdir -p "$work" "$art"
  if "$FUZZ_BUILD/fuzz/$t" -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=3072 \
       -print_final_stats=1 -artifact_prefix="$art/" "$work" "$TIDE_ROOT/tests/fuzz/corpus/$t" \
       > "$FUZZ_BUILD/$t.log" 2>&1; then
    echo "$t: $(grep -E '^stat::number_of_executed_units' "$FUZZ_BUILD/$t.log" | awk '{print $2}') runs," \
         "$(grep -oE 'cov: [0-9]+' "$FUZZ_BUILD/$t.log" | tail -1), $(ls "$work" | wc -l) corpus files, no finding" \
         > "$FUZZ_BUILD/$t.result"
  else
    { echo "$t: FINDING (log $FUZZ_BUILD/$t.log, reproducer in $art/)"
      grep -E "ERROR|SUMMARY|runtime error" "$FUZZ_BUILD/$t.log" | head -5; } > "$FUZZ_BUILD/$t.result"
    return 1
  fi
}

log "fuzzing ${TARGETS[*]} for $SECONDS_EACH s each, $JOBS at a time"
status=0
running=0
for t in "${TARGETS[@]}"; do
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
for t in "${TARGETS[@]}"; do log "$(cat "$FUZZ_BUILD/$t.result")"; done
exit $status
