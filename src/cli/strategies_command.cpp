#include "cli/strategies_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "agents/strategy.h"
#include "cli/cli_output.h"
#include "support/json_text.h"

namespace kf {
namespace {

// `kforge strategies --json`: the catalog (docs/schemas/strategies.schema.json).
constexpr const char* kStrategiesSchema = "kforge-strategies/1";

const char* scope_name(agents::StrategyScope s) {
  return s == agents::StrategyScope::cpu ? "cpu" : "generic";
}

// How the built-in brain applies it: "moves", "tuned:KNOB" or "" (an LLM or a person only).
std::string applied_by(const agents::Strategy& s) {
  if (s.moves) return "moves";
  if (!s.tuned_knob.empty()) return "tuned:" + s.tuned_knob;
  return "";
}

nlohmann::json catalog_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const agents::Strategy& s : agents::strategy_catalog()) {
    nlohmann::json knobs = nlohmann::json::array();
    for (const agents::Knob& k : s.knobs)
      knobs.push_back(
          {{"name", k.name}, {"initial", k.initial}, {"values", k.values}, {"meaning", k.meaning}});
    list.push_back({{"id", s.id},
                    {"name", s.name},
                    {"scope", scope_name(s.scope)},
                    {"builtin", applied_by(s)},
                    {"rewrite_first", s.rewrite_first},
                    {"knobs", knobs},
                    {"description", s.description},
                    {"evidence", s.evidence}});
  }
  return {{"strategies", list}};
}

void print_text() {
  const auto& all = agents::strategy_catalog();
  size_t width = 0;
  for (const agents::Strategy& s : all) width = std::max(width, s.id.size());
  for (const agents::Strategy& s : all) {
    const std::string how = applied_by(s);
    fmt::print("{:<{}}  {:<7}  {:<14}  {}\n", s.id, width, scope_name(s.scope),
               how.empty() ? "llm/person" : how, s.name);
    for (const agents::Knob& k : s.knobs)
      fmt::print("{:<{}}    knob {} = {} of {{{}}}: {}\n", "", width, k.name, k.initial,
                 fmt::join(k.values, ", "), k.meaning);
  }
  fmt::print(
      "\n{} strategies; moves: applied by the built-in brain's schedule moves; tuned: a "
      "knob its autotuner sets; llm/person: described for other brains only\n",
      all.size());
}

}  // namespace

void add_strategies_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("strategies", "List the strategy catalog the planners choose from");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag(
      "--json", *json,
      fmt::format("Print one JSON document (schema \"{}\", docs/json.md)", kStrategiesSchema));
  cmd->callback([json] {
    if (*json)
      print_json(kStrategiesSchema, catalog_json());
    else
      print_text();
  });
}

}  // namespace kf
