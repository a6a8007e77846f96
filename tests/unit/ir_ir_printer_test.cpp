// Golden tests of the IR text form.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/ir_printer.h"
#include "unit/ir_test_kernels.h"
#include "unit/ir_test_util.h"

namespace kf::ir {
namespace {

using namespace testing_ir;

TEST(IrPrinter, Precedence) {
  Expr a = ivar("a"), b = ivar("b"), c = ivar("c");
  EXPECT_EQ(to_string(a * b + c), "a*b + c");
  EXPECT_EQ(to_string((a + b) * c), "(a + b)*c");
  EXPECT_EQ(to_string(a - (b + c)), "a - (b + c)");
  EXPECT_EQ(to_string(a - b + c), "a - b + c");
  EXPECT_EQ(to_string(a / (b * c)), "a/(b*c)");
  EXPECT_EQ(to_string(logical_or(logical_and(lt(a, b), ge(b, c)), eq(a, c))),
            "a < b && b >= c || a == c");
  EXPECT_EQ(to_string(logical_not(lt(a, b))), "!(a < b)");
  EXPECT_EQ(to_string(min(a, b + c)), "min(a, b + c)");
}

TEST(IrPrinter, Constants) {
  EXPECT_EQ(to_string(i64(-3)), "-3");
  EXPECT_EQ(to_string(i32(7)), "i32(7)");
  EXPECT_EQ(to_string(f32(0.5)), "0.5f");
  EXPECT_EQ(to_string(f32(2)), "2.0f");
  EXPECT_EQ(to_string(f64(0.1)), "0.1");
  EXPECT_EQ(to_string(FloatImm::make(Type::bf16(), 1.5)), "bf16(1.5)");
  EXPECT_EQ(to_string(bool_imm(true)), "true");
  EXPECT_EQ(to_string(f32(INFINITY)), "inf");
}

TEST(IrPrinter, VectorNodes) {
  Expr r = Ramp::make(ivar("j"), i64(1), 16);
  Expr p = lt(r, Broadcast::make(ivar("n"), 16));
  Expr l = Load::make(Type::f32(16), "A", r, p);
  EXPECT_EQ(to_string(l), "A[ramp(j, 1, 16)] if (ramp(j, 1, 16) < x16(n))");
  EXPECT_EQ(to_string(VectorReduce::make(ReduceOp::max, Load::make(Type::f32(16), "A", r))),
            "reduce_max(A[ramp(j, 1, 16)])");
  EXPECT_EQ(to_string(Cast::make(Type::f32(16), r)), "f32x16(ramp(j, 1, 16))");
  Expr v = Var::make(Type::f32(), "v");
  EXPECT_EQ(to_string(Let::make("v", f32(2), v * v)), "(let v = 2.0f in v*v)");
  EXPECT_EQ(to_string(select(lt(v, f32(0)), -v, v)), "select(v < 0.0f, 0.0f - v, v)");
  EXPECT_EQ(to_string(Call::make(MathFn::fma, {v, v, v})), "fma(v, v, v)");
}

TEST(IrPrinter, NaiveGemmFunction) {
  LoweredFunc f{"gemm",
                {{"A", ParamKind::input, Type::f32()},
                 {"B", ParamKind::input, Type::f32()},
                 {"C", ParamKind::output, Type::f32()},
                 {"M", ParamKind::dim, Type::i64()},
                 {"N", ParamKind::dim, Type::i64()},
                 {"K", ParamKind::dim, Type::i64()}},
                naive_gemm_body()};
  EXPECT_EQ(to_string(f),
            "func gemm(A: f32* input, B: f32* input, C: f32* output, M: i64, N: i64, K: i64) {\n"
            "  produce C {\n"
            "    parallel for (i, 0, M) {\n"
            "      for (j, 0, N) {\n"
            "        C[i*N + j] = 0.0f\n"
            "        for (k, 0, K) {\n"
            "          C[i*N + j] = C[i*N + j] + A[i*K + k]*B[k*N + j]\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(IrPrinter, StatementForms) {
  Stmt s = Allocate::make(
      "acc", Type::f32(16), i64(4), MemoryKind::stack,
      Block::make(
          {Comment::make("tile"),
           LetStmt::make("t", ivar("i") * 2,
                         IfThenElse::make(lt(ivar("t"), ivar("n")),
                                          Store::make("acc", i64(0), make_zero(Type::f32(16))),
                                          Evaluate::make(i64(0)))),
           ProducerConsumer::make(
               "y", false,
               For::make("u", i64(0), i64(4), ForKind::unrolled, Evaluate::make(ivar("u"))))}));
  expect_checks(to_string(s),
                {"allocate acc: f32x16[4] on stack {\n", "  // tile\n", "  let t = i*2\n",
                 "  if (t < n) {\n", "    acc[0] = x16(0.0f)\n", "  } else {\n",
                 "    evaluate(0)\n", "  consume y {\n", "    unrolled for (u, 0, 4) {\n", "}\n"});
}

}  // namespace
}  // namespace kf::ir
