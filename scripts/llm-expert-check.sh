#!/usr/bin/env bash
# What the LLM path adds when the model is good: the scripted expert transcripts of
# bench/llm-transcripts (a plan, the kernel an expert writes, stop) served by `kforge llm-serve`
# on a free loopback port and run through `kforge optimize --brain llm`, so each kernel goes
# through the real screening, judge and final side-by-side run like any model's reply. Then, per
# task, the built-in brain's search at a small budget, and one `kforge eval` timing the expert
# kernel, the built-in brain's best (--vs), the library baseline and the reference side by side
# on the same inputs. Prints a table of medians and of the expert kernel's speedups (from the
# min times / from the medians).
#
#   scripts/llm-expert-check.sh OUT_DIR [TASK_NAME...]    (default: the three transcripts' tasks)
#
# Settings (environment): KFORGE (the binary, default build/release/bin/kforge), THREADS
# (default 1), BUILTIN_EVALS and BUILTIN_TIME (the built-in search's budget, default 6 and 90 s),
# NO_BUILTIN=1 (skip the built-in search and compare with the library and reference only).
# Every run's log, summary and store stay in OUT_DIR. Exit status 0 when every expert kernel was
# kept as its run's best and passed its final run.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kforge=${KFORGE:-$root/build/release/bin/kforge}
threads=${THREADS:-1}
if [[ $# -lt 1 ]]; then
  echo "usage: $0 OUT_DIR [TASK_NAME...]" >&2
  exit 2
fi
mkdir -p "$1"
out=$(realpath "$1")
shift
tasks=("$@")
[[ ${#tasks[@]} -gt 0 ]] || tasks=(01_flash_attention 10_sparse_moe 18_conv2d_relu_biasadd)

server=""
cleanup() { [[ -z $server ]] || kill "$server" 2> /dev/null || true; }
trap cleanup EXIT

# Starts the replay server on a free port for transcript $1 (logs at $2.out/.err); sets $server
# (its pid) and $url (the base URL it prints first).
serve() {
  "$kforge" llm-serve --transcript "$1" > "$2.out" 2> "$2.err" &
  server=$!
  for _ in $(seq 100); do
    if [[ -s $2.out ]]; then
      url=$(head -n 1 "$2.out")
      return 0
    fi
    sleep 0.1
  done
  echo "llm-serve did not start: $(cat "$2.err")" >&2
  return 1
}

status=0
for name in "${tasks[@]}"; do
  task=$root/bench/jaxbench/$name
  dir=$out/$name
  rm -rf "$dir"
  mkdir -p "$dir"
  serve "$root/bench/llm-transcripts/$name.json" "$dir/serve"
  printf '[llm]\nbase_url = "%s"\nmodel = "expert"\ntimeout_s = 60\nmax_retries = 1\n' "$url" \
    > "$dir/llm.toml"
  echo "$name: kforge optimize --brain llm (replay server at $url)"
  "$kforge" optimize "$task" --brain llm --llm-config "$dir/llm.toml" --budget-evals 4 \
    --threads "$threads" --no-profile --store "$out/runs.db" --out "$dir/llm" -q \
    > "$dir/llm.log" 2>&1 || { echo "$name: the LLM run failed"; tail -5 "$dir/llm.log"; status=1; }
  kill "$server" 2> /dev/null || true
  wait "$server" 2> /dev/null || true
  server=""
  [[ -f $dir/llm/summary.json ]] || { status=1; continue; }
  origin=$(jq -r '.best.origin' "$dir/llm/summary.json")
  [[ $origin == llm:implementer && $(jq -r '.final.verdict' "$dir/llm/summary.json") == ok ]] ||
    { echo "$name: the expert kernel is not the run's best (best: $origin)"; status=1; }

  vs=()
  if [[ -z ${NO_BUILTIN:-} ]]; then
    echo "$name: kforge optimize (built-in brain, ${BUILTIN_EVALS:-6} evaluations)"
    "$kforge" optimize "$task" --budget-evals "${BUILTIN_EVALS:-6}" \
      --budget-time "${BUILTIN_TIME:-90}" --threads "$threads" --store "$out/runs.db" \
      --out "$dir/builtin" -q > "$dir/builtin.log" 2>&1 ||
      { echo "$name: the built-in run failed"; tail -5 "$dir/builtin.log"; status=1; }
    [[ -f $dir/builtin/best.cpp ]] && vs=(--vs "$dir/builtin/best.cpp")
  fi
  echo "$name: kforge eval (expert kernel side by side with the others)"
  "$kforge" eval "$task" "$dir/llm/best.cpp" --vs-baseline "${vs[@]}" --threads "$threads" \
    --json -q > "$dir/eval.json" 2> "$dir/eval.err" ||
    { echo "$name: the side-by-side eval failed"; tail -5 "$dir/eval.err"; status=1; }
done

python3 - "$out" "${tasks[@]}" <<'PY'
import json, pathlib, sys
out, tasks = pathlib.Path(sys.argv[1]), sys.argv[2:]
ms = lambda t, k="median_s": f"{t[k] * 1e3:9.3f}" if t else "        -"
ratio = lambda s: f"{s['min']:6.2f} /{s['median']:6.2f}" if s else "     -  /   -  "
print("\nside by side, one kforge eval per task (ms, median of samples; speedups of the expert "
      "kernel, from the min times / from the medians)")
print(f"{'task':<24}{'expert':>10}{'built-in':>10}{'library':>10}{'reference':>10}"
      f"   {'vs reference':>15}   {'vs library':>15}   {'vs built-in':>15}")
for name in tasks:
    f = out / name / "eval.json"
    try:
        r = json.loads(f.read_text())
    except (OSError, ValueError):
        print(f"{name:<24}  (no side-by-side result: see {f.parent})")
        continue
    print(f"{name:<24}{ms(r.get('timing'))}{ms(r.get('rival_timing'))}"
          f"{ms(r.get('baseline_timing'))}{ms(r.get('reference_timing'))}"
          f"   {ratio(r.get('speedup'))}   {ratio(r.get('speedup_vs_baseline'))}"
          f"   {ratio(r.get('speedup_vs_rival'))}")
print("\nthe LLM runs' final side-by-side runs (summary.json) and the built-in runs' bests:")
for name in tasks:
    try:
        s = json.loads((out / name / "llm" / "summary.json").read_text())
        fin = s.get("final", {})
        line = (f"{name:<24} llm run: best {s['best']['origin']}, final {fin.get('verdict')} "
                f"{fin.get('median_s', 0) * 1e3:.3f} ms, vs reference "
                f"{ratio(fin.get('vs_reference'))}, vs library {ratio(fin.get('vs_baseline'))}")
    except (OSError, ValueError, KeyError):
        line = f"{name:<24} llm run: no summary"
    try:
        b = json.loads((out / name / "builtin" / "summary.json").read_text())
        line += (f"; built-in: {b['evaluations']} evaluations, best {b['best']['median_s'] * 1e3:.3f}"
                 f" ms ({b['best']['recipe']})")
    except (OSError, ValueError, KeyError):
        pass
    print(line)
PY
exit $status
