#!/usr/bin/env bash
# Behaviour kept across a change: optimize runs recorded by one kforge (the build before the
# change) replay in simulation under another (the build after it) to the same journey and the
# same best. For each task: OLD records a real run (--record), NEW replays it (--simulate) with
# the same options, and the two runs' attempts (kind, strategy, candidate, verdict, median) and
# bests are compared.
#
#   scripts/replay-check.sh OLD_KFORGE NEW_KFORGE OUT_DIR TASK_DIR...
#
# Each kforge binary runs from its own build tree (it finds its worker beside it). Profiling is
# off on both sides: the stage-time measurement is a timing the recording does not hold.
# REPLAY_REUSE=1 keeps the recordings already in OUT_DIR (OLD is then not run): a change checked
# again and again against one recording of the build before it.
# Exit status 0 when every task replays identically; the differences are printed otherwise.
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: $0 OLD_KFORGE NEW_KFORGE OUT_DIR TASK_DIR..." >&2
  exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
out=$3
shift 3
mkdir -p "$out"
out=$(realpath "$out")
budget=${REPLAY_BUDGET_EVALS:-10}
opts=(--budget-evals "$budget" --budget-time 900 --no-profile --no-final --min-time 0.1 -q)

status=0
for task in "$@"; do
  name=$(basename "$task")
  dir=$out/$name
  if [[ -n ${REPLAY_REUSE:-} && -f $dir/rec.jsonl && -f $dir/old.db ]]; then
    rm -rf "$dir/new" "$dir/new.db"
  else
    rm -rf "$dir"
    mkdir -p "$dir"
    "$old" optimize "$task" "${opts[@]}" --record "$dir/rec.jsonl" --store "$dir/old.db" \
      --out "$dir/old" > "$dir/old.log" 2>&1 || { echo "$name: the recording run failed"; status=1; continue; }
  fi
  "$new" optimize "$task" "${opts[@]}" --simulate "$dir/rec.jsonl" --store "$dir/new.db" \
    --out "$dir/new" > "$dir/new.log" 2>&1 || { echo "$name: the replay failed"; tail -3 "$dir/new.log"; status=1; continue; }
  for side in old new; do
    run=$("$new" runs --store "$dir/$side.db" | awk 'NR == 2 { print $1 }')
    "$new" show "$run" --json --store "$dir/$side.db" > "$dir/$side.json"
  done
  python3 - "$dir/old.json" "$dir/new.json" "$dir/old/summary.json" "$dir/new/summary.json" "$name" <<'PY' || status=1
import json, sys
old, new, old_summary, new_summary, name = sys.argv[1:]
def journey(path):
    return [(a["kind"], a["strategy"], a["candidate_key"], a["verdict"], a["median_s"])
            for a in json.load(open(path))["attempts"]]
a, b = journey(old), journey(new)
best_a = json.load(open(old_summary))["best"]
best_b = json.load(open(new_summary))["best"]
same = a == b and best_a["key"] == best_b["key"]
print(f"{name}: {len(a)} attempts, best {best_a['recipe']} ({best_a['median_s'] * 1e3:.3f} ms): "
      + ("same journey and best" if same else "DIFFERENT"))
if not same:
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            print(f"  attempt {i + 1}: recorded {x}\n  {'':>{len(str(i + 1)) + 9}}replayed {y}")
    if best_a["key"] != best_b["key"]:
        print(f"  best: recorded {best_a['recipe']}, replayed {best_b['recipe']}")
    sys.exit(1)
PY
done
exit $status
