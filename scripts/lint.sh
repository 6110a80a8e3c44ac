#!/usr/bin/env bash
# lint.sh [--fix]: checks that the tree is formatted and lint-clean, as CI does (.ci/run): C, C++
# and CUDA with clang-format 14 (.clang-format), Python with ruff (pyproject.toml's [tool.ruff]).
# --fix formats and applies ruff's safe fixes instead. Installs the pinned tools if missing:
# another clang-format or ruff version formats differently, so CI and contributors use these.
source "$(dirname "$0")/common.sh"
CLANG_FORMAT_MAJOR=14   # Debian 12's
RUFF_VERSION=0.17.6
fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  *) echo "usage: $0 [--fix]" >&2; exit 2 ;;
esac

if ! command -v clang-format >/dev/null; then
  log "installing clang-format"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-format >/dev/null
fi
found=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$found" != "$CLANG_FORMAT_MAJOR" ]; then
  echo "lint.sh: clang-format $CLANG_FORMAT_MAJOR is needed (Debian 12's), found: $(clang-format --version)" >&2
  exit 2
fi
[ -x "$TIDE_VENV/bin/python" ] || "$TIDE_ROOT/scripts/install_deps.sh"
RUFF="$TIDE_VENV/bin/ruff"
if [ "$("$RUFF" --version 2>/dev/null)" != "ruff $RUFF_VERSION" ]; then
  log "installing ruff $RUFF_VERSION into $TIDE_VENV"
  "$TIDE_VENV/bin/python" -m pip install -q --disable-pip-version-check "ruff==$RUFF_VERSION"
fi

cd "$TIDE_ROOT"
# Tracked C, C++ and CUDA sources; fuzz corpora and other data are not code.
mapfile -t cxx < <(git ls-files -- '*.h' '*.hpp' '*.cc' '*.cpp' '*.c' '*.cu' '*.cuh')
status=0
if ((fix)); then
  clang-format -i "${cxx[@]}"
  "$RUFF" format -q .
  "$RUFF" check -q --fix .
else
  log "clang-format: ${#cxx[@]} files"
  clang-format --dry-run --Werror "${cxx[@]}" || status=1
  log "ruff format --check"
  "$RUFF" format -q --check . || status=1
  log "ruff check"
  "$RUFF" check -q . || status=1
  ((status == 0)) || echo "lint.sh: the tree is not clean; ./scripts/lint.sh --fix formats it" >&2
fi
exit $status
