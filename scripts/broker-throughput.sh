#!/usr/bin/env bash
# Evaluations per minute of one compile-heavy search on this machine: judged by the search
# itself (no broker), then by 1, 2 and 3 `kforge worker`s through a redis-server on loopback
# (and by one worker taking 3 jobs at once).
# Every configuration judges the same candidates (best-of-n with one seed: its samples do not
# depend on the measurements) from a cold compile cache (the machine's probe is copied in).
# The default task is the suite's GEMM at a 256^3 bench shape: its generated kernels take a
# second or more to compile and milliseconds to check and time, so compiling dominates.
#
#   scripts/broker-throughput.sh [TASK] > table.md      # BUDGET=18 JOBS=3 PORT=6391 KFORGE=...
set -euo pipefail
cd "$(dirname "$0")/.."
K=${KFORGE:-$PWD/build/release/bin/kforge}
TASK=${1:-}
BUDGET=${BUDGET:-18}
JOBS=${JOBS:-3}
PORT=${PORT:-6391}
root=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$root"
}
trap cleanup EXIT
if [ -z "$TASK" ]; then
  TASK="$root/gemm256"
  cp -r bench/jaxbench/08_gemm "$TASK"
  sed -i 's/^bench = { M = 1024, N = 1024, K = 1024 }/bench = { M = 256, N = 256, K = 256 }/' \
    "$TASK/task.toml"
  grep -q 'M = 256, N = 256, K = 256' "$TASK/task.toml"
fi
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
  --logfile "$root/redis.log"
"$K" doctor >/dev/null  # the machine's probe, measured once and copied into each cold cache
probe="${KFORGE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kforge}/machine"
echo "| judged by | evaluations | wall s | evaluations a minute |"
echo "|---|---|---|---|"
for config in 0:0 1:1 1:3 2:1 3:1; do
  n=${config%%:*}
  wj=${config##*:}
  export KFORGE_CACHE_DIR="$root/cache-$n-$wj"
  mkdir -p "$KFORGE_CACHE_DIR" && cp -r "$probe" "$KFORGE_CACHE_DIR/"
  pids=()
  broker=()
  if [ "$n" -gt 0 ]; then
    broker=(--broker "redis://127.0.0.1:$PORT")
    for i in $(seq "$n"); do
      "$K" worker --broker "redis://127.0.0.1:$PORT" --name "tp$n-$wj-$i" --jobs "$wj" \
        2>"$root/w$n-$wj-$i.log" &
      pids+=($!)
    done
  fi
  start=$(date +%s.%N)
  "$K" search "$TASK" --policy best-of-n --seed 7 --budget-evals "$BUDGET" --jobs "$JOBS" \
    --min-time 0.05 --refine-share 0 --no-final --quiet --store "$root/s$n-$wj.db" \
    --out "$root/out$n-$wj" "${broker[@]}" >/dev/null
  end=$(date +%s.%N)
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  python3 - "$root/out$n-$wj/summary.json" "$n" "$start" "$end" "$wj" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
n, wall, wj = int(sys.argv[2]), float(sys.argv[4]) - float(sys.argv[3]), int(sys.argv[5])
who = "the search itself" if n == 0 else f"{n} worker{'s' if n > 1 else ''}"
if n and wj > 1:
    who += f", --jobs {wj}"
e = s["evaluations"]
print(f"| {who} | {e} | {wall:.1f} | {60 * e / wall:.1f} |")
PY
done
