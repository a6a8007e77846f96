// The evidence step of the optimize loop: what the planner learns about the best candidate, from
// the team's profiler role (agents/roles.h Profiler), or from the judged result alone when
// profiling is off. Memoized per candidate, since the best changes rarely.
#pragma once

#include <map>
#include <string>

#include "agents/roles.h"

namespace kf {

class EvidenceCache {
 public:
  // The evidence about in.candidate: `profiler`'s (nullptr: the result's alone).
  agents::Evidence get(agents::Profiler* profiler, const agents::ProfileInput& in) {
    auto it = cache_.find(in.candidate->key);
    if (it != cache_.end()) return it->second;
    const agents::Evidence e =
        profiler ? profiler->profile(in)
                 : agents::evidence_from_result(*in.result, in.candidate->threads);
    cache_.emplace(in.candidate->key, e);
    return e;
  }

 private:
  std::map<std::string, agents::Evidence> cache_;
};

}  // namespace kf
