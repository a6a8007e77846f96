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
          {"text", text},
          {"analysis", analysis},
          {"bottleneck", bottleneck},
          {"why", why},
          {"expected_speedup", expected_speedup},
          {"alternatives", alternatives}};
}

const char* source_kind_name(SourceKind k) {
  switch (k) {
    case SourceKind::generated:
      return "generated";
    case SourceKind::written:
      return "written";
    case SourceKind::edited:
      return "edited";
    case SourceKind::imported:
      return "imported";
  }
  return "written";
}

std::optional<SourceKind> parse_source_kind(std::string_view name) {
  for (SourceKind k :
       {SourceKind::generated, SourceKind::written, SourceKind::edited, SourceKind::imported})
    if (name == source_kind_name(k)) return k;
  return std::nullopt;
}

nlohmann::json Generation::to_json() const {
  return {{"schedule", schedule}, {"recipe", recipe.to_json()}, {"skipped", skipped}};
}

std::string CandidateMsg::describe() const {
  return generated ? generated->recipe.to_string() : origin;
}

nlohmann::json CandidateMsg::to_json(bool with_source) const {
  nlohmann::json j = {{"key", key},
                      {"kind", source_kind_name(kind)},
                      {"origin", origin},
                      {"parent", parent},
                      {"threads", threads}};
  if (generated) j["generated"] = generated->to_json();
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
