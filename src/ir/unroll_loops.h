// unroll_loops: replaces every For of kind `unrolled` whose extent is a constant by that many
// copies of its body, each with the loop variable replaced by min + i (then simplified). An
// unrolled loop whose extent is not constant becomes a serial loop. Inner loops first.
//
//   unrolled for (ii, 0, 2) { acc[ii] = 0.0f }   →   acc[0] = 0.0f
//                                                    acc[1] = 0.0f
#pragma once

#include "ir/ir.h"

namespace kf::ir {

Stmt unroll_loops(const Stmt& s);

}  // namespace kf::ir
