#!/usr/bin/env bash
# quickstart.sh: installs what is missing, builds, and runs the main job: training the example
# model on the CPU plugins.
source "$(dirname "$0")/common.sh"
"$TIDE_ROOT/scripts/install_deps.sh"
"$TIDE_ROOT/scripts/build.sh"
log "running the main job"
"$TIDE_BUILD/bin/fit_a_line_forward"
