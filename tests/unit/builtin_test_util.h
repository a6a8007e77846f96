// Shared by the built-in brain's tests: recipes written by their strategies' ids.
#pragma once

#include <initializer_list>

#include "agents/strategy.h"

namespace kf::agents::builtin::builtin_test {

// A recipe of the strategies `ids`, each with its default knobs.
inline Recipe recipe_of(std::initializer_list<const char*> ids) {
  Recipe r;
  for (const char* id : ids) r.steps.push_back({id, find_strategy(id)->default_knobs()});
  return r;
}

}  // namespace kf::agents::builtin::builtin_test
