#!/usr/bin/env bash
# Compile-only sanity check of the adversarial corpus. NEVER executes a candidate.
#
# Each case (from every manifest, tests/adversarial/*.toml) is compiled the way the judge compiles
# it (harness/shim.h), into a temporary folder:
#   1. alone, with the candidate flags, as a shared object;
#   2. with a stand-in for the judge's bind text appended, plus the entry shim as a translation
#      unit of its own, linked with -Wl,--no-undefined.
# Cases whose manifest verdict is compile_error must fail step 2; every other case must pass both.
# Cases refused by the judge's own policy rather than by the compiler (includes outside the
# allowed set, output or object too large, compile deadlines: messages "includes are limited",
# "too large", "timed out") and compile bombs are only compiled under a 2 GiB address-space
# limit, a 256 MiB file-size limit and a 20 s deadline, and their outcome is not judged here.
#
# Usage: tests/adversarial/compile_check.sh [CXX]   (default: g++)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runtime="$(cd "$here/../../runtime" && pwd)"
cxx="${1:-g++}"
flags=(-std=c++20 -O3 -march=native -fopenmp -fPIC -shared -fvisibility=hidden "-I$runtime")
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/bind.inc" <<'BIND'

// stand-in for the judge's bind text (appended to the candidate's unit)
void kforge_bind(const float* a0, const float* a1, float* a2, __INT64_TYPE__ a3,
                 __INT64_TYPE__ a4, __INT64_TYPE__ a5) {
  void (*const kf_fn)(const float*, const float*, float*, __INT64_TYPE__, __INT64_TYPE__,
                      __INT64_TYPE__) = &gemm;
  kf_fn(a0, a1, a2, a3, a4, a5);
}
BIND
cat >"$tmp/entry.cpp" <<'ENTRY'
// stand-in for the judge's entry shim (its own translation unit)
#include <cstdint>
void kforge_bind(const float*, const float*, float*, int64_t, int64_t, int64_t);
extern "C" __attribute__((visibility("default"))) void kf_entry(void* const* b,
                                                               const int64_t* d, const double*) {
  kforge_bind(static_cast<const float*>(b[0]), static_cast<const float*>(b[1]),
              static_cast<float*>(b[2]), d[0], d[1], d[2]);
}
ENTRY

# file -> verdict and message, from the manifests (simple line-based read of our own files)
declare -A verdict message
for manifest in "$here"/*.toml; do
  file=""
  while IFS= read -r line; do
    case "$line" in
      file\ =*) file="${line#*\"}"; file="${file%%\"*}" ;;
      verdict\ =*) v="${line#*\"}"; verdict["$file"]="${v%%\"*}" ;;
      message\ =*) m="${line#*\"}"; message["$file"]="${m%\"*}" ;;
    esac
  done <"$manifest"
done

limited() {  # runs "$@" under the bomb limits
  ( ulimit -v 2097152; ulimit -f 262144; timeout -s KILL 20 "$@" </dev/null >/dev/null 2>&1 ) 2>/dev/null
}

fail=0
for src in "$here"/cases/*.cpp; do
  name="$(basename "$src")"
  v="${verdict[$name]:-}"
  m="${message[$name]:-}"
  if [[ -z "$v" ]]; then echo "NOT IN MANIFEST: $name"; fail=1; continue; fi
  { printf '#line 1 "candidate.cpp"\n'; cat "$src"; cat "$tmp/bind.inc"; } >"$tmp/$name"
  if [[ "$name" == compile_bomb.cpp || "$name" == compiler_bomb_* || "$m" == "includes are limited" \
        || "$m" == "too large" || "$m" == "timed out" ]]; then
    limited "$cxx" "${flags[@]}" "$tmp/$name" "$tmp/entry.cpp" -o "$tmp/x.so"
    echo "limited (judge policy, rc $?): $name"
    continue
  fi
  "$cxx" "${flags[@]}" -Wl,--no-undefined "$tmp/$name" "$tmp/entry.cpp" \
      -o "$tmp/${name%.cpp}.so" </dev/null >"$tmp/${name%.cpp}.log" 2>&1
  rc=$?
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
