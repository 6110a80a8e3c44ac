#!/usr/bin/env bash
# quickstart.sh: installs what is missing, builds, and runs the main job: training the example
# model on the CPU plugins. It builds only what that job needs; ./scripts/test.sh builds the rest.
source "$(dirname "$0")/common.sh"
"$TIDE_ROOT/scripts/install_deps.sh"
TIDE_BUILD_TARGETS=tide_main_job "$TIDE_ROOT/scripts/build.sh"
log "running the main job: training fit_a_line on the CPU plugins"
PYTHONPATH="$TIDE_BUILD/python" "$TIDE_VENV/bin/python" "$TIDE_ROOT/examples/fit_a_line.py" "$@"
