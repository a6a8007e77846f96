// What `kforge optimize` leaves behind: OUT/best.cpp (the best kernel, the task's signature),
// OUT/summary.json (everything) and OUT/summary.txt (the journey, readable).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "modes/optimize.h"
#include "modes/run_log.h"

namespace kf {

nlohmann::json optimize_summary(const Task& task, const OptimizeOptions& o, const OptimizeResult& r,
                                double naive_median_s, const std::vector<nlohmann::json>& journey);

// The readable summary (also printed by `kforge optimize` at the end).
std::string optimize_summary_text(const nlohmann::json& summary);

Status write_optimize_outputs(const Task& task, const OptimizeResult& r);

// For a mode other than optimize's loop (search, chat): fills `r`'s counts from the run log that
// measured it and its summary as optimize's for a run of `threads` threads by team `brain`.
void summarize_run(OptimizeResult& r, const Task& task, const std::filesystem::path& task_dir,
                   int threads, const std::string& brain, const RunLog& log);

}  // namespace kf
