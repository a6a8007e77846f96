#include "agents/profiler.h"

#include <fmt/format.h>

#include <algorithm>

#include "agents/profile_build.h"
#include "agents/profile_findings.h"
#include "harness/evaluator.h"
#include "lower/lower.h"
#include "schedule/trace.h"
#include "te/compile.h"

namespace kf::agents {
namespace {

RooflinePosition roofline_position(const RunResult& r) {
  RooflinePosition pos;
  if (!r.roofline) return pos;
  const Roofline& rf = *r.roofline;
  pos.known = true;
  pos.bound = rf.bound;
  pos.gflops = rf.gflops;
  pos.gbps = rf.gbps;
  pos.peak_gflops = rf.peak_gflops;
  pos.peak_gbps = rf.peak_gbps;
  pos.attainable_gflops = rf.attainable_gflops;
  pos.fraction = rf.fraction;
  pos.intensity = rf.bytes > 0 ? rf.flops / rf.bytes : 0;
  pos.headroom = rf.gflops > 0 ? rf.attainable_gflops / rf.gflops : 0;
  return pos;
}

WorkingSet working_set(const Task& task, const ShapeInstance& inst, const MachineInfo& m,
                       int threads, const RooflinePosition& roof) {
  WorkingSet w;
  for (size_t i = 0; i < task.tensor_count() && i < inst.elements.size(); ++i)
    w.bytes += static_cast<double>(inst.elements[i]) * dtype_size(task.tensor(i).dtype);
  w.bytes_per_thread = w.bytes / threads;
  const int cores = m.cores > 0 ? std::min(threads, m.cores) : threads;
  const double l1 = static_cast<double>(m.l1d_bytes) * cores;
  const double l2 = static_cast<double>(m.l2_bytes) * cores;
  const double l3 = static_cast<double>(m.l3_bytes);
  if (l1 > 0 && w.bytes <= l1)
    w.level = "L1";
  else if (l2 > 0 && w.bytes <= l2)
    w.level = "L2";
  else if (l3 > 0 && w.bytes <= l3)
    w.level = "L3";
  else if (l1 > 0 || l2 > 0 || l3 > 0)
    w.level = "DRAM";
  else
    w.level = "unknown";
  w.fits_l1 = w.level == "L1";
  w.fits_l2 = w.fits_l1 || w.level == "L2";
  w.fits_l3 = w.fits_l2 || w.level == "L3";
  const double gbps = m.dram_gbps(threads) > 0 ? m.dram_gbps(threads) : roof.peak_gbps;
  if (gbps > 0) w.dram_pass_s = w.bytes / (gbps * 1e9);
  return w;
}

ThreadUse thread_use(const RunResult& r, int threads) {
  ThreadUse t;
  t.requested = threads;
  if (!r.counters) return t;
  t.known = true;
  t.cpus_busy = r.counters->cpus_busy;
  t.faults_per_call = r.counters->minor_faults_per_call + r.counters->major_faults_per_call;
  t.major_faults_per_call = r.counters->major_faults_per_call;
  t.context_switches_per_call = r.counters->context_switches_per_call;
  return t;
}

ProfileTags tags_of(const Profile& p) {
  ProfileTags t;
  t.memory_bound = p.roofline.known && p.roofline.bound == "memory";
  t.compute_bound = p.roofline.known && p.roofline.bound == "compute";
  const InstructionMix& m = p.instructions;
  const InstructionCounts& c = m.hot();
  t.scalar_fma_heavy = m.available && c.fma_scalar > 0 && 2 * c.fma_scalar > c.fmas();
  t.scalar_in_loops = m.available && m.innermost_loops > 0 && m.loops.scalar_fp() >= 8 &&
                      m.loops.scalar_fp() > 2 * m.loops.packed_fp();
  t.not_vectorized = (p.vectorization.available &&
                      (p.vectorization.missed > 0 || !p.vectorization.narrow_loops.empty())) ||
                     (m.available && c.fmas() > 0 && c.packed_fma_share() < 0.5);
  const ThreadUse& u = p.thread_use;
  // About one CPU busy out of two or more: a serial kernel measures 1.0-1.1. Below 0.85 the
  // process did not even get one CPU (waiting, or a machine busy with other work): no verdict.
  t.serial_when_parallel_requested =
      u.known && u.requested >= 2 && u.cpus_busy >= 0.85 && u.cpus_busy < 1.15;
  t.faults_in_hot_path = u.known && u.faults_per_call >= 1.0;
  t.fits_l1 = p.working_set.fits_l1;
  t.fits_l2 = p.working_set.fits_l2;
  t.fits_l3 = p.working_set.fits_l3;
  return t;
}

// Stage 8: the instrumented build of `schedule`, run in the sandbox for about `stage_time_s`.
StageTimes stage_times(const Task& task, const RunResult& result, int threads,
                       const ProfileOptions& o) {
  StageTimes st;
  auto fail = [&](const std::string& why) {
    st.unavailable = why;
    return st;
  };
  auto schedule = sched::parse_schedule(*o.schedule, "candidate schedule");
  if (!schedule) return fail("schedule: " + schedule.error().message());
  std::shared_ptr<const te::Program> program = o.program;
  if (!program) {
    auto parsed = te::compile_spec(task);
    if (!parsed) return fail("the task's TE spec: " + parsed.error().message());
    program = std::make_shared<const te::Program>(std::move(*parsed));
  }
  auto build =
      generate_instrumented_kernel(task, *program, *schedule, LowerOptions{.target = o.target});
  if (!build) return fail("instrumented build: " + build.error().message());
  const double per_call = result.timing ? result.timing->median_s : 0;
  const int calls =
      per_call > 0 ? static_cast<int>(std::clamp(o.stage_time_s / per_call, 1.0, 20.0)) : 1;
  EvalOptions eo;
  eo.threads = threads;
  eo.compile.cxx = o.cxx;
  eo.compile.extra_flags = o.compile_flags;
  eo.program = program;
  eo.run_timeout_s = std::max(30.0, 10 * per_call);
  auto seconds = time_stages(task, build->source, calls, eo);
  if (!seconds) return fail(seconds.error().message());
  double total = 0;
  for (double s : *seconds) total += s;
  for (size_t i = 0; i < seconds->size() && i < build->timed_stages.size(); ++i)
    st.stages.push_back(
        {build->timed_stages[i], (*seconds)[i], total > 0 ? (*seconds)[i] / total : 0});
  st.known = !st.stages.empty();
  if (!st.known) st.unavailable = "no stage is computed at the function's top level";
  st.calls = calls;
  return st;
}

}  // namespace

Status analyze_profile(const Task& task, const RunResult& result, const MachineInfo& machine,
                       int threads, Profile& p) {
  if (threads < 1)
    return Status::error(fmt::format("profile: {} threads; need at least 1", threads));
  auto inst = task.instantiate(task.bench);
  if (!inst)
    return inst.error().with_context(fmt::format("profile of {}: the bench shape", task.name));
  p.task = task.name;
  p.shape = inst->label();
  p.verdict = std::string(verdict_name(result.verdict));
  p.threads = threads;
  p.roofline = roofline_position(result);
  p.working_set = working_set(task, *inst, machine, threads, p.roofline);
  p.thread_use = thread_use(result, threads);
  p.tags = tags_of(p);
  p.findings = profile_findings(p, machine);
  return ok_status();
}

Expected<Profile> profile_candidate(const Task& task, const std::string& source,
                                    const RunResult& result, const MachineInfo& machine,
                                    const ProfileOptions& options) {
  if (source.find_first_not_of(" \t\r\n") == std::string::npos)
    return Status::error(fmt::format("profile of {}: the candidate source is empty", task.name));
  if (options.threads < 0)
    return Status::error(
        fmt::format("profile: {} threads; need at least 0 (0: the result's)", options.threads));
  const int threads = options.threads > 0 ? options.threads : std::max(1, result.threads);
  Profile p;
  // Fail on invalid inputs before spending seconds in the compiler.
  KF_RETURN_IF_ERROR(analyze_profile(task, result, machine, threads, p));

  const ProfileToolOutput tools = run_profile_tools(task, source,
                                                    {.cxx = options.cxx,
                                                     .objdump = options.objdump,
                                                     .timeout_s = options.timeout_s,
                                                     .compiler_report = options.compiler_report,
                                                     .disassembly = options.disassembly});
  if (options.compiler_report) {
    if (tools.report_error.empty())
      p.vectorization = parse_vectorization_report(tools.compiler_output, source);
    else
      p.vectorization.unavailable = tools.report_error;
  }
  if (options.disassembly) {
    if (tools.disassembly_error.empty())
      p.instructions = count_instructions(tools.disassembly, task.function);
    else
      p.instructions.unavailable = tools.disassembly_error;
  }
  if (options.stage_times && options.schedule && result.timing)
    p.stage_times = stage_times(task, result, threads, options);
  KF_RETURN_IF_ERROR(analyze_profile(task, result, machine, threads, p));
  return p;
}

}  // namespace kf::agents
