// page_loops (the `hoist_gathers` primitive's lowering): a marked stage reads a tensor at an
// index read from another tensor at `v / C` (06's k_pages[page_table[n, t / PS], t % PS, ...]),
// v the variable of a serial loop around the read and C a dim. That loop runs as pages of C: an
// outer loop over v / C and an inner one over v % C, with every v / C and v % C in its body
// replaced by the two variables. The page table is then read once per page (the C++ compiler
// hoists the load out of the inner loop) and no iteration divides:
//
//   for (t, 0, n) { s[t] = k[page_table[t / PS]*PS*D + t % PS*D + d] ... }
//     →  for (t.pg, 0, (n + max(PS, 1) - 1) / max(PS, 1)) {
//          for (t.in, 0, min(max(PS, 1), n - t.pg*max(PS, 1))) {
//            s[t.pg*max(PS, 1) + t.in] = k[page_table[t.pg]*PS*D + t.in*D + d] ... } }
//
// The loop may belong to the stage (its own loops, the loops of reductions in its definition)
// or to a stage it is computed in (06's scores per token t, their dot product over d computed
// at s_r.t). Only loops from 0 whose variable is divided by one dim in those reads are
// rewritten; vector, parallel and unrolled loops are left alone. Dims may be 0: the pages are
// max(C, 1) long, which is C wherever the division was defined.
#pragma once

#include <set>
#include <string>

#include "ir/ir.h"

namespace kf::lowering {

// `stages`: the names of the stages marked by hoist_gathers; `dims`: the names of the task's
// dims (function parameters, invariant in the whole kernel).
ir::Stmt page_loops(const ir::Stmt& s, const std::set<std::string>& stages,
                    const std::set<std::string>& dims);

}  // namespace kf::lowering
