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
          {"simulate", simulate},
          {"record", record},
          {"sim_latency_s", sim_latency_s},
          {"llm",
           {{"config", llm_args.config},
            {"max_tokens", llm_args.max_tokens ? nlohmann::json(*llm_args.max_tokens) : nullptr},
            {"max_cost", llm_args.max_cost ? nlohmann::json(*llm_args.max_cost) : nullptr}}}};
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
    o.seed = j.value("seed", o.seed);
    o.simulate = j.value("simulate", std::string());
    o.record = j.value("record", std::string());
    o.sim_latency_s = j.value("sim_latency_s", 0.0);
    if (const auto l = j.find("llm"); l != j.end() && l->is_object()) {
      o.llm_args.config = l->value("config", std::string());
      if (l->contains("max_tokens") && !(*l)["max_tokens"].is_null())
        o.llm_args.max_tokens = (*l)["max_tokens"].get<int64_t>();
      if (l->contains("max_cost") && !(*l)["max_cost"].is_null())
        o.llm_args.max_cost = (*l)["max_cost"].get<double>();
    }
    return o;
  } catch (const nlohmann::json::exception& e) {
    return Status::error(std::string("run options: ") + e.what());
  }
}

}  // namespace kf
