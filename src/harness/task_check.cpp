#include "harness/task_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "harness/evaluator.h"
#include "harness/te_oracle.h"
#include "support/fs.h"
#include "task/task_identity.h"
#include "task/task_skeleton.h"

namespace kf {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A share as JSON: null where it is not finite (a NaN output, an integer mismatch).
nlohmann::json share_json(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nullptr;
}

// The worst error's share of the tolerance in one judged check: the element bound's ratio, or
// the relative L2 error over its bound when that is larger.
double share_of(const CheckRecord& c, const Tolerance& tol) {
  double s = c.worst_ratio;
  if (tol.rel_l2 > 0) s = std::max(s, c.rel_l2 / tol.rel_l2);
  return s;
}

// One solution the task ships, as the judge sees a candidate.
struct Solution {
  std::string what;    // "reference", "baseline"
  std::string source;  // its C++ text
  std::vector<std::string> libs;
};

class Checker {
 public:
  Checker(const Task& task, const TaskCheckOptions& o) : task_(task), o_(o) {}

  CheckItem te_tests() const;
  // The solution on every test shape; true when they passed.
  CheckItem tests(const Solution& s) const;
  CheckItem bench(const Solution& s) const;

 private:
  EvalOptions eval_options(const Solution& s, uint64_t seed) const;
  // Fills `item` from a judged run; false when it did not pass.
  bool take(CheckItem& item, const Expected<RunResult>& r) const;

  const Task& task_;
  const TaskCheckOptions& o_;
};

EvalOptions Checker::eval_options(const Solution& s, uint64_t seed) const {
  EvalOptions e;
  e.threads = o_.threads;
  e.seed = seed;
  e.seeds_per_shape = o_.seeds;
  e.time_reference = false;  // the solution itself is what the check runs
  e.compile = o_.compile;
  e.compile.libs = s.libs;
  e.progress = o_.progress;
  return e;
}

bool Checker::take(CheckItem& item, const Expected<RunResult>& r) const {
  if (!r) {
    item.status = CheckStatus::fail;
    item.verdict = "error";
    item.message = r.error().message();
    return false;
  }
  const Tolerance& tol = task_.tolerance_for(task_.dtype);
  for (const CheckRecord& c : r->checks) {
    const double s = share_of(c, tol);
    if (item.records.empty() || s > item.worst_share || std::isnan(s)) {
      item.worst_share = std::isnan(s) ? INFINITY : s;
      item.worst = c.worst;
    }
    item.records.push_back(c);
  }
  if (r->verdict == Verdict::ok) {
    item.status = CheckStatus::pass;
    item.verdict = "ok";
    return true;
  }
  item.status = CheckStatus::fail;
  item.verdict = std::string(verdict_name(r->verdict));
  item.message = r->message;
  item.diagnostics = r->diagnostics;
  return false;
}

CheckItem Checker::te_tests() const {
  const auto t0 = Clock::now();
  CheckItem item{.solution = "te", .scope = "tests", .seed = o_.seed};
  auto rows = cross_check_te(task_, std::max(o_.seeds, 1), o_.seed);
  if (!rows) {
    item.verdict = "error";
    item.message = "the TE spec: " + rows.error().message();
    item.seconds = since(t0);
    return item;
  }
  item.status = CheckStatus::pass;
  item.verdict = "ok";
  double worst_rel_l2 = 0;
  for (const CrossCheckRow& row : *rows) {
    worst_rel_l2 = std::max(worst_rel_l2, row.rel_l2);
    item.records.push_back(
        {.shape = row.shape, .seed = row.seed, .passed = row.passed, .rel_l2 = row.rel_l2});
    if (!row.passed && item.status == CheckStatus::pass) {
      item.status = CheckStatus::fail;
      item.verdict = "wrong_answer";
      item.message = fmt::format("the TE spec and reference<double> disagree at {} (seed {}): {}",
                                 row.shape, row.seed, row.detail);
    }
  }
  // Both sides compute in f64; cross_check_te's bound on their relative L2 gap is 1e-10.
  item.worst_share = worst_rel_l2 / 1e-10;
  if (item.status == CheckStatus::pass)
    item.message =
        fmt::format("the TE spec agrees with reference<double>, rel. L2 {:.1e}", worst_rel_l2);
  item.seconds = since(t0);
  return item;
}

CheckItem Checker::tests(const Solution& s) const {
  const auto t0 = Clock::now();
  CheckItem item{.solution = s.what, .scope = "tests", .seed = o_.seed};
  EvalOptions e = eval_options(s, o_.seed);
  e.time = false;
  if (take(item, evaluate(task_, s.source, e)))
    item.message = fmt::format("{} at {} passes {} test shapes x {} seeds", s.what,
                               dtype_name(task_.dtype), task_.tests.size(), std::max(o_.seeds, 2));
  item.seconds = since(t0);
  return item;
}

CheckItem Checker::bench(const Solution& s) const {
  const auto t0 = Clock::now();
  CheckItem item{.solution = s.what, .scope = "bench", .seed = o_.seed};
  // The bench shape judged as the judge judges a test shape: fresh inputs per draw, every output
  // element against reference<double> (the TE interpreter is exact, but too slow at this size).
  Task at_bench = task_;
  at_bench.tests = {task_.bench};
  at_bench.te_spec.clear();
  EvalOptions e = eval_options(s, o_.seed ? o_.seed ^ 0xbe4c4be4c4be4c4bull : 0);
  e.time = false;
  e.seeds_per_shape = o_.bench_seeds;
  const bool passed = take(item, evaluate(at_bench, s.source, e));
  if (passed && o_.time && s.what == "reference") {
    // Timing runs the judge's bench path: input sets rotated through batches, each checked.
    at_bench.tests.clear();
    e.time = true;
    e.min_time_s = 0.3;
    e.min_samples = 3;
    auto r = evaluate(at_bench, s.source, e);
    if (r && r->timing) item.median_s = r->timing->median_s;
    take(item, r);
  }
  if (item.status == CheckStatus::pass) {
    auto inst = task_.instantiate(task_.bench);
    item.message = fmt::format("{} at {} passes the bench shape {} x {} seeds", s.what,
                               dtype_name(task_.dtype), inst ? inst->label() : "",
                               std::max(o_.bench_seeds, 2));
  }
  item.seconds = since(t0);
  return item;
}

// One failed item per placeholder left in a skeleton (task/task_skeleton.h): the loader would stop
// at the first with a message about types, where the user needs the list of what to fill in.
std::vector<CheckItem> missing_items(const std::filesystem::path& dir) {
  auto toml = read_file(dir / "task.toml");
  if (!toml) return {};  // the loader says why
  auto reference = read_file(dir / "reference.cpp");
  std::vector<CheckItem> items;
  for (const MissingField& m : missing_fields(*toml, reference ? *reference : ""))
    items.push_back(
        {.solution = "task",
         .scope = "todo",
         .verdict = "incomplete",
         .message = (dir / m.file).string() + ":" + std::to_string(m.line) + ": " + m.what});
  return items;
}

}  // namespace

std::string_view check_status_name(CheckStatus s) {
  switch (s) {
    case CheckStatus::pass:
      return "pass";
    case CheckStatus::fail:
      return "fail";
    case CheckStatus::skipped:
      return "skipped";
  }
  return "?";
}

nlohmann::json CheckItem::to_json() const {
  nlohmann::json shapes = nlohmann::json::array();
  for (const CheckRecord& c : records)
    shapes.push_back({{"shape", c.shape},
                      {"seed", c.seed},
                      {"passed", c.passed},
                      {"rel_l2", share_json(c.rel_l2)},
                      {"worst_ratio", share_json(c.worst_ratio)},
                      {"worst", c.worst}});
  nlohmann::json j = {{"solution", solution},
                      {"scope", scope},
                      {"status", check_status_name(status)},
                      {"verdict", verdict},
                      {"message", message},
                      {"diagnostics", diagnostics},
                      {"worst_share", share_json(worst_share)},
                      {"margin", worst_share > 0 ? share_json(1 / worst_share) : nullptr},
                      {"thin_margin", thin()},
                      {"worst", worst},
                      {"seed", seed},
                      {"checks", shapes},
                      {"seconds", seconds}};
  j["median_s"] = median_s ? nlohmann::json(*median_s) : nlohmann::json(nullptr);
  return j;
}

bool TaskCheckReport::passed() const {
  return !items.empty() && std::all_of(items.begin(), items.end(), [](const CheckItem& c) {
    return c.status == CheckStatus::pass;
  });
}

double TaskCheckReport::worst_share() const {
  double w = 0;
  for (const CheckItem& c : items)
    if (c.solution == "reference" || c.solution == "baseline") w = std::max(w, c.worst_share);
  return w;
}

nlohmann::json TaskCheckReport::to_json() const {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckItem& c : items) checks.push_back(c.to_json());
  return {{"dir", dir},
          {"name", name},
          {"identity", identity},
          {"passed", passed()},
          {"worst_share", share_json(worst_share())},
          {"checks", checks},
          {"seconds", seconds}};
}

TaskCheckReport check_task(const std::filesystem::path& dir, const TaskCheckOptions& o) {
  const auto t0 = Clock::now();
  TaskCheckReport report{.dir = dir.string()};
  report.items = missing_items(dir);
  if (!report.items.empty()) {
    report.seconds = since(t0);
    return report;
  }
  CheckItem load{.solution = "task", .scope = "load"};
  auto task = load_identified_task(dir);
  if (!task) {
    load.verdict = "error";
    load.message = task.error().message();
    report.items.push_back(std::move(load));
    report.seconds = since(t0);
    return report;
  }
  const Task& t = task->task;
  report.name = t.name;
  report.identity = task->identity.hash;
  load.status = CheckStatus::pass;
  load.verdict = "ok";
  load.message = fmt::format("{} loads; identity {} (of {} file(s))", t.name, task->identity.hash,
                             task->identity.files.size());
  load.seconds = since(t0);
  report.items.push_back(std::move(load));

  Checker checker(t, o);
  if (!t.te_spec.empty()) report.items.push_back(checker.te_tests());
  std::vector<Solution> solutions = {{"reference", t.reference_source, {}}};
  if (t.baseline) {
    auto src = read_file(t.dir / t.baseline->file);
    if (!src) {
      report.items.push_back({.solution = "baseline",
                              .scope = "tests",
                              .verdict = "error",
                              .message = src.error().message()});
    } else {
      solutions.push_back({"baseline", *src, t.baseline->libs});
    }
  }
  bool oracle_broken = false;
  for (const Solution& s : solutions) {
    if (oracle_broken) {
      // The oracle is reference<double>, or the TE spec checked against it: every other
      // solution's check would end in the same error.
      for (const char* scope : {"tests", "bench"})
        report.items.push_back(
            {.solution = s.what,
             .scope = scope,
             .status = CheckStatus::skipped,
             .verdict = "skipped",
             .message = "not run: the oracle is broken (see the reference's check)"});
      continue;
    }
    report.items.push_back(checker.tests(s));
    oracle_broken = report.items.back().verdict == "error" ||
                    (s.what == "reference" && report.items.back().verdict == "compile_error");
    if (report.items.back().status == CheckStatus::pass) {
      report.items.push_back(checker.bench(s));
      continue;
    }
    report.items.push_back({.solution = s.what,
                            .scope = "bench",
                            .status = CheckStatus::skipped,
                            .verdict = "skipped",
                            .message = "not run: the test shapes failed"});
  }
  report.seconds = since(t0);
  return report;
}

}  // namespace kf
