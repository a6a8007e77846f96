// Validation of a task folder (`kforge check`): does the task admit a correct kernel, and are its
// reference and baseline what they claim to be? Every solution the task ships is judged by the
// same judge as any candidate (evaluator.h `evaluate`, with the solution's source as the
// candidate), so a check passes exactly when a candidate with that code would be judged ok.
//
//   TaskCheckOptions o;  o.seeds = 3;
//   TaskCheckReport r = check_task("bench/jaxbench/08_gemm", o);
//   for (const CheckItem& c : r.items) print(c.solution, c.scope, c.status, c.worst_share);
//   return r.passed() ? 0 : 1;
//
// The checks, in order (a task that does not load has only the first):
//   task      / todo    only for a skeleton that `kforge new` wrote and the user has not finished:
//                       one failed item (verdict "incomplete") per placeholder left
//                       (task/task_skeleton.h missing_fields), and no other check
//   task      / load    task.toml and reference.cpp load and validate; the task's identity
//   te        / tests   the TE spec agrees with reference<double> on every test shape (`seeds`
//                       fresh inputs each); only for a task with a spec
//   reference / tests   reference<dtype> against the oracle on every test shape, `seeds` inputs
//   reference / bench   reference<dtype> against reference<double> at the bench shape, judged
//                       as a test shape is (`bench_seeds` fresh inputs); with `time`, also timed
//                       through the judge's bench path (rotated input sets, each batch checked)
//   baseline  / tests   the baseline (compiled with its libraries), as the reference is
//   baseline  / bench
// A solution whose test shapes fail is not run at the bench shape (that check is "skipped").
//
// Each judged check records the worst error's share of the tolerance over all its shapes and
// seeds: the largest of every element's |y - y*| / (atol + rtol |y*|) and every output's
// rel_l2 / the rel_l2 bound (1 is at the bound). A pass above kThinShare is a thin margin: other
// inputs may fail it, and a correct candidate that rounds differently more likely will.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/run_result.h"
#include "harness/toolchain.h"

namespace kf {

// The schema of TaskCheckReport::to_json (and of `kforge check --json`); a change of meaning
// bumps it.
inline constexpr const char* kCheckSchema = "kforge-check/1";
// A worst error above this share of the tolerance is reported as a thin margin.
inline constexpr double kThinShare = 0.5;

struct TaskCheckOptions {
  int seeds = 3;        // fresh input draws per test shape (the judge's minimum is 2)
  int bench_seeds = 2;  // fresh input draws at the bench shape (the judge's minimum is 2)
  uint64_t seed = 0;    // 0: fresh seeds; otherwise the run is reproducible
  bool time = false;    // time the reference at the bench shape (0.3 s of calls)
  int threads = 1;
  CompileOptions compile;                            // the compiler (cxx)
  std::function<void(const std::string&)> progress;  // status lines, may be empty
};

enum class CheckStatus { pass, fail, skipped };

struct CheckItem {
  std::string solution;  // "task", "te", "reference", "baseline"
  std::string scope;     // "todo", "load", "tests", "bench"
  CheckStatus status = CheckStatus::fail;
  std::string verdict;  // the judge's verdict; "error" when the task or the environment failed;
                        // "incomplete" for a placeholder left in a skeleton
  std::string message;  // one line: what happened
  std::vector<std::string> diagnostics;
  double worst_share = 0;  // of the tolerance, over every judged shape and seed
  std::string worst;       // the element behind worst_share: "y[3]: got 1.5, expected 1.25"
  std::vector<CheckRecord> records;  // each shape and seed judged
  uint64_t seed = 0;                 // the run's seed (--seed replays it); 0 when none
  std::optional<double> median_s;    // reference / bench with time: its median time per call
  double seconds = 0;                // wall clock of the check

  bool thin() const { return status == CheckStatus::pass && worst_share > kThinShare; }
  nlohmann::json to_json() const;
};

struct TaskCheckReport {
  std::string dir, name, identity;  // name and identity empty when the task did not load
  std::vector<CheckItem> items;
  double seconds = 0;

  bool passed() const;         // every item passed
  double worst_share() const;  // the largest worst_share of the judged checks
  nlohmann::json to_json() const;
};

std::string_view check_status_name(CheckStatus s);

// Runs every check on the task folder `dir`. Never fails: a broken task, a broken solution or a
// failing environment is a failed item with its message.
TaskCheckReport check_task(const std::filesystem::path& dir, const TaskCheckOptions& options);

}  // namespace kf
