// A readable text form of the IR, for golden tests and for the debug dump after each lowering
// pass (STYLE.md). Not parsed back. Expressions print with the fewest parentheses precedence
// allows; i64 constants print bare, other integer types as `i32(5)`, f32 constants as `1.5f`.
//
//   func gemm(A: f32* input, B: f32* input, C: f32* output, M: i64, N: i64, K: i64) {
//     produce C {
//       parallel for (i, 0, M) {
//         vectorized for (j, 0, 16) {
//           C[i*N + j] = 0.0f
//         }
//       }
//     }
//   }
//
// Vector nodes print as `ramp(base, stride, lanes)`, `x16(value)` (a broadcast),
// `reduce_add(v)`; a predicated access as `A[index] if p`; an Allocate as
// `allocate acc: f32x16[4] on stack { ... }`; a LetStmt as `let x = v` followed by its body at
// the same indentation.
#pragma once

#include <ostream>
#include <string>

#include "ir/ir.h"

namespace kf::ir {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s, int indent = 0);
std::string to_string(const LoweredFunc& f);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace kf::ir
