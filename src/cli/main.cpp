// kforge: finds fast kernels by proposing, compiling, testing and profiling candidates.
// This is the command-line entry point; each subcommand lives in its own file.
#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/check_command.h"
#include "cli/doctor_command.h"
#include "cli/eval_command.h"
#include "cli/lower_command.h"
#include "cli/optimize_command.h"

int main(int argc, char** argv) {
  CLI::App app{"kforge: feedback-driven kernel optimization"};
  app.require_subcommand(1);
  kf::add_eval_command(app);
  kf::add_doctor_command(app);
  kf::add_lower_command(app);
  kf::add_check_command(app);
  kf::add_bench_command(app);
  kf::add_optimize_command(app);
  kf::add_runs_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand's own exit status
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
