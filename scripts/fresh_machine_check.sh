#!/usr/bin/env bash
# fresh_machine_check.sh: the README's two commands, as a new user runs them, on a clean Debian 12
# root (or, with --wheel, the self-contained wheel on a clean Debian 13 root). Makes the root with debootstrap (from the Debian mirror this machine's apt uses), puts a
# clean clone of the current commit in it, and runs ./scripts/quickstart.sh, then
# ./scripts/test.sh, there (chroot in a private mount namespace, a bare environment), printing
# each one's wall time and result, and how long the quick start took to reach training. Where
# this machine has nvcc, its CUDA toolkit is mounted (read-only, at the same path, nvcc on PATH)
# in the root, as a user's machine may have one: the test command then builds the CUDA plugin.
#
#   scripts/fresh_machine_check.sh [--keep] [--no-cache] [--no-cuda] [--only quickstart|test]
#                                  [--debs DIR] [--wheel]
#
#   --keep      leave the root (and its build) in $TIDE_FRESH_DIR afterwards
#   --no-cache  debootstrap anew instead of unpacking the pristine root cached by an earlier run
#   --no-cuda   no CUDA toolkit in the root, even where this machine has one
#   --only X    run only one of the two commands
#   --debs DIR  instead: `apt install` the packages cpack made (DIR/*.deb) in the root and use
#               them (tests/packaging/deb_check.sh: train, tide-plugins, an out-of-tree plugin)
#   --wheel     instead: a Debian 13 (trixie) root with only python3 and python3-venv added; here
#               scripts/wheel.sh builds the repaired wheel for its CPython (from the headers of
#               its libpython3.X-dev package, unpacked outside the root) and the acme plugin
#               wheel against that wheel's SDK; in the root, a venv gets them
#               (tests/packaging/wheel_check.sh: import, fit_a_line, a Paddle model, the plugin
#               wheel's entry point; the wheel's size and the `import tide` time)
#
# Needs root (debootstrap, chroot, mounts); installs debootstrap when it is missing. What it
# checks is the committed tree (--wheel: the wheel is built from the work tree): commit first.
# Logs: $TIDE_FRESH_DIR/{quickstart,test,debs,wheel-setup,wheel}.log.
set -euo pipefail
TIDE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${TIDE_FRESH_DIR:-/var/tmp/tide-fresh}"
CACHE="${TIDE_FRESH_CACHE:-$HOME/.cache/tide-fresh-root}"
SUITE=bookworm
KEEP=0 USE_CACHE=1 ONLY="" DEBS="" CUDA=1
while (($#)); do
  case "$1" in
    --keep) KEEP=1 ;;
    --no-cache) USE_CACHE=0 ;;
    --no-cuda) CUDA=0 ;;
    --only) ONLY="$2"; shift ;;
    --debs) DEBS="$(cd "$2" && pwd)"; ONLY=debs; shift ;;
    --wheel) ONLY=wheel SUITE=trixie CUDA=0 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fresh_machine_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '\033[1m[fresh]\033[0m %s\n' "$*"; }
[ "$(id -u)" -eq 0 ] || { echo "fresh_machine_check.sh: needs root (debootstrap, chroot)" >&2; exit 2; }

ROOT="$WORK/root"
cleanup() { ((KEEP)) || rm -rf --one-file-system "$ROOT"; }
trap cleanup EXIT

# The mirror this machine's apt already uses (so the check reaches what a user here reaches).
mirror() {
  local m=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    m=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
    m=$(awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' \
      /etc/apt/sources.list)
  fi
  echo "$m"
}

# 1. A clean Debian root (12, or 13 for --wheel): debootstrap's default variant (Debian's required and important
# packages, as a fresh install has), cached as a tarball of exactly that.
rm -rf --one-file-system "$ROOT"
mkdir -p "$ROOT" "$CACHE"
TARBALL="$CACHE/$SUITE.tar.gz"
if ((USE_CACHE)) && [ -s "$TARBALL" ]; then
  log "unpacking the pristine $SUITE root cached in $TARBALL"
  tar -xzf "$TARBALL" -C "$ROOT"
else
  command -v debootstrap >/dev/null || {
    log "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  log "debootstrap $SUITE into $ROOT ($(mirror))"
  start=$SECONDS
  debootstrap "$SUITE" "$ROOT" $(mirror) >"$WORK/debootstrap.log" 2>&1 ||
    { tail -20 "$WORK/debootstrap.log"; exit 1; }
  log "debootstrap took $((SECONDS - start)) s"
  tar -czf "$TARBALL.tmp" -C "$ROOT" . && mv "$TARBALL.tmp" "$TARBALL"
fi
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"

# The network a fresh machine here has: its proxy and package-index settings and, where the
# environment names one, its TLS trust bundle (copied to a path no package in the root writes).
NET_ENV=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY PIP_INDEX_URL \
         PIP_EXTRA_INDEX_URL PIP_DEFAULT_TIMEOUT; do
  [ -n "${!v:-}" ] && NET_ENV+=("$v=${!v}")
done
for v in PIP_CERT SSL_CERT_FILE REQUESTS_CA_BUNDLE; do
  if [ -f "${!v:-}" ]; then
    mkdir -p "$ROOT/etc/ssl"
    cp -L "${!v}" "$ROOT/etc/ssl/host-ca-bundle.crt"
    NET_ENV+=(PIP_CERT=/etc/ssl/host-ca-bundle.crt SSL_CERT_FILE=/etc/ssl/host-ca-bundle.crt
              REQUESTS_CA_BUNDLE=/etc/ssl/host-ca-bundle.crt)
    break
  fi
done

# 2. A clean clone of the current commit, where a user would clone it.
COMMIT=$(git -C "$TIDE_ROOT" rev-parse HEAD)
if [ -n "$(git -C "$TIDE_ROOT" status --porcelain --untracked-files=no)" ]; then
  log "note: the work tree has uncommitted changes; the check uses commit ${COMMIT:0:12} only"
fi
git clone -q --no-hardlinks "$TIDE_ROOT" "$ROOT/root/tide"
git -C "$ROOT/root/tide" checkout -q "$COMMIT"

# 3. The CUDA toolkit, where this machine has nvcc: its directory (e.g. /usr/local/cuda-13.0, with
# cuDNN and NCCL inside where they were installed there) and the /usr/local/cuda link to it.
CUDA_DIR="" CUDA_LINK=""
if ((CUDA)) && command -v nvcc >/dev/null; then
  nvcc_path=$(command -v nvcc)
  CUDA_DIR=$(dirname "$(dirname "$(readlink -f "$nvcc_path")")")
  link=$(dirname "$(dirname "$nvcc_path")")
  [ -L "$link" ] && CUDA_LINK="$link"
  mkdir -p "$ROOT$CUDA_DIR"
  if [ -n "$CUDA_LINK" ]; then
    mkdir -p "$(dirname "$ROOT$CUDA_LINK")"
    ln -sfn "$CUDA_DIR" "$ROOT$CUDA_LINK"
  fi
fi
ROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
[ -n "$CUDA_DIR" ] && ROOT_PATH="$ROOT_PATH:${CUDA_LINK:-$CUDA_DIR}/bin"

# 4. One command in the root: private mounts of /proc, /sys and /dev that vanish with it, and
# only the environment a new login has. Prints its wall time; the quick start's time to its first
# training line too.
# since <start ns> <end ns>: "M min S s".
since() { local s=$((($2 - $1) / 1000000000)); printf '%d min %02d s' $((s / 60)) $((s % 60)); }

run_in_root() {
  local name="$1" cmd="$2" label="${3:-$2}" logf start rc
  logf="$WORK/$name.log"
  log "running '$cmd' in the fresh root (log: $logf)"
  start=$(date +%s%N)
  set +e
  unshare --mount --propagation private -- bash -c '
    set -e
    root="$1" cuda="$2" path="$3"; shift 3
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    if [ -n "$cuda" ]; then
      mount --bind "$cuda" "$root$cuda"
      mount -o remount,bind,ro "$root$cuda"
    fi
    exec chroot "$root" /usr/bin/env -i HOME=/root USER=root SHELL=/bin/bash TERM=dumb \
      PATH="$path" "$@" /bin/bash -c "cd /root/tide && $0"' \
    "$cmd" "$ROOT" "$CUDA_DIR" "$ROOT_PATH" "${NET_ENV[@]}" 2>&1 |
    while IFS= read -r line; do
      printf '%s\n' "$line" >>"$logf"
      if [ "$name" = quickstart ] && [ ! -e "$WORK/.trained" ] && [[ "$line" == pass* ]]; then
        date +%s%N >"$WORK/.trained"
      fi
    done
  rc=${PIPESTATUS[0]}
  set -e
  RESULTS+=("$(printf '%-24s %-10s %s' "$label" "$([ "$rc" -eq 0 ] && echo passed || echo "FAILED($rc)")" \
    "$(since "$start" "$(date +%s%N)")")")
  if [ "$name" = quickstart ] && [ -s "$WORK/.trained" ]; then
    RESULTS+=("$(printf '%-24s %-10s %s' "  first training line" reached \
      "$(since "$start" "$(cat "$WORK/.trained")")")")
  fi
  [ "$rc" -eq 0 ] || { log "'$cmd' failed; its last lines:"; tail -30 "$logf"; }
  return "$rc"
}

# --wheel: the root gets python3 and python3-venv (as a user's machine has them), and the headers
# of its CPython are fetched as a package file (apt-get download: not installed in the root) for
# the wheel's build here; the two wheels go to /root/wheels in the root.
wheel_in_root() {
  local pyver headers dist sdk
  run_in_root wheel-setup "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install \
    -y -qq --no-install-recommends python3 python3-venv >/dev/null && cd /tmp && apt-get download \
    -qq libpython\$(python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])')-dev" \
    "apt install python3 python3-venv" || return 1
  headers="$WORK/python-headers"
  rm -rf "$headers" && mkdir -p "$headers"
  dpkg-deb -x "$(ls "$ROOT"/tmp/libpython3*-dev_*.deb)" "$headers"
  rm -f "$ROOT"/tmp/libpython3*-dev_*.deb
  pyver=$(cd "$headers/usr/include" && ls -d python3.* | head -1)
  dist="$ROOT/root/wheels"
  mkdir -p "$dist"
  log "building the wheel here for the root's $pyver (scripts/wheel.sh)"
  "$TIDE_ROOT/scripts/wheel.sh" -o "$dist" --python-headers "$headers/usr/include/$pyver" || return 1
  # The vendor's plugin wheel, against the SDK inside that wheel (as tide.sdk.cmake_prefix_path()
  # gives it where the wheel is installed).
  sdk="$WORK/wheel-sdk"
  rm -rf "$sdk" && mkdir -p "$sdk"
  (cd "$sdk" && python3 -m zipfile -e "$(ls "$dist"/tide-*.whl)" .)
  log "building the acme plugin wheel against the wheel's SDK, and repairing it (a manylinux tag)"
  (cd "$TIDE_ROOT/tests/packaging/vendor_wheel" && CMAKE_PREFIX_PATH="$sdk/tide" \
    "${TIDE_VENV:-$TIDE_ROOT/.venv}/bin/python" -m pip wheel -q --no-build-isolation --no-deps \
    --disable-pip-version-check -w "$WORK/vendor-dist" \
    --config-settings=build-dir="$WORK/vendor-build" .) || return 1
  "$TIDE_ROOT/scripts/wheel_repair.sh" "$(ls "$WORK"/vendor-dist/acme_tide-*.whl)" "$dist" || return 1
  rm -rf "$sdk" "$WORK/vendor-build" "$WORK/vendor-dist"
  run_in_root wheel "./tests/packaging/wheel_check.sh /root/wheels"
}

RESULTS=()
rm -f "$WORK/.trained" "$WORK"/{quickstart,test,debs,wheel-setup,wheel}.log
status=0
if [ -z "$ONLY" ] || [ "$ONLY" = quickstart ]; then
  run_in_root quickstart ./scripts/quickstart.sh || status=1
fi
if [ -z "$ONLY" ] || [ "$ONLY" = test ]; then
  run_in_root test ./scripts/test.sh || status=1
fi
if [ "$ONLY" = wheel ]; then
  wheel_in_root || status=1
fi
if [ "$ONLY" = debs ]; then
  mkdir -p "$ROOT/root/debs"
  cp "$DEBS"/*.deb "$ROOT/root/debs/"
  run_in_root debs "./tests/packaging/deb_check.sh /root/debs" || status=1
fi

echo
log "fresh Debian $(cut -d. -f1 "$ROOT/etc/debian_version") root ($SUITE, $(nproc) cores, $([ -n "$CUDA_DIR" ] && echo "nvcc from $CUDA_DIR" || echo "no nvcc")), commit ${COMMIT:0:12}:"
printf '  %s\n' "${RESULTS[@]}"
if [ "$ONLY" = wheel ] && [ -f "$WORK/wheel.log" ]; then
  grep -E "^(wheel|python|import tide|CUDA plugin|fit_a_line|plugin wheel):|^Paddle model " "$WORK/wheel.log" |
    sed 's/^/  /' || true
fi
if [ -f "$WORK/test.log" ]; then
  grep -E "tests passed|tests failed" "$WORK/test.log" | sed 's/^/  ctest: /' || true
fi
exit "$status"
