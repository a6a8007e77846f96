// `kforge bench [SUITE_DIR] [--solutions reference,baseline,DIR...] [--tasks 08,12]
// [--threads N] [--json FILE]`: runs every chosen solution of every chosen task through the judge
// and prints one row per task and solution — verdict, median time, GFLOP/s, GB/s, % of roofline,
// speedup over the task's reference and over its library baseline, all measured side by side in
// the same run — then a summary per solution: geometric-mean speedups and fast_p, the fraction
// of tasks that are correct and at least p times faster than the baseline (p = 0, 1, 1.5, 2).
//
// A solution DIR holds candidates named after the tasks: DIR/08_gemm.cpp or DIR/08_gemm.sched.
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_bench_command(CLI::App& app);

}  // namespace kf
