#!/usr/bin/env bash
# Runs `kforge optimize` over every task of a suite with a reduced budget and prints the table
# (task, speedups over the reference and the library baseline from the final side-by-side run,
# median and min, % of the roofline, evaluations used) under a header with the commit, the
# machine and the suite's figures (geometric mean, count at 1.0x, median roofline share), ready
# to commit as docs/results.md. A benchmark, not a test: it takes about a minute per task here
# at the default budget; keep it out of CI.
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
# The header a results page needs: the commit, the date, the machine (kforge doctor) and the
# suite's figures over the tasks that finished: geometric mean and median over the library
# baseline (median times), how many reach 1.0x and how many fall below 0.8x, the median share
# of the roofline.
printf '# Suite results\n\n'
printf -- '- commit: %s\n' "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
printf -- '- date: %s\n' "$(date -u +%Y-%m-%d)"
printf -- '- flags: %s\n' "${flags[*]}"
printf -- '- machine:\n\n```\n%s\n```\n\n' "$("$kforge" doctor 2>/dev/null | sed -n '2,9p')"
summaries=()
for task in "$suite"/*/; do
  f="$out/$(basename "$task").json"
  [ -f "$f" ] && summaries+=("$f")
done
if [ ${#summaries[@]} -gt 0 ]; then
  jq -s -r '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor]
                       else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    (map(.final.vs_baseline.median | select(. != null and . > 0))) as $b
    | (map(.final.roofline_fraction | select(. != null))) as $r
    | "- tasks: \(length) finished; \($b | length) with a library baseline\n" +
      "- over the baseline (median times): geometric mean \(if ($b | length) > 0 then ($b | map(log) | add / length | exp * 100 | round / 100) else "-" end)x, " +
      "median \(if ($b | length) > 0 then ($b | median * 100 | round / 100) else "-" end)x; " +
      "\($b | map(select(. >= 1)) | length) at or above 1.0x, \($b | map(select(. < 0.8)) | length) below 0.8x\n" +
      "- median share of the roofline: \(if ($r | length) > 0 then ($r | median * 100 | round) else "-" end)%\n"' \
    "${summaries[@]}"
fi
printf '| task | vs reference (median, min) | vs baseline (median, min) | %% roofline | evaluations |\n'
printf '|---|---|---|---|---|\n'
for task in "$suite"/*/; do
  name=$(basename "$task")
  f="$out/$name.json"
  if [ ! -f "$f" ]; then
    # A log without a summary: the run failed; no log: not run yet (another shard's task).
    printf '| %s | %s | | | |\n' "$name" "$([ -f "$out/$name.log" ] && echo failed || echo 'not run')"
    continue
  fi
  jq -r --arg n "$name" '"| \($n) | \(.final.vs_reference.median*100|round/100)x, \(.final.vs_reference.min*100|round/100)x | \(.final.vs_baseline.median*100|round/100)x, \(.final.vs_baseline.min*100|round/100)x | \(.final.roofline_fraction*100|round)% | \(.evaluations) |"' "$f"
done
