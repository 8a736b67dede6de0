#!/usr/bin/env bash
# Runs every benchmark under bench/ (pass --quick for the small CI mode).
set -euo pipefail
cd "$(dirname "$0")/.."
export MEMVIZ_VAR_DIR="${MEMVIZ_VAR_DIR:-$(mktemp -d)}"
for bench in bench/bench_*.py; do
  echo "-- $bench"
  .venv/bin/python "$bench" "$@"
done
