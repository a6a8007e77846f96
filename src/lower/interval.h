// Interval arithmetic on integer IR expressions, for bounds inference: the range an index
// expression takes while some variables range over intervals and the others stay fixed.
//
//   Scope s = {{"C.i.i", {i64(0), i64(5)}}};                 // i.i in [0, 5]
//   Interval r = bounds_of(Var("C.i.o") * 6 + Var("C.i.i"), s);
//   // r.min = C.i.o*6, r.max = C.i.o*6 + 5, r.exact
//   simplify_linear(r.max - r.min + 1)  → 6                  // cancels the symbolic terms
//   const_upper_bound(min(6, M - C.i.o*6))  → 6
//
// Intervals are inclusive. An unbounded side is an undefined Expr. `exact` says the bounds are
// values the expression takes at points of the box (affine maps, monotone divisions), so a
// region derived from them never leaves a tensor that the expression indexes validly;
// min/max/select/mod make it inexact, and lowering then clamps.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "ir/ir.h"

namespace kf::lowering {

struct Interval {
  ir::Expr min, max;  // inclusive; undefined = unbounded on that side
  bool exact = true;

  static Interval point(const ir::Expr& e) { return {e, e, true}; }
  static Interval everything() { return {ir::Expr(), ir::Expr(), false}; }
  bool bounded() const { return min.defined() && max.defined(); }
};

using Scope = std::map<std::string, Interval>;

// The range of an i64 expression when each variable in `scope` ranges over its interval (other
// variables are fixed). A load from one of `invariant_buffers` (buffers nothing writes while the
// expression is evaluated: the task's inputs) at an index that is a point is that point
// (`lens[n]` with n fixed: a sequence's length bounds its loops); other loads and anything
// non-integer give an unbounded interval.
Interval bounds_of(const ir::Expr& e, const Scope& scope,
                   const std::set<std::string>& invariant_buffers = {});

// Rewrites an integer expression as a sum of constant multiples of its non-linear parts plus a
// constant, so equal terms cancel: (x*6 + min(6, y) - 1) - x*6 + 1 → min(6, y).
ir::Expr simplify_linear(const ir::Expr& e);

// Constant bounds of an integer expression, if it has them. Every i64 Var counts as
// non-negative (loop variables, dims, region minimums) except those in `signed_vars`.
std::optional<int64_t> const_upper_bound(const ir::Expr& e);
std::optional<int64_t> const_lower_bound(const ir::Expr& e,
                                         const std::set<std::string>& signed_vars = {});

// The union of two intervals (exact only when both are and one contains the other by a
// constant offset).
Interval hull(const Interval& a, const Interval& b);

}  // namespace kf::lowering
