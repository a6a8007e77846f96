// The optimize loop's test fixture (modes_optimize_*_test.cpp): a small task, tiny budgets,
// one real run per test program shared by its tests (recorded, so the tests can replay it),
// and the attempts and messages of a run as the comparisons see them.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agents/builtin/brain.h"
#include "agents/strategy.h"
#include "modes/optimize.h"
#include "modes/optimize_report.h"
#include "store/memory_store.h"
#include "support/fs.h"
#include "support/process_temp_dir.h"
#include "support/test_env.h"
#include "task/task.h"

namespace kf::optimize_test {

namespace fs = std::filesystem;

inline const fs::path kTask = testing::source_dir() / "tests/golden/tasks/f64_layernorm";

// This program's own directory (support/process_temp_dir.h).
inline const fs::path& temp_root() {
  return testing::process_temp_dir("kf_modes_optimize");
}

// What a run did, attempt by attempt, without the parts that name the machine or the time.
struct Step {
  std::string kind, strategy, candidate, verdict;
  double median_s = 0;
  bool operator==(const Step&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const Step& s) {
  return os << s.kind << " " << s.strategy << " " << s.verdict << " " << s.median_s << " "
            << s.candidate;
}

inline std::vector<Step> steps_of(Store& store, const std::string& run) {
  auto a = store.attempts(run);
  KF_CHECK(a.has_value()) << a.error().message();
  std::vector<Step> out;
  for (const AttemptRecord& r : *a)
    out.push_back({r.kind, r.strategy, r.candidate_key, r.verdict, r.median_s});
  return out;
}

inline std::vector<std::string> message_types(Store& store, const std::string& run) {
  auto m = store.messages(run);
  KF_CHECK(m.has_value()) << m.error().message();
  std::vector<std::string> out;
  for (const MessageRecord& r : *m) out.push_back(r.type);
  return out;
}

inline OptimizeOptions small_options(const std::string& name) {
  OptimizeOptions o;
  o.task_dir = kTask;
  o.budget_evals = 5;
  o.min_time_s = 0.05;
  o.final_run = false;
  o.profile = false;
  o.tune_budget = 1;
  o.stop_fraction = 100;  // never stop for the roofline: the budget decides, whatever the timing
  o.out_dir = temp_root() / name;
  return o;
}

// One real run, shared by the tests of this suite (it compiles and times five candidates).
class OptimizeLoop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    store_ = new MemoryStore;
    progress_ = new std::vector<std::string>;
    recording_ = new fs::path(temp_root() / "real.jsonl");
    OptimizeOptions o = small_options("real");
    o.record = recording_->string();
    o.progress = [](const std::string& line) { progress_->push_back(line); };
    auto r = optimize(o, *store_);
    if (r) {
      result_ = new OptimizeResult(*r);
    } else {
      error_ = new std::string(r.error().message());
    }
  }
  static void TearDownTestSuite() {
    delete store_;
    delete progress_;
    delete recording_;
    delete result_;
    delete error_;
  }
  void SetUp() override {
    ASSERT_EQ(error_, nullptr) << *error_;
    ASSERT_NE(result_, nullptr);
  }

  // small_options replaying the recording instead of judging.
  static OptimizeOptions simulated(const std::string& name) {
    OptimizeOptions o = small_options(name);
    o.simulate = recording_->string();
    return o;
  }
  // A simulated run of the recording on a fresh store.
  static Expected<OptimizeResult> simulate(MemoryStore& store, const std::string& name) {
    return optimize(simulated(name), store);
  }

  static inline MemoryStore* store_ = nullptr;
  static inline std::vector<std::string>* progress_ = nullptr;
  static inline fs::path* recording_ = nullptr;
  static inline OptimizeResult* result_ = nullptr;
  static inline std::string* error_ = nullptr;
};

}  // namespace kf::optimize_test
