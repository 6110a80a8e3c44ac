#!/usr/bin/env bash
# run_out_of_tree.sh BUILD_DIR RUNNER: installs Tide from BUILD_DIR to a prefix in
# BUILD_DIR/sdk_out_of_tree, builds the acme_ops plugin out of tree with find_package(Tide)
# against that prefix, from the examples installed there, and the sim device example too (through
# ccache where there is one: the directory stays put, so a second run reuses the objects), then
# runs RUNNER (which loads the plugin from ACME_PLUGIN and runs its op).
set -euo pipefail
build="$1"; runner="$2"
here="$(cd "$(dirname "$0")" && pwd)"
work="$build/sdk_out_of_tree"
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/tide/plugin_api.h"
# Every SDK header is installed: the plugin.hpp parts (tide/plugin/) and the standard op
# semantics (tide/ops/). (That each compiles on its own, warning-free, is the build's target
# tide_sdk_header_check.)
for dir in tide tide/plugin tide/ops; do
  diff <(cd "$here/../../sdk/include/$dir" && ls) <(cd "$work/prefix/include/$dir" && ls)
done
# The usage example at the top of plugin.hpp compiles as written, without a warning.
sed -n '1,/^#ifndef TIDE_PLUGIN_HPP_/ s|^//   ||p' "$work/prefix/include/tide/plugin.hpp" > "$work/example.cc"
grep -q "TIDE_PLUGIN(" "$work/example.cc"
"${CXX:-c++}" -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I"$work/prefix/include" "$work/example.cc"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The examples are installed with the SDK (share/tide/examples, component dev); acme_ops builds
# from there, as a reader of docs/writing_plugins.md would build it.
examples="$work/prefix/share/tide/examples"
diff <(cd "$here/acme_ops" && ls) <(cd "$examples/acme_ops" && ls)
cmake -S "$examples/acme_ops" -B "$work/acme" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
cmake --build "$work/acme" >/dev/null
plugin="$work/acme/libacme_ops.so"
test -f "$plugin"
# Its install lands in the plugin directory of the Tide it was built against.
cmake --install "$work/acme" >/dev/null
test -f "$work/prefix/lib/tide/plugins/libacme_ops.so" || test -f "$work/prefix/lib64/tide/plugins/libacme_ops.so"
# The sim device example builds from the install too (its own CMakeLists.txt).
cmake -S "$examples/sim_device" -B "$work/sim" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
cmake --build "$work/sim" >/dev/null
test -f "$work/sim/libtide_device_sim.so"
# It must include nothing but the SDK: no core headers are even installed.
! test -d "$work/prefix/include/core"
ACME_PLUGIN="$plugin" "$runner"
