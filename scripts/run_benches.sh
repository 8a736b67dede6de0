#!/usr/bin/env bash
# Runs every benchmark under bench/ (pass --quick for the small CI mode).
#
# A benchmark that fails stops the run (exit status). A figure that misses its target is marked
# MISSED on its line (bench/targets.py); the lines are collected into a separate report,
# artifacts/bench-report.txt, and summed up at the end. In quick mode the data is small and the
# machine busy, so a miss is reported, not fatal; `--strict` makes any miss fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
export MEMVIZ_VAR_DIR="${MEMVIZ_VAR_DIR:-$(mktemp -d)}"
mkdir -p "$MEMVIZ_VAR_DIR"
STRICT=0
ARGS=()
for arg in "$@"; do
  if [ "$arg" = "--strict" ]; then STRICT=1; else ARGS+=("$arg"); fi
done
mkdir -p artifacts
REPORT=artifacts/bench-report.txt
: >"$REPORT"
for bench in bench/bench_*.py; do
  echo "-- $bench"
  started=$SECONDS
  .venv/bin/python "$bench" "${ARGS[@]}" | tee "$MEMVIZ_VAR_DIR/bench.out"
  echo "-- $bench took $((SECONDS - started)) s"
  grep "MISSED" "$MEMVIZ_VAR_DIR/bench.out" | sed "s|^|$bench: |" >>"$REPORT" || true
done
MISSES=$(wc -l <"$REPORT")
echo "== benchmark targets: $MISSES missed (${ARGS[*]:-full} mode); report: $REPORT"
cat "$REPORT"
if [ "$MISSES" -gt 0 ] && [ "$STRICT" = 1 ]; then exit 1; fi
exit 0
