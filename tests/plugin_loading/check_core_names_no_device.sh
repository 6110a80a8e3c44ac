#!/bin/sh
# check_core_names_no_device.sh <source dir>: fails when the core's sources name a device or a
# kernel library (CUDA, cuDNN, oneDNN/MKLDNN, a GPU): the core knows none; plugins bring them
# (devices register kinds and memory defaults, libraries register their attribute and flag).
set -eu
core="$1/core"
[ -f "$core/executor/executor.cc" ] || { echo "FAIL: $core is not the core's source tree" >&2; exit 1; }
bad=$(grep -rniE 'cuda|cudnn|cublas|onednn|mkldnn|dnnl|gpu' "$core" --include='*.cc' --include='*.h' || true)
if [ -n "$bad" ]; then
  echo "FAIL: the core names a device or library:" >&2
  printf '%s\n' "$bad" | head -n 20 >&2
  exit 1
fi
echo "ok: $(find "$core" -name '*.cc' -o -name '*.h' | wc -l) core sources name no device or library"
