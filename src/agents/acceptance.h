// The acceptance rule: when a measured candidate replaces the best. One rule for every mode and
// role that decides (the optimize loop, a tuning pass, the autotuner's descent), so that a
// candidate kept by one is kept by all.
//
//   const AcceptancePolicy& p = acceptance_policy();
//   if (p.faster(cand.timing->min_s, best.timing->min_s)) keep(cand);
//   else if (p.near_miss(cand, best)) {          // within the noise of two separate runs:
//     RunResult pair = judge cand beside best;   // one run, batches interleaved
//     if (p.wins_pair(pair)) keep(cand);
//   }
//
// Decisions compare minimum times: on a shared machine the minimum is the measurement least
// disturbed by other work (the median is reported, the minimum decides). A candidate is kept when
// its minimum beats the best's by 3%; one within 15% is a near miss, measured again side by side
// with the best (the same inputs, batches interleaved), and kept when that run puts it 2% ahead by
// both the median and the minimum. Equal kernels measured that way on a shared machine differ by
// up to 2-3% (each worker's memory placement), so a smaller margin would keep noise. A candidate
// whose own samples spread by 25% or more (p90 - p10 over the median; an undisturbed timing
// spreads 1-5% here) was measured while something else ran: its minimum may be disturbed too, so
// it is a near miss up to 2x the best's minimum, and one slow reading does not discard it.
#pragma once

#include "harness/run_result.h"

namespace kf::agents {

struct AcceptancePolicy {
  double margin = 0.97;        // kept when its time is below margin x the best's
  double near_miss_of = 1.15;  // a near miss below near_miss_of x the best's minimum
  double paired_win = 1.02;    // a pair keeps it at this speedup by median and minimum
  double noisy_spread = 0.25;  // a candidate's timing this spread is a disturbed one
  double noisy_miss_of = 2.0;  // the near-miss band of a disturbed timing

  // `time_s` beats `best_s` by the margin (either a minimum or a median).
  bool faster(double time_s, double best_s) const { return time_s < margin * best_s; }
  // Not faster by the minimum, but close enough to be worth one paired run (or measured too
  // noisily to tell).
  bool near_miss(const RunResult& candidate, const RunResult& best) const;
  // Faster by the median only: the candidate's minimum was disturbed, or the best's was a lucky
  // sample; a paired run decides (as for a near miss).
  bool faster_by_median_only(const RunResult& candidate, const RunResult& best) const;
  // The paired run (the candidate timed beside the best) keeps the candidate.
  bool wins_pair(const RunResult& pair) const;
};

// The policy every decision uses.
const AcceptancePolicy& acceptance_policy();

}  // namespace kf::agents
