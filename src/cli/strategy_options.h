// Steering the built-in brain, for the commands that run it (optimize, search): `--only` and
// `--skip` (strategy ids of the catalog, comma-separated or repeated) and `--pin
// STRATEGY.KNOB=VALUE` (repeated). Anything not in the catalog is refused before anything runs.
// And where a run starts: `--from FILE`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "agents/roles.h"
#include "modes/starting_point.h"

namespace kf {

inline void add_steering_options(CLI::App* cmd, agents::StrategyFilter& filter,
                                 agents::KnobPins& pins) {
  const CLI::Validator in_catalog(
      [](std::string& id) {
        return agents::find_strategy(id)
                   ? std::string()
                   : "'" + id +
                         "' is not a strategy of the catalog (`kforge strategies` lists them)";
      },
      "STRATEGY");
  cmd->add_option_function<std::vector<std::string>>(
         "--only",
         [&filter](const std::vector<std::string>& ids) {
           filter.only.insert(ids.begin(), ids.end());
         },
         "Let the built-in planner propose only these strategies (ids from `kforge strategies`)")
      ->delimiter(',')
      ->check(in_catalog);
  cmd->add_option_function<std::vector<std::string>>(
         "--skip",
         [&filter](const std::vector<std::string>& ids) {
           filter.skip.insert(ids.begin(), ids.end());
         },
         "Never let the built-in planner propose these strategies")
      ->delimiter(',')
      ->check(in_catalog);
  cmd->add_option_function<std::vector<std::string>>(
         "--pin",
         [&pins](const std::vector<std::string>& texts) {
           if (auto p = agents::KnobPins::parse(texts))
             for (const auto& [s, knobs] : p->by_strategy)
               for (const auto& [k, v] : knobs) pins.by_strategy[s][k] = v;
         },
         "Hold a knob of a strategy at a value, e.g. register_block.mr=6 (repeatable): the "
         "built-in brain uses it and its tuning leaves it alone")
      ->check(CLI::Validator(
          [](std::string& text) {
            auto p = agents::KnobPins::parse({text});
            return p ? std::string() : p.error().message();
          },
          "STRATEGY.KNOB=VALUE"));
}

// `--from FILE`: the run's first candidate (modes/starting_point.h), read and checked before
// anything runs.
inline void add_from_option(CLI::App* cmd, StartingPoint& from) {
  cmd->add_option_function<std::string>(
         "--from",
         [&from](const std::string& file) {
           if (auto s = StartingPoint::read(file)) from = *s;
         },
         "Start from this kernel: C++ with the task's signature, or a .sched schedule of its TE "
         "spec; judged first, it is the best to beat")
      ->check(CLI::Validator(
          [](std::string& file) {
            auto s = StartingPoint::read(file);
            return s ? std::string() : s.error().message();
          },
          "FILE"));
}

}  // namespace kf
