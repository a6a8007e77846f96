// `kforge search`: graph search over candidates with a policy (policy.h), on the same evaluation
// service as optimize: the run's environment (modes/run_env.h), its measurements and record
// (modes/run_log.h: evaluation identity, read-back, resume), the judge's options
// (modes/eval_settings.h), the acceptance rule (agents/acceptance.h), events and outputs
// (modes/optimize_report.h).
//
//   SearchOptions o{.task_dir = "bench/jaxbench/08_gemm", .policy = "mcts", .budget_evals = 30};
//   Expected<SearchResult> r = search(o, store);       // r->summary, r->out_dir/best.cpp
//   r = resume_search(run_id, store, overrides);        // after a kill: continues it
//
// A run, in order:
//   1. the root: the implementer's first candidate, judged; it must pass
//   2. the policy's batches until it has nothing left or (1 - refine_share) of the evaluation
//      budget is spent. Per batch: a proposal whose child is in the graph becomes an edge to that
//      node (an attempt "duplicate", nothing judged); the rest are compiled `jobs` at a time in
//      parallel (the compile cache keeps the objects), then judged one at a time (no timing
//      overlaps another or a compile). Staged: compile, check on the test shapes, a timing that
//      stops after two samples once the candidate is 3x slower than the best, full timing.
//   3. refinement: the knobs of the top nodes, one value away, by the cost model's order with the
//      changes seen to fail elsewhere last (MoveStats), until the budget is spent or no
//      neighbour is new
//   4. the final side-by-side run of the best, the outputs and the summary (the policy, the
//      evaluations it took to reach 90% of its best, the cost model's Spearman correlation).
// Resume: the run is replayed from its start with the same seed; measurements are read back from
// the store (nothing judged twice) and the attempts already stored are not written again, so a
// resumed run reaches the same graph and best as an uninterrupted one (given the same
// measurements: with --budget-time, the time left differs).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "modes/events.h"
#include "modes/optimize.h"
#include "search/policy.h"
#include "store/store.h"

namespace kf::search {

struct SearchOptions {
  std::filesystem::path task_dir;
  std::string policy = "mcts";
  int budget_evals = 40;
  double budget_time_s = 600;
  int jobs = 1;  // candidates compiled at once (and the policy's batch)
  uint64_t seed = 1;
  int threads = 1;
  std::string brain = "builtin";
  std::filesystem::path sources;
  std::string backend = "cpu", target, cxx = "g++";
  double min_time_s = 0.3, final_min_time_s = 1.0;
  // Share of the evaluation budget kept for the refinement of the top nodes' knobs.
  double refine_share = 0.15;
  bool final_run = true;
  std::filesystem::path out_dir;  // "": default_output_dir(RUN) (support/fs.h)
  std::string simulate, record;
  double sim_latency_s = 0;
  BrokerArgs broker;  // --broker: judged on workers through Redis
  bool remeasure = false;
  // Read-backs of earlier runs' measurements spend budget too (modes/run_log.h, "Budget"): runs
  // compared in one store then judge equally many candidates each.
  bool count_stored = false;
  agents::StrategyFilter strategies;  // --only / --skip
  StartingPoint from;                 // --from: the root (empty: the implementer's first)
  agents::KnobPins pins;              // --pin
  PolicyOptions policy_options;
  std::function<void(const std::string&)> progress;
  EventSink* events = nullptr;
  std::shared_ptr<agents::llm_brain::Session> llm;
  OptimizeOptions::LlmArgs llm_args;  // stored with the run, as optimize's

  nlohmann::json to_json() const;
  static Expected<SearchOptions> from_json(const nlohmann::json& j);
};

struct SearchResult {
  std::string run_id;
  nlohmann::json summary;
  std::filesystem::path out_dir;
};

Expected<SearchResult> search(const SearchOptions& o, Store& store);
// Continues a search that was killed (state "running") or stopped by its team (state "stopped":
// an LLM budget spent, an endpoint that stopped answering); `overrides` gives the progress,
// events and LLM session of this process.
Expected<SearchResult> resume_search(const std::string& run_id, Store& store,
                                     const SearchOptions& overrides);

// The summary's search lines for people (policy, evaluations to 90%, cost model agreement).
std::string search_summary_text(const nlohmann::json& summary);

}  // namespace kf::search
