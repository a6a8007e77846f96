// The judge's timing loop (harness/evaluator.h) on a small golden task, with the task's own
// reference as the candidate: when timing stops early (the wall-clock cap, a candidate slower
// than the time it had to beat) and the rival timed side by side. Nothing here asserts a speed:
// only how many samples were taken, what the result says about them, and that the rival was
// measured in the same batches as the candidate.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/evaluator.h"

namespace kf {
namespace {

Task golden_task() {
  auto task =
      load_task(std::filesystem::path(KFORGE_TEST_SOURCE_DIR) / "tests/golden/tasks/f64_layernorm");
  KF_CHECK(task) << task.error().message();
  return *task;
}

EvalOptions timing_options() {
  EvalOptions o;
  o.time_reference = false;
  o.min_time_s = 0.05;
  o.min_samples = 5;
  return o;
}

RunResult judged(const Task& task, const EvalOptions& o) {
  auto r = evaluate(task, task.reference_source, o);
  KF_CHECK(r) << r.error().message();
  EXPECT_EQ(r->verdict, Verdict::ok) << r->message;
  return *r;
}

TEST(JudgeTiming, RunsItsCourseWhenNothingStopsIt) {
  const Task task = golden_task();
  EvalOptions o = timing_options();
  o.stop_slower_than_s = 1e9;  // far slower than anything: never reached
  RunResult r = judged(task, o);
  ASSERT_TRUE(r.timing);
  EXPECT_GE(r.timing->samples, 5);
  EXPECT_EQ(r.timing->stopped_early, "");
}

TEST(JudgeTiming, ACandidateSlowerThanItsMarkGetsTwoSamples) {
  const Task task = golden_task();
  EvalOptions o = timing_options();
  o.min_time_s = 10;             // would take 10 s of calls
  o.stop_slower_than_s = 1e-12;  // every kernel is slower than this
  RunResult r = judged(task, o);
  ASSERT_TRUE(r.timing);
  EXPECT_EQ(r.timing->samples, 2);
  EXPECT_NE(r.timing->stopped_early.find("slower than"), std::string::npos)
      << r.timing->stopped_early;
  EXPECT_GT(r.timing->min_s, 0);
  // The reason survives the store's JSON.
  auto back = RunResult::from_json(r.to_json());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->timing->stopped_early, r.timing->stopped_early);
}

TEST(JudgeTiming, TheWallClockCapStopsAfterTwoSamples) {
  const Task task = golden_task();
  EvalOptions o = timing_options();
  o.min_time_s = 10;
  o.max_timing_wall_s = 1e-9;  // spent after the first batch
  RunResult r = judged(task, o);
  ASSERT_TRUE(r.timing);
  EXPECT_EQ(r.timing->samples, 2);
  EXPECT_NE(r.timing->stopped_early.find("were spent"), std::string::npos)
      << r.timing->stopped_early;
}

TEST(JudgeTiming, TheRivalIsTimedInTheSameBatches) {
  const Task task = golden_task();
  EvalOptions o = timing_options();
  o.time_baseline = false;
  o.rival_source = task.reference_source;
  o.rival_name = "the same code";
  RunResult r = judged(task, o);
  ASSERT_TRUE(r.timing && r.rival_timing);
  EXPECT_EQ(r.rival_timing->samples, r.timing->samples) << "one rival batch per candidate batch";
  EXPECT_EQ(r.rival_name, "the same code");
  EXPECT_DOUBLE_EQ(r.vs_rival.min, r.rival_timing->min_s / r.timing->min_s);
  EXPECT_DOUBLE_EQ(r.vs_rival.median, r.rival_timing->median_s / r.timing->median_s);
  // Loose bounds: identical code must come out even, short of a biased timer.
  EXPECT_GT(r.vs_rival.min, 0.5);
  EXPECT_LT(r.vs_rival.min, 2.0);
  auto back = RunResult::from_json(r.to_json());
  ASSERT_TRUE(back);
  ASSERT_TRUE(back->rival_timing);
  EXPECT_EQ(back->rival_timing->samples, r.rival_timing->samples);
  EXPECT_DOUBLE_EQ(back->vs_rival.median, r.vs_rival.median);
  EXPECT_EQ(back->rival_name, r.rival_name);
}

TEST(JudgeTiming, ARivalThatDoesNotCompileIsAnError) {
  const Task task = golden_task();
  EvalOptions o = timing_options();
  o.rival_source = "this is not C++";
  auto r = evaluate(task, task.reference_source, o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("rival"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace kf
