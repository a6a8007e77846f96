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

// for (j, 0, S) { for (ii, 0, 4) { [let k = ii] if (j < io*4 + ii + 1) { y[...] = ... } } }: a
// block of four causal rows (mask_range's predicate after split and reorder).
Stmt row_block(bool also_unguarded, bool through_let) {
  const Expr j = ivar("j"), ii = ivar("ii"), io = ivar("io");
  const Expr row = through_let ? ivar("k") : ii;
  Stmt st = ir::IfThenElse::make(ir::lt(j, io * ir::i64(4) + row + ir::i64(1)),
                                 ir::Store::make("y", row, fload("y", row) + fload("x", j)));
  if (through_let) st = ir::LetStmt::make("k", ii, st);
  if (also_unguarded) st = ir::Block::make({st, ir::Store::make("z", j, ir::f32(0))});
  return ir::For::make("j", ir::i64(0), ivar("S"), ForKind::serial,
                       ir::For::make("ii", ir::i64(0), ir::i64(4), ForKind::unrolled, st));
}

TEST(GuardsToBounds, AGuardUnderInnerLoopsBoundsTheLoopByItsLargestLimit) {
  // j runs to the last row's limit, io*4 + 4; each row keeps its guard (it moves with ii).
  for (bool through_let : {false, true}) {
    const std::string out = bounded(row_block(false, through_let));
    EXPECT_NE(out.find("for (j, 0, min(S, max(io*4 + 4, 0)))"), std::string::npos) << out;
    EXPECT_NE(out.find("if (j < "), std::string::npos) << out;
  }
  // A store outside every guard runs on every iteration: the loop keeps its range.
  const std::string out = bounded(row_block(true, false));
  EXPECT_NE(out.find("for (j, 0, S)"), std::string::npos) << out;
}

TEST(GuardsToBounds, TheSameLimitUnderSeveralGuardsIsDroppedEverywhere) {
  // A vector tail guards its own copy of the statement with the same predicate.
  const Expr j = ivar("j"), i = ivar("i");
  const Expr g = ir::lt(j, i + ir::i64(1));
  const Stmt body = ir::Block::make(
      {ir::IfThenElse::make(g, ir::Store::make("y", ir::i64(0), fload("x", j))),
       ir::LetStmt::make("t", ir::i64(3),
                         ir::IfThenElse::make(g, ir::Store::make("y", ivar("t"), fload("x", j))))});
  const std::string out = bounded(ir::For::make("j", ir::i64(0), ivar("S"), ForKind::serial, body));
  EXPECT_NE(out.find("for (j, 0, min(S, max(i + 1, 0)))"), std::string::npos) << out;
  EXPECT_EQ(out.find("if ("), std::string::npos) << out;
}

TEST(GuardsToBounds, AnInnerRangeThatMovesWithTheLoopLeavesItAlone) {
  // for (j, 0, S) { for (u, j, 4) { if (j < u + 1) ... } } (u from j, four iterations): the
  // limit's largest value, j + 4, reads j.
  const Expr j = ivar("j"), u = ivar("u");
  const Stmt inner = ir::For::make(
      "u", j, ir::i64(4), ForKind::serial,
      ir::IfThenElse::make(ir::lt(j, u + ir::i64(1)), ir::Store::make("y", u, fload("x", j))));
  const std::string out =
      bounded(ir::For::make("j", ir::i64(0), ivar("S"), ForKind::serial, inner));
  EXPECT_NE(out.find("for (j, 0, S)"), std::string::npos) << out;
}

TEST(GuardsToBounds, ALowerLimitStartsTheLoopAndBothSidesDrop) {
  // A sliding window's row: max(0, i - W + 1) <= j && j < i + 1 over j in 0..S.
  const Expr j = ivar("j"), i = ivar("i");
  const Expr lo = ir::max(ir::i64(0), i - ivar("W") + ir::i64(1));
  const Stmt body = ir::IfThenElse::make(ir::logical_and(ir::le(lo, j), ir::lt(j, i + ir::i64(1))),
                                         ir::Store::make("y", ir::i64(0), fload("x", j)));
  const std::string out = bounded(ir::For::make("j", ir::i64(0), ivar("S"), ForKind::serial, body));
  EXPECT_NE(out.find("for (j, max(0, i - W + 1), max(min(S, i + 1) - max(0, i - W + 1), 0))"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("if ("), std::string::npos) << out;
  // One guard side only, with the other condition beside it: that condition stays.
  const Stmt half =
      ir::IfThenElse::make(ir::logical_and(ir::le(lo, j), ir::lt(ivar("c"), ir::i64(3))),
                           ir::Store::make("y", ir::i64(0), fload("x", j)));
  const std::string out2 =
      bounded(ir::For::make("j", ir::i64(0), ivar("S"), ForKind::serial, half));
  EXPECT_NE(out2.find("for (j, max(0, i - W + 1), max(S - max(0, i - W + 1), 0))"),
            std::string::npos)
      << out2;
  EXPECT_NE(out2.find("if (c < 3)"), std::string::npos) << out2;
}

}  // namespace
}  // namespace kf
