// guards_to_bounds: a serial or parallel loop over v whose every store sits inside a guard
// `v + R < E` (R and E free of v) runs only up to the largest limit E - R any of those guards
// takes over the loops, lets and guards between the loop and it (a limit read from a buffer
// nothing in the loop writes, `lens[n]`, is a value there); one whose every store sits inside a
// guard `E <= v + R` starts at the smallest such limit. A comparison whose limit never passes
// the new bound holds on every iteration left and is dropped from its guard. An rfactor over the
// outer half of a split leaves such a guard around every step of the last chunk's loop:
//
//   for (c, 0, 35001) { if (t*35001 + c < N) { acc = acc + x[t*35001 + c] } }
//     →  for (c, 0, min(35001, max(N - t*35001, 0))) { acc = acc + x[t*35001 + c] }
//
// and a masked range (mask_range) one deeper, with a limit that moves with the rows of a block:
//
//   for (j, 0, S) { for (i.i, 0, 4) { if (j < i.o*4 + i.i + 1) { ... } } }
//     →  for (j, 0, min(S, max(i.o*4 + 4, 0))) { for (i.i, 0, 4) { if (j < ...) { ... } } }
//
// Vector loops are left alone.
#pragma once

#include "ir/ir.h"

namespace kf::lowering {

ir::Stmt guards_to_bounds(const ir::Stmt& s);

}  // namespace kf::lowering
