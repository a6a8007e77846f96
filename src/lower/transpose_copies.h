// transpose_copies: a copy nest that transposes becomes square blocks copied through registers.
//
// The nest is two loops (the outer serial or parallel, the inner serial and rectangular) around
// one unpredicated store of an f32 load, dst[d(a, b)] = src[s(a, b)], where both indices are
// affine in the loop variables a and b, d has unit stride in one of them and s in the other: a
// packed panel of a weight stored the other way round (50's W[O, I] packed as [I, 64]). Copied
// element by element, each store (or, vectorized, each scatter) writes one float of a distant
// row; the blocked form loads `lanes` rows of src as vectors, transposes them in registers and
// stores `lanes` rows of dst (ir::TransposeBlock). The rows and columns past the last whole
// block keep the original loops, so any extent is copied exactly.
//
//   for (o, 0, 64) { for (i, 0, I) { Wt[o + i*64] = W[(x*64 + o)*I + i] } }
//     →  for (o.tb, 0, 4) {
//          for (i.tb, 0, I/16) { transpose 16x16 f32 Wt[o.tb*16 + i.tb*16*64 + r*64 + c] =
//                                W[(x*64 + o.tb*16)*I + i.tb*16 + c*I + r] }
//          for (o.tl, 0, 16) { for (i, I/16*16, I - I/16*16) { ...the original store... } }
//        }
//        (no leftover rows: 64 is a multiple of 16)
//
// Nests inside a vectorized loop, stores whose value is not a plain load, and strides that could
// make the blocks overlap (a constant stride below `lanes`) are left as they are.
#pragma once

#include <set>
#include <string>

#include "ir/ir.h"

namespace kf::lowering {

struct TransposeOptions {
  int lanes = 16;                    // the block's side: the target's f32 vector width (>= 2)
  std::set<std::string> f32_params;  // task inputs and outputs stored as f32
};

ir::Stmt transpose_copies(const ir::Stmt& s, const TransposeOptions& options);

}  // namespace kf::lowering
