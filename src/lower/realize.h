// realize_stages: the heart of lowering. Builds the loop nest of every stage from its schedule
// and places it: root stages one after another (intermediates in heap buffers of their full
// size, outputs written in place), compute_at stages inside their consumer's loop over the
// region bounds inference asks for (region.h), in a local buffer of that region's size.
//
//   stage C (split C.j j.o j.i 16, vectorize C.j.i):
//     produce C {
//       for (C.i, 0, M) {
//         for (C.j.o, 0, N/16) {                      // steady state: no tail checks
//           vectorized for (C.j.i, 0, 16) { C[C.i*N + C.j.o*16 + C.j.i] = 0.0f
//                                            for (C.k, 0, K) { C[...] = C[...] + A[...]*B[...] } }
//         }
//         if (N/16*16 < N) {                          // the tail: one masked vector
//           let C.j.o = N/16
//           vectorized for (C.j.i, 0, 16) { if (C.j.i < N - C.j.o*16) { ... } }
//         }
//       }
//     }
//
// Tails (design notes): a split's inner loop runs min(factor, rest) times, which is exact and
// costs nothing for serial loops. Loops that need a constant trip count (vectorized, unrolled)
// run the factor and guard their body; to keep those guards out of the steady state, the outer
// loop of such a split is partitioned into the full iterations and one tail iteration. A loop
// whose extent is unknown where it runs (an inner loop reordered outside its outer loop) runs
// the factor, and the original variable is checked once all its loops are bound. Vectorized
// loops of any extent are strip-mined into vectors of the requested lanes with one masked tail
// vector. Reductions initialize their accumulators just before their outermost reduction loop,
// over the pure loops inside it. A recurrence is an ordinary stage whose scan loop is serial.
#pragma once

#include "ir/ir.h"
#include "lower/expr_to_ir.h"
#include "schedule/pipeline.h"

namespace kf::lowering {

struct RealizeOptions {
  int lanes_f32 = 16;  // the target's natural width for vectorize without LANES
  int lanes_f64 = 8;
  int64_t max_stack_bytes = 64 * 1024;  // larger local buffers go on the heap
};

// The body of the lowered function. Requires a validated pipeline with no inlined stage still
// read (inline_stages first).
ir::Stmt realize_stages(const sched::Pipeline& p, const RealizeOptions& options);

}  // namespace kf::lowering
