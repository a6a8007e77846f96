// The built-in brain: every role without an LLM. The planner ranks the catalog's mechanical
// strategies with rules a kernel expert uses (register-block a GEMM that is far below peak,
// inline and fuse a memory-bound chain of passes, vectorize what the compiler did not, use the
// threads the counters say are idle); the implementer replays the recipe into a schedule and
// generates C++; the debugger treats a generated kernel that fails as a kforge bug and backs the
// step out; the autotuner tunes knobs by coordinate descent.
#pragma once

#include "agents/roles.h"

namespace kf::agents::builtin {

class BuiltinPlanner : public Planner {
 public:
  Plan plan(const PlanInput& in) override;
  bool needs_te_spec() const override { return true; }
};

// The planner's rules over `pipeline`, the best candidate's scheduled pipeline (replayed from
// `recipe`); rewrite-first strategies are judged on `base`, the default pipeline (nullptr: on
// `pipeline`). BuiltinPlanner::plan replays the best's recipe and calls this.
Plan plan_over(const PlanInput& in, const sched::Pipeline& pipeline, const Recipe& recipe,
               const sched::Pipeline* base);

class BuiltinImplementer : public Implementer {
 public:
  // The default schedule.
  Expected<CandidateMsg> first(const WorkContext& in) override;
  // The best's recipe (the default schedule's when the best was not generated) with the plan's
  // strategy applied. A plan of free text only is not applicable.
  Expected<CandidateMsg> implement(const Plan& plan, const WorkContext& in) override;
  bool needs_te_spec() const override { return true; }
};

// Generated code that fails is a kforge bug; a timeout backs the step's knobs out to defaults.
// Written code gets its diagnostics and no repair.
class BuiltinDebugger : public Debugger {
 public:
  DebugOutcome debug(const CandidateMsg& c, const RunResult& r, int attempt,
                     const WorkContext& in) override;
};

class BuiltinTester : public Tester {
 public:
  TestReport report(const RunResult& r, const RunResult* best) override;
};

// The judged result's evidence plus the tool-based profile (agents/profiler.h): the compiler's
// vectorization report, the instruction mix and, for a generated candidate with several
// top-level stages, the time per stage from an instrumented build.
class BuiltinProfiler : public Profiler {
 public:
  Evidence profile(const ProfileInput& in) override;
};

// Coordinate descent over the knobs of a generated candidate's recipe.
class BuiltinAutotuner : public Autotuner {
 public:
  void tune(const CandidateMsg& best, double best_time, const MeasureFn& measure, int budget,
            TuneScope scope, const WorkContext& in) override;
  bool varies(const CandidateMsg& c) const override { return c.generated.has_value(); }
  bool tunes(const Plan& accepted) const override;
};

// The built-in autotuner's search over recipes: coordinate descent over the knobs of `best`
// (whose minimum time is `best_time`) within `budget` calls of `measure`, which returns a
// variant's minimum time (nullopt: it failed). Returns the fastest recipe found.
using RecipeMeasureFn =
    std::function<std::optional<double>(const Recipe&, const std::string& origin)>;
Recipe tune_recipe(const Recipe& best, double best_time, const RecipeMeasureFn& measure, int budget,
                   TuneScope scope, const MoveContext& ctx);

// The candidate generated from `recipe` (replayed on the task's default pipeline). Fails when a
// step with moves applies nowhere, or lowering fails (a kforge bug).
Expected<CandidateMsg> generate(const Recipe& recipe, const WorkContext& in,
                                const std::string& origin);

// The recipe of a candidate: its own when generated, the default schedule's (empty) otherwise.
const Recipe& recipe_of(const CandidateMsg* c);

// A candidate's scheduled pipeline, replayed from its recipe (for the planner).
Expected<sched::Pipeline> pipeline_of(const sched::Pipeline& base, const Recipe& recipe,
                                      const MoveContext& ctx);

}  // namespace kf::agents::builtin
