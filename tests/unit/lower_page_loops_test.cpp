#include <gtest/gtest.h>

#include "ir/ir_printer.h"
#include "lower/page_loops.h"
#include "unit/ir_test_kernels.h"

namespace kf {
namespace {

using ir::Expr;
using ir::ForKind;
using ir::Stmt;
using testing_ir::fload;
using testing_ir::ivar;

Expr iload(const char* buf, Expr index) {
  return ir::Load::make(ir::Type::i32(), buf, index);
}

// produce STAGE { for (t, 0, n) { s[t] = k[page_table[t / DIVISOR]*PS*D + t % PS*D + d] } }
Stmt paged_read(const char* stage = "s", const char* divisor = "PS", ForKind kind = ForKind::serial,
                Expr min = ir::i64(0)) {
  const Expr t = ivar("t");
  const Expr page = ir::cast(ir::Type::i64(), iload("page_table", t / ivar(divisor)));
  const Expr at = page * ivar("PS") * ivar("D") + (t % ivar("PS")) * ivar("D") + ivar("d");
  const Stmt body = ir::Store::make("s", t, fload("k", at));
  return ir::ProducerConsumer::make(stage, true, ir::For::make("t", min, ivar("n"), kind, body));
}

std::string paged(const Stmt& s, std::set<std::string> stages = {"s"}) {
  return ir::to_string(lowering::page_loops(s, stages, {"PS", "D", "G"}));
}

TEST(PageLoops, ALoopDividedInAGatheredIndexRunsByPages) {
  const std::string out = paged(paged_read());
  EXPECT_NE(out.find("for (t.pg, 0, (n + max(PS, 1) - 1)/max(PS, 1))"), std::string::npos) << out;
  EXPECT_NE(out.find("for (t.in, 0, min(max(PS, 1), n - t.pg*max(PS, 1)))"), std::string::npos)
      << out;
  // The table is read at the page; the row within the page is the inner variable; the store
  // goes where t was.
  EXPECT_NE(out.find("page_table[t.pg]"), std::string::npos) << out;
  EXPECT_NE(out.find("t.in*D"), std::string::npos) << out;
  EXPECT_NE(out.find("s[t.pg*max(PS, 1) + t.in]"), std::string::npos) << out;
  EXPECT_EQ(out.find("/PS"), std::string::npos) << out;
  EXPECT_EQ(out.find("% PS"), std::string::npos) << out;
}

TEST(PageLoops, LeavesAloneWhatItCannotPage) {
  const std::string plain = ir::to_string(paged_read());
  // An unmarked stage; a divisor that is not a dim; a vector or parallel loop; a loop not from 0.
  EXPECT_EQ(paged(paged_read(), {"other"}), plain);
  EXPECT_EQ(paged(paged_read("s", "n")), ir::to_string(paged_read("s", "n")));
  for (ForKind k : {ForKind::parallel, ForKind::vectorized})
    EXPECT_EQ(paged(paged_read("s", "PS", k)), ir::to_string(paged_read("s", "PS", k)));
  EXPECT_EQ(paged(paged_read("s", "PS", ForKind::serial, ir::i64(4))),
            ir::to_string(paged_read("s", "PS", ForKind::serial, ir::i64(4))));
  // A division outside a gathered index (h / G selecting a head) is not a gather.
  const Stmt heads = ir::ProducerConsumer::make(
      "s", true,
      ir::For::make("h", ir::i64(0), ivar("H"), ForKind::serial,
                    ir::Store::make("s", ivar("h"), fload("k", ivar("h") / ivar("G")))));
  EXPECT_EQ(paged(heads), ir::to_string(heads));
}

TEST(PageLoops, ALoopDividedByTwoDimsIsLeftAlone) {
  // t / PS in the table's index and t / G in another gathered index: no single page size.
  const Expr t = ivar("t");
  const Expr a = ir::cast(ir::Type::i64(), iload("page_table", t / ivar("PS")));
  const Expr b = ir::cast(ir::Type::i64(), iload("ids", t / ivar("G")));
  const Stmt s = ir::ProducerConsumer::make(
      "s", true,
      ir::For::make("t", ir::i64(0), ivar("n"), ForKind::serial,
                    ir::Store::make("s", t, fload("k", a) + fload("v", b))));
  EXPECT_EQ(paged(s), ir::to_string(s));
}

}  // namespace
}  // namespace kf
