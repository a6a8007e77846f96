// vectorize_loops: turns every For of kind `vectorized` with a constant extent W (a power of two,
// 2..64) into straight-line vector code, as Halide does: the loop variable becomes
// Ramp(min, 1, W), scalar operands next to vectors become Broadcasts, loads and stores whose
// index becomes a vector become vector accesses, and the result is simplified so that dense
// accesses show up as Ramp(base, 1, W) indices.
//
//   vectorized for (j, 0, 16) { C[i*N + j] = A[i*N + j]*2.0f }
//     →  C[ramp(i*N, 1, 16)] = A[ramp(i*N, 1, 16)]*x16(2.0f)
//
// Inside the loop:
// - an `if` whose condition becomes a vector turns into predicated stores and loads (the then
//   case under the condition, the else case under its negation); the condition is bound once
//   to a mask variable `VAR.maskN`. Loads whose address is the same in every lane stay scalar
//   and unpredicated: the lowering keeps such addresses in bounds (clamps them);
// - inner loops stay loops (their bounds must not depend on the vectorized variable);
// - a store of a vector value to a scalar index that reads the same element
//   (`s[0] = s[0] + x[j]*x[j]`, also *, min, max) becomes a horizontal reduction:
//   s[0] = s[0] + reduce_add(x[ramp(..)]*x[ramp(..)]).
// A loop that cannot be vectorized (non-constant extent, an Allocate or another vector inside,
// bounds that depend on the variable, a scalar store under a vector condition) stays a serial
// loop whose body starts with a Comment giving the reason — correct, only slower.
#pragma once

#include "ir/ir.h"

namespace kf::ir {

Stmt vectorize_loops(const Stmt& s);

}  // namespace kf::ir
