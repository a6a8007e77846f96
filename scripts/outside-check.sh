#!/usr/bin/env bash
# Runs `kforge optimize` twice (two runs, so two seeds) on every task of a folder and compares
# the two bests side by side in one `kforge eval --vs` run: the check that the built-in brain
# spends its budget and ends in the same place from another seed, on tasks it was not written
# for (bench/outside). A benchmark, not a test: ~25 min here at the default budget.
#
#   bash scripts/outside-check.sh [TASKS_DIR] [OUT_DIR] [-- extra kforge optimize flags]
set -euo pipefail
cd "$(dirname "$0")/.."
tasks="${1:-bench/outside}"
out="${2:-kforge-outside}"
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--budget-evals 12 --budget-time 240 -t 1)
kforge="${KFORGE:-./build/release/bin/kforge}"
mkdir -p "$out"
for task in "$tasks"/*/; do
  name=$(basename "$task")
  for seed in a b; do
    [ -f "$out/$name-$seed.json" ] && continue
    echo "== $name ($seed)" >&2
    "$kforge" optimize "$task" --store "$out/runs.db" --remeasure --out "$out/runs/$name-$seed" \
      "${flags[@]}" > "$out/$name-$seed.log" 2>&1 || { echo "   failed" >&2; continue; }
    cp "$out/runs/$name-$seed/summary.json" "$out/$name-$seed.json"
  done
  if [ -f "$out/$name-a.json" ] && [ -f "$out/$name-b.json" ] && [ ! -f "$out/$name-vs.json" ]; then
    "$kforge" eval "$task" "$out/runs/$name-b/best.cpp" --vs "$out/runs/$name-a/best.cpp" \
      -t 1 --json > "$out/$name-vs.json" 2> /dev/null || true
  fi
done
printf '| task | run a: evals, stop | run b: evals, stop | a vs ref (median) | b vs ref (median) | b over a side by side (median, min) |\n'
printf '|---|---|---|---|---|---|\n'
for task in "$tasks"/*/; do
  name=$(basename "$task")
  a="$out/$name-a.json" b="$out/$name-b.json" vs="$out/$name-vs.json"
  [ -f "$a" ] && [ -f "$b" ] || { printf '| %s | failed | | | | |\n' "$name"; continue; }
  side="-"
  [ -s "$vs" ] && side=$(jq -r '"\(.speedup_vs_rival.median*100|round/100)x, \(.speedup_vs_rival.min*100|round/100)x"' "$vs")
  printf '| %s | %s, %s | %s, %s | %sx | %sx | %s |\n' "$name" \
    "$(jq .evaluations "$a")" "$(jq -r .stop_reason "$a")" \
    "$(jq .evaluations "$b")" "$(jq -r .stop_reason "$b")" \
    "$(jq '.final.vs_reference.median*100|round/100' "$a")" \
    "$(jq '.final.vs_reference.median*100|round/100' "$b")" "$side"
done
