// inline_stages: substitutes every stage scheduled `compute_inline` into the stages that read
// it, so no later pass sees a read of an inlined stage.
//
//   e[b, o] = exp(g[b, o] - m[b])           compute_inline e
//   y[b, o] = e[b, o] / y_r[b]         →    y[b, o] = exp(g[b, o] - m[b]) / y_r[b]
//
// A read with `else` keeps its bounds check: `e[b, o - 1] else 0` becomes
// `select(0 <= o - 1 && o - 1 < O, <e at o - 1>, 0)`. Reductions nested in the inlined body
// (inline reductions) move their variables into the reader. Inlined stages stay in the pipeline
// (unread) so stage indices do not change; lowering skips them.
#pragma once

#include "schedule/pipeline.h"

namespace kf::lowering {

sched::Pipeline inline_stages(const sched::Pipeline& p);

}  // namespace kf::lowering
