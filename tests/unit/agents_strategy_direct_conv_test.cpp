// direct_conv_blocking, the strategy that is a unit of its own
// (agents/builtin/strategies/direct_conv_blocking.cpp): its moves tile a convolution and nothing
// else, the tile it builds passes the judge, and the planner proposes it from the unit's rule.
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

constexpr const char* kConv = "bench/jaxbench/18_conv2d_relu_biasadd";

TEST(DirectConvBlocking, IsInTheCatalogWithMovesAndARule) {
  EXPECT_EQ(planner_test::unit_knobs("direct_conv_blocking")["mr"], 8);
}

TEST(DirectConvBlocking, TilesTheConvolutionAndNothingElse) {
  const Task conv = testing::task_at(kConv);
  const std::vector<std::string> groups =
      propose("direct_conv_blocking", testing::pipeline_of(conv));
  ASSERT_EQ(groups.size(), 1u);
  // The convolution z_r is computed per tile of its epilogue y: output channels (k) by vectors
  // of output columns (q), with the bias and relu applied in registers.
  EXPECT_TRUE(groups[0].starts_with("z_r: compute_inline z")) << groups[0];
  EXPECT_NE(groups[0].find("compute_at z_r y.k.o"), std::string::npos) << groups[0];
  EXPECT_NE(groups[0].find("vectorize z_r.q 16"), std::string::npos) << groups[0];
  EXPECT_NE(groups[0].find("split y.q q.o q.i 32"), std::string::npos) << "32 columns wide";
  // register_block_epilogue's tile, with the unit's own default width.
  EXPECT_NE(groups, propose("register_block_epilogue", testing::pipeline_of(conv)));
  EXPECT_EQ(groups, propose("register_block_epilogue", testing::pipeline_of(conv), 1,
                            {{"mr", 8}, {"nr", 32}}));
  // A GEMM with an epilogue reads no input through a sliding window.
  const Task gemm = testing::task_at("bench/jaxbench/41_gemm_add_relu");
  EXPECT_TRUE(propose("direct_conv_blocking", testing::pipeline_of(gemm)).empty());
  EXPECT_FALSE(propose("register_block_epilogue", testing::pipeline_of(gemm)).empty());
}

TEST(DirectConvBlocking, TheTiledConvolutionPassesTheJudge) {
  const CompiledTask task = testing::compiled_at(kConv);
  const WorkContext in{.task = &task, .best = nullptr, .ctx = {}, .compile = {}};
  auto c = generate(recipe_of({"direct_conv_blocking"}), in, "builtin:direct_conv_blocking");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_NE(c->generated->schedule.find("compute_at z_r y.k.o"), std::string::npos);
  EXPECT_EQ(testing::judge(task.task, c->source), "ok");
}

TEST(DirectConvBlocking, ThePlannerProposesItFromTheUnitsRule) {
  Scenario conv(kConv, recipe_of({}));
  const Plan first = conv.plan(evidence("compute", 0.05));
  EXPECT_EQ(first.strategy, "register_block_epilogue");
  ASSERT_FALSE(first.alternatives.empty());
  EXPECT_EQ(first.alternatives[0], "register_block (~8.0x)") << "the GEMM tiles rank first";
  // Once the strategies above it are tried, it is the plan, with the unit's reason.
  const Plan later = conv.plan_until("direct_conv_blocking", evidence("compute", 0.05));
  EXPECT_EQ(later.strategy, "direct_conv_blocking") << later.why;
  EXPECT_DOUBLE_EQ(later.expected_speedup, 7.5);
  EXPECT_NE(later.why.find("1 convolutions accumulate in memory"), std::string::npos) << later.why;
  // Memory-bound, or once tiled, it is not proposed.
  EXPECT_NE(conv.plan_until("direct_conv_blocking", evidence("memory", 0.05)).strategy,
            "direct_conv_blocking");
  Scenario tiled(kConv, recipe_of({"direct_conv_blocking"}));
  EXPECT_NE(tiled.plan_until("direct_conv_blocking", evidence("compute", 0.05)).strategy,
            "direct_conv_blocking");
}

}  // namespace
}  // namespace kf::agents::builtin
