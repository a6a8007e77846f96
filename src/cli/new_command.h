// `kforge new TASK_DIR --from KERNEL.cpp [--function F]` or `kforge new TASK_DIR --signature
// "void f(const float* x, float* y, int64_t n)"`: writes a task skeleton, task.toml and
// reference.cpp. The kernel's signature becomes the task's (task/signature_parse.h), a plain
// function becomes the template over T a reference must be (task/reference_convert.h), and
// everything only the user knows — tensor shapes, bench and test shapes, cost formulas — is a
// "TODO" placeholder with a comment saying what it does (task/task_skeleton.h). `kforge check
// TASK_DIR` then lists what is still missing, one line each.
//
// Refuses a TASK_DIR that exists and is not empty unless --force (which overwrites task.toml and
// reference.cpp only). Exit status 0 when the skeleton was written, 1 when the input cannot make
// one (the message says why and where), 2 for bad usage.
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_new_command(CLI::App& app);

}  // namespace kf
