#!/usr/bin/env bash
# Measures kforge's own code against its size limits: no source file over 600 lines, no function
# over 120 (from the first line of its definition to its closing brace, as universal-ctags finds
# them: --fields=+ne gives each function's start and end line). Prints every file and function
# over its limit, largest first, and exits 1 when there is one.
#   bash scripts/code-size.sh            # src/, runtime/, tools/, tests/ (fixtures aside)
# CTest runs it (code_size_check), so CI holds the limits.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v ctags > /dev/null || { echo "universal-ctags is not installed"; exit 2; }
# Candidate sources under tests/ (the adversarial corpus, task fixtures) are inputs, not our code.
fixtures='^tests/(adversarial/cases|adversarial/corpus|golden|check_tasks|integration/written_source|integration/aa_stream)/'
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  files=$(git ls-files 'src/*.cpp' 'src/*.h' 'runtime/*.cpp' 'runtime/*.h' 'tools/*.cpp' \
    'tools/*.h' 'tests/*.cpp' 'tests/*.h' | grep -Ev "$fixtures")
else
  files=$(find src runtime tools tests -name '*.cpp' -o -name '*.h' | sort | grep -Ev "$fixtures")
fi
# shellcheck disable=SC2086
ctags --output-format=json --fields=+ne --kinds-C++=f -f - $files | python3 -c '
import json, sys
MAX_FILE, MAX_FUNCTION = 600, 120
files = sys.argv[1:]
over = 0
sizes = []
for path in files:
    with open(path, encoding="utf-8", errors="replace") as f:
        sizes.append((sum(1 for _ in f), path))
for n, path in sorted(sizes, reverse=True):
    if n > MAX_FILE:
        print(f"file {path}: {n} lines (limit {MAX_FILE})")
        over += 1
functions = []
for line in sys.stdin:
    tag = json.loads(line)
    if "end" in tag:
        functions.append((tag["end"] - tag["line"] + 1, tag["path"], tag["line"],
                          (tag.get("scope", "") + "::" + tag["name"]).lstrip(":")))
for n, path, start, name in sorted(functions, reverse=True):
    if n > MAX_FUNCTION:
        print(f"function {name} ({path}:{start}): {n} lines (limit {MAX_FUNCTION})")
        over += 1
print(f"{len(sizes)} files, {len(functions)} functions measured; {over} over the limits")
sys.exit(1 if over else 0)
' $files
