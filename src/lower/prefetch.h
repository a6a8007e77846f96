// Prefetch insertion (the `prefetch STAGE.LOOP DISTANCE` primitive): each iteration of such a
// loop first prefetches, for every input it reads whose address moves with the loop, the address
// that iteration `loop + DISTANCE` will read (loops inside the body at their first iteration).
// The distance counts iterations of the schedule's loop: for a vectorized loop, elements, so the
// strip-mined loop of vectors moves ceil(DISTANCE / lanes) vectors ahead.
//
//   softmax, `prefetch e.d 4096` with D = 4096: while row n's exponentials are computed (from
//   x's row, already in L1), the cache lines of row n + 1 are requested from DRAM, so the
//   next row's max pass finds them in cache.
//
// Runs after realize_stages (indices are still scalar; vectorize_loops turns a prefetch inside
// a vectorized loop into one per vector, of its first lane). Prefetches never fault: codegen
// computes their addresses in integer arithmetic, so running past a buffer's end is harmless.
#pragma once

#include "ir/ir.h"
#include "schedule/pipeline.h"

namespace kf::lowering {

// `natural_lanes`: the vector width of a vectorized loop that names none (the target's).
ir::Stmt insert_prefetches(const ir::Stmt& s, const sched::Pipeline& p, int natural_lanes);

}  // namespace kf::lowering
