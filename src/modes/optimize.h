// `kforge optimize`: the autonomous loop. A thin driver over the agents (agents/roles.h), the
// judge (agents/judge.h) and the store (store/store.h):
//
//   first candidate (the default schedule; the reference for a brain that writes source) → best
//   loop until the budget is spent, the planner says stop, or the roofline leaves little to gain:
//     evidence (profiler) → plan (planner) → candidate (implementer) → judge (tester)
//       failed  → debugger: diagnostics recorded; a repaired candidate is judged once
//       faster  → new best; autotuner tunes the new step's knobs
//       else    → the strategy is marked tried for this best
//   final: the best, the reference and the library baseline timed side by side
//   out: best.cpp (the task's signature), summary.json, summary.txt
//
//   auto store = SqliteStore::open(default_store_path());
//   OptimizeOptions o; o.task_dir = "bench/jaxbench/12_rmsnorm"; o.budget_evals = 30;
//   Expected<OptimizeResult> r = optimize(o, **store);
//
// Design notes (resume): the loop is deterministic given the judge's results — the planner,
// implementer and autotuner read only the task, the recipes and the stored results. Every
// judged result is stored under its evaluation key (candidate + task + machine + threads) in the
// same transaction as the attempt that asked for it. Resuming a run (options.resume) replays the
// loop from the start: each evaluation already in the store is read back instead of measured,
// attempts and messages already stored (by sequence number) are not written again, so the run
// continues exactly where it was killed and reaches the same best as an uninterrupted run. A
// time budget is counted from the run's stored start, so it is the one thing a resume can
// shorten.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agents/messages.h"
#include "agents/roles.h"
#include "harness/run_result.h"
#include "modes/broker_args.h"
#include "modes/events.h"
#include "modes/starting_point.h"
#include "store/store.h"
#include "support/status.h"

namespace kf::agents::llm_brain {
class Session;
}

namespace kf {

struct OptimizeOptions {
  std::filesystem::path task_dir;
  int budget_evals = 40;       // judged candidates (the naive one included)
  double budget_time_s = 600;  // wall clock of the search, final run excluded
  int threads = 1;
  // The team (agents/roles.h parse_team): "builtin", or "planner=builtin,implementer=files".
  std::string brain = "builtin";
  std::filesystem::path sources;  // the files brain's folder of C++ sources
  std::filesystem::path out_dir;  // default: default_output_dir(RUN_ID) (support/fs.h)
  std::string cxx = "g++";
  // The backend that compiles, runs and profiles the kernels (harness/backend.h).
  std::string backend = "cpu";
  // What kernels are generated for: "" (the machine's widest: avx512, avx2 or scalar) or a
  // target of the backend the machine runs (harness/target.h).
  std::string target;
  double min_time_s = 0.3;        // measured time per candidate during the search
  double final_min_time_s = 1.0;  // and in the final side-by-side run
  // Stop when the best reaches this fraction of the roofline. Library GEMMs run at ~90% of the
  // measured FMA peak here, so a compute-bound kernel at 85% still has a few percent to find.
  double stop_fraction = 0.9;
  int tune_budget = 8;    // autotuner evaluations after each accepted strategy (at most
                          // a third of the evaluations the budget has left)
  bool final_run = true;  // time best, reference and baseline side by side at the end
  bool profile = true;    // compiler report and disassembly for the planner
  // The time per stage of each new best, from an instrumented build of its schedule (a compile
  // and `stage_time_s` of calls per best): the planner weighs each strategy by the share of the
  // time in the stages it changes. "auto": when the best computes three or more stages at the
  // top level (one GEMM's ranking does not need it); "on"; "off".
  std::string stage_times = "auto";
  double stage_time_s = 0.3;
  // Measure every candidate afresh: evaluations stored by earlier runs (same candidate, task,
  // machine and threads) are not read back. The run's own still are, so a resumed run repeats
  // no measurement.
  bool remeasure = false;
  // A run whose budget accounting this one follows attempt by attempt (kforge replay: the
  // recorded run's measurements are read back, and each spends a slot where it did there).
  std::string spend_as;
  agents::StrategyFilter strategies;  // --only / --skip: what the built-in planner may propose
  agents::KnobPins pins;              // --pin: knob values the built-in brain keeps
  StartingPoint from;                 // --from: the first candidate (empty: the implementer's)
  uint64_t seed = 0;                  // input seed; 0: derived from the run id
  // Simulation: replay measurements from a recording instead of judging; record: append every
  // judged result to a recording.
  std::string simulate, record;
  double sim_latency_s = 0;
  BrokerArgs broker;                                 // --broker: judged on workers through Redis
  std::function<void(const std::string&)> progress;  // the console's lines (events.h)
  EventSink* events = nullptr;  // one more sink for the run's events (not owned)
  // The LLM brain's session (settings, budget, record), handed to the brains the run makes; not
  // stored with the run. nullptr: an LLM brain makes its own from ./kforge.toml or OPENAI_*.
  std::shared_ptr<agents::llm_brain::Session> llm;
  // What the session was made from, stored with the run so a resume needs none of it again
  // (the settings file's path, never a key; the budgets).
  struct LlmArgs {
    std::string config;  // "" : ./kforge.toml when present, else the OPENAI_* variables
    std::optional<int64_t> max_tokens;
    std::optional<double> max_cost;
    // These, each given one replacing the stored one (a resume's options over the run's).
    LlmArgs over(const LlmArgs& stored) const;
    nlohmann::json to_json() const;
    static LlmArgs from_json(const nlohmann::json& j);  // missing or mistyped fields: unset
  } llm_args;

  nlohmann::json to_json() const;
  static Expected<OptimizeOptions> from_json(const nlohmann::json& j);
};

struct OptimizeResult {
  std::string run_id;
  agents::CandidateMsg best;
  RunResult best_result;
  std::optional<RunResult> final_result;  // the side-by-side run
  // Bests that failed the final run on fresh inputs, in order (key, recipe, verdict, message);
  // each was replaced by the next fastest candidate that passed.
  std::vector<nlohmann::json> final_failures;
  // Budget slots spent, attempts, read-backs among the spent slots, read-backs of earlier runs'
  // measurements (free: modes/run_log.h, "Budget").
  int evaluations = 0, attempts = 0, reused = 0, borrowed = 0;
  std::string first_label;  // what speedups are over: "default schedule", "reference"
  std::string stop_reason;
  std::filesystem::path out_dir;
  nlohmann::json summary;
};

// A new run. Fails when the task cannot be loaded, has no TE spec and a role of the team needs
// one (the built-in planner and implementer), the first candidate fails, or the store fails.
Expected<OptimizeResult> optimize(const OptimizeOptions& options, Store& store);

// Continues run `run_id` with the options it was started with (only `progress`, `events` and
// `llm` are taken from `overrides`).
Expected<OptimizeResult> resume_optimize(const std::string& run_id, Store& store,
                                         const OptimizeOptions& overrides);

}  // namespace kf
