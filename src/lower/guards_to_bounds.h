// guards_to_bounds: a serial or parallel loop whose whole body is one guard `v + R < E` on its
// own variable v (R and E free of v) runs only the iterations that pass it: the guard becomes
// the loop's bound. An rfactor over the outer half of a split leaves such a guard around every
// step of the last chunk's loop (and, symbolically, every chunk's):
//
//   for (c, 0, 35001) { if (t*35001 + c < N) { acc = acc + x[t*35001 + c] } }
//     →  for (c, 0, min(35001, max(N - t*35001, 0))) { acc = acc + x[t*35001 + c] }
//
// Vector loops and loops with anything beside the guard are left alone.
#pragma once

#include "ir/ir.h"

namespace kf::lowering {

ir::Stmt guards_to_bounds(const ir::Stmt& s);

}  // namespace kf::lowering
