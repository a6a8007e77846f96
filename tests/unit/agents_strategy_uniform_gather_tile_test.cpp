// uniform_gather_tile, a strategy as a unit (agents/builtin/strategies/uniform_gather_tile.cpp):
// its move marks the loop that carries a gathering register tile and nothing else, the kernel
// passes the judge, and the planner proposes it once the tile is there, and not again.
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

constexpr const char* kGrouped = "bench/jaxbench/14_ragged_dot";

TEST(UniformGatherTile, IsInTheCatalogWithMovesAndARule) {
  EXPECT_TRUE(planner_test::unit_knobs("uniform_gather_tile").empty());
}

TEST(UniformGatherTile, MarksTheTileLoopOfAGatheringTileAndNothingElse) {
  const Task t = testing::task_at(kGrouped);
  // Before the register tile there is no tile loop to mark.
  EXPECT_TRUE(propose("uniform_gather_tile", testing::pipeline_of(t)).empty());
  const std::vector<std::string> tiled =
      propose("uniform_gather_tile",
              moves_test::scheduled(t,
                                    "cache_write out out_acc\nsplit out.m m.o m.i 6\n"
                                    "unroll out.m.i\ncompute_at out_acc out.m.o\n"
                                    "unroll out_acc.m\n"));
  ASSERT_EQ(tiled.size(), 1u) << ::testing::PrintToString(tiled);
  EXPECT_EQ(tiled[0], "out: specialize_uniform out.m.o");
  // A dense GEMM's tile reads no index: nothing to specialize.
  const Task gemm = testing::task_at("bench/jaxbench/08_gemm");
  EXPECT_TRUE(propose("uniform_gather_tile",
                      moves_test::scheduled(gemm,
                                            "cache_write C C_acc\nsplit C.i i.o i.i 6\n"
                                            "unroll C.i.i\ncompute_at C_acc C.i.o\n"
                                            "unroll C_acc.i\n"))
                  .empty());
}

TEST(UniformGatherTile, TheSpecializedGroupedGemmPassesTheJudge) {
  const CompiledTask task = testing::compiled_at(kGrouped);
  const WorkContext in{.task = &task, .best = nullptr, .ctx = {}, .compile = {}};
  auto c = generate(recipe_of({"register_block", "uniform_gather_tile"}), in,
                    "builtin:uniform_gather_tile");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_NE(c->generated->schedule.find("specialize_uniform out.m.o"), std::string::npos)
      << c->generated->schedule;
  EXPECT_NE(c->source.find("== grp[out_m_o * 6]"), std::string::npos);
  EXPECT_EQ(testing::judge(task.task, c->source), "ok");
}

TEST(UniformGatherTile, ThePlannerProposesItOnceTheTileIsThere) {
  Scenario untiled(kGrouped, recipe_of({}));
  EXPECT_NE(untiled.plan_until("uniform_gather_tile", evidence("compute", 0.5)).strategy,
            "uniform_gather_tile");
  Scenario tiled(kGrouped, recipe_of({"register_block"}));
  const Plan p = tiled.plan_until("uniform_gather_tile", evidence("compute", 0.5));
  EXPECT_EQ(p.strategy, "uniform_gather_tile") << p.why;
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.3);
  EXPECT_NE(p.why.find("1 register tiles read their operand through a per-row index"),
            std::string::npos)
      << p.why;
  // Weighed by the time per stage, the mark counts the tile's accumulator computed inside the
  // loop, not only the copy-out loops of the stage the loop belongs to.
  Evidence timed = evidence("compute", 0.5);
  timed.stage_shares = {{"out", 0.96}, {"grp", 0.02}, {"end", 0.02}};
  const Plan weighed = tiled.plan_until("uniform_gather_tile", timed);
  EXPECT_EQ(weighed.strategy, "uniform_gather_tile") << weighed.why;
  EXPECT_NE(weighed.why.find("96% of the time is in the stages it changes (out)"),
            std::string::npos)
      << weighed.why;
  EXPECT_GT(weighed.expected_speedup, 1.25);
  Scenario marked(kGrouped, recipe_of({"register_block", "uniform_gather_tile"}));
  EXPECT_NE(marked.plan_until("uniform_gather_tile", evidence("compute", 0.5)).strategy,
            "uniform_gather_tile");
}

}  // namespace
}  // namespace kf::agents::builtin
