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

namespace kf::sched {
namespace {

Pipeline pipeline_with_spec(const std::string& spec) {
  Task task = testing::task_at("bench/outside/gemm_nt_staged");
  task.te_spec = spec;
  static std::vector<std::unique_ptr<Task>> kept;  // the pipeline points at its task
  kept.push_back(std::make_unique<Task>(std::move(task)));
  return testing::pipeline_of(*kept.back());
}

// A transpose stage read only by a product names a layout: substituted, the two ways of writing
// C = A B^T are one pipeline, and a schedule naming the stage hears why it is gone.
TEST(SchedulePipeline, ALayoutCopyReadOnlyByAReductionIsSubstituted) {
  Task staged = testing::task_at("bench/outside/gemm_nt_staged");
  Task direct = testing::task_at("bench/outside/gemm_nt");
  Pipeline ps = pipeline_of(staged), pd = pipeline_of(direct);
  EXPECT_EQ(ps.to_string(), pd.to_string());
  EXPECT_EQ(ps.to_string(),
            "stage C[i in 0..M, j in 0..N] = sum(k in 0..K: (A[i, k] * B[j, k])) -> output 0\n"
            "  loops: i j k\n"
            "  compute: root\n");
  EXPECT_EQ(ps.substituted, std::vector<std::string>{"Bt"});
  EXPECT_TRUE(pd.substituted.empty());
  const std::string err = testing::schedule_error(staged, "compute_root Bt\n");
  EXPECT_NE(err.find("only copies an input in another layout"), std::string::npos) << err;
  // The packing the copy stood for is the schedule's: a panel of B per tile.
  EXPECT_EQ(testing::schedule_error(staged, "cache_read B C Bp\nreorder_storage Bp k j\n"), "");
}

TEST(SchedulePipeline, ACopyThatIsMoreThanALayoutStays) {
  // Read by an elementwise stage too: the copy may be the point.
  EXPECT_EQ(pipeline_with_spec("Bt[k, j] = B[j, k]\n"
                               "C[i, j] = sum(k: A[i, k] * Bt[k, j]) + Bt[0, j]\n")
                .substituted,
            std::vector<std::string>{});
  // Arithmetic in the copy.
  EXPECT_TRUE(pipeline_with_spec("Bt[k, j] = 2 * B[j, k]\nC[i, j] = sum(k: A[i, k] * Bt[k, j])\n")
                  .substituted.empty());
  // A copy of a stage, not of an input.
  EXPECT_TRUE(pipeline_with_spec("E[j, k] = exp(B[j, k])\nEt[k, j] = E[j, k]\n"
                                 "C[i, j] = sum(k: A[i, k] * Et[k, j])\n")
                  .substituted.empty());
}

TEST(SchedulePipeline, ASubstitutedCopyKeepsItsReadersOutOfRangeValue) {
  Pipeline p =
      pipeline_with_spec("Bt[k, j] = B[j, k]\nC[i, j] = sum(k: A[i, k] * (Bt[k + 1, j] else 0))\n");
  EXPECT_EQ(p.substituted, std::vector<std::string>{"Bt"});
  ASSERT_EQ(p.stages.size(), 1u);
  EXPECT_EQ(te::to_string(p.stages[0].body), "sum(: (A[i, k] * (B[j, (k + 1)] else 0)))");
}

}  // namespace
}  // namespace kf::sched
