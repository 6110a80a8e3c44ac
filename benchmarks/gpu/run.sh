#!/usr/bin/env bash
# run.sh: the GPU checks, for a machine with an NVIDIA GPU (the repo copied there). Configures and
# builds the CUDA plugin for the GPU it finds (nvidia-smi compute_cap), runs the CUDA tests, runs
# them again under compute-sanitizer memcheck (one allocation per tensor, a sync after every
# launch), and prints the mul/matmul benchmark against cuBLAS. With RUN_TRAIN_STEP=1 it also builds
# the Python package and runs train_step.py (Tide vs PyTorch; needs torch with CUDA).
#
#   benchmarks/gpu/run.sh            # logs and JSON in $OUT (default benchmarks/gpu/out)
#   STEPS="build test" benchmarks/gpu/run.sh   # a subset of: build test memcheck bench train
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-$ROOT/benchmarks/gpu/out}"
BUILD="${TIDE_GPU_BUILD:-$ROOT/build-gpu}"
STEPS="${STEPS:-build test memcheck bench${RUN_TRAIN_STEP:+ train}}"
JOBS="${JOBS:-$(nproc)}"
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
log() { printf '\033[1m[gpu]\033[0m %s\n' "$*"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }

command -v nvidia-smi >/dev/null || { echo "nvidia-smi not found: no NVIDIA driver here" >&2; exit 1; }
nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
ARCH="${TIDE_CUDA_ARCHITECTURES:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')}"
log "building for sm_$ARCH into $BUILD"

if has build; then
  PY=OFF
  has train && PY=ON
  LAUNCHER=()
  command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DTIDE_WITH_CUDA=ON \
    -DTIDE_CUDA_ARCHITECTURES="$ARCH" -DTIDE_WITH_PYTHON="$PY" "${LAUNCHER[@]}" >"$OUT/configure.log"
  TARGETS=(tide-plugins tide_device_cpu tide_device_cuda tide_ops_math tide_ops_nn
           tide_ops_optimizers tide_cuda_tests tide_gpu_matmul_bench)
  [ "$PY" = ON ] && TARGETS+=(all)
  start=$(date +%s)
  cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]}" 2>&1 | tail -n 5
  log "built in $(( $(date +%s) - start )) s"
fi

export TIDE_PLUGIN_PATH="$BUILD/lib/tide/plugins"
"$BUILD/bin/tide-plugins" >"$OUT/plugins.txt" 2>&1 || true
grep -A3 '^device_cuda' "$OUT/plugins.txt" || true

status=0
if has test; then
  log "CUDA tests"
  if ! "$BUILD/bin/tide_cuda_tests" --gtest_output="xml:$OUT/cuda_tests.xml" 2>&1 | tee "$OUT/cuda_tests.log"; then
    status=1
  fi
  grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/cuda_tests.log" | head -n 60 || true
fi

if has memcheck; then
  SAN="$(command -v compute-sanitizer || true)"
  if [ -z "$SAN" ]; then
    log "compute-sanitizer not found: memcheck skipped"
  else
    log "CUDA tests under compute-sanitizer memcheck"
    # One cudaMalloc per tensor (no buddy arena hiding overruns) and a sync after each launch (the
    # op that faults reports it). The out-of-memory test asks for 1 PiB on purpose: left out.
    if ! FLAGS_use_system_allocator=true TIDE_CUDA_SYNC=1 "$SAN" --tool memcheck \
        --report-api-errors no --error-exitcode 3 \
        "$BUILD/bin/tide_cuda_tests" --gtest_filter='-*OutOfMemory*' >"$OUT/memcheck.log" 2>&1; then
      status=1
      log "memcheck found problems:"
    fi
    grep -E 'ERROR SUMMARY|Invalid|out of bounds|^\[  (PASSED|FAILED) ' "$OUT/memcheck.log" | head -n 40 || true
  fi
fi

if has bench; then
  log "mul/matmul benchmark (Tide vs cuBLAS)"
  "$BUILD/bin/tide_gpu_matmul_bench" --json "$OUT/matmul.json" | tee "$OUT/matmul.txt" || status=1
fi

if has train; then
  log "train step benchmark (Tide vs PyTorch)"
  TIDE_BUILD="$BUILD" python3 "$ROOT/benchmarks/gpu/train_step.py" --json "$OUT/train_step.json" \
    | tee "$OUT/train_step.txt" || status=1
fi
exit $status
