#!/usr/bin/env bash
# Runs every benchmark under bench/ (pass --quick for the small CI mode).
#
# A benchmark that fails makes the run fail (exit status). A figure that misses its target is
# marked MISSED on its line (bench/targets.py); the lines are collected into a separate report,
# artifacts/bench-report.txt, and summed up at the end. In quick mode the data is small and the
# machine busy, so a miss is reported, not fatal; `--strict` makes any miss fail the run.
# `--jobs N` runs N benchmarks at a time (`make test` uses 2 while its last test pass finishes:
# each benchmark's figures are ratios to floors measured in its own run); the outputs are still
# printed whole, one benchmark after the other, in name order.
set -euo pipefail
cd "$(dirname "$0")/.."
export MEMVIZ_VAR_DIR="${MEMVIZ_VAR_DIR:-$(mktemp -d)}"
mkdir -p "$MEMVIZ_VAR_DIR"
STRICT=0
JOBS=1
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --strict) STRICT=1 ;;
    --jobs) JOBS="$2"; shift ;;
    *) ARGS+=("$1") ;;
  esac
  shift
done
mkdir -p artifacts
REPORT=artifacts/bench-report.txt
: >"$REPORT"
OUT="$MEMVIZ_VAR_DIR/bench-out"
rm -rf "$OUT" && mkdir -p "$OUT"
BENCHES=(bench/bench_*.py)
# A quick benchmark takes under a minute here: one still running after LIMIT s is stuck, and
# fails instead of holding the run (0: no limit, full mode's default).
LIMIT=0
for arg in "${ARGS[@]:-}"; do [ "$arg" = --quick ] && LIMIT=600; done
LIMIT="${MEMVIZ_BENCH_LIMIT:-$LIMIT}"

run_one() {  # one benchmark: its output, its time and its exit status into $OUT
  local bench=$1 name started
  name=$(basename "$bench" .py)
  started=$SECONDS
  set +e
  mkdir -p "$MEMVIZ_VAR_DIR/$name"  # its own var/ (database, files): two may run at once
  MEMVIZ_VAR_DIR="$MEMVIZ_VAR_DIR/$name" timeout --signal=INT --kill-after=30 "$LIMIT" \
    .venv/bin/python "$bench" "${ARGS[@]}" >"$OUT/$name.out" 2>&1
  local rc=$?
  [ "$rc" = 124 ] && echo "!! stopped after $LIMIT s: stuck" >>"$OUT/$name.out"
  echo "$rc" >"$OUT/$name.rc"
  set -e
  echo "$((SECONDS - started))" >"$OUT/$name.s"
}

run_share() {  # every JOBS-th benchmark from $1, one after the other
  local k
  for ((k = $1; k < ${#BENCHES[@]}; k += JOBS)); do run_one "${BENCHES[$k]}"; done
}

if [ "$JOBS" -le 1 ]; then
  for bench in "${BENCHES[@]}"; do
    echo "-- $bench"
    run_one "$bench"
    cat "$OUT/$(basename "$bench" .py).out"
    echo "-- $bench took $(cat "$OUT/$(basename "$bench" .py).s") s"
  done
else
  PIDS=()
  for ((j = 0; j < JOBS; j++)); do run_share "$j" & PIDS+=($!); done
  wait "${PIDS[@]}" || true  # each benchmark's status is in $OUT
  for bench in "${BENCHES[@]}"; do
    echo "-- $bench"
    cat "$OUT/$(basename "$bench" .py).out"
    echo "-- $bench took $(cat "$OUT/$(basename "$bench" .py).s") s"
  done
fi

FAILED=()
for bench in "${BENCHES[@]}"; do
  name=$(basename "$bench" .py)
  grep "MISSED" "$OUT/$name.out" | sed "s|^|$bench: |" >>"$REPORT" || true
  [ "$(cat "$OUT/$name.rc")" = 0 ] || FAILED+=("$bench")
done
MISSES=$(wc -l <"$REPORT")
echo "== benchmark targets: $MISSES missed (${ARGS[*]:-full} mode); report: $REPORT"
cat "$REPORT"
if [ ${#FAILED[@]} -gt 0 ]; then echo "!! failed: ${FAILED[*]}"; exit 1; fi
if [ "$MISSES" -gt 0 ] && [ "$STRICT" = 1 ]; then exit 1; fi
exit 0
