#!/usr/bin/env bash
# Compile-only sanity check of the adversarial corpus. NEVER executes a candidate.
#
# Each case is compiled twice into a temporary folder:
#   1. alone, with the candidate flags, as a shared object;
#   2. with a stand-in for the judge's entry shim appended, linked with -Wl,--no-undefined.
# Cases whose manifest verdict is compile_error must fail step 2; every other case must pass both.
# compile_bomb.cpp is only compiled under a 2 GiB address-space limit and a 20 s deadline.
#
# Usage: tests/adversarial/compile_check.sh [CXX]   (default: g++)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runtime="$(cd "$here/../../runtime" && pwd)"
cxx="${1:-g++}"
flags=(-std=c++20 -O3 -march=native -fopenmp -fPIC -shared "-I$runtime")
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/shim.inc" <<'SHIM'

// stand-in for the judge's entry shim
extern "C" void kforge_adversarial_entry(void* const* bufs, const int64_t* dims) {
  gemm(static_cast<const float*>(bufs[0]), static_cast<const float*>(bufs[1]),
       static_cast<float*>(bufs[2]), dims[0], dims[1], dims[2]);
}
SHIM

# file -> verdict, from the manifest (simple line-based read of our own cases.toml)
declare -A verdict
file=""
while IFS= read -r line; do
  case "$line" in
    file\ =*) file="${line#*\"}"; file="${file%%\"*}" ;;
    verdict\ =*) v="${line#*\"}"; verdict["$file"]="${v%%\"*}" ;;
  esac
done <"$here/cases.toml"

fail=0
for src in "$here"/cases/*.cpp; do
  name="$(basename "$src")"
  v="${verdict[$name]:-}"
  if [[ -z "$v" ]]; then echo "NOT IN MANIFEST: $name"; fail=1; continue; fi
  cat "$src" "$tmp/shim.inc" >"$tmp/$name"
  if [[ "$name" == compile_bomb.cpp ]]; then
    ( ulimit -v 2097152; timeout -s KILL 20 "$cxx" "${flags[@]}" "$tmp/$name" -o "$tmp/x.so" \
        </dev/null >/dev/null 2>&1 )
    rc=$?
  else
    "$cxx" "${flags[@]}" -Wl,--no-undefined "$tmp/$name" -o "$tmp/${name%.cpp}.so" \
        </dev/null >"$tmp/${name%.cpp}.log" 2>&1
    rc=$?
  fi
  if [[ "$v" == compile_error ]]; then
    if [[ $rc -eq 0 ]]; then echo "SHOULD NOT COMPILE: $name"; fail=1; else echo "ok (fails): $name"; fi
  else
    if [[ $rc -ne 0 ]]; then
      echo "DOES NOT COMPILE: $name"; cat "$tmp/${name%.cpp}.log"; fail=1
    elif ! "$cxx" "${flags[@]}" -Wall -Wextra -Werror "$src" -o "$tmp/alone.so" </dev/null \
        >"$tmp/alone.log" 2>&1; then
      echo "WARNINGS/ERRORS ALONE: $name"; cat "$tmp/alone.log"; fail=1
    else
      echo "ok: $name"
    fi
  fi
done
for f in "${!verdict[@]}"; do
  [[ -f "$here/cases/$f" ]] || { echo "MISSING FILE: $f"; fail=1; }
done
exit $fail
