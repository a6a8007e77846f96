// `kforge export RUN -o DIR [--target T] [--namespace N | --c-linkage] [--store PATH]
// [--task DIR]`: writes a run's best kernel as FUNCTION.h + FUNCTION.cpp, a CMake library target
// and a README into DIR (export/export_run.h says what each target does; docs/export.md how to
// use the result). RUN is a run id or a prefix of exactly one. Exit status 0 when written, 2 with
// a one-line message otherwise (no such run, no best kernel, an unknown target or namespace, a
// task folder that does not load, DIR not writable).
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_export_command(CLI::App& app);

}  // namespace kf
