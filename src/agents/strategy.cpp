// Recipes: strategy applications replayed on the default pipeline into a schedule trace.
#include "agents/strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "schedule/primitives.h"
#include "support/json_text.h"

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

bool KnobPins::pinned(const std::string& strategy, const std::string& knob) const {
  auto it = by_strategy.find(strategy);
  return it != by_strategy.end() && it->second.count(knob);
}

void KnobPins::apply(const std::string& strategy, Knobs& knobs) const {
  if (auto it = by_strategy.find(strategy); it != by_strategy.end())
    for (const auto& [k, v] : it->second) knobs[k] = v;
}

bool KnobPins::holds(const std::string& strategy, const Knobs& knobs) const {
  auto it = by_strategy.find(strategy);
  if (it == by_strategy.end()) return true;
  for (const auto& [k, v] : it->second)
    if (auto at = knobs.find(k); at == knobs.end() || at->second != v) return false;
  return true;
}

nlohmann::json KnobPins::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [s, knobs] : by_strategy)
    for (const auto& [k, v] : knobs) j[s][k] = v;
  return j;
}

KnobPins KnobPins::from_json(const nlohmann::json& j) {
  KnobPins p;
  if (!j.is_object()) return p;
  for (const auto& [s, knobs] : j.items()) {
    if (!knobs.is_object()) continue;
    for (const auto& [k, v] : knobs.items())
      if (v.is_number_integer()) p.by_strategy[s][k] = v.get<int64_t>();
  }
  return p;
}

Expected<KnobPins> KnobPins::parse(const std::vector<std::string>& texts) {
  KnobPins p;
  for (const std::string& t : texts) {
    const size_t dot = t.find('.'), eq = t.find('=');
    const auto bad = [&](const std::string& why) {
      return Status::error(fmt::format("--pin '{}': {}", terminal_text(t), why));
    };
    if (dot == std::string::npos || eq == std::string::npos || eq < dot)
      return bad("expected STRATEGY.KNOB=VALUE, e.g. register_block.mr=6");
    const std::string strategy = t.substr(0, dot), knob = t.substr(dot + 1, eq - dot - 1);
    const Strategy* s = find_strategy(strategy);
    if (!s) return bad("no strategy '" + strategy + "' in the catalog (`kforge strategies`)");
    const bool known = std::any_of(s->knobs.begin(), s->knobs.end(),
                                   [&](const Knob& k) { return k.name == knob; });
    if (!known) return bad(fmt::format("{} has no knob '{}'", strategy, knob));
    const std::string value = t.substr(eq + 1);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v <= 0)
      return bad("the value must be a positive integer");
    p.by_strategy[strategy][knob] = v;
  }
  return p;
}

}  // namespace kf::agents
