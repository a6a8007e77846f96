// `kforge strategies [--json]`: the strategy catalog (agents/strategy.h) — each strategy's id,
// name, scope, whether the built-in brain applies it mechanically (schedule moves, or a knob the
// autotuner tunes), its knobs with their values, what it does and what evidence suggests it.
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_strategies_command(CLI::App& app);

}  // namespace kf
