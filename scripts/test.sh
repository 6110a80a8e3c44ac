#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs every test (ctest: GoogleTest binaries,
# the out-of-tree SDK test and the pytest suites).
source "$(dirname "$0")/common.sh"
"$TIDE_ROOT/scripts/install_deps.sh"
"$TIDE_ROOT/scripts/build.sh"
log "running the tests"
cd "$TIDE_BUILD"
ctest --output-on-failure -j "$JOBS" "$@"
