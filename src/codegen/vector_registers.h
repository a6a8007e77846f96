// Register promotion for small stack buffers that are only ever accessed as whole vectors.
//
// After unrolling and vectorization, a register tile such as
//   allocate acc: f32[64] on stack { ... acc[ramp(32, 1, 16)] = acc[ramp(32, 1, 16)] + ... }
// touches acc only in dense 16-lane pieces at constant offsets that are multiples of 16. Such a
// buffer is emitted as `f32x16 acc[4]` and each access as `acc[2]`, which the C++ compiler keeps
// in vector registers; a float array accessed through memcpy'd vectors often stays in memory.
//
//   int w = promotable_vector_lanes(*alloc);   // 16, or 0 when the buffer must stay scalar
#pragma once

#include "ir/ir.h"

namespace kf {

// The lane count W when every Load and Store of the allocation in its body has W lanes and an
// index Ramp(c, 1, W) with a constant c that is a multiple of W, and the allocation is on the
// stack with a scalar f32/f64/i32/i64 element type and a constant extent divisible by W.
// Otherwise 0. Predicated accesses are allowed: every vector is in bounds, so codegen emits a
// masked store as a blend (`acc[1] = m ? v : acc[1]`) and a masked load as `m ? acc[1] : 0`.
int promotable_vector_lanes(const ir::Allocate& alloc);

}  // namespace kf
