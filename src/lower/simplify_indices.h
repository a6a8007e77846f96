// simplify_indices: rewrites every integer index of a Load or Store (and the base of a Ramp
// index) as a canonical linear sum (interval.h, simplify_linear), so that equal terms cancel.
// After unrolling, a register tile's index such as (C.i.o*6 + 2 - C.i.o*6)*32 + 16 becomes the
// constant 80, which codegen needs to keep the tile in vector registers.
//
//   C_acc[ramp((x*6 + 2 - x*6)*32, 1, 16)]   →   C_acc[ramp(64, 1, 16)]
#pragma once

#include "ir/ir.h"

namespace kf::lowering {

ir::Stmt simplify_indices(const ir::Stmt& s);

}  // namespace kf::lowering
