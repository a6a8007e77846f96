// `kforge report RUN [-o FILE.html] [--store PATH] [--json]`: writes one self-contained HTML page
// of a run (report/report.h says what it holds): by default report.html in the run's output
// folder. RUN is a run id or a prefix of exactly one. Exit status 0 when written, 2 with a
// one-line message otherwise (no store, no such run, the file not writable).
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_report_command(CLI::App& app);

}  // namespace kf
