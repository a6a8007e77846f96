#!/usr/bin/env bash
# The README's first command: install the dependencies, build kforge, and judge a bundled
# candidate (a register-blocked GEMM) on a bundled task (bench/jaxbench/08_gemm), printing the
# verdict and the speedup over the task's reference measured side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "$(nproc)"
./build/release/bin/kforge doctor
./build/release/bin/kforge eval bench/jaxbench/08_gemm examples/candidates/08_gemm_blocked.cpp
