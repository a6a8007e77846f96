// kforge: finds fast kernels by proposing, compiling, testing and profiling candidates.
// This is the command-line entry point; each subcommand lives in its own file.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>

#include "cli/bench_command.h"
#include "cli/chat_command.h"
#include "cli/check_command.h"
#include "cli/doctor_command.h"
#include "cli/eval_command.h"
#include "cli/export_command.h"
#include "cli/llm_serve_command.h"
#include "cli/lower_command.h"
#include "cli/new_command.h"
#include "cli/optimize_command.h"
#include "cli/replay_command.h"
#include "cli/report_command.h"
#include "cli/search_command.h"
#include "cli/serve_command.h"
#include "cli/strategies_command.h"
#include "cli/worker_command.h"
#include "harness/jail.h"

int main(int argc, char** argv) {
  // The judge holds the oracle's answers and the candidates' inputs in its memory: no other
  // process of the same user may read it (/proc/<pid>/mem, ptrace) or get a core dump of it.
  kf::make_judge_undumpable();
  CLI::App app{"kforge: feedback-driven kernel optimization"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", std::string("kforge ") + KFORGE_VERSION);
  app.fallthrough();
  bool unsafe = false;
  app.add_flag("--unsafe-sandbox", unsafe,
               "run untrusted candidates even where this machine lacks part of the sandbox "
               "(kforge doctor lists what is missing)");
  // The run store and the outputs live in the user's data folder by default (support/fs.h); a
  // project that wants them beside its sources says so.
  bool here = false;
  app.add_flag("--here", here,
               "keep the run store and the outputs in the working directory (.kforge/runs.db, "
               "kforge-out/RUN) instead of the user's data folder (~/.local/share/kforge)");
  app.parse_complete_callback([&] {
    kf::set_unsafe_sandbox(unsafe);
    if (here) {
      const std::filesystem::path cwd = std::filesystem::current_path();
      ::setenv("KFORGE_STORE", (cwd / ".kforge" / "runs.db").c_str(), 1);
      ::setenv("KFORGE_OUT", (cwd / "kforge-out").c_str(), 1);
    }
  });
  kf::add_eval_command(app);
  kf::add_doctor_command(app);
  kf::add_lower_command(app);
  kf::add_check_command(app);
  kf::add_new_command(app);
  kf::add_bench_command(app);
  kf::add_optimize_command(app);
  kf::add_search_command(app);
  kf::add_strategies_command(app);
  kf::add_runs_commands(app);
  kf::add_llm_serve_command(app);
  kf::add_replay_command(app);
  kf::add_export_command(app);
  kf::add_report_command(app);
  kf::add_chat_command(app);
  kf::add_serve_command(app);
  kf::add_worker_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand's own exit status
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // No subcommand: say what there is, as --help does.
  if (app.get_subcommands().empty()) fmt::print("{}", app.help());
  return 0;
}
