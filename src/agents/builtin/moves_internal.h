// Helpers shared by the files that implement the mechanical forms (moves.cpp,
// moves_rewrite.cpp); not for the rest of the brain.
#pragma once

#include <cstdint>
#include <string>

#include "agents/strategy.h"

namespace kf::agents::builtin {

// The knob's value, or `fallback` when the knobs do not name it.
int64_t knob(const Knobs& k, const std::string& name, int64_t fallback);
// Builds a primitive from its text; the texts of the forms are well-formed by construction
// (a malformed one is a kforge bug and stops loudly).
sched::Primitive prim(const std::string& text);

}  // namespace kf::agents::builtin
