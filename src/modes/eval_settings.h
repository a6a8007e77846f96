// How a mode measures candidates: the judge's options for a search measurement, for the final
// side-by-side run and for a confirmation against a rival. Modes take their EvalOptions from
// here, so "search", "final" and "confirm" mean the same in each.
//
//   EvalSettings s{.threads = 1, .seed = 7, .cxx = "g++", .machine = &machine};
//   EvalOptions e = eval_options_for(s, compiled, c.threads, "plan", &best_result, nullptr);
#pragma once

#include <string>
#include <vector>

#include "agents/messages.h"
#include "harness/evaluator.h"
#include "harness/machine.h"
#include "schedule/compiled_task.h"

namespace kf {

struct EvalSettings {
  uint64_t seed = 0;
  double min_time_s = 0.3;        // measured time per candidate during the search
  double final_min_time_s = 1.0;  // and in the final run
  std::string cxx = "g++";
  std::vector<std::string> compile_flags;  // the target's
  const Backend* backend = nullptr;        // the target's (null: the CPU)
  const MachineInfo* machine = nullptr;
  bool simulated = false;  // no machine to re-measure
};

// The options for judging a candidate with `threads` threads as a measurement of `kind` ("final":
// the final run, timed with the reference and the baseline; anything else: a search
// measurement). `best`: the best's result, which bounds a search measurement's time (nullptr:
// none yet). `rival`: a candidate timed side by side with it (a confirmation). The judge reads the
// task's parsed spec from `task`.
EvalOptions eval_options_for(const EvalSettings& s, const CompiledTask& task, int threads,
                             const std::string& kind, const RunResult* best,
                             const agents::CandidateMsg* rival);

}  // namespace kf
