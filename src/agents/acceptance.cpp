#include "agents/acceptance.h"

namespace kf::agents {

bool AcceptancePolicy::near_miss(const RunResult& candidate, const RunResult& best) const {
  if (!candidate.timing || !best.timing) return false;
  const bool noisy = candidate.timing->spread >= noisy_spread;
  return !faster(candidate.timing->min_s, best.timing->min_s) &&
         candidate.timing->min_s < (noisy ? noisy_miss_of : near_miss_of) * best.timing->min_s;
}

bool AcceptancePolicy::faster_by_median_only(const RunResult& candidate,
                                             const RunResult& best) const {
  if (!candidate.timing || !best.timing) return false;
  return faster(candidate.timing->median_s, best.timing->median_s) && near_miss(candidate, best);
}

bool AcceptancePolicy::wins_pair(const RunResult& pair) const {
  return pair.verdict == Verdict::ok && pair.timing && pair.rival_timing &&
         pair.vs_rival.min >= paired_win && pair.vs_rival.median >= paired_win;
}

const AcceptancePolicy& acceptance_policy() {
  static const AcceptancePolicy policy;
  return policy;
}

}  // namespace kf::agents
