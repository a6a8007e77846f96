#include "agents/messages.h"

namespace kf::agents {

namespace {
nlohmann::json knobs_json(const Knobs& k) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [n, v] : k) j[n] = v;
  return j;
}
}  // namespace

nlohmann::json Plan::to_json() const {
  return {{"strategy", strategy},
          {"knobs", knobs_json(knobs)},
          {"analysis", analysis},
          {"bottleneck", bottleneck},
          {"why", why},
          {"expected_speedup", expected_speedup},
          {"alternatives", alternatives}};
}

nlohmann::json CandidateMsg::to_json(bool with_source) const {
  nlohmann::json j = {{"key", key},        {"schedule", schedule}, {"recipe", recipe.to_json()},
                      {"parent", parent},  {"origin", origin},     {"threads", threads},
                      {"skipped", skipped}};
  if (with_source) j["source"] = source;
  return j;
}

nlohmann::json Diagnostics::to_json() const {
  return {{"phase", phase}, {"message", message}, {"details", details}, {"kforge_bug", kforge_bug}};
}

nlohmann::json TestReport::to_json() const {
  return {{"verdict", verdict_name(verdict)},
          {"message", message},
          {"checks_passed", checks_passed},
          {"checks_total", checks_total},
          {"median_s", median_s},
          {"min_s", min_s},
          {"speedup_vs_best", speedup_vs_best},
          {"reused", reused}};
}

}  // namespace kf::agents
