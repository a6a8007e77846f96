#!/usr/bin/env bash
# Fails when a C++ file of kforge's own differs from clang-format's output (.clang-format).
# Data that only looks like C++ is left alone: golden outputs, adversarial candidates, task
# fixtures (their references are the users' kind of code) and fuzz regression inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "clang-format is not installed"; exit 1; }
git ls-files 'src/*.cpp' 'src/*.h' 'tests/*.cpp' 'tests/*.h' 'tools/*.cpp' 'tools/*.h' \
    'runtime/*.cpp' 'runtime/*.h' |
  grep -v -E '^tests/(golden|adversarial/cases|adversarial/task|check_tasks|integration/aa_stream|fuzz/regressions)/' |
  xargs clang-format --dry-run --Werror
echo "clang-format: every file is formatted"
