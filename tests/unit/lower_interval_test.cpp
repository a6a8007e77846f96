// Interval arithmetic and linear simplification for bounds inference.
#include <gtest/gtest.h>

#include "ir/ir_printer.h"
#include "lower/interval.h"

namespace kf::lowering {
namespace {

using ir::Expr;

Expr v(const std::string& n) {
  return ir::Var::make(ir::Type::i64(), n);
}

TEST(Interval, AffineIndexOverASplit) {
  Scope s = {{"ii", {ir::i64(0), ir::i64(5), true}}};
  Interval r = bounds_of(v("io") * 6 + v("ii"), s);
  ASSERT_TRUE(r.bounded());
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(ir::to_string(simplify_linear(r.max - r.min + ir::i64(1))), "6");
}

TEST(Interval, StencilReadsWidenByTheFilter) {
  Scope s = {{"q", {ir::i64(0), v("Q") - 1, true}}, {"s", {ir::i64(0), v("S") - 1, true}}};
  Interval r = bounds_of(v("q") + v("s"), s);
  EXPECT_EQ(ir::to_string(simplify_linear(r.max - r.min + ir::i64(1))), "Q + S - 1");
}

TEST(Interval, GathersAreUnbounded) {
  Expr idx = ir::Load::make(ir::Type::i64(), "ids", v("t"));
  EXPECT_FALSE(bounds_of(idx * 4, {}).bounded());
}

TEST(Interval, AnInvariantReadAtAFixedIndexIsAValue) {
  // lens[n] with n fixed: a point, which bounds a range `t in 0..lens[n]`.
  Expr len = ir::cast(ir::Type::i64(), ir::Load::make(ir::Type::i32(), "lens", v("n")));
  Interval r = bounds_of(len - 1, {}, {"lens"});
  ASSERT_TRUE(r.bounded());
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(ir::to_string(r.max), "i64(lens[n]) - 1");
  // Not a point: n ranges. Not invariant: a buffer the kernel writes.
  Scope s = {{"n", {ir::i64(0), ir::i64(3), true}}};
  EXPECT_FALSE(bounds_of(len, s, {"lens"}).bounded());
  EXPECT_FALSE(bounds_of(len, {}, {"ids"}).bounded());
  // Predicated (a guarded read) and float loads stay unbounded.
  Expr guarded = ir::Load::make(ir::Type::i32(), "lens", v("n"), ir::lt(v("n"), v("N")));
  EXPECT_FALSE(bounds_of(ir::cast(ir::Type::i64(), guarded), {}, {"lens"}).bounded());
}

TEST(Interval, MinMaxAndModAreInexact) {
  Scope s = {{"x", {ir::i64(0), ir::i64(9), true}}};
  EXPECT_FALSE(bounds_of(ir::min(v("x"), ir::i64(3)), s).exact);
  Interval m = bounds_of(v("x") % 4, s);
  EXPECT_FALSE(m.exact);
  EXPECT_EQ(ir::to_string(m.max), "3");
}

TEST(Interval, LinearSimplificationCancelsTerms) {
  Expr e = (v("io") * 6 + ir::min(ir::i64(6), v("M") - v("io") * 6) - 1) - v("io") * 6 + 1;
  EXPECT_EQ(ir::to_string(simplify_linear(e)), "min(6, M - io*6)");
  EXPECT_EQ(const_upper_bound(simplify_linear(e)), 6);
}

TEST(Interval, ConstantBounds) {
  EXPECT_EQ(const_lower_bound(v("i") * 4 + 3), 3);
  EXPECT_EQ(const_lower_bound(v("i") - 1), -1);
  EXPECT_FALSE(const_lower_bound(ir::i64(0) - v("i")).has_value());
  EXPECT_FALSE(const_lower_bound(v("s"), {"s"}).has_value());
  EXPECT_EQ(const_upper_bound((v("n") % 8) * 2), 14);
}

TEST(Interval, HullOfReadsAtAConstantOffset) {
  Interval a{v("x"), v("x") + 3, true}, b{v("x") + 1, v("x") + 4, true};
  Interval h = hull(a, b);
  EXPECT_EQ(ir::to_string(simplify_linear(h.max - h.min + ir::i64(1))), "5");
}

}  // namespace
}  // namespace kf::lowering
