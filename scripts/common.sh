# common.sh: shared settings of the set-up, build and test scripts (sourced, not run).
set -euo pipefail
TIDE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TIDE_BUILD="${TIDE_BUILD:-$TIDE_ROOT/build}"
TIDE_VENV="${TIDE_VENV:-$TIDE_ROOT/.venv}"
# ccache lives outside the clone so clean clones (CI) reuse it.
export CCACHE_DIR="${CCACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/tide-ccache}"
# Paths under the clone are hashed relative to the build directory, so a second build directory
# beside build/ (the wheel's, tests/packaging) reuses build/'s objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$TIDE_ROOT}" CCACHE_NOHASHDIR=1
JOBS="${TIDE_JOBS:-$(nproc 2>/dev/null || echo 2)}"
log() { printf '\033[1m[tide]\033[0m %s\n' "$*"; }
