#!/usr/bin/env bash
# fuzz_one.sh NAME BINARY SECONDS DIR SEEDS: runs one libFuzzer target for SECONDS from the seed
# corpus SEEDS, growing DIR/corpus/NAME, and tells a finding in Tide from a failure of the
# sanitizer runtime itself. Writes DIR/NAME.result (a summary line, then details) and
# DIR/NAME.log (the fuzzer's output); reproducers go to DIR/artifacts/NAME/.
#
#   finding          the run failed and its reproducer fails again when rerun alone, with a report
#                    that is not the runtime's own, or the run's own ASan / UBSan report (one at
#                    exit, which the reproducer alone does not repeat): exit 1, with the report.
#   runtime failure  LeakSanitizer's fatal error (its tracer dies under load), an empty or missing
#                    reproducer that does not fail again, any reproducer that does not fail again:
#                    a warning, and the run is retried once. A second such failure is a warning too
#                    when it carries the runtime's signs; one with no reproducer and no sign (the
#                    target did not run) fails: that is no accident of the machine.
# Sanitizer settings come from the environment (scripts/fuzz.sh sets them).
set -uo pipefail
name="$1" bin="$2" secs="$3" dir="$4" seeds="$5"
work="$dir/corpus/$name" art="$dir/artifacts/$name" log="$dir/$name.log" result="$dir/$name.result"
rerun_log="$dir/$name.rerun.log"
mkdir -p "$work" "$art"
# LeakSanitizer's own failures (the tracer thread it stops the world with), not reports about code.
RUNTIME_SIGNS='LeakSanitizer has encountered a fatal error|Tracer caught signal|LeakSanitizer does not work under ptrace'
# Reports about code: a finding even where the reproducer does not repeat them.
CODE_SIGNS='ERROR: AddressSanitizer|ERROR: UndefinedBehaviorSanitizer|runtime error:'

# The lines of a sanitizer or libFuzzer report: from its first ERROR / runtime error to SUMMARY.
report() {
  awk '/ERROR: |runtime error:/ {on = 1} on {print; n++} /^SUMMARY:/ && on {exit} n >= 60 {exit}' "$1"
}

# fuzz ATTEMPT: one timed run. Sets VERDICT (clean | finding | runtime | broken) and WHY.
fuzz() {
  local attempt="$1" rc repro size rrc
  "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=3072 -print_final_stats=1 \
    -artifact_prefix="$art/" "$work" "$seeds" >"$log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then VERDICT=clean; return; fi
  repro=$(grep -oE 'Test unit written to .*' "$log" | tail -1 | sed 's/^Test unit written to //')
  REPRO="$repro"
  if [ -z "$repro" ] || [ ! -f "$repro" ]; then
    if grep -qE "$RUNTIME_SIGNS" "$log"; then
      VERDICT=runtime WHY="LeakSanitizer's fatal error, no reproducer written (exit $rc)"
    else
      VERDICT=broken WHY="exit $rc with no reproducer and no sanitizer runtime failure"
    fi
    return
  fi
  size=$(stat -c %s "$repro")
  # Rerun the reproducer alone, as a user would: does it fail again, and with a report of its own?
  timeout 300 "$bin" -timeout=20 -rss_limit_mb=3072 "$repro" >"$rerun_log" 2>&1
  rrc=$?
  if [ "$rrc" -ne 0 ] && ! grep -qE "$RUNTIME_SIGNS" "$rerun_log"; then
    VERDICT=finding WHY="$(basename "$repro") ($size bytes) fails again when rerun (exit $rrc)"
    return
  fi
  # AddressSanitizer's or UBSan's own report in the run is Tide's, rerun or not (e.g. one at exit,
  # after the last input: the reproducer is then empty and passes alone).
  if ! grep -qE "$RUNTIME_SIGNS" "$log" && grep -qE "$CODE_SIGNS" "$log"; then
    VERDICT=finding WHY="the run's own sanitizer report (exit $rc; $(basename "$repro"), $size bytes, does not repeat it alone)"
    REPORT_LOG="$log"
    return
  fi
  VERDICT=runtime
  if grep -qE "$RUNTIME_SIGNS" "$log"; then
    WHY="LeakSanitizer's fatal error"
  else
    WHY="exit $rc"
  fi
  [ "$size" -eq 0 ] && WHY="$WHY, empty reproducer"
  if [ "$rrc" -eq 0 ]; then WHY="$WHY, which passes when rerun"; else WHY="$WHY, whose rerun fails the same way"; fi
  # Kept for a look, out of artifacts/: it reproduces nothing in Tide.
  cp "$log" "$dir/$name.attempt$attempt.log"
  mv -f "$repro" "$dir/$name.attempt$attempt.unit"
}

runs() { grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}'; }
clean_line() {
  echo "$name: $(runs) runs, $(grep -oE 'cov: [0-9]+' "$log" | tail -1), $(ls "$work" | wc -l) corpus files, no finding$1"
}

fuzz 1
if [ "$VERDICT" = runtime ] || [ "$VERDICT" = broken ]; then
  first="$VERDICT: $WHY (log $dir/$name.attempt1.log)"
  [ -f "$dir/$name.attempt1.log" ] || cp "$log" "$dir/$name.attempt1.log"
  fuzz 2
  if [ "$VERDICT" = clean ]; then
    clean_line " (warning: the first run failed outside Tide: $first; the retry ran clean)" >"$result"
    exit 0
  fi
  if [ "$VERDICT" = runtime ]; then
    echo "$name: no finding (warning: both runs failed outside Tide: $first; then: $WHY)" >"$result"
    exit 0
  fi
fi
case "$VERDICT" in
  clean) clean_line "" >"$result"; exit 0 ;;
  finding)
    { echo "$name: FINDING: $WHY"
      echo "  reproducer: $REPRO"
      echo "  rerun it:   $bin $REPRO"
      echo "  its report:"
      report "${REPORT_LOG:-$rerun_log}" | sed 's/^/    /'; } >"$result"
    exit 1 ;;
  *)
    { echo "$name: FAILED: $WHY (log $log)"
      tail -20 "$log" | sed 's/^/    /'; } >"$result"
    exit 1 ;;
esac
