// The stages lowering schedules: a TE program normalized so every reduction can be scheduled.
#include <gtest/gtest.h>

#include "lower_test_util.h"
#include "schedule/pipeline.h"

namespace kf::sched {
namespace {

using testing::pipeline_of;
using testing::task_at;

TEST(SchedulePipeline, GemmIsOneReductionStage) {
  Task task = task_at("bench/jaxbench/08_gemm");
  Pipeline p = pipeline_of(task);
  EXPECT_EQ(p.to_string(),
            "stage C[i in 0..M, j in 0..N] = sum(k in 0..K: (A[i, k] * B[k, j])) -> output 0\n"
            "  loops: i j k\n"
            "  compute: root\n");
}

// Each stage says which primitive made it and from what, as typed fields: what passes and brains
// read (the note is for people).
TEST(SchedulePipeline, StagesSayWhichPrimitiveMadeThem) {
  Task task = task_at("bench/jaxbench/08_gemm");
  Pipeline p = pipeline_of(task);
  const Status st = apply_schedule(p, testing::schedule_of("split C.k k.o k.i 16\n"
                                                           "rfactor C.k.o C_rf\n"
                                                           "cache_write C_rf C_w\n"
                                                           "cache_read B C_w B_p\n"));
  ASSERT_TRUE(st.ok()) << st.message();
  const auto origin = [&](const std::string& name) {
    const Stage& s = p.stages[static_cast<size_t>(p.find(name))];
    return std::string(origin_name(s.origin)) + " " + s.origin_of;
  };
  EXPECT_EQ(origin("C"), "spec ");
  EXPECT_EQ(origin("C_rf"), "rfactor C");
  EXPECT_EQ(origin("C_w"), "cache_write C_rf");
  EXPECT_EQ(origin("B_p"), "cache_read B");
}

TEST(SchedulePipeline, ReductionsInsideExpressionsBecomeStages) {
  Task task = task_at("bench/jaxbench/50_matmul_gelu_softmax");
  Pipeline p = pipeline_of(task);
  std::vector<std::string> names;
  for (const Stage& s : p.stages) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"z_r", "z", "g", "m", "e", "y_r", "y"}));
  const Stage& yr = p.stages[p.find("y_r")];
  EXPECT_TRUE(yr.reduction);
  ASSERT_EQ(yr.vars.size(), 1u);  // only the variable the reduction reads
  EXPECT_EQ(yr.vars[0].name, "b");
  EXPECT_EQ(te::to_string(p.stages[p.find("y")].body), "(e[b, o] / y_r[b])");
  EXPECT_EQ(p.readers(p.find("e")), (std::vector<int>{p.find("y_r"), p.find("y")}));
}

TEST(SchedulePipeline, InlineReductionsStayForRecurrences) {
  Task task = task_at("tests/golden/tasks/scan");
  Pipeline p = pipeline_of(task);
  ASSERT_EQ(p.stages.size(), 2u);
  EXPECT_TRUE(p.stages[0].is_recurrence());
  EXPECT_TRUE(p.stages[0].loops[1].scan);
  EXPECT_FALSE(p.stages[0].loops[0].scan);
}

TEST(SchedulePipeline, ConsumersLookThroughInlinedStages) {
  Task task = task_at("bench/jaxbench/50_matmul_gelu_softmax");
  Pipeline p = pipeline_of(task);
  ASSERT_TRUE(apply_schedule(p, testing::schedule_of("compute_inline e\n")).ok());
  EXPECT_EQ(p.consumers(p.find("g")), (std::vector<int>{p.find("m"), p.find("y_r"), p.find("y")}));
}

TEST(SchedulePipeline, InsertStageKeepsReferencesValid) {
  Task task = task_at("bench/jaxbench/12_rmsnorm");
  Pipeline p = pipeline_of(task);
  ASSERT_TRUE(apply_schedule(p, testing::schedule_of("cache_read x y xc\n")).ok());
  EXPECT_EQ(p.find("xc"), p.find("y") - 1);
  EXPECT_EQ(te::to_string(p.stages[p.find("y")].body), "((xc[n, d] / sqrt((ms[n] + eps))) * w[d])");
  EXPECT_EQ(p.readers(p.find("ms")), (std::vector<int>{p.find("y")}));
}

}  // namespace
}  // namespace kf::sched
