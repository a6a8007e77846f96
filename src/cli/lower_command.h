// `kforge lower TASK_DIR [--schedule FILE] [-o OUT.cpp] [--dump-ir]`: lower the task's TE spec
// with a schedule (default: the naive one) and print or write the generated C++. --dump-ir
// prints the pipeline and the IR after every lowering pass to stderr.
//
//   kforge lower bench/jaxbench/08_gemm --schedule examples/schedules/08_gemm.sched -o gemm.cpp
//   kforge eval bench/jaxbench/08_gemm gemm.cpp      # or pass the .sched file to eval directly
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "support/status.h"
#include "task/task.h"

namespace kf {

void add_lower_command(CLI::App& app);

// The C++ generated for a schedule file (`kforge eval TASK FILE.sched` judges this): parses
// `text` as the schedule at `path`, lowers the task's TE spec with it for AVX-512.
Expected<std::string> lower_schedule_file(const Task& task, const std::string& path,
                                          const std::string& text);

}  // namespace kf
