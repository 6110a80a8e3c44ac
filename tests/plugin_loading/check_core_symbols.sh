#!/bin/sh
# check_core_symbols.sh <libtide_core.so>: fails when the core exports kernel code (Eigen,
# templated Kernel<...>, GEMM, device math libraries): kernels belong in plugins.
set -eu
lib="$1"
syms=$(nm -C -D --defined-only "$lib")
# An empty or wrong listing must not pass: the core's own API has to be there.
if ! printf '%s\n' "$syms" | grep -q 'tide::core::Registry::Global()'; then
  echo "FAIL: $lib does not export tide::core::Registry::Global(): not the core?" >&2
  exit 1
fi
bad=$(printf '%s\n' "$syms" | grep -E 'Eigen|Kernel<|gemm|Gemm|cblas_|cublas|cudnn|dnnl::' || true)
if [ -n "$bad" ]; then
  echo "FAIL: $lib exports kernel code:" >&2
  printf '%s\n' "$bad" | head -n 20 >&2
  exit 1
fi
echo "ok: $(printf '%s\n' "$syms" | wc -l) exported symbols, no kernel code"
