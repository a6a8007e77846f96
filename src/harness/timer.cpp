#include "harness/timer.h"

#include <algorithm>
#include <numeric>

namespace kf {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] * (1 - frac) + v[hi] * frac;
}

Timing summarize_timing(std::vector<double> per_run, int reps_per_sample, int sets,
                        double overhead_s) {
  Timing t;
  t.samples = static_cast<int>(per_run.size());
  t.reps_per_sample = reps_per_sample;
  t.sets = sets;
  t.overhead_s = overhead_s;
  if (!per_run.empty()) {
    t.min_s = *std::min_element(per_run.begin(), per_run.end());
    t.max_s = *std::max_element(per_run.begin(), per_run.end());
    t.mean_s =
        std::accumulate(per_run.begin(), per_run.end(), 0.0) / static_cast<double>(per_run.size());
    t.median_s = quantile(per_run, 0.5);
    if (t.median_s > 0) t.spread = (quantile(per_run, 0.9) - quantile(per_run, 0.1)) / t.median_s;
  }
  t.per_run_s = std::move(per_run);
  return t;
}

}  // namespace kf
