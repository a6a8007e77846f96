// OptimizeOptions as JSON: the options a run is stored with, so a resume continues it as it
// was started.
#include "modes/optimize.h"

namespace kf {

nlohmann::json OptimizeOptions::to_json() const {
  return {{"task_dir", task_dir.string()},
          {"budget_evals", budget_evals},
          {"budget_time_s", budget_time_s},
          {"threads", threads},
          {"brain", brain},
          {"sources", sources.string()},
          {"backend", backend},
          {"target", target},
          {"out_dir", out_dir.string()},
          {"cxx", cxx},
          {"min_time_s", min_time_s},
          {"final_min_time_s", final_min_time_s},
          {"stop_fraction", stop_fraction},
          {"tune_budget", tune_budget},
          {"final_run", final_run},
          {"profile", profile},
          {"seed", seed},
          {"stage_times", stage_times},
          {"stage_time_s", stage_time_s},
          {"remeasure", remeasure},
          {"spend_as", spend_as},
          {"strategies", strategies.to_json()},
          {"pins", pins.to_json()},
          {"from", from.to_json()},
          {"simulate", simulate},
          {"record", record},
          {"sim_latency_s", sim_latency_s},
          {"broker", broker.to_json()},
          {"llm", llm_args.to_json()}};
}

OptimizeOptions::LlmArgs OptimizeOptions::LlmArgs::over(const LlmArgs& stored) const {
  LlmArgs out = *this;
  if (out.config.empty()) out.config = stored.config;
  if (!out.max_tokens) out.max_tokens = stored.max_tokens;
  if (!out.max_cost) out.max_cost = stored.max_cost;
  return out;
}

nlohmann::json OptimizeOptions::LlmArgs::to_json() const {
  return {{"config", config},
          {"max_tokens", max_tokens ? nlohmann::json(*max_tokens) : nullptr},
          {"max_cost", max_cost ? nlohmann::json(*max_cost) : nullptr}};
}

OptimizeOptions::LlmArgs OptimizeOptions::LlmArgs::from_json(const nlohmann::json& j) {
  LlmArgs a;
  if (!j.is_object()) return a;
  if (j.contains("config") && j["config"].is_string()) a.config = j["config"].get<std::string>();
  if (j.contains("max_tokens") && j["max_tokens"].is_number_integer())
    a.max_tokens = j["max_tokens"].get<int64_t>();
  if (j.contains("max_cost") && j["max_cost"].is_number()) a.max_cost = j["max_cost"].get<double>();
  return a;
}

Expected<OptimizeOptions> OptimizeOptions::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("task_dir"))
    return Status::error("run options: missing task_dir");
  try {
    OptimizeOptions o;
    o.task_dir = j["task_dir"].get<std::string>();
    o.budget_evals = j.value("budget_evals", o.budget_evals);
    o.budget_time_s = j.value("budget_time_s", o.budget_time_s);
    o.threads = j.value("threads", o.threads);
    o.brain = j.value("brain", o.brain);
    o.sources = j.value("sources", std::string());
    o.backend = j.value("backend", o.backend);
    o.target = j.value("target", o.target);
    o.out_dir = j.value("out_dir", std::string());
    o.cxx = j.value("cxx", o.cxx);
    o.min_time_s = j.value("min_time_s", o.min_time_s);
    o.final_min_time_s = j.value("final_min_time_s", o.final_min_time_s);
    o.stop_fraction = j.value("stop_fraction", o.stop_fraction);
    o.tune_budget = j.value("tune_budget", o.tune_budget);
    o.final_run = j.value("final_run", o.final_run);
    o.profile = j.value("profile", o.profile);
    // Runs stored before "auto" kept a flag: false was off (a resumed run decides as it did).
    if (j.contains("stage_times") && j["stage_times"].is_boolean())
      o.stage_times = j["stage_times"].get<bool>() ? "on" : "off";
    else
      o.stage_times = j.value("stage_times", o.stage_times);
    if (o.stage_times != "auto" && o.stage_times != "on" && o.stage_times != "off")
      return Status::error("run options: stage_times must be auto, on or off");
    o.stage_time_s = j.value("stage_time_s", o.stage_time_s);
    o.remeasure = j.value("remeasure", o.remeasure);
    o.spend_as = j.value("spend_as", std::string());
    if (j.contains("strategies")) o.strategies = agents::StrategyFilter::from_json(j["strategies"]);
    if (j.contains("pins")) o.pins = agents::KnobPins::from_json(j["pins"]);
    if (j.contains("from")) o.from = StartingPoint::from_json(j["from"]);
    o.seed = j.value("seed", o.seed);
    o.simulate = j.value("simulate", std::string());
    o.record = j.value("record", std::string());
    o.sim_latency_s = j.value("sim_latency_s", 0.0);
    if (j.contains("broker")) o.broker = BrokerArgs::from_json(j["broker"]);
    if (j.contains("llm")) o.llm_args = LlmArgs::from_json(j["llm"]);
    return o;
  } catch (const nlohmann::json::exception& e) {
    return Status::error(std::string("run options: ") + e.what());
  }
}

}  // namespace kf
