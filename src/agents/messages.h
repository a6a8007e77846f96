// The typed messages the roles exchange (DESIGN.md "Agents and brains"). Every message is stored
// with the run (store/), so a run can be read back as a conversation:
//
//   planner ──Plan──► implementer ──Candidate──► tester ──TestReport──► profiler ──Profile──►
//   planner ...;  tester ──Diagnostics──► debugger ──Candidate──► tester
//
// Each message has to_json(); the JSON is what an LLM brain will read and write.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/strategy.h"
#include "harness/run_result.h"

namespace kf::agents {

// What to try next and why: a catalog strategy (with knobs for its mechanical form) or free
// text for a brain that writes source. strategy == "stop" ends the loop.
struct Plan {
  std::string strategy;                   // a catalog id, "stop", or "" (free text)
  Knobs knobs;                            // for the strategy's mechanical form
  std::string text;                       // free text: what to write (strategy "")
  std::string analysis;                   // what the evidence says
  std::string bottleneck;                 // "compute-bound at 12% of the FMA peak"
  std::string why;                        // the rule (or reasoning) that chose the plan
  double expected_speedup = 1.0;          // over the current best
  std::vector<std::string> alternatives;  // the next-ranked strategies, best first
  // What the plan is called in attempts and the tried set: the strategy, else the text.
  std::string id() const { return strategy.empty() ? text : strategy; }
  nlohmann::json to_json() const;
};

// Who made a candidate's source. Every consumer reads this field; none sniffs the source.
enum class SourceKind {
  generated,  // lowered from a schedule trace (the built-in brain's implementer)
  written,    // written by a brain as C++ (an LLM, the files brain)
  edited,     // a person's edit of another candidate
  imported,   // taken as it is (the task's reference, a kernel from elsewhere)
};
const char* source_kind_name(SourceKind k);
std::optional<SourceKind> parse_source_kind(std::string_view name);

// What a generated candidate was generated from: the built-in brain's own data, kept with the
// candidate so that brain can plan from it; other brains and the modes only carry it.
struct Generation {
  std::string schedule;              // the schedule trace lowered into the source
  Recipe recipe;                     // the strategy applications that replay to it
  std::vector<std::string> skipped;  // move groups the schedule layer refused, with reasons
  nlohmann::json to_json() const;
};

// A concrete kernel: source plus where it came from.
struct CandidateMsg {
  std::string key;     // candidate identity (store/): source + flags + toolchain + target
  std::string source;  // the C++ translation unit (the task's signature)
  SourceKind kind = SourceKind::written;
  std::string origin;  // who and how: "builtin:register_block", "autotune:nr=48", "files:tiled"
  std::string parent;  // key of the candidate it was derived from ("" for the first)
  int threads = 1;     // threads it is judged with
  std::optional<Generation> generated;  // set when kind == generated

  // For people: the recipe of a generated candidate, else its origin.
  std::string describe() const;
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
