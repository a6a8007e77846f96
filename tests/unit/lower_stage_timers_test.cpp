// The profiler's instrumented build (CodegenOptions::stage_timers) and the judge's side of it
// (time_stages): which stages get timers, that the timers change no result, and that the times
// come back through the sandboxed worker.
#include <gtest/gtest.h>

#include <numeric>

#include "lower_test_util.h"

namespace kf {
namespace {

using testing::program_of;
using testing::schedule_of;
using testing::task_at;

// RMSNorm with its largest test shape as the bench shape, so running it takes milliseconds.
Task small_rmsnorm() {
  Task t = task_at("bench/jaxbench/12_rmsnorm");
  t.bench = t.tests.back();
  return t;
}

// The row's statistics computed inside the output's row loop.
constexpr const char* kNested = "compute_at ms y.n\ncompute_at ms_r y.n\n";

TEST(StageTimers, EachTopLevelStageIsTimedInProgramOrder) {
  const Task task = small_rmsnorm();
  auto g = generate_instrumented_kernel(task, program_of(task), {}, {});
  ASSERT_TRUE(g.has_value()) << g.error().message();
  EXPECT_EQ(g->timed_stages, (std::vector<std::string>{"ms_r", "ms", "y"}));  // ms_r: the sum
  EXPECT_NE(g->source.find("extern \"C\" __attribute__((visibility(\"default\"))) int "
                           "kf_stage_times(int64_t* ns, int cap)"),
            std::string::npos);
  EXPECT_NE(g->source.find("kf_stage_ns[1] += kf_stage_clock() - kf_stage_t1;"), std::string::npos);

  // A stage computed inside another's loops is part of that one's time: no timer of its own.
  auto nested = generate_instrumented_kernel(task, program_of(task), schedule_of(kNested), {});
  ASSERT_TRUE(nested.has_value()) << nested.error().message();
  EXPECT_EQ(nested->timed_stages, (std::vector<std::string>{"y"}));

  // The judged build has none.
  auto plain = generate_kernel(task, {}, {});
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->find("kf_stage"), std::string::npos);
}

TEST(StageTimers, TheInstrumentedBuildComputesTheSameResult) {
  const Task task = small_rmsnorm();
  auto g = generate_instrumented_kernel(task, program_of(task), schedule_of(kNested), {});
  ASSERT_TRUE(g.has_value()) << g.error().message();
  EXPECT_EQ(testing::judge(task, g->source), "ok");
}

TEST(StageTimers, TimesComeBackPerStageThroughTheWorker) {
  const Task task = small_rmsnorm();
  auto g = generate_instrumented_kernel(task, program_of(task), {}, {});
  ASSERT_TRUE(g.has_value()) << g.error().message();
  auto s = time_stages(task, g->source, 3, EvalOptions{});
  ASSERT_TRUE(s.has_value()) << s.error().message();
  ASSERT_EQ(s->size(), 3u);
  for (double x : *s) EXPECT_GE(x, 0);
  EXPECT_GT(std::accumulate(s->begin(), s->end(), 0.0), 0);
  EXPECT_LT(std::accumulate(s->begin(), s->end(), 0.0), 1.0);  // seconds per call, not in sum

  // The judged build exports no timers: an error, not zeros.
  auto plain = generate_kernel(task, {}, {});
  ASSERT_TRUE(plain.has_value());
  auto none = time_stages(task, *plain, 1, EvalOptions{});
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("has no stage timers"), std::string::npos);

  EXPECT_FALSE(time_stages(task, g->source, 0, EvalOptions{}).has_value());
}

TEST(StageTimers, AnInstrumentedBuildThatCrashesIsAnError) {
  const Task task = small_rmsnorm();
  auto g = generate_instrumented_kernel(task, program_of(task), {}, {});
  ASSERT_TRUE(g.has_value()) << g.error().message();
  std::string src = g->source;
  const std::string clock = "static inline int64_t kf_stage_clock() {\n";
  const size_t at = src.find(clock);
  ASSERT_NE(at, std::string::npos);
  src.insert(at + clock.size(), "  __builtin_trap();\n");
  auto s = time_stages(task, src, 1, EvalOptions{});
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message().find("instrumented build"), std::string::npos)
      << s.error().message();
}

}  // namespace
}  // namespace kf
