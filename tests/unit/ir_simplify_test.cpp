// The simplifier: constant folding and value-preserving identities only.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/ir_printer.h"
#include "ir/simplify.h"
#include "unit/ir_test_kernels.h"
#include "unit/ir_test_util.h"

namespace kf::ir {
namespace {

using namespace testing_ir;

std::string s(const Expr& e) {
  return to_string(simplify(e));
}

TEST(Simplify, FoldsIntegerConstants) {
  EXPECT_EQ(s(i64(2) * i64(8) + i64(1)), "17");
  EXPECT_EQ(s(i64(7) / i64(2)), "3");
  EXPECT_EQ(s(i64(-7) / i64(2)), "-3") << "truncating division, as C";
  EXPECT_EQ(s(i64(-7) % i64(2)), "-1");
  EXPECT_EQ(s(min(i64(3), i64(-2))), "-2");
  EXPECT_EQ(s(max(i32(3), i32(9))), "i32(9)");
  EXPECT_EQ(s(i64(1) / i64(0)), "1/0") << "division by zero is left alone";
  EXPECT_EQ(s(lt(i64(1), i64(2))), "true");
  EXPECT_EQ(s(logical_and(bool_imm(true), lt(ivar("a"), ivar("b")))), "a < b");
  EXPECT_EQ(s(logical_not(bool_imm(false))), "true");
  EXPECT_EQ(s(i32(2147483647) + i32(1)), "i32(-2147483648)") << "wraps like int32_t";
}

TEST(Simplify, IntegerIdentitiesAndReassociation) {
  Expr x = ivar("x");
  EXPECT_EQ(s(x + 0), "x");
  EXPECT_EQ(s(i64(0) + x), "x");
  EXPECT_EQ(s(x * 1), "x");
  EXPECT_EQ(s(x * 0), "0");
  EXPECT_EQ(s(x / 1), "x");
  EXPECT_EQ(s(x % 1), "0");
  EXPECT_EQ(s(i64(2) * i64(8) + x), "x + 16") << "constants move right";
  EXPECT_EQ(s((x + 3) + 4), "x + 7");
  EXPECT_EQ(s((x - 3) + 4), "x + 1");
  EXPECT_EQ(s((x + 3) - 4), "x + -1");
}

TEST(Simplify, FloatsOnlyExactIdentities) {
  Expr x = Var::make(Type::f32(), "x");
  EXPECT_EQ(s(f32(0.5) * f32(4)), "2.0f");
  EXPECT_EQ(s(f32(1) / f32(3)), to_string(f32(1.0f / 3.0f)));
  EXPECT_EQ(s(x * 1.0), "x");
  EXPECT_EQ(s(x - 0.0), "x");
  EXPECT_EQ(s(x / 1.0), "x");
  EXPECT_EQ(s(x + 0.0), "x + 0.0f") << "-0 + 0 is +0: not an identity";
  EXPECT_EQ(s(x * 0.0), "x*0.0f") << "NaN * 0 is NaN: not an identity";
  EXPECT_EQ(s(cast(Type::f32(), i64(3))), "3.0f");
  EXPECT_EQ(s(cast(Type::i32(), f64(-2.7))), "i32(-2)");
  EXPECT_EQ(s(FloatImm::make(Type::bf16(), 1) / FloatImm::make(Type::bf16(), 3)),
            "bf16(0.333984375)");
}

TEST(Simplify, VectorsFoldIntoRampsAndBroadcasts) {
  Expr j = ivar("j"), base = ivar("b");
  Expr r = Ramp::make(j, i64(1), 16);
  EXPECT_EQ(s(r + Broadcast::make(base * 4, 16)), "ramp(j + b*4, 1, 16)");
  EXPECT_EQ(s(Broadcast::make(base, 16) + r), "ramp(b + j, 1, 16)");
  EXPECT_EQ(s(r * Broadcast::make(i64(2), 16)), "ramp(j*2, 2, 16)");
  EXPECT_EQ(s(Broadcast::make(i64(2), 16) * Broadcast::make(i64(3), 16)), "x16(6)");
  EXPECT_EQ(s(Ramp::make(i64(0), i64(1), 4) - Ramp::make(i64(0), i64(1), 4)), "ramp(0, 0, 4)");
  EXPECT_EQ(s(VectorReduce::make(ReduceOp::max, Broadcast::make(Var::make(Type::f32(), "x"), 8))),
            "x");
}

TEST(Simplify, SelectsAndLets) {
  Expr a = ivar("a"), b = ivar("b");
  EXPECT_EQ(s(select(bool_imm(true), a, b)), "a");
  EXPECT_EQ(s(Let::make("t", i64(3), ivar("t") * a)), "a*3");
  EXPECT_EQ(s(Let::make("t", a * b, b)), "b") << "unused let";
  EXPECT_EQ(s(Let::make("t", a * b, ivar("t") + ivar("t"))), "(let t = a*b in t + t)");
}

TEST(Simplify, Statements) {
  Expr i = ivar("i"), n = ivar("n");
  Stmt st = Store::make("y", i, f32(1));
  EXPECT_EQ(to_string(simplify(For::make("i", i64(0), i64(0), ForKind::serial, st))), "");
  EXPECT_EQ(to_string(simplify(For::make("i", i64(5), i64(1), ForKind::parallel, st))),
            "y[5] = 1.0f\n");
  EXPECT_EQ(to_string(simplify(IfThenElse::make(lt(i64(1), i64(2)), st, Evaluate::make(i)))),
            "y[i] = 1.0f\n");
  EXPECT_EQ(to_string(simplify(IfThenElse::make(gt(i64(1), i64(2)), st))), "");
  EXPECT_EQ(to_string(simplify(Store::make("y", i, f32(1), bool_imm(false)))), "");
  EXPECT_EQ(to_string(simplify(Store::make("y", Ramp::make(i, i64(1), 4), make_zero(Type::f32(4)),
                                           make_const(Type::boolean(4), 1)))),
            "y[ramp(i, 1, 4)] = x4(0.0f)\n");
  EXPECT_EQ(to_string(simplify(LetStmt::make("t", n, Store::make("y", ivar("t"), f32(0))))),
            "y[n] = 0.0f\n");
  EXPECT_EQ(to_string(simplify(LetStmt::make("t", n * 2, st))), "y[i] = 1.0f\n") << "unused";
  Stmt empty_loop =
      For::make("i", i64(0), n, ForKind::serial, IfThenElse::make(bool_imm(false), st));
  EXPECT_EQ(to_string(simplify(ProducerConsumer::make("y", true, empty_loop))), "");
  Stmt keep = For::make("i", i64(0), n + 0, ForKind::serial, st);
  expect_checks(to_string(simplify(keep)), {"for (i, 0, n) {", "y[i] = 1.0f"});
}

TEST(Simplify, IsIdempotentOnTheTestKernels) {
  for (const Stmt& k : {naive_gemm_body(), tiled_gemm_body(), rmsnorm_body()}) {
    Stmt once = simplify(k);
    EXPECT_EQ(to_string(simplify(once)), to_string(once));
  }
}

}  // namespace
}  // namespace kf::ir
