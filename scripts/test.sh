#!/usr/bin/env bash
# Configures, builds and runs the whole test suite (the README's second command).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release
cmake --build --preset release -j "$(nproc)"
ctest --preset release -j "$(nproc)"
