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
};

class BuiltinImplementer : public Implementer {
 public:
  Expected<CandidateMsg> implement(const Plan& plan, const ImplementInput& in) override;
  Expected<CandidateMsg> realize(const Recipe& recipe, const ImplementInput& in,
                                 const std::string& origin) override;
};

class BuiltinDebugger : public Debugger {
 public:
  DebugOutcome debug(const CandidateMsg& c, const RunResult& r, int attempt) override;
};

class BuiltinTester : public Tester {
 public:
  TestReport report(const RunResult& r, const RunResult* best) override;
};

class BuiltinAutotuner : public Autotuner {
 public:
  Recipe tune(const Recipe& best, double best_time, const MeasureFn& measure, int budget,
              TuneScope scope, const MoveContext& ctx) override;
};

// A candidate's scheduled pipeline, replayed from its recipe (for the planner).
Expected<sched::Pipeline> pipeline_of(const sched::Pipeline& base, const Recipe& recipe,
                                      const MoveContext& ctx);

}  // namespace kf::agents::builtin
