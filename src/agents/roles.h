// The agent roles (DESIGN.md "Agents and brains"). A brain implements every role; the built-in
// brain (agents/builtin/) works offline from schedule moves and rules, an LLM brain will
// implement the same interfaces, and a mode may mix them per role.
//
// One optimize step, in call order (modes/optimize.cpp drives it):
//   Evidence e = evidence_from(best_result, profile);          // profiler's findings
//   Plan p = planner.plan({task, pipeline, best, e, tried});   // strategy + why + expectation
//   Expected<CandidateMsg> c = implementer.implement(p, in);   // recipe → schedule → C++
//   RunResult r = judge(c);  TestReport t = tester.report(r, best);
//   if (!ok) { DebugOutcome d = debugger.debug(c, r, 1); ... d.repaired is judged next }
//   Recipe tuned = autotuner.tune(best_recipe, measure, budget, scope);  // coordinate descent
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/messages.h"
#include "agents/strategy.h"
#include "harness/machine.h"
#include "harness/run_result.h"
#include "harness/toolchain.h"
#include "schedule/pipeline.h"
#include "task/task.h"

namespace kf::agents {

// The planner's view of a measurement: the profiler's findings reduced to what rules branch on.
struct Evidence {
  std::string bound;    // "compute" or "memory" ("" when not measured)
  double fraction = 0;  // of the attainable roofline
  double headroom = 1;  // attainable / achieved
  double gflops = 0, gbps = 0;
  double cpus_busy = 0;  // CPU time / wall time of the timed calls
  int threads = 1;
  bool not_vectorized = false;        // compiler report: hot loops missed, or few packed FMAs
  bool faults_in_hot_path = false;    // page faults per call
  std::vector<std::string> findings;  // sentences for people and LLMs
  // Share of the time per stage computed at the top level (the profiler's instrumented build;
  // empty when not measured). A stage computed inside another's loops counts as that one's.
  std::map<std::string, double> stage_shares;
  nlohmann::json to_json() const;
};

// Evidence from a judged result alone (roofline + counters). The profiler adds to it.
Evidence evidence_from_result(const RunResult& r, int threads);

struct PlanInput {
  const Task* task = nullptr;
  const sched::Pipeline* pipeline = nullptr;  // the best candidate's scheduled pipeline
  const Recipe* recipe = nullptr;             // the best candidate's recipe
  // The default-scheduled pipeline: where rewrite-first strategies (online_softmax) apply, ahead
  // of the recipe's loop scheduling. nullptr: they are judged on `pipeline` instead.
  const sched::Pipeline* base = nullptr;
  Evidence evidence;
  std::set<std::string> tried;  // strategies already tried from this best (no gain or refused)
  MoveContext ctx;
  double stop_fraction = 0.9;  // stop when the best is this close to the roofline
};

class Planner {
 public:
  virtual ~Planner() = default;
  virtual Plan plan(const PlanInput& in) = 0;
};

struct ImplementInput {
  const Task* task = nullptr;
  const sched::Pipeline* base = nullptr;  // the default-scheduled pipeline
  const CandidateMsg* best = nullptr;     // what the plan improves on (nullptr: start fresh)
  MoveContext ctx;
  CompileOptions compile;
};

class Implementer {
 public:
  virtual ~Implementer() = default;
  // Fails when the plan cannot be applied (no move of the strategy is legal here).
  virtual Expected<CandidateMsg> implement(const Plan& plan, const ImplementInput& in) = 0;
  // A candidate for an explicit recipe (the autotuner's variants, the first naive candidate).
  virtual Expected<CandidateMsg> realize(const Recipe& recipe, const ImplementInput& in,
                                         const std::string& origin) = 0;
};

struct DebugOutcome {
  Diagnostics diagnostics;
  std::optional<Recipe> repaired;  // a recipe to judge instead, if the debugger has one
};

class Debugger {
 public:
  virtual ~Debugger() = default;
  // attempt counts from 1; a brain bounds its own attempts.
  virtual DebugOutcome debug(const CandidateMsg& c, const RunResult& r, int attempt) = 0;
};

class Tester {
 public:
  virtual ~Tester() = default;
  virtual TestReport report(const RunResult& r, const RunResult* best) = 0;
};

// The autotuner asks `measure` for the median time of a recipe (nullopt: not ok) and returns
// the best recipe it found within `budget` measurements.
using MeasureFn = std::function<std::optional<double>(const Recipe&, const std::string& origin)>;

// What a tuning pass sweeps: the knobs of the step just accepted (earlier steps only when those
// move), or every step's, once each (when the planner has run out of strategies: knobs chosen
// while other stages dominated the time are chosen again against the finished recipe).
enum class TuneScope { newest_step, whole_recipe };

class Autotuner {
 public:
  virtual ~Autotuner() = default;
  // `ctx` names the machine and the target the recipe's kernels are generated for.
  virtual Recipe tune(const Recipe& best, double best_time, const MeasureFn& measure, int budget,
                      TuneScope scope, const MoveContext& ctx) = 0;
};

// A team: one implementation per role, each from a brain of the registry (DESIGN.md: a mode may
// mix them, an LLM planner with the built-in implementer).
struct Brain {
  std::string name;                          // "builtin", or "planner=llm,implementer=builtin,..."
  std::map<std::string, std::string> roles;  // role -> brain
  std::unique_ptr<Planner> planner;
  std::unique_ptr<Implementer> implementer;
  std::unique_ptr<Debugger> debugger;
  std::unique_ptr<Tester> tester;
  std::unique_ptr<Autotuner> autotuner;
};

// The registry of brains (agents/registry.cpp, one explicit list): "builtin".
std::vector<std::string> brain_names();
std::vector<std::string> role_names();  // planner, implementer, debugger, tester, autotuner

// A team from `spec`: a brain's name for every role ("builtin"), or ROLE=BRAIN pairs separated by
// commas ("planner=llm,implementer=builtin"; "default=B" for the roles not named, builtin when
// absent). Fails naming the known brains or roles.
Expected<std::map<std::string, std::string>> parse_team(const std::string& spec);
// The team's name: the brain's when every role has the same one, else the ROLE=BRAIN list.
std::string team_name(const std::map<std::string, std::string>& team);
Expected<Brain> make_brain(const std::string& spec);

}  // namespace kf::agents
