// `kforge search TASK --policy beam|mcts|evolve|best-of-n|greedy [--budget-evals N]
// [--budget-time T] [--jobs J] [--seed S] [--resume RUN]`: graph search over candidates
// (search/engine.h); `kforge show RUN` prints a search run's graph as a tree.
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_search_command(CLI::App& app);

}  // namespace kf
