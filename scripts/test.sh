#!/usr/bin/env bash
# test.sh [ctest args]: installs what is missing, builds, and runs every test (ctest: GoogleTest
# binaries, the out-of-tree SDK test, the packaging tests and the pytest suites) but the sweeps:
# whole-suite reruns labelled "sweep" (the conformance kit over every op), which .ci/run runs.
source "$(dirname "$0")/common.sh"
"$TIDE_ROOT/scripts/install_deps.sh"
"$TIDE_ROOT/scripts/build.sh"
log "running the tests"
cd "$TIDE_BUILD"
ctest --output-on-failure -j "$JOBS" -LE sweep "$@"
