#!/usr/bin/env bash
# The policy comparison of docs/search.md: every policy on the given tasks at one evaluation
# budget, for several seeds, in one store (a candidate is measured once and read back by every
# run that reaches it, so the policies are compared on the same measurements; --count-stored
# makes those read-backs spend budget, so every run judges equally many candidates). Prints a markdown
# table: per task and policy, the median over seeds of the best minimum time and of the
# evaluations it took to come within 90% of it. Not a test: minutes per task.
#
#   scripts/search-table.sh [-b BUDGET] [-s "1 2 3"] [-o OUTDIR] TASK_DIR...
set -euo pipefail
budget=20 seeds="1 2 3" out=kforge-out/search-table policies="greedy best-of-n beam mcts evolve"
while getopts "b:s:o:p:" opt; do
  case $opt in
    b) budget=$OPTARG ;; s) seeds=$OPTARG ;; o) out=$OPTARG ;; p) policies=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
kforge=${KFORGE:-$(dirname "$0")/../build/release/bin/kforge}
mkdir -p "$out"
for task in "$@"; do
  for policy in $policies; do
    for seed in $seeds; do
      dir="$out/$(basename "$task")/$policy-$seed"
      mkdir -p "$out/$(basename "$task")"
      [ -f "$dir/summary.json" ] && continue
      "$kforge" search "$task" --policy "$policy" --seed "$seed" --budget-evals "$budget" \
        --min-time 0.1 --no-final --count-stored --store "$out/table.db" --out "$dir" -q > "$dir.log" 2>&1 ||
        echo "failed: $task $policy $seed (see $dir.log)" >&2
    done
  done
done
python3 - "$out" "$budget" "$policies" "$@" <<'PY'
import json, pathlib, statistics, sys
out, budget, policies, tasks = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3].split(), sys.argv[4:]
print(f"| task | " + " | ".join(policies) + " |")
print("|---|" + "---|" * len(policies))
for t in tasks:
    name, cells = pathlib.Path(t).name, []
    for p in policies:
        best, to90 = [], []
        for f in sorted((out / name).glob(f"{p}-*/summary.json")):
            s = json.loads(f.read_text())["search"]
            best.append(s["best_min_s"] * 1e3); to90.append(s["evals_to_90pct"])
        cells.append(f"{statistics.median(best):.3f} ms @{statistics.median(to90):.0f}" if best else "-")
    print(f"| {name} | " + " | ".join(cells) + " |")
print(f"\nbudget {budget} evaluations a run; median over seeds of the best minimum time, "
      "and @ the evaluations to reach 90% of it")
PY
