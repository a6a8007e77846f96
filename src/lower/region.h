// Bounds inference: the box of a producer's elements that its consumers read inside one
// iteration of a compute_at loop, as expressions of the loops outside it.
//
//   compute_at C_acc C.i.o  with C[i, j] = C_acc[i, j], loops j.o i.o | i.i j.i:
//     in the steady state:  C_acc rows [C.i.o*6, +6), columns [C.j.o*32, +32)
//     in the i tail:        rows [C.i.o*6, +min(6, M - C.i.o*6)), nominal 6
//
// Consumers are the stage whose loop it is (its body, with the loops inside ranging) and every
// stage computed inside that loop (over the region it will be asked for there, recursively).
// Index expressions are interval-evaluated (interval.h); an index that is not affine in the
// ranging variables (a data-dependent gather, a product of two loop variables) needs the whole
// extent of that dimension. A read of an input at a fixed index is a fixed value: a range
// `t in 0..lens[n]` read inside the loop over n asks for lens[n] elements there. So is a read of
// an i64 stage already computed there (`LiveViews`: 07's `t in 0..pos[r] + 1`). Reads with `else`,
// and inexact intervals, are clamped to the producer's extent so it is never computed out of range.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "ir/ir.h"
#include "lower/expr_to_ir.h"
#include "lower/loop_tree.h"
#include "schedule/pipeline.h"

namespace kf::lowering {

struct Region {
  std::vector<ir::Expr> min, extent;            // per LHS dim
  std::vector<std::optional<int64_t>> nominal;  // constant upper bound of each extent, if any
};

// A point in a consumer's loop nest: inside loop `loop` of `stage`, with `ctx.bound` holding
// the leaves outside and at that loop.
struct NestPoint {
  const LoopTree* tree = nullptr;
  NestContext ctx;
  int stage = -1;
  int loop = -1;
};

// The stages whose buffers hold their values at the point a region is computed (realize's views:
// stages at root, and those computed earlier inside the enclosing loops), by stage index. Their
// i64 stages (index values, such as 07's context lengths pos[r]) may bound a region.
using LiveViews = std::map<int, BufferView>;

// The region of `producer` needed at `at`. Requires every consumer of the producer to be
// computed inside that loop (validated by the schedule).
Region required_region(const sched::Pipeline& p, int producer, const NestPoint& at,
                       const LiveViews* live = nullptr);

// The whole extent of a stage.
Region full_region(const sched::Pipeline& p, int stage);

}  // namespace kf::lowering
