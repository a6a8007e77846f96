// The agent roles (DESIGN.md "Agents and brains"). The interfaces speak brain-neutral messages
// (agents/messages.h): a candidate is source plus its origin, a plan is a strategy id or free
// text. Each brain keeps its own state behind them: the built-in brain (agents/builtin/) plans
// and generates from schedule recipes it reads off `CandidateMsg::generated`; the files brain
// (agents/files/) hands in C++ written outside kforge; an LLM brain will write C++. A mode mixes
// them per role (agents/registry.cpp).
//
// One optimize step, in call order (modes/optimize.cpp drives it):
//   Evidence e = evidence_from(best_result, profile);          // profiler's findings
//   Plan p = planner.plan({task, best, e, tried});             // strategy or free text + why
//   Expected<CandidateMsg> c = implementer.implement(p, work); // C++ source + origin
//   RunResult r = judge(c);  TestReport t = tester.report(r, best);
//   if (!ok) { DebugOutcome d = debugger.debug(c, r, 1, work); d.repaired is judged next }
//   autotuner.tune(best, best_time, measure, budget, scope, work);  // variants of the best
#pragma once

#include <filesystem>
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
#include "harness/target.h"
#include "harness/toolchain.h"
#include "schedule/compiled_task.h"
#include "schedule/pipeline.h"
#include "task/task.h"

namespace kf::agents {

namespace llm_brain {
class Session;  // agents/llm/session.h
}

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

// Whether the evidence puts the best close enough to the roofline to stop: at `stop_fraction`
// or above, and not above 100%. A kernel measured faster than the roofline allows shows that the
// machine's figures are too low (a probe that ran beside other work, a peak interpolated for a
// thread count it did not measure), so the distance to the roof is unknown: no reason to stop.
bool at_roofline(const Evidence& e, double stop_fraction);

// Evidence from a judged result alone (roofline + counters). The profiler adds to it.
Evidence evidence_from_result(const RunResult& r, int threads);

// What every role works with: the task (compiled once) and the best candidate so far.
struct WorkContext {
  const CompiledTask* task = nullptr;
  const CandidateMsg* best = nullptr;  // what the work improves on (nullptr: start fresh)
  MoveContext ctx;                     // machine, threads, target
  CompileOptions compile;              // how candidates are compiled (their keys' flags)
};

// Which strategies of the catalog a planner may choose (`--only`, `--skip`): all by default.
struct StrategyFilter {
  std::set<std::string> only, skip;  // only empty: every strategy not skipped
  bool allows(const std::string& strategy) const {
    return (only.empty() || only.count(strategy)) && !skip.count(strategy);
  }
  bool empty() const { return only.empty() && skip.empty(); }
  nlohmann::json to_json() const;
  static StrategyFilter from_json(const nlohmann::json& j);  // missing or mistyped: all
};

struct PlanInput {
  const CompiledTask* task = nullptr;
  const CandidateMsg* best = nullptr;
  Evidence evidence;
  std::set<std::string> tried;  // plans already tried from this best (no gain or refused)
  MoveContext ctx;
  double stop_fraction = 0.9;  // stop when the best is this close to the roofline
  StrategyFilter filter;       // the built-in planner proposes only what it allows
};

class Planner {
 public:
  virtual ~Planner() = default;
  virtual Plan plan(const PlanInput& in) = 0;
  // Up to `max` plans for in.best, best first, none of them "stop" (a search expands a node with
  // them). By default: plan() again with each plan added to `tried`, until it says stop; a brain
  // that pays per call (an LLM) is asked for max = 1.
  virtual std::vector<Plan> proposals(const PlanInput& in, size_t max);
  // Whether this planner needs the task's TE spec (it plans over the scheduled pipeline).
  virtual bool needs_te_spec() const { return false; }
};

class Implementer {
 public:
  virtual ~Implementer() = default;
  // The run's first candidate, the one the others are measured against.
  virtual Expected<CandidateMsg> first(const WorkContext& in) = 0;
  // Fails when the plan cannot be carried out here (no move of the strategy is legal, no source
  // for it): the mode records the plan as not applicable.
  virtual Expected<CandidateMsg> implement(const Plan& plan, const WorkContext& in) = 0;
  // Whether this implementer needs the task's TE spec (it generates source from schedules).
  virtual bool needs_te_spec() const { return false; }
};

struct DebugOutcome {
  Diagnostics diagnostics;
  std::optional<CandidateMsg> repaired;  // a candidate to judge instead, if the debugger has one
};

class Debugger {
 public:
  virtual ~Debugger() = default;
  // attempt counts from 1; a brain bounds its own attempts.
  virtual DebugOutcome debug(const CandidateMsg& c, const RunResult& r, int attempt,
                             const WorkContext& in) = 0;
};

class Tester {
 public:
  virtual ~Tester() = default;
  virtual TestReport report(const RunResult& r, const RunResult* best) = 0;
};

// What the profiler examines: a judged candidate, on the machine and target it ran on.
struct ProfileInput {
  const CompiledTask* task = nullptr;
  const CandidateMsg* candidate = nullptr;
  const RunResult* result = nullptr;
  const MachineInfo* machine = nullptr;
  const Target* target = nullptr;  // nullptr: AVX-512 on the CPU
  std::string cxx = "g++";
  // Whether to time the stages of a generated candidate: "on", "off", or "auto" (when three or
  // more stages are computed at the top level).
  std::string stage_times = "auto";
  double stage_time_s = 1.0;
};

class Profiler {
 public:
  virtual ~Profiler() = default;
  // Evidence about in.candidate for the planner: at least what its result says
  // (evidence_from_result), plus what the profiler's own tools find. Never fails: a tool that
  // cannot run is a finding ("profile unavailable: ...").
  virtual Evidence profile(const ProfileInput& in) = 0;
};

// The autotuner asks `measure` for the minimum time of a variant (nullopt: not ok); the mode
// measures it, keeps it as the best when it is faster, and counts it against the budget.
using MeasureFn = std::function<std::optional<double>(const CandidateMsg&)>;

// What a tuning pass sweeps: the knobs of the step just accepted (earlier steps only when those
// move), or every step's, once each (when the planner has run out of strategies: knobs chosen
// while other stages dominated the time are chosen again against the finished recipe).
enum class TuneScope { newest_step, whole_recipe };

class Autotuner {
 public:
  virtual ~Autotuner() = default;
  // Measures variants of `best` (in.best) within `budget` measurements; `best_time` is its
  // minimum time. A candidate it cannot vary (not generated by its brain) is left as it is.
  virtual void tune(const CandidateMsg& best, double best_time, const MeasureFn& measure,
                    int budget, TuneScope scope, const WorkContext& in) = 0;
  // Whether it can vary `c` at all (the built-in autotuner varies the recipes of the candidates
  // its brain generated).
  virtual bool varies(const CandidateMsg& c) const {
    (void)c;
    return true;
  }
  // Whether the candidate `accepted` produced has knobs of its own to tune (a rewrite of the
  // program ahead of the loop scheduling has none).
  virtual bool tunes(const Plan& accepted) const {
    (void)accepted;
    return true;
  }
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
  std::unique_ptr<Profiler> profiler;
  std::unique_ptr<Autotuner> autotuner;
  // Why the team cannot go on for a reason outside the search ("" while it can): an LLM
  // session whose budget is spent or whose endpoint stopped answering. The mode checks it after
  // each role's call and stops the run there, resumable, writing nothing for that step.
  std::function<std::string()> halted = [] { return std::string(); };
};

// What a brain may be configured with (the CLI's options, stored with the run for resume).
struct BrainOptions {
  // The files brain's folder of candidate sources (agents/files/brain.h).
  std::filesystem::path sources;
  // The LLM brain's session (agents/llm/session.h: endpoints, budget, record of exchanges).
  // nullptr: the one `kforge optimize` made for the process, else one from ./kforge.toml.
  std::shared_ptr<llm_brain::Session> llm;
};

// The registry of brains (agents/registry.cpp, one explicit list): "builtin", "files", "llm".
std::vector<std::string> brain_names();
// One line per brain: its name and what it does, for --help and errors.
std::string brain_summaries();
// planner, implementer, debugger, tester, profiler, autotuner
std::vector<std::string> role_names();

// A team from `spec`: a brain's name for every role ("builtin"), or ROLE=BRAIN pairs separated by
// commas ("planner=llm,implementer=builtin"; "default=B" for the roles not named, builtin when
// absent). Fails naming the known brains or roles.
Expected<std::map<std::string, std::string>> parse_team(const std::string& spec);
// The team's name: the brain's when every role has the same one, else the ROLE=BRAIN list.
std::string team_name(const std::map<std::string, std::string>& team);
// Fails when the spec does not parse or a brain's options are missing or wrong.
Expected<Brain> make_brain(const std::string& spec, const BrainOptions& options = {});

// The roles of `team` that need a TE spec ("planner (builtin)"), for a task that has none.
std::vector<std::string> roles_needing_te_spec(const Brain& team);

}  // namespace kf::agents
