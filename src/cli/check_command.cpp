#include "cli/check_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/cli_output.h"
#include "harness/task_check.h"
#include "support/json_text.h"

namespace kf {
namespace {

struct CheckArgs {
  std::vector<std::string> dirs;
  bool time = false, json = false, verbose = false;
  int seeds = 3, bench_seeds = 2;
  uint64_t seed = 0;
  std::string cxx = "g++";
};

// Task directories named on the command line; a directory holding task folders expands to them.
std::vector<std::filesystem::path> expand(const std::vector<std::string>& dirs) {
  std::vector<std::filesystem::path> out;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::path(d) / "task.toml", ec)) {
      out.emplace_back(d);
      continue;
    }
    std::vector<std::filesystem::path> sub;
    for (const auto& e : std::filesystem::directory_iterator(d, ec))
      if (e.is_directory(ec) && std::filesystem::exists(e.path() / "task.toml", ec))
        sub.push_back(e.path());
    std::sort(sub.begin(), sub.end());
    if (sub.empty()) out.emplace_back(d);  // let the loader say what is wrong
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

std::string share_text(const CheckItem& c) {
  if (c.records.empty()) return "";
  if (!std::isfinite(c.worst_share)) return ", worst error: not finite";
  std::string s = fmt::format(", worst error {:.2g} of the tolerance", c.worst_share);
  if (c.worst_share > 0 && c.worst_share < 1)
    s += fmt::format(" (margin {:.3g}x)", 1 / c.worst_share);
  if (c.thin()) s += ": thin margin, other inputs may fail it";
  return s;
}

// Lines of `text`, at most `max`, the last saying how many were left out.
std::vector<std::string> lines_of(const std::string& text, size_t max) {
  std::vector<std::string> out;
  size_t start = 0, total = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) {
      ++total;
      if (out.size() < max) out.push_back(text.substr(start, end - start));
    }
    start = end + 1;
  }
  if (total > out.size()) out.push_back(fmt::format("({} more lines)", total - out.size()));
  return out;
}

void print_report(const TaskCheckReport& r) {
  fmt::print("{} {}\n", r.passed() ? "ok  " : "FAIL",
             terminal_text(r.name.empty() ? r.dir : r.name));
  for (const CheckItem& c : r.items) {
    // A message may carry a compiler's log: its first line goes on the check's line.
    std::vector<std::string> message = lines_of(c.message, 16);
    std::string line = fmt::format("  {:<7} {:<9} {:<6} {}", check_status_name(c.status),
                                   c.solution, c.scope, message.empty() ? "" : message[0]);
    if (c.solution != "te") line += share_text(c);
    if (c.median_s) {
      const double t = *c.median_s;
      line += fmt::format("; {:.3f} s per call{}", t,
                          t < 0.05 || t > 2 ? " (outside the 0.05-2 s target)" : "");
    }
    fmt::print("{}\n", terminal_text(line));
    for (size_t i = 1; i < message.size(); ++i)
      fmt::print("          {}\n", terminal_text(message[i]));
    if (c.status == CheckStatus::fail)
      for (size_t i = 0; i < c.diagnostics.size() && i < 6; ++i)
        fmt::print("          {}\n", terminal_text(c.diagnostics[i]));
  }
  if (!r.items.empty() && r.items.front().scope == "todo")
    fmt::print("  {} to fill in: edit the lines above, then run kforge check again\n",
               r.items.size());
  std::fflush(stdout);
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Validate tasks: the task loads; the TE spec agrees with the reference; the reference and "
      "the baseline pass the judge on every test shape with several seeds and at the bench "
      "shape. Exit status 0 only when every check passes.");
  cmd->add_option("dirs", args->dirs, "Task directories, or suites of them")->required();
  cmd->add_flag("--json", args->json,
                fmt::format("Print one JSON document (schema \"{}\", docs/json.md) instead of text",
                            kCheckSchema));
  cmd->add_option("--seeds", args->seeds, "Fresh input draws per test shape (at least 2)")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
  cmd->add_option("--bench-seeds", args->bench_seeds,
                  "Fresh input draws at the bench shape (at least 2)")
      ->check(CLI::Range(2, 100))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the input draws (0: fresh; else reproducible)");
  cmd->add_flag("--time", args->time, "Also time the reference at the bench shape");
  cmd->add_option("--cxx", args->cxx, "The compiler")->capture_default_str();
  cmd->add_flag("-v,--verbose", args->verbose, "Print the judge's progress to stderr, timed");
  cmd->callback([args] {
    TaskCheckOptions o;
    o.seeds = args->seeds;
    o.bench_seeds = args->bench_seeds;
    o.seed = args->seed;
    o.time = args->time;
    o.compile.cxx = args->cxx;
    if (args->verbose) {
      const auto t0 = std::chrono::steady_clock::now();
      o.progress = [t0](const std::string& line) {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        fmt::print(stderr, "[{:7.2f} s] {}\n", s, line);
      };
    }
    bool all = true;
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& d : expand(args->dirs)) {
      TaskCheckReport r = check_task(d, o);
      all = all && r.passed();
      if (args->json) {
        tasks.push_back(r.to_json());
      } else {
        print_report(r);
      }
    }
    if (args->json) {
      // docs/schemas/check.schema.json; untrusted text (compiler output, a solution's
      // messages) may hold invalid UTF-8, which print_json replaces.
      print_json(kCheckSchema, {{"passed", all},
                                {"seeds", o.seeds},
                                {"bench_seeds", o.bench_seeds},
                                {"seed", o.seed},
                                {"tasks", tasks}});
    }
    if (!all) throw CLI::RuntimeError(1);
  });
}

}  // namespace kf
