#include <gtest/gtest.h>

#include "ir/ir_printer.h"
#include "lower/guards_to_bounds.h"
#include "unit/ir_test_kernels.h"

namespace kf {
namespace {

using ir::Expr;
using ir::ForKind;
using ir::Stmt;
using testing_ir::fload;
using testing_ir::ivar;

// for (c, MIN, 256) { if (GUARD) { acc[0] = acc[0] + x[t*256 + c] } } (+ another statement)
Stmt guarded_loop(Expr guard, ForKind kind = ForKind::serial, bool extra = false,
                  Expr min = ir::i64(0)) {
  const Expr c = ivar("c");
  const Stmt add = ir::Store::make(
      "acc", ir::i64(0), fload("acc", ir::i64(0)) + fload("x", ivar("t") * ir::i64(256) + c));
  Stmt body = ir::IfThenElse::make(guard, add);
  if (extra) body = ir::Block::make({body, ir::Store::make("y", c, ir::f32(0))});
  return ir::For::make("c", min, ir::i64(256), kind, body);
}

std::string bounded(const Stmt& s) {
  return ir::to_string(lowering::guards_to_bounds(s));
}

TEST(GuardsToBounds, AGuardOnTheLoopVariableBecomesItsBound) {
  // t*256 + c < N: c runs to N - t*256 (never below 0, never past 256); the guard is gone.
  const std::string out =
      bounded(guarded_loop(ir::lt(ivar("t") * ir::i64(256) + ivar("c"), ivar("N"))));
  EXPECT_NE(out.find("for (c, 0, min(256, max(N - t*256, 0)))"), std::string::npos) << out;
  EXPECT_EQ(out.find("if ("), std::string::npos) << out;
  // A parallel loop keeps its kind; a loop starting at 4 subtracts its start.
  const std::string par =
      bounded(guarded_loop(ir::lt(ivar("c") + ivar("t"), ivar("N")), ForKind::parallel));
  EXPECT_NE(par.find("parallel for (c, 0, min(256, max(N - t, 0)))"), std::string::npos) << par;
  const std::string from4 =
      bounded(guarded_loop(ir::lt(ivar("c"), ivar("N")), ForKind::serial, false, ir::i64(4)));
  EXPECT_NE(from4.find("for (c, 4, min(256, max(N - 4, 0)))"), std::string::npos) << from4;
}

TEST(GuardsToBounds, LeavesEveryOtherShapeAlone) {
  const Expr c = ivar("c"), n = ivar("N");
  // The variable scaled (c*2 < N): not a prefix of the iterations by subtraction alone.
  EXPECT_NE(bounded(guarded_loop(ir::lt(c * ir::i64(2), n))).find("if ("), std::string::npos);
  // Negated (N - c < 8: a suffix passes, not a prefix).
  EXPECT_NE(bounded(guarded_loop(ir::lt(n - c, ir::i64(8)))).find("if ("), std::string::npos);
  // A limit that reads the variable, another comparison, or more than the guard in the body.
  EXPECT_NE(bounded(guarded_loop(ir::lt(c, n - c))).find("if ("), std::string::npos);
  EXPECT_NE(bounded(guarded_loop(ir::le(c, n))).find("if ("), std::string::npos);
  EXPECT_NE(bounded(guarded_loop(ir::lt(c, n), ForKind::serial, true)).find("if ("),
            std::string::npos);
}

}  // namespace
}  // namespace kf
