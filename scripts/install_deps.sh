#!/usr/bin/env bash
# install_deps.sh: installs what is missing on Debian 12 (apt packages), then makes the Python
# virtual environment with the packages the Python package and tests need.
source "$(dirname "$0")/common.sh"

APT_PACKAGES=(build-essential cmake ninja-build ccache pkg-config git
  libprotobuf-dev protobuf-compiler libeigen3-dev libdnnl-dev libboost-dev
  libboost-filesystem-dev libgflags-dev libgoogle-glog-dev libzmq3-dev cppzmq-dev libgloo-dev
  pybind11-dev libgtest-dev libgmock-dev libdlpack-dev python3-dev python3-venv
  ocl-icd-opencl-dev doxygen)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x "$TIDE_VENV/bin/python" ]; then
  log "creating the Python virtual environment $TIDE_VENV"
  python3 -m venv "$TIDE_VENV"
fi
# scikit-build-core: tests/packaging's wheel; ml_dtypes: numpy's bfloat16 (docs/data_types.md).
PY_PACKAGES=(numpy pytest scikit-learn pyzmq scikit-build-core ml_dtypes)
if ! "$TIDE_VENV/bin/python" -c "import numpy, pytest, sklearn, zmq, scikit_build_core, ml_dtypes" 2>/dev/null; then
  log "installing Python packages: ${PY_PACKAGES[*]}"
  "$TIDE_VENV/bin/python" -m pip install -q --disable-pip-version-check "${PY_PACKAGES[@]}"
fi
# The documentation tools at their pinned versions (scripts/docs.sh).
DOC_REQUIREMENTS="$TIDE_ROOT/docs/requirements.txt"
if ! "$TIDE_VENV/bin/python" - "$DOC_REQUIREMENTS" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
pins = [l.split("==") for l in open(sys.argv[1]) if "==" in l and not l.startswith("#")]
sys.exit(any(version(name) != want.strip() for name, want in pins))
PY
  log "installing the documentation tools: $(grep -v '^#' "$DOC_REQUIREMENTS" | tr '\n' ' ')"
  "$TIDE_VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$DOC_REQUIREMENTS"
fi
