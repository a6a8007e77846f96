// The built-in brain's profiler role: the judged result's evidence, plus what the tool-based
// profile (agents/profiler.h) finds about the candidate.
#include "agents/builtin/brain.h"
#include "agents/profiler.h"
#include "harness/backend.h"
#include "schedule/primitives.h"

namespace kf::agents::builtin {
namespace {

// Stages computed at the function's top level: what the instrumented build times.
int top_level_stages(const sched::Pipeline& p) {
  int n = 0;
  for (const auto& s : p.stages) n += s.compute.kind == sched::ComputeKind::root;
  return n;
}

// Whether to time the stages of candidate `c`: only a generated candidate has stages; "auto"
// times them when three or more are computed at the top level (with fewer, the time per stage
// says little the roofline does not).
bool wants_stage_times(const CompiledTask& task, const CandidateMsg& c,
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

}  // namespace

Evidence BuiltinProfiler::profile(const ProfileInput& in) {
  KF_CHECK(in.task && in.candidate && in.result && in.machine) << "ProfileInput is incomplete";
  const CandidateMsg& c = *in.candidate;
  const RunResult& r = *in.result;
  Evidence e = evidence_from_result(r, c.threads);
  if (!r.timing) return e;  // nothing to profile in a candidate that never finished
  const Target target = in.target ? *in.target : Target{};
  ProfileOptions po;
  po.cxx = in.cxx;
  po.objdump = backend_of(target).profile_tools(in.cxx).disassembler;
  po.threads = c.threads;
  po.stage_times = wants_stage_times(*in.task, c, in.stage_times);
  po.stage_time_s = in.stage_time_s;
  if (c.generated) po.schedule = c.generated->schedule;
  po.target = target.codegen;
  po.compile_flags = target.compile_flags;
  po.program = in.task->program;
  auto p = profile_candidate(in.task->task, c.source, r, *in.machine, po);
  if (!p) {
    e.findings.push_back("profile unavailable: " + p.error().message());
    return e;
  }
  e.not_vectorized = p->tags.not_vectorized;
  e.faults_in_hot_path = e.faults_in_hot_path || p->tags.faults_in_hot_path;
  e.findings = p->findings;
  if (p->stage_times.known)
    for (const StageTime& t : p->stage_times.stages) e.stage_shares[t.stage] = t.share;
  return e;
}

}  // namespace kf::agents::builtin
