#include "cli/check_command.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "harness/evaluator.h"
#include "harness/te_oracle.h"

namespace kf {
namespace {

struct CheckArgs {
  std::vector<std::string> dirs;
  bool time = false;
};

// Task directories named on the command line; a directory holding task folders expands to them.
std::vector<std::filesystem::path> expand(const std::vector<std::string>& dirs) {
  std::vector<std::filesystem::path> out;
  for (const auto& d : dirs) {
    if (std::filesystem::exists(std::filesystem::path(d) / "task.toml")) {
      out.emplace_back(d);
      continue;
    }
    std::vector<std::filesystem::path> sub;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(d, ec))
      if (e.is_directory() && std::filesystem::exists(e.path() / "task.toml")) sub.push_back(e.path());
    std::sort(sub.begin(), sub.end());
    if (sub.empty()) out.emplace_back(d);  // let the loader say what is wrong
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

// Returns true when the task is valid.
bool check_one(const std::filesystem::path& dir, bool time) {
  auto task = load_task(dir);
  if (!task) {
    fmt::print("FAIL {}\n     {}\n", dir.string(), task.error().message());
    return false;
  }
  EvalOptions o;
  o.time = time;
  o.time_reference = false;
  o.min_time_s = 0.3;
  o.min_samples = 3;
  auto r = evaluate(*task, task->reference_source, o);
  if (!r) {
    fmt::print("FAIL {}\n     {}\n", task->name, r.error().message());
    return false;
  }
  if (r->verdict != Verdict::ok) {
    fmt::print("FAIL {}: the reference at {} gets '{}' against the f64 oracle\n     {}\n",
               task->name, dtype_name(task->dtype), verdict_name(r->verdict), r->message);
    return false;
  }
  double worst = 0;
  for (const auto& c : r->checks) worst = std::max(worst, c.rel_l2);
  std::string timing;
  if (r->timing) {
    const double t = r->timing->median_s;
    timing = fmt::format(", reference {:.3f} s at the bench shape{}", t,
                         t < 0.05 || t > 2 ? " (outside the 0.05-2 s target)" : "");
  }
  std::string te = "no TE spec";
  if (!task->te_spec.empty()) {
    auto rows = cross_check_te(*task, 2, 0);
    if (!rows) {
      fmt::print("FAIL {}: TE spec\n     {}\n", task->name, rows.error().message());
      return false;
    }
    double te_worst = 0;
    for (const auto& row : *rows) {
      te_worst = std::max(te_worst, row.rel_l2);
      if (!row.passed) {
        fmt::print("FAIL {}: the TE spec and the reference disagree at {} (seed {})\n     {}\n",
                   task->name, row.shape, row.seed, row.detail);
        return false;
      }
    }
    te = fmt::format("TE agrees with the reference, rel. L2 {:.1e}", te_worst);
  }
  fmt::print("ok   {} ({} test shapes, worst rel. L2 {:.1e} vs tolerance {:.0e}; {}{})\n",
             task->name, task->tests.size(), worst, task->tolerance_for(task->dtype).rel_l2, te,
             timing);
  return true;
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "Validate tasks (loader, reference, tolerance)");
  cmd->add_option("dirs", args->dirs, "Task directories, or suites of them")->required();
  cmd->add_flag("--time", args->time, "Also time the reference at the bench shape");
  cmd->callback([args] {
    int bad = 0;
    for (const auto& d : expand(args->dirs)) bad += !check_one(d, args->time);
    if (bad) throw CLI::RuntimeError(1);
  });
}

}  // namespace kf
