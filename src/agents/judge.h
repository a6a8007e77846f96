// The judge as the agents see it: source in, RunResult out. The tester calls it; the modes pick
// the implementation.
//
//   HarnessJudge real;                                   // compile + sandbox + check + time
//   RecordingJudge rec(real, "run.jsonl");               // ... and append each result to a file
//   RecordedJudge sim("run.jsonl");                      // replay: no compiler, no timing noise
//   Expected<RunResult> r = judge.judge(task, source, options);
//
// The recorded (simulation) judge answers from a file of {"candidate": KEY, "threads": N,
// "result": RunResult} lines keyed by candidate_key(); a candidate that is not in the recording
// gets a `crash` verdict saying so. It makes the optimize loop's logic testable without timing
// noise: the same recording always gives the same decisions.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "harness/evaluator.h"
#include "harness/run_result.h"
#include "support/status.h"
#include "task/task.h"

namespace kf::agents {

// A candidate's identity (DESIGN.md "Identity"): its normalized source (line endings and
// trailing spaces), the compile flags and the compiler's identity and target.
std::string candidate_key(const std::string& source, const CompileOptions& compile);

class Judge {
 public:
  virtual ~Judge() = default;
  // Fails only when the task or the environment is broken; a bad candidate is a verdict.
  virtual Expected<RunResult> judge(const Task& task, const std::string& source,
                                    const EvalOptions& options) = 0;
  virtual std::string name() const = 0;  // "harness", "recorded"
  // A judge whose measurements run elsewhere (the broker's workers) is handed a batch's
  // candidates before they are judged one by one, so that they are measured at once; judge()
  // then waits for each. Others judge on the call and ignore this.
  virtual bool remote() const { return false; }
  virtual Status submit(const Task& /*task*/, const std::string& /*source*/,
                        const EvalOptions& /*options*/) {
    return {};
  }
};

class HarnessJudge : public Judge {
 public:
  Expected<RunResult> judge(const Task& task, const std::string& source,
                            const EvalOptions& options) override;
  std::string name() const override { return "harness"; }
};

class RecordingJudge : public Judge {
 public:
  RecordingJudge(Judge& inner, std::string path) : inner_(inner), path_(std::move(path)) {}
  Expected<RunResult> judge(const Task& task, const std::string& source,
                            const EvalOptions& options) override;
  std::string name() const override { return inner_.name() + "+recording"; }
  bool remote() const override { return inner_.remote(); }
  Status submit(const Task& task, const std::string& source, const EvalOptions& options) override {
    return inner_.submit(task, source, options);
  }

 private:
  Judge& inner_;
  std::string path_;
};

class RecordedJudge : public Judge {
 public:
  // Fails when the file cannot be read or a line is not a recorded result.
  static Expected<std::unique_ptr<RecordedJudge>> open(const std::string& path);
  Expected<RunResult> judge(const Task& task, const std::string& source,
                            const EvalOptions& options) override;
  std::string name() const override { return "recorded"; }
  // Seconds to sleep per judged candidate (so tests can interrupt a simulated run).
  void set_latency(double seconds) { latency_s_ = seconds; }

 private:
  // Candidate key, threads, and the measurement's label (EvalOptions::label).
  using Key = std::tuple<std::string, int, std::string>;
  std::map<Key, std::vector<RunResult>> results_;
  std::map<Key, size_t> next_;  // per key: the next to replay
  double latency_s_ = 0;
};

}  // namespace kf::agents
