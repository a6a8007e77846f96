// The typed messages the roles exchange (DESIGN.md "Agents and brains"). Every message is stored
// with the run (store/), so a run can be read back as a conversation:
//
//   planner ──Plan──► implementer ──Candidate──► tester ──TestReport──► profiler ──Profile──►
//   planner ...;  tester ──Diagnostics──► debugger ──Candidate──► tester
//
// Each message has to_json(); the JSON is what an LLM brain will read and write.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agents/strategy.h"
#include "harness/run_result.h"

namespace kf::agents {

// What to try next and why. strategy == "stop" ends the loop.
struct Plan {
  std::string strategy;                   // a catalog id, or "stop"
  Knobs knobs;                            // for the strategy's mechanical form
  std::string analysis;                   // what the evidence says
  std::string bottleneck;                 // "compute-bound at 12% of the FMA peak"
  std::string why;                        // the rule (or reasoning) that chose the strategy
  double expected_speedup = 1.0;          // over the current best
  std::vector<std::string> alternatives;  // the next-ranked strategies, best first
  nlohmann::json to_json() const;
};

// A concrete kernel: source plus where it came from.
struct CandidateMsg {
  std::string key;       // candidate identity (store/): source + flags + toolchain + target
  std::string source;    // the C++ translation unit
  std::string schedule;  // the schedule trace it was generated from ("" if hand written)
  Recipe recipe;         // the built-in brain's strategy applications
  std::string parent;    // key of the candidate it was derived from ("" for the first)
  std::string origin;    // "builtin:register_block", "autotune:nr=48", "debugger:..."
  int threads = 1;       // threads it is judged with
  std::vector<std::string> skipped;  // move groups the schedule layer refused, with reasons
  nlohmann::json to_json(bool with_source = false) const;
};

// Why a candidate failed, for the debugger.
struct Diagnostics {
  std::string phase;  // "schedule", "compile", "test", "run"
  std::string message;
  std::vector<std::string> details;
  bool kforge_bug = false;  // generated code failed to compile or was wrong: a kforge bug
  nlohmann::json to_json() const;
};

// The tester's verdict on a candidate, from the judge's RunResult.
struct TestReport {
  Verdict verdict = Verdict::ok;
  std::string message;
  int checks_passed = 0, checks_total = 0;
  double median_s = 0, min_s = 0;
  double speedup_vs_best = 0;  // best's median / this median (0 when not ok)
  bool reused = false;         // read from the store, not measured again
  nlohmann::json to_json() const;
};

}  // namespace kf::agents
