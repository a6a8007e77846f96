#include "modes/eval_settings.h"

#include <algorithm>

#include "agents/acceptance.h"

namespace kf {

namespace {
// A search times a candidate for at most this long (2 samples at least); the final run, longer.
constexpr double kSearchTimingWall = 20;
}  // namespace

EvalOptions eval_options_for(const EvalSettings& s, const CompiledTask& task, int threads,
                             const std::string& kind, const RunResult* best,
                             const agents::CandidateMsg* rival) {
  EvalOptions e;
  e.threads = threads;
  e.program = task.program;
  e.backend = s.backend;
  e.seed = s.seed;
  e.time_reference = false;
  e.min_time_s = s.min_time_s;
  // A candidate far slower than the best is not worth measuring to the end, and one slower than
  // a near miss needs no precise time: it cannot be kept.
  e.max_timing_wall_s = kSearchTimingWall;
  if (best && best->timing && best->timing->median_s > 0) {
    // Ten times the best: a candidate that slow is of no use, and waiting for it to finish
    // would spend a short budget on it.
    e.run_timeout_s = std::max(2.0, 10 * best->timing->median_s);
    e.stop_slower_than_s = agents::acceptance_policy().near_miss_of * best->timing->min_s;
  }
  e.compile.cxx = s.cxx;
  e.compile.extra_flags = s.compile_flags;
  if (s.machine) e.machine = machine_limits(*s.machine, threads);
  if (!s.simulated) e.remeasure = remeasure_machine(threads, s.cxx);
  if (kind == "final") {
    e.time_reference = true;
    e.time_baseline = task.task.baseline.has_value();
    e.min_time_s = s.final_min_time_s;
    e.max_timing_wall_s = EvalOptions{}.max_timing_wall_s;
    e.stop_slower_than_s = 0;
    // The reference and the baseline are timed in the same batches: ten times the best is no
    // deadline for a reference many times slower.
    e.run_timeout_s = EvalOptions{}.run_timeout_s;
  }
  if (rival) {
    e.rival_source = rival->source;
    e.rival_name = "the best (" + rival->describe() + ")";
    e.stop_slower_than_s = 0;  // the pair decides, however it turns out
  }
  return e;
}

}  // namespace kf
