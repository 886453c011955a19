#!/usr/bin/env bash
# `make bench`: every benchmark under bench/, in order. Figures go to stdout
# and to bench/out/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
for b in bench/bench_*.py; do
    echo "== $b"
    .venv/bin/python "$b"
done
