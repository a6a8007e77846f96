// The registry of brains: one explicit list. An LLM brain joins this list when it is built.
#include <fmt/format.h>

#include "agents/builtin/brain.h"
#include "agents/roles.h"

namespace kf::agents {

std::vector<std::string> brain_names() {
  return {"builtin"};
}

Expected<Brain> make_brain(const std::string& name) {
  if (name == "builtin") {
    Brain b;
    b.name = name;
    b.planner = std::make_unique<builtin::BuiltinPlanner>();
    b.implementer = std::make_unique<builtin::BuiltinImplementer>();
    b.debugger = std::make_unique<builtin::BuiltinDebugger>();
    b.tester = std::make_unique<builtin::BuiltinTester>();
    b.autotuner = std::make_unique<builtin::BuiltinAutotuner>();
    return b;
  }
  return Status::error(
      fmt::format("unknown brain '{}': known brains are builtin (the LLM brain "
                  "is not built yet)",
                  name));
}

nlohmann::json Evidence::to_json() const {
  return {{"bound", bound},
          {"fraction", fraction},
          {"headroom", headroom},
          {"gflops", gflops},
          {"gbps", gbps},
          {"cpus_busy", cpus_busy},
          {"threads", threads},
          {"not_vectorized", not_vectorized},
          {"faults_in_hot_path", faults_in_hot_path},
          {"findings", findings},
          {"stage_shares", stage_shares}};
}

Evidence evidence_from_result(const RunResult& r, int threads) {
  Evidence e;
  e.threads = threads;
  if (r.roofline) {
    e.bound = r.roofline->bound;
    e.fraction = r.roofline->fraction;
    e.headroom = r.roofline->fraction > 0 ? 1.0 / r.roofline->fraction : 1.0;
    e.gflops = r.roofline->gflops;
    e.gbps = r.roofline->gbps;
  }
  if (r.counters) {
    e.cpus_busy = r.counters->cpus_busy;
    e.faults_in_hot_path = r.counters->minor_faults_per_call > 16;
  }
  return e;
}

}  // namespace kf::agents
