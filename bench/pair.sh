#!/usr/bin/env bash
# Paired bench: the same scenario alternately in two checkouts (old, new, old, new...), so that both
# meet the same machine. Each checkout needs its dependencies (a worktree can link this one's node_modules).
#   bench/pair.sh OLD_DIR NEW_DIR [ROUNDS] [SCENARIO]   (BENCH_* variables pass through; BENCH_LAYOUT defaults to split)
set -euo pipefail
old=$1 new=$2 rounds=${3:-2} scenario=${4:-posts-many-projects}
export BENCH_LAYOUT="${BENCH_LAYOUT:-split}"
for round in $(seq 1 "$rounds"); do
  for dir in "$old" "$new"; do
    echo "=== round $round: $dir ($(git -C "$dir" rev-parse --short HEAD)), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$dir" && node --import ./scripts/require-node-24.mjs bench/run.ts "$scenario" | grep -v '^\s*$')
  done
done
