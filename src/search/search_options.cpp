// SearchOptions as JSON: what a search run is stored with, so a resume continues it as started.
#include "search/engine.h"

namespace kf::search {

nlohmann::json SearchOptions::to_json() const {
  const PolicyOptions& p = policy_options;
  return {{"task_dir", task_dir.string()},
          {"policy", policy},
          {"budget_evals", budget_evals},
          {"budget_time_s", budget_time_s},
          {"jobs", jobs},
          {"seed", seed},
          {"threads", threads},
          {"brain", brain},
          {"sources", sources.string()},
          {"backend", backend},
          {"target", target},
          {"cxx", cxx},
          {"min_time_s", min_time_s},
          {"final_min_time_s", final_min_time_s},
          {"refine_share", refine_share},
          {"final_run", final_run},
          {"out_dir", out_dir.string()},
          {"simulate", simulate},
          {"record", record},
          {"sim_latency_s", sim_latency_s},
          {"broker", broker.to_json()},
          {"remeasure", remeasure},
          {"count_stored", count_stored},
          {"strategies", strategies.to_json()},
          {"pins", pins.to_json()},
          {"from", from.to_json()},
          {"llm", llm_args.to_json()},
          {"policy_options",
           {{"beam_width", p.beam_width},
            {"beam_expand", p.beam_expand},
            {"mcts_c", p.mcts_c},
            {"population", p.population},
            {"islands", p.islands},
            {"migrate_every", p.migrate_every},
            {"crossover_rate", p.crossover_rate},
            {"walk_depth", p.walk_depth}}}};
}

Expected<SearchOptions> SearchOptions::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("task_dir"))
    return Status::error("search options: missing task_dir");
  try {
    SearchOptions o;
    o.task_dir = j["task_dir"].get<std::string>();
    o.policy = j.value("policy", o.policy);
    o.budget_evals = j.value("budget_evals", o.budget_evals);
    o.budget_time_s = j.value("budget_time_s", o.budget_time_s);
    o.jobs = j.value("jobs", o.jobs);
    o.seed = j.value("seed", o.seed);
    o.threads = j.value("threads", o.threads);
    o.brain = j.value("brain", o.brain);
    o.sources = j.value("sources", std::string());
    o.backend = j.value("backend", o.backend);
    o.target = j.value("target", o.target);
    o.cxx = j.value("cxx", o.cxx);
    o.min_time_s = j.value("min_time_s", o.min_time_s);
    o.final_min_time_s = j.value("final_min_time_s", o.final_min_time_s);
    o.refine_share = j.value("refine_share", o.refine_share);
    o.final_run = j.value("final_run", o.final_run);
    o.out_dir = j.value("out_dir", std::string());
    o.simulate = j.value("simulate", std::string());
    o.record = j.value("record", std::string());
    o.sim_latency_s = j.value("sim_latency_s", 0.0);
    if (j.contains("broker")) o.broker = BrokerArgs::from_json(j["broker"]);
    o.remeasure = j.value("remeasure", false);
    o.count_stored = j.value("count_stored", false);
    if (j.contains("strategies")) o.strategies = agents::StrategyFilter::from_json(j["strategies"]);
    if (j.contains("pins")) o.pins = agents::KnobPins::from_json(j["pins"]);
    if (j.contains("from")) o.from = StartingPoint::from_json(j["from"]);
    if (j.contains("llm")) o.llm_args = OptimizeOptions::LlmArgs::from_json(j["llm"]);
    if (const auto p = j.find("policy_options"); p != j.end() && p->is_object()) {
      PolicyOptions& q = o.policy_options;
      q.beam_width = p->value("beam_width", q.beam_width);
      q.beam_expand = p->value("beam_expand", q.beam_expand);
      q.mcts_c = p->value("mcts_c", q.mcts_c);
      q.population = p->value("population", q.population);
      q.islands = p->value("islands", q.islands);
      q.migrate_every = p->value("migrate_every", q.migrate_every);
      q.crossover_rate = p->value("crossover_rate", q.crossover_rate);
      q.walk_depth = p->value("walk_depth", q.walk_depth);
    }
    return o;
  } catch (const nlohmann::json::exception& e) {
    return Status::error(std::string("search options: ") + e.what());
  }
}

}  // namespace kf::search
