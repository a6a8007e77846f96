#!/usr/bin/env bash
# Runs `kforge optimize` over every task of a suite with a reduced budget and prints the table
# (task, speedups over the reference and the library baseline from the final side-by-side run,
# median and min, % of the roofline, evaluations used). A benchmark, not a test: it takes about
# a minute per task here; keep it out of CI.
#
#   bash scripts/optimize-suite.sh [SUITE_DIR] [OUT_DIR] [-- extra kforge optimize flags]
#   e.g. bash scripts/optimize-suite.sh bench/jaxbench /tmp/suite -- --budget-evals 6 -t 1
# SHARD=i/n runs only every n-th task starting at the i-th (0-based), so n shards can share a
# machine; the table is printed by whichever finishes, from every summary present.
set -euo pipefail
cd "$(dirname "$0")/.."
suite="${1:-bench/jaxbench}"
out="${2:-kforge-suite}"
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--budget-evals 6 --budget-time 90 -t 1)
kforge="${KFORGE:-./build/release/bin/kforge}"  # a copy keeps a long run safe from rebuilds
mkdir -p "$out"
shard="${SHARD:-0/1}"
shard_i=${shard%/*}
shard_n=${shard#*/}
store="$out/runs-$shard_i.db"
index=-1
for task in "$suite"/*/; do
  name=$(basename "$task")
  index=$((index + 1))
  [ $((index % shard_n)) -eq "$shard_i" ] || continue
  [ -f "$out/$name.json" ] && continue  # finished earlier: the table reads it again
  echo "== $name" >&2
  if "$kforge" optimize "$task" --store "$store" --out "$out/runs/$name" "${flags[@]}" \
      > "$out/$name.log" 2>&1; then
    cp "$out/runs/$name/summary.json" "$out/$name.json"
  else
    echo "   failed: see $out/$name.log" >&2
  fi
done
printf '| task | vs reference (median, min) | vs baseline (median, min) | %% roofline | evaluations |\n'
printf '|---|---|---|---|---|\n'
for task in "$suite"/*/; do
  name=$(basename "$task")
  f="$out/$name.json"
  if [ ! -f "$f" ]; then
    printf '| %s | failed | | | |\n' "$name"
    continue
  fi
  jq -r --arg n "$name" '"| \($n) | \(.final.vs_reference.median*100|round/100)x, \(.final.vs_reference.min*100|round/100)x | \(.final.vs_baseline.median*100|round/100)x, \(.final.vs_baseline.min*100|round/100)x | \(.final.roofline_fraction*100|round)% | \(.evaluations) |"' "$f"
done
