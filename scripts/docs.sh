#!/usr/bin/env bash
# docs.sh [--update-stubs]: builds the documentation site into build/docs/html (Sphinx over docs/,
# docs/conf.py) with warnings as errors: a warning (a broken link, a docstring reST cannot read, a
# public name without an entry or a docstring) makes it exit non-zero. It needs the Python
# package: it builds the tide_python target (all of it where build/ has not been built yet).
# On the way it regenerates the type stubs of tide._C (pybind11-stubgen) and fails when
# python/tide/_C.pyi differs from them; --update-stubs writes them there instead.
source "$(dirname "$0")/common.sh"
update_stubs=0
case "${1:-}" in
  --update-stubs) update_stubs=1 ;;
  "") ;;
  *) echo "usage: $0 [--update-stubs]" >&2; exit 2 ;;
esac
"$TIDE_ROOT/scripts/install_deps.sh"
PY="$TIDE_VENV/bin/python"
OUT="$TIDE_BUILD/docs"
if [ -f "$TIDE_BUILD/build.ninja" ]; then
  log "updating the Python package in $TIDE_BUILD"
  cmake --build "$TIDE_BUILD" --target tide_python >/dev/null
else
  TIDE_BUILD_TARGETS=tide_python "$TIDE_ROOT/scripts/build.sh"
fi
export PYTHONPATH="$TIDE_BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT"

log "type stubs of tide._C"
rm -rf "$OUT/stubs"
"$TIDE_VENV/bin/pybind11-stubgen" tide._C -o "$OUT/stubs" --exit-code >"$OUT/stubgen.log" 2>&1 ||
  { cat "$OUT/stubgen.log" >&2; exit 1; }
if ((update_stubs)); then
  cp "$OUT/stubs/tide/_C.pyi" "$TIDE_ROOT/python/tide/_C.pyi"
elif ! diff -u "$TIDE_ROOT/python/tide/_C.pyi" "$OUT/stubs/tide/_C.pyi"; then
  echo "docs.sh: python/tide/_C.pyi is not what tide._C binds now; ./scripts/docs.sh --update-stubs writes it" >&2
  exit 1
fi

log "Doxygen over the SDK headers"
rm -rf "$OUT/doxygen" && mkdir -p "$OUT/doxygen"
(cd "$TIDE_ROOT" && PATH="$TIDE_VENV/bin:$PATH" TIDE_DOXYGEN_OUT="$OUT/doxygen" doxygen docs/Doxyfile)
# The filter's stand-in for the field Doxygen cannot parse (docs/_ext/doxygen_filter.py).
sed -i 's/tide_doxygen_requires_field/requires/g' "$OUT"/doxygen/xml/*.xml

log "Sphinx: $OUT/html"
TIDE_DOXYGEN_XML="$OUT/doxygen/xml" "$PY" -m sphinx -W --keep-going -q -b html \
  -d "$OUT/doctrees" "$TIDE_ROOT/docs" "$OUT/html"
log "the site is $OUT/html/index.html"
