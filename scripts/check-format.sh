#!/usr/bin/env bash
# Fails when a C++ file of kforge's own differs from clang-format's output (.clang-format).
# Data that only looks like C++ is left alone: golden outputs, adversarial candidates, task
# fixtures (their references are the users' kind of code) and fuzz regression inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "clang-format is not installed"; exit 1; }
# The tracked files, or every file of those trees where the tree is not a git checkout.
list_sources() {
  if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git ls-files 'src/*.cpp' 'src/*.h' 'tests/*.cpp' 'tests/*.h' 'tools/*.cpp' 'tools/*.h' \
      'runtime/*.cpp' 'runtime/*.h'
  else
    find src tests tools runtime -type f \( -name '*.cpp' -o -name '*.h' \) | sort
  fi
}
list_sources |
  grep -v -E '^tests/(golden|adversarial/cases|adversarial/task|check_tasks|integration/aa_stream|fuzz/regressions)/' |
  xargs clang-format --dry-run --Werror
echo "clang-format: every file is formatted"
