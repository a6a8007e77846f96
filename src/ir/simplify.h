// A small, safe simplifier: constant folding and identities that never change a value.
//
//   simplify(i64(2) * i64(8) + j)           → j + 16       (constants move right, then fold)
//   simplify((x + 3) + 4)                   → x + 7        (integers)
//   simplify(x * 1.0f), simplify(x - 0.0f)  → x            (exact for floats; x + 0.0f is kept:
//                                                            it turns -0 into +0)
//   simplify(ramp(b, 1, 16) + x16(c))       → ramp(b + c, 1, 16)
//   simplify(if (true) A else B)            → A;  for with extent 0 → nothing;
//   for with extent 1 → its body with the loop variable replaced by min.
//
// Lets whose value is a constant, a variable, or a broadcast/ramp of those are substituted into
// their bodies; LetStmts whose variable is unused are dropped. Integer arithmetic wraps as the
// generated code's int64_t/int32_t would (no folding of division by zero).
#pragma once

#include "ir/ir.h"

namespace kf::ir {

Expr simplify(const Expr& e);
Stmt simplify(const Stmt& s);

}  // namespace kf::ir
