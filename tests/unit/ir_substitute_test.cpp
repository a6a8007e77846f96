// substitute and the uses queries.
#include <gtest/gtest.h>

#include "ir/ir_printer.h"
#include "ir/substitute.h"
#include "unit/ir_test_kernels.h"

namespace kf::ir {
namespace {

using namespace testing_ir;

TEST(Substitute, ReplacesFreeOccurrences) {
  Expr i = ivar("i"), j = ivar("j");
  EXPECT_EQ(to_string(substitute("i", j + 1, i * i)), "(j + 1)*(j + 1)");
  Stmt s = Store::make("y", i, fload("x", i + j));
  EXPECT_EQ(to_string(substitute("i", i64(3), s)), "y[3] = x[3 + j]\n");
  EXPECT_EQ(to_string(substitute({{"i", i64(1)}, {"j", i64(2)}}, s)), "y[1] = x[1 + 2]\n");
}

TEST(Substitute, StopsAtRebindings) {
  Expr i = ivar("i");
  Stmt loop = For::make("i", i, i64(4), ForKind::serial, Store::make("y", i, f32(0)));
  EXPECT_EQ(to_string(substitute("i", i64(7), loop)), "for (i, 7, 4) {\n  y[i] = 0.0f\n}\n");
  Expr let = Let::make("i", i + 1, i * 2);
  EXPECT_EQ(to_string(substitute("i", i64(5), let)), "(let i = 5 + 1 in i*2)");
}

TEST(Substitute, Uses) {
  Stmt s = naive_gemm_body();
  EXPECT_TRUE(stmt_uses_var(s, "K"));
  EXPECT_FALSE(stmt_uses_var(s, "D"));
  EXPECT_TRUE(stmt_uses_buffer(s, "C"));
  EXPECT_FALSE(stmt_uses_buffer(s, "y"));
  EXPECT_TRUE(expr_uses_var(ivar("a") + ivar("b"), "b"));
}

}  // namespace
}  // namespace kf::ir
