// Evaluates a static TE expression — literals, dims, derived sizes, scalars and operators, no
// index variables or tensor reads — at one shape. Used for extents (IndexVar::lo/hi when
// is_static) by sema's shape checks, the interpreter and lowering.
//
//   Expected<int64_t> n = eval_static_int(stage.vars[0].hi, shape.env);   // e.g. "H - R + 1"
#pragma once

#include <cstdint>

#include "support/status.h"
#include "task/formula.h"
#include "te/ast.h"

namespace kf::te {

// True when `e` reads only literals, dims, derived sizes and scalars.
bool is_static(const Expr& e);

// Requires a checked expression (types set). Fails on a name missing from `env` or a non-static
// node.
Expected<double> eval_static(const Expr& e, const Bindings& env);
// As eval_static, and fails unless the value is an integer.
Expected<int64_t> eval_static_int(const Expr& e, const Bindings& env);

}  // namespace kf::te
