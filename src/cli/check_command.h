// `kforge check TASK_DIR...`: validates tasks — the file loads, the reference compiles at f64
// (the oracle) and at the task's dtype, and the reference at the task's dtype passes the judge
// against the f64 oracle on every test shape (so the tolerance admits a correct kernel); and,
// for a task with a TE spec, the spec compiles and agrees with the reference at double on every
// test shape (two fresh seeds each). With --time, also times the reference at the bench shape (tasks aim for 0.05–2 s).
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_check_command(CLI::App& app);

}  // namespace kf
