// `kforge eval TASK_DIR CANDIDATE.cpp`: judge one candidate on one task and print the verdict,
// errors, times, GFLOP/s, GB/s, percent of roofline and the speedup over the task's reference.
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_eval_command(CLI::App& app);

}  // namespace kf
