// The profiler's step of the optimize loop: evidence for the planner from the best candidate's
// judged result, plus (when enabled) the compiler's vectorization report and the instruction mix
// (agents/profiler.h). Memoized per candidate, since the best changes rarely.
#pragma once

#include <map>
#include <string>

#include "agents/messages.h"
#include "agents/profiler.h"
#include "agents/roles.h"
#include "harness/backend.h"
#include "harness/target.h"
#include "modes/optimize.h"
#include "schedule/compiled_task.h"
#include "schedule/primitives.h"

namespace kf {

// Stages computed at the function's top level: what the instrumented build times.
inline int top_level_stages(const sched::Pipeline& p) {
  int n = 0;
  for (const auto& s : p.stages) n += s.compute.kind == sched::ComputeKind::root;
  return n;
}

// Whether to time the stages of candidate `c` (OptimizeOptions::stage_times): only a generated
// candidate has stages; "auto" times them when three or more are computed at the top level.
inline bool wants_stage_times(const CompiledTask& task, const agents::CandidateMsg& c,
                              const std::string& setting) {
  if (!c.generated || setting == "off") return false;
  if (setting == "on") return true;
  if (!task.base) return false;
  auto schedule = sched::parse_schedule(c.generated->schedule, "candidate");
  if (!schedule) return false;
  sched::Pipeline p = *task.base;
  if (!sched::apply_schedule(p, *schedule).ok()) return false;
  return top_level_stages(p) >= 3;
}

class EvidenceCache {
 public:
  agents::Evidence get(const CompiledTask& task, const agents::CandidateMsg& c, const RunResult& r,
                       const MachineInfo& machine, const Target& target, const OptimizeOptions& o) {
    auto it = cache_.find(c.key);
    if (it != cache_.end()) return it->second;
    agents::Evidence e = agents::evidence_from_result(r, c.threads);
    if (o.profile && r.timing) {  // nothing to profile in a candidate that never finished
      agents::ProfileOptions po;
      po.cxx = o.cxx;
      po.threads = c.threads;
      po.stage_times = wants_stage_times(task, c, o.stage_times);
      po.stage_time_s = o.stage_time_s;
      if (c.generated) po.schedule = c.generated->schedule;
      po.objdump = backend_of(target).profile_tools(o.cxx).disassembler;
      po.target = target.codegen;
      po.compile_flags = target.compile_flags;
      po.program = task.program;
      auto p = agents::profile_candidate(task.task, c.source, r, machine, po);
      if (p) {
        e.not_vectorized = p->tags.not_vectorized;
        e.faults_in_hot_path = e.faults_in_hot_path || p->tags.faults_in_hot_path;
        e.findings = p->findings;
        if (p->stage_times.known)
          for (const agents::StageTime& t : p->stage_times.stages)
            e.stage_shares[t.stage] = t.share;
      } else {
        e.findings.push_back("profile unavailable: " + p.error().message());
      }
    }
    cache_.emplace(c.key, e);
    return e;
  }

 private:
  std::map<std::string, agents::Evidence> cache_;
};

}  // namespace kf
