// Recipes: strategy applications replayed on the default pipeline into a schedule trace.
#include "agents/strategy.h"

#include <fmt/format.h>

#include "schedule/primitives.h"

namespace kf::agents {

Knobs Strategy::default_knobs() const {
  Knobs k;
  for (const Knob& kn : knobs) k[kn.name] = kn.initial;
  return k;
}

const Strategy* find_strategy(const std::string& id) {
  for (const Strategy& s : strategy_catalog())
    if (s.id == id) return &s;
  return nullptr;
}

nlohmann::json Step::to_json() const {
  nlohmann::json k = nlohmann::json::object();
  for (const auto& [n, v] : knobs) k[n] = v;
  return {{"strategy", strategy}, {"knobs", k}};
}

Expected<Step> Step::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("strategy") || !j["strategy"].is_string())
    return Status::error("recipe step: expected {\"strategy\": NAME, \"knobs\": {...}}");
  Step s;
  s.strategy = j["strategy"].get<std::string>();
  if (j.contains("knobs")) {
    if (!j["knobs"].is_object()) return Status::error("recipe step: knobs must be an object");
    for (const auto& [n, v] : j["knobs"].items()) {
      if (!v.is_number_integer())
        return Status::error("recipe step " + s.strategy + ": knob " + n + " must be an integer");
      s.knobs[n] = v.get<int64_t>();
    }
  }
  return s;
}

nlohmann::json Recipe::to_json() const {
  nlohmann::json a = nlohmann::json::array();
  for (const Step& s : steps) a.push_back(s.to_json());
  return a;
}

Expected<Recipe> Recipe::from_json(const nlohmann::json& j) {
  if (!j.is_array()) return Status::error("recipe: expected an array of steps");
  Recipe r;
  for (const auto& e : j) {
    auto s = Step::from_json(e);
    if (!s) return s.error();
    r.steps.push_back(*s);
  }
  return r;
}

std::string Recipe::to_string() const {
  if (steps.empty()) return "default schedule";
  std::string out;
  for (const Step& s : steps) {
    if (!out.empty()) out += " + ";
    out += s.strategy + "(";
    bool first = true;
    for (const auto& [n, v] : s.knobs) {
      out += fmt::format("{}{}={}", first ? "" : ",", n, v);
      first = false;
    }
    out += ")";
  }
  return out;
}

bool Recipe::has(const std::string& strategy) const {
  for (const Step& s : steps)
    if (s.strategy == strategy) return true;
  return false;
}

Expected<Realized> realize_recipe(const sched::Pipeline& base, const Recipe& recipe,
                                  const MoveContext& ctx) {
  Realized out;
  out.schedule.file = "recipe";
  sched::Pipeline p = base;
  for (const Step& step : recipe.steps) {
    const Strategy* s = find_strategy(step.strategy);
    if (!s) return Status::error("recipe: unknown strategy '" + step.strategy + "'");
    if (!s->mechanical())
      return Status::error("recipe: strategy '" + step.strategy +
                           "' has no mechanical form (the built-in brain cannot apply it)");
    if (!s->moves) {
      // Tuned strategies act through knobs the autotuner owns (e.g. threads); no moves.
      out.applied_groups.push_back(0);
      continue;
    }
    Knobs knobs = s->default_knobs();
    for (const auto& [n, v] : step.knobs) knobs[n] = v;
    auto groups = s->moves(p, knobs, ctx);
    if (!groups) return groups.error();
    int applied = 0;
    for (const MoveGroup& g : *groups) {
      sched::Pipeline trial = p;
      Status st;
      for (const sched::Primitive& m : g.moves) {
        st = sched::apply_primitive(trial, m);
        if (!st.ok()) {
          st = Status::error(m.to_string() + ": " + st.message());
          break;
        }
      }
      if (!st.ok()) {
        out.skipped.push_back(fmt::format("{} on {}: {}", step.strategy, g.target, st.message()));
        continue;
      }
      p = std::move(trial);
      for (const sched::Primitive& m : g.moves) out.schedule.steps.push_back(m);
      ++applied;
    }
    out.applied_groups.push_back(applied);
  }
  return out;
}

}  // namespace kf::agents
