#!/usr/bin/env bash
# The README's first command: install the dependencies, build kforge, judge a bundled candidate
# (a register-blocked GEMM) on a bundled task (bench/jaxbench/08_gemm), then run the main job:
# `kforge optimize` on the same task with a small budget (about two minutes here), which ends
# with the best kernel in ~/.local/share/kforge/runs/RUN/best.cpp and its speedups over the
# reference and the oneDNN baseline, measured side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "$(nproc)"
./build/release/bin/kforge doctor
./build/release/bin/kforge eval bench/jaxbench/08_gemm examples/candidates/08_gemm_blocked.cpp
./build/release/bin/kforge optimize bench/jaxbench/08_gemm --budget-evals 10
