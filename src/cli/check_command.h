// `kforge check TASK_DIR... [--json] [--seeds N] [--bench-seeds N] [--seed S] [--time]`:
// validates tasks (harness/task_check.h has the checks): the folder loads; the TE spec, when the
// task has one, agrees with reference<double> on every test shape; the reference at the task's
// dtype and the baseline, when the task declares one (built with its libraries), each pass the
// judge against the f64 oracle on every test shape with N fresh seeds and at the bench shape.
// Each check prints pass/fail with its worst error's share of the tolerance and the margin that
// leaves. A skeleton from `kforge new` with placeholders left gets one failed line per
// placeholder instead (what to fill in, where). Exit status 0 only when every check of every task
// passes; 1 otherwise. With --time, also times the reference at the bench shape (tasks aim for
// 0.05-2 s).
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_check_command(CLI::App& app);

}  // namespace kf
