// The schedule trace: parsing (shape errors with FILE:LINE), canonical text, replay and hash.
#include <gtest/gtest.h>

#include "schedule/trace.h"

namespace kf::sched {
namespace {

TEST(ScheduleTrace, ParsesOnePrimitivePerLineWithComments) {
  auto s = parse_schedule(
      "# gemm\n"
      "split C.i i.o i.i 32   # rows\n"
      "\n"
      "  vectorize   C.j.i 16\n"
      "reorder C j.o i.o i.i j.i\n"
      "vectorize C.j\n",
      "g.sched");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  ASSERT_EQ(s->steps.size(), 4u);
  EXPECT_EQ(s->steps[0].kind, PrimitiveKind::split);
  EXPECT_EQ(s->steps[0].line, 2);
  EXPECT_EQ(s->steps[1].line, 4);
  EXPECT_EQ(s->steps[3].args, (std::vector<std::string>{"C.j"}));
  EXPECT_EQ(s->to_string(),
            "split C.i i.o i.i 32\nvectorize C.j.i 16\nreorder C j.o i.o i.i j.i\nvectorize C.j\n");
}

TEST(ScheduleTrace, CanonicalTextReplaysToTheSameTrace) {
  auto a = parse_schedule("split C.i i.o i.i 32\n# x\ncompute_at ms y.n\n", "a");
  ASSERT_TRUE(a.has_value());
  auto b = parse_schedule(a->to_string(), "b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(a->to_string(), b->to_string());
  EXPECT_EQ(a->hash(), b->hash());
}

TEST(ScheduleTrace, HashIgnoresCommentsAndSpacingButNotContent) {
  auto a = parse_schedule("split C.i i.o i.i 32\n", "a");
  auto b = parse_schedule("# comment\n  split   C.i i.o i.i 32  \n\n", "b");
  auto c = parse_schedule("split C.i i.o i.i 16\n", "c");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->hash(), b->hash());
  EXPECT_NE(a->hash(), c->hash());
  EXPECT_EQ(a->hash().size(), 32u);
  EXPECT_NE(Schedule{}.hash(), a->hash());
}

TEST(ScheduleTrace, ErrorsNameFileAndLine) {
  auto s = parse_schedule("split C.i i.o i.i 4\nsplit C.j j.o\n", "x.sched");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().message(),
            "x.sched:2: expected 'split STAGE.LOOP OUTER INNER FACTOR' (4 arguments), got 2");
}

TEST(ScheduleTrace, RejectsBadArguments) {
  EXPECT_EQ(parse_primitive("unroll C").error().message(),
            "expected a loop reference STAGE.LOOP as argument 1 of 'unroll STAGE.LOOP', got 'C'");
  EXPECT_EQ(parse_primitive("compute_at ms y..n").error().message(),
            "expected a loop reference STAGE.LOOP as argument 2 of 'compute_at STAGE TARGET.LOOP', "
            "got 'y..n'");
  EXPECT_EQ(parse_primitive("reorder C i").error().message(),
            "expected 'reorder STAGE LOOP LOOP...' (3 or more arguments), got 2");
  EXPECT_EQ(parse_primitive("vectorize C.j 16 2").error().message(),
            "expected 'vectorize STAGE.LOOP [LANES]' (1-2 arguments), got 3");
  EXPECT_TRUE(parse_primitive("split C.i i.o i.i -3").has_value());  // checked when applied
}

TEST(ScheduleTrace, LoopReferencesSplitAtTheFirstDot) {
  LoopRef r = split_loop_ref("C_acc.j.i.o");
  EXPECT_EQ(r.stage, "C_acc");
  EXPECT_EQ(r.loop, "j.i.o");
}

}  // namespace
}  // namespace kf::sched
