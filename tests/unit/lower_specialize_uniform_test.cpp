// specialize_uniform's lowering (lower/specialize_uniform.h) on hand-built loops: which reads
// it merges, the test it puts in front, and the shapes it leaves alone.
#include <gtest/gtest.h>

#include "ir/ir_printer.h"
#include "lower/specialize_uniform.h"
#include "unit/ir_test_kernels.h"

namespace kf {
namespace {

using ir::Expr;
using ir::ForKind;
using ir::Stmt;
using testing_ir::fload;
using testing_ir::ivar;

Expr iload(const char* buf, Expr index) {
  return ir::Load::make(ir::Type::i64(), buf, std::move(index));
}

// Row r of a two-row tile at out.m.o: acc[r] = acc[r] + w[grp[out.m.o*2 + r]*K + k].
Stmt row(int r) {
  const Expr first = ivar("out.m.o") * ir::i64(2);
  const Expr g = iload("grp", r == 0 ? first : first + ir::i64(r));
  return ir::Store::make("acc", ir::i64(r),
                         fload("acc", ir::i64(r)) + fload("w", g * ivar("K") + ivar("k")));
}

// for (m.o, 0, M) { for (k, 0, K) { ROWS } }
Stmt tile(Stmt rows, ForKind kind = ForKind::serial, const char* name = "out.m.o") {
  return ir::For::make(name, ir::i64(0), ivar("M"), kind,
                       ir::For::make("k", ir::i64(0), ivar("K"), ForKind::serial, rows));
}

std::string specialized(const Stmt& s) {
  return ir::to_string(lowering::specialize_uniform(s, {"out.m.o"}));
}

TEST(SpecializeUniform, TheRowsOfATileReadOneGroupWhereTheyAgree) {
  const std::string out = specialized(tile(ir::Block::make({row(0), row(1)})));
  // The inner loop must run (its reads are the body's), then the two positions must agree.
  EXPECT_NE(out.find("if (0 < K && grp[out.m.o*2 + 1] == grp[out.m.o*2])"), std::string::npos)
      << out;
  // The specialized body reads the first position for both rows; the other keeps both.
  const size_t els = out.find("} else {");
  ASSERT_NE(els, std::string::npos) << out;
  EXPECT_EQ(out.substr(0, els).find("w[grp[out.m.o*2 + 1]"), std::string::npos) << out;
  EXPECT_NE(out.substr(els).find("w[grp[out.m.o*2 + 1]"), std::string::npos) << out;
  // A parallel loop is specialized the same way.
  EXPECT_NE(
      specialized(tile(ir::Block::make({row(0), row(1)}), ForKind::parallel)).find("} else {"),
      std::string::npos);
}

TEST(SpecializeUniform, LeavesAloneWhatItCannotMerge) {
  const Stmt two = ir::Block::make({row(0), row(1)});
  // An unmarked loop, one position only, a vector loop.
  const Stmt other = tile(two, ForKind::serial, "out.n.o");
  EXPECT_TRUE(lowering::specialize_uniform(other, {"out.m.o"}).same_as(other));
  const Stmt one = tile(row(0));
  EXPECT_TRUE(lowering::specialize_uniform(one, {"out.m.o"}).same_as(one));
  const Stmt vec = tile(two, ForKind::vectorized);
  EXPECT_TRUE(lowering::specialize_uniform(vec, {"out.m.o"}).same_as(vec));
  // The body writes the index tensor: its values may change between the reads.
  const Stmt writes =
      tile(ir::Block::make({row(0), ir::Store::make("grp", ir::i64(0), ir::i64(1)), row(1)}));
  EXPECT_TRUE(lowering::specialize_uniform(writes, {"out.m.o"}).same_as(writes));
  // A read under a condition may be one the body never makes: only the other is a position.
  const Stmt guarded =
      tile(ir::Block::make({row(0), ir::IfThenElse::make(ir::lt(ivar("k"), ivar("E")), row(1))}));
  EXPECT_TRUE(lowering::specialize_uniform(guarded, {"out.m.o"}).same_as(guarded));
  // An index that reads the inner loop's variable cannot be computed before the body.
  const Stmt inner = tile(ir::Block::make(
      {row(0), ir::Store::make("acc", ir::i64(1), fload("w", iload("grp", ivar("k"))))}));
  EXPECT_TRUE(lowering::specialize_uniform(inner, {"out.m.o"}).same_as(inner));
}

TEST(SpecializeUniform, AnAllocatedTensorIsReadWithinItsExtentWhereverTheBodyReadsIt) {
  // grp allocated around the loop (an intermediate): a read under a condition, or in a loop that
  // may not run, is a position too; the test checks each index against the extent instead.
  const Stmt guarded =
      tile(ir::Block::make({row(0), ir::IfThenElse::make(ir::lt(ivar("k"), ivar("E")), row(1))}));
  const Stmt alloc = ir::Allocate::make("grp", ir::Type::i64(), ivar("M") * ir::i64(2),
                                        ir::MemoryKind::heap, guarded);
  const std::string out = specialized(alloc);
  EXPECT_NE(out.find("if (0 <= out.m.o*2 && out.m.o*2 < M*2 && 0 <= out.m.o*2 + 1 && "
                     "out.m.o*2 + 1 < M*2 && grp[out.m.o*2 + 1] == grp[out.m.o*2])"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("0 < K"), std::string::npos) << "no loop needs to run: " << out;
}

TEST(SpecializeUniform, ALoopWhoseExtentTheBodyComputesHidesItsReads) {
  // for (k, 0, len[0]) with len written in the body: the test cannot know the extent before the
  // body, so an input's reads inside that loop are not positions.
  const Stmt inner = ir::For::make("k", ir::i64(0), iload("len", ir::i64(0)), ForKind::serial,
                                   ir::Block::make({row(0), row(1)}));
  const Stmt body = ir::Block::make({ir::Store::make("len", ir::i64(0), ivar("K")), inner});
  const Stmt loop = ir::For::make("out.m.o", ir::i64(0), ivar("M"), ForKind::serial, body);
  EXPECT_TRUE(lowering::specialize_uniform(loop, {"out.m.o"}).same_as(loop));
}

}  // namespace
}  // namespace kf
