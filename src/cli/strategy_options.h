// `--only` and `--skip` for the commands that run the built-in planner (optimize, search):
// strategy ids of the catalog, comma-separated or repeated; an id not in the catalog is refused
// before anything runs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "agents/roles.h"

namespace kf {

inline void add_strategy_filter_options(CLI::App* cmd, agents::StrategyFilter& filter) {
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
}

}  // namespace kf
