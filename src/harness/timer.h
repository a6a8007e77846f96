// Timing statistics over the judge's own measurements (never the candidate's).
#pragma once

#include <vector>

#include "harness/run_result.h"

namespace kf {

// Fills min/median/mean/max/spread from per-call times (seconds). `samples` is per_run.size().
Timing summarize_timing(std::vector<double> per_run, int reps_per_sample, int sets,
                        double overhead_s);

// The q-quantile (0..1) of v by linear interpolation; v need not be sorted. Empty → 0.
double quantile(std::vector<double> v, double q);

}  // namespace kf
