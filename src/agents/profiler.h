// The profiler role's evidence: turns one measurement of a candidate into a Profile that a
// planner (the rule-based one now, an LLM later) reads to choose the next optimization.
//
// A Profile holds, for the candidate at the task's bench shape:
//   1. its position on the roofline (bound, achieved GFLOP/s and GB/s, fraction, intensity,
//      headroom), from RunResult::roofline;
//   2. its working set (inputs + outputs) against the caches of the cores it runs on;
//   3. GCC's vectorization report for its hot loops (profile_vectorization.h);
//   4. the static instruction mix of its kernel function(s) (profile_disasm.h);
//   5. the software counters: threads busy vs requested, page faults and context switches;
//   6. `findings`: sentences a person or an LLM can act on, most important first;
//   7. `tags`: booleans the rule-based planner branches on;
//   8. time per pipeline stage, from an instrumented build of the candidate's schedule
//      (CodegenOptions::stage_timers) run in the judge's sandbox at the bench shape.
// Stages 3 and 4 compile the candidate again (profile_build.h, ~1-2 s with g++ -O3) and can be
// skipped; stage 8 compiles and runs the instrumented build (~1-2 s plus about
// `stage_time_s` of calls) and needs the schedule the candidate was generated from.
//
//   ProfileOptions o;  o.threads = 2;
//   Expected<Profile> p = profile_candidate(task, source, run_result, machine, o);
//   if (!p) return p.error();               // only for invalid inputs (bench shape, threads)
//   for (const auto& f : p->findings) say(f);
//   // "memory-bound at 35% of DRAM bandwidth (12.4 of 35.5 GB/s): up to 2.9x headroom"
//   if (p->tags.serial_when_parallel_requested) plan("parallelize_outer");
//   store(p->to_json());                   // Profile::from_json(j) reads it back
//
// Tool failures (no compiler, a compile error, no objdump, a timeout) never fail the profile:
// they become a finding "vectorization report unavailable: ..." and available = false.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/profile_disasm.h"
#include "agents/profile_vectorization.h"
#include "codegen/codegen_cpp.h"
#include "harness/machine.h"
#include "harness/run_result.h"
#include "support/status.h"
#include "task/task.h"
#include "te/ast.h"

namespace kf::agents {

struct ProfileOptions {
  std::string cxx = "g++";
  std::string objdump = "objdump";
  double timeout_s = 120;       // per tool run (compiler, objdump)
  bool compiler_report = true;  // stage 3: GCC's vectorization report
  bool disassembly = true;      // stage 4: the instruction mix
  int threads = 0;              // threads the kernel ran with; 0: RunResult::threads
  bool stage_times = true;      // stage 8: time per stage (needs `schedule`)
  // The schedule trace the candidate was generated from ("": the default schedule); none for
  // hand-written code, whose stage 8 is then skipped.
  std::optional<std::string> schedule;
  double stage_time_s = 1.0;  // calls of the instrumented build: about this long, 1 to 20
  // What the instrumented build is generated and compiled for: the candidate's own target, so
  // that it runs where the candidate ran.
  CodegenTarget target = CodegenTarget::avx512;
  std::vector<std::string> compile_flags;
  // The task's parsed TE spec (CompiledTask::program); null: parsed when stage 8 needs it.
  std::shared_ptr<const te::Program> program;
};

// Stage 1. Copied from RunResult::roofline; known = false when the result has none (not
// timed, or no machine limits).
struct RooflinePosition {
  bool known = false;
  std::string bound;                      // "compute" or "memory"
  double gflops = 0, gbps = 0;            // achieved
  double peak_gflops = 0, peak_gbps = 0;  // ceilings at the thread count (DRAM bandwidth)
  double attainable_gflops = 0;
  double fraction = 0;   // achieved / attainable
  double intensity = 0;  // FLOP per byte of compulsory traffic
  double headroom = 0;   // attainable / achieved; 0 when nothing was achieved
};

// Stage 2. Capacities: L1d and L2 are per core, so `threads` cores hold threads times as much;
// L3 is shared. fits_* are cumulative (fits L1 implies fits L2 and L3).
struct WorkingSet {
  double bytes = 0;             // all inputs + outputs at the bench shape
  double bytes_per_thread = 0;  // bytes / threads
  std::string level;            // "L1", "L2", "L3", "DRAM", or "unknown" (no cache sizes)
  bool fits_l1 = false, fits_l2 = false, fits_l3 = false;
  double dram_pass_s = 0;  // one pass over it at the DRAM bandwidth (0: bandwidth unknown)
};

// Stage 5. From RunResult::counters; known = false without them.
struct ThreadUse {
  bool known = false;
  int requested = 1;
  double cpus_busy = 0;        // CPU time / wall time of the timed calls
  double faults_per_call = 0;  // minor + major page faults
  double major_faults_per_call = 0;
  double context_switches_per_call = 0;
};

// Stage 8. Time per call of each stage computed at the function's top level (a stage computed
// inside another's loops counts as that one's time), from the instrumented build's own clock:
// evidence, not a measurement of the judged candidate (the timers add a clock read per stage).
struct StageTime {
  std::string stage;
  double seconds = 0;  // per call
  double share = 0;    // of the sum over the timed stages
};
struct StageTimes {
  bool known = false;
  std::string unavailable;        // why not, when known is false and it was attempted
  int calls = 0;                  // timed calls of the instrumented build
  std::vector<StageTime> stages;  // in program order
};

// Stage 7: what the rule-based planner branches on.
struct ProfileTags {
  bool memory_bound = false, compute_bound = false;
  // A hot loop missed or vectorized with 8-byte vectors only, or < 50% of the hot FMAs packed.
  bool not_vectorized = false;
  bool scalar_fma_heavy = false;  // more than half of the hot FMAs are scalar
  bool scalar_in_loops = false;   // innermost loops do mostly scalar floating-point work
  bool serial_when_parallel_requested = false;  // threads >= 2 but 0.85-1.15 CPUs busy
  bool faults_in_hot_path = false;              // >= 1 page fault per call
  bool fits_l1 = false, fits_l2 = false, fits_l3 = false;
};

struct Profile {
  std::string task, shape;  // task name, bench shape label
  std::string verdict;      // the measurement's verdict
  int threads = 1;
  RooflinePosition roofline;
  WorkingSet working_set;
  VectorizationReport vectorization;
  InstructionMix instructions;
  ThreadUse thread_use;
  StageTimes stage_times;
  ProfileTags tags;
  std::vector<std::string> findings;  // most important first

  nlohmann::json to_json() const;
  // Fails naming the first missing or mistyped field.
  static Expected<Profile> from_json(const nlohmann::json& j);
};

// Profiles `source` (the candidate's C++ as judged) with its judged `result`. Fails only for
// invalid inputs: an empty source, a negative thread count, or a task whose bench shape cannot
// be instantiated.
Expected<Profile> profile_candidate(const Task& task, const std::string& source,
                                    const RunResult& result, const MachineInfo& machine,
                                    const ProfileOptions& options = {});

// The parts of profile_candidate() that need no tools, for callers that already have the
// vectorization report and instruction mix (or tests): fills stages 1, 2, 5, tags and findings
// of `p` from the other stages already in it.
Status analyze_profile(const Task& task, const RunResult& result, const MachineInfo& machine,
                       int threads, Profile& p);

}  // namespace kf::agents
