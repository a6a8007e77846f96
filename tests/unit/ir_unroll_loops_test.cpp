// unroll_loops: constant-extent loops marked unrolled become copies of their body.
#include <gtest/gtest.h>

#include "ir/ir_printer.h"
#include "ir/unroll_loops.h"
#include "unit/ir_test_kernels.h"
#include "unit/ir_test_util.h"

namespace kf::ir {
namespace {

using namespace testing_ir;

TEST(UnrollLoops, ReplicatesTheBody) {
  Expr ii = ivar("ii"), j = ivar("j");
  Stmt s =
      For::make("ii", i64(2), i64(3), ForKind::unrolled, Store::make("acc", ii * 16 + j, f32(0)));
  EXPECT_EQ(to_string(unroll_loops(s)),
            "acc[j + 32] = 0.0f\n"
            "acc[j + 48] = 0.0f\n"
            "acc[j + 64] = 0.0f\n");
}

TEST(UnrollLoops, NestedLoopsAndOtherKindsKept) {
  Expr a = ivar("a"), b = ivar("b"), k = ivar("k");
  Stmt s = For::make(
      "k", i64(0), ivar("K"), ForKind::serial,
      For::make("a", i64(0), i64(2), ForKind::unrolled,
                For::make("b", i64(0), i64(2), ForKind::unrolled,
                          Store::make("c", a * 2 + b, fload("c", a * 2 + b) + fload("x", k)))));
  expect_checks(to_string(unroll_loops(s)),
                {"for (k, 0, K) {\n", "  c[0] = c[0] + x[k]\n", "  c[1] = c[1] + x[k]\n",
                 "  c[2] = c[2] + x[k]\n", "  c[3] = c[3] + x[k]\n", "}\n"});
}

TEST(UnrollLoops, NonConstantExtentBecomesSerial) {
  Stmt s =
      For::make("u", i64(0), ivar("n"), ForKind::unrolled, Store::make("y", ivar("u"), f32(1)));
  EXPECT_EQ(to_string(unroll_loops(s)), "for (u, 0, n) {\n  y[u] = 1.0f\n}\n");
}

TEST(UnrollLoops, TiledGemmHasNoUnrolledLoopsLeft) {
  std::string text = to_string(unroll_loops(simplify(tiled_gemm_body())));
  EXPECT_EQ(text.find("unrolled"), std::string::npos) << text;
  expect_checks(text, {"min(i.base + 3, M - 1)", "if (3 < i.rows) {"});
}

}  // namespace
}  // namespace kf::ir
