// masked_row_tile, a strategy as a unit (agents/builtin/strategies/masked_row_tile.cpp): its
// moves tile a row's moving-range reduction (causal attention's P @ V) and nothing else, the
// kernel they build passes the judge, and the planner proposes it once the reduction's producers
// are computed per row.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agents/judge.h"
#include "moves_test_util.h"
#include "planner_test_util.h"

namespace kf::agents::builtin {
namespace {

using moves_test::propose;
using planner_test::evidence;
using planner_test::recipe_of;
using planner_test::Scenario;

constexpr const char* kAttention = "bench/jaxbench/01_flash_attention";

TEST(MaskedRowTile, IsInTheCatalogWithMovesAndARule) {
  const Knobs k = planner_test::unit_knobs("masked_row_tile");
  EXPECT_EQ(k.count("cols") ? k.at("cols") : 0, 64);
  EXPECT_EQ(k.count("rows") ? k.at("rows") : 0, 8);
}

TEST(MaskedRowTile, TilesTheCausalProductAndNothingElse) {
  const Task t = testing::task_at(kAttention);
  const std::vector<std::string> groups = propose("masked_row_tile", testing::pipeline_of(t));
  ASSERT_EQ(groups.size(), 1u) << ::testing::PrintToString(groups);
  // Eight rows by 64 columns: each key's values are loaded once for the eight rows.
  EXPECT_EQ(groups[0],
            "o: split o.d d.o d.i 64 | split o.i i.o i.i 8 | reorder o i.o d.o i.i d.i | "
            "vectorize o.d.i 16 | mask_range o o_m | compute_at o_m o.d.o | reorder o_m b h j i "
            "d | split o_m.d d.o d.i 16 | vectorize o_m.d.i 16 | unroll o_m.d.o | unroll o_m.i");
  // One row: the tile is the row's vectors.
  EXPECT_EQ(propose("masked_row_tile", testing::pipeline_of(t), 1,
                    {{"rows", 1}, {"cols", 32}, {"lanes", 8}})[0],
            "o: split o.d d.o d.i 32 | vectorize o.d.i 8 | mask_range o o_m | reorder o_m b h i "
            "j d | split o_m.d d.o d.i 8 | vectorize o_m.d.i 8 | unroll o_m.d.o");
  // The producers computed per row move to the block of rows: out to the head's loop producers
  // first, back in consumers first.
  const std::vector<std::string> fused = propose(
      "masked_row_tile",
      moves_test::scheduled(t, "compute_at den o.i\ncompute_at pe o.i\ncompute_at m o.i\n"));
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_TRUE(
      fused[0].starts_with("o: compute_at m o.h | compute_at pe o.h | compute_at den o.h | "))
      << fused[0];
  EXPECT_NE(fused[0].find("compute_at den o.i.o | compute_at pe o.i.o | compute_at m o.i.o"),
            std::string::npos)
      << fused[0];
  // A GEMM's reductions have static ranges; a softmax's row statistics are whole definitions
  // with nothing to tile along the row.
  for (const char* other : {"bench/jaxbench/08_gemm", "bench/jaxbench/13_cross_entropy"})
    EXPECT_TRUE(propose("masked_row_tile", testing::pipeline_of(testing::task_at(other))).empty())
        << other;
}

TEST(MaskedRowTile, TheTiledAttentionPassesTheJudge) {
  const CompiledTask task = testing::compiled_at(kAttention);
  const WorkContext in{.task = &task, .best = nullptr, .ctx = {}, .compile = {}};
  auto c = generate(recipe_of({"fuse_into_consumer", "vectorize_inner", "masked_row_tile"}), in,
                    "builtin:masked_row_tile");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_NE(c->generated->schedule.find("mask_range o o_m"), std::string::npos)
      << c->generated->schedule;
  EXPECT_NE(c->generated->schedule.find("split o.i i.o i.i 8"), std::string::npos)
      << c->generated->schedule;
  EXPECT_EQ(testing::judge(task.task, c->source), "ok");
}

TEST(MaskedRowTile, ThePlannerProposesItOnceTheProducersRunPerRow) {
  // Before fusion the scores are computed whole: the product's loop is not what is left.
  Scenario unfused(kAttention, recipe_of({}));
  EXPECT_NE(unfused.plan_until("masked_row_tile", evidence("compute", 0.3)).strategy,
            "masked_row_tile");
  Scenario fused(kAttention, recipe_of({"fuse_into_consumer", "vectorize_inner"}));
  const Plan p = fused.plan_until("masked_row_tile", evidence("compute", 0.3));
  EXPECT_EQ(p.strategy, "masked_row_tile") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.3);
  EXPECT_NE(p.why.find("1 reductions over a range that moves with the row"), std::string::npos)
      << p.why;
  // Once tiled, the reduction is a stage with a static range: not proposed again.
  Scenario tiled(kAttention,
                 recipe_of({"fuse_into_consumer", "vectorize_inner", "masked_row_tile"}));
  EXPECT_NE(tiled.plan_until("masked_row_tile", evidence("compute", 0.3)).strategy,
            "masked_row_tile");
}

}  // namespace
}  // namespace kf::agents::builtin
