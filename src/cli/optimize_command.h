// `kforge optimize TASK_DIR [--budget-evals N | --budget-time T] [--threads N] [--brain builtin]
// [--out DIR]`, `kforge optimize --resume RUN`, `kforge runs`, `kforge show RUN`: the autonomous
// loop (modes/optimize.h) and the run store's listing (store/).
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_optimize_command(CLI::App& app);
void add_runs_commands(CLI::App& app);

}  // namespace kf
