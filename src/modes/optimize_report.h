// What `kforge optimize` leaves behind: OUT/best.cpp (the best kernel, the task's signature),
// OUT/summary.json (everything) and OUT/summary.txt (the journey, readable).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "modes/optimize.h"

namespace kf {

nlohmann::json optimize_summary(const Task& task, const OptimizeOptions& o, const OptimizeResult& r,
                                double naive_median_s, const std::vector<nlohmann::json>& journey);

// The readable summary (also printed by `kforge optimize` at the end).
std::string optimize_summary_text(const nlohmann::json& summary);

Status write_optimize_outputs(const Task& task, const OptimizeResult& r);

}  // namespace kf
