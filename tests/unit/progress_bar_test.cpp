// The live progress bar's text (modes/progress_bar.h).
#include "modes/progress_bar.h"

#include <gtest/gtest.h>

namespace kf {
namespace {

TEST(ProgressBar, ShowsTheBudgetSpentTheElapsedTimeAndAnEstimateFromMeasuredEvaluations) {
  const std::string t = ProgressBar::text(
      {.evaluations = 3, .budget = 12, .fresh = 3, .elapsed_s = 30, .fresh_s = 30, .current_s = 4},
      12);
  EXPECT_EQ(t, "[###.........] 3/12 evaluations  30s elapsed  ETA ~1m30s  (evaluation 4 4s)");
}

TEST(ProgressBar, NoEstimateBeforeAMeasurementAndEvaluationsReadBackDoNotCount) {
  EXPECT_NE(ProgressBar::text({.evaluations = 0, .budget = 8}).find("ETA --"), std::string::npos);
  // Five read back in no time, one measured in 10 s: 4 left at 10 s each.
  EXPECT_NE(ProgressBar::text({.evaluations = 6, .budget = 10, .fresh = 1, .fresh_s = 10})
                .find("ETA ~40s"),
            std::string::npos);
}

TEST(ProgressBar, TheTimeBudgetCapsTheEstimateAndTheCountStopsAtTheBudget) {
  EXPECT_NE(ProgressBar::text(
                {.evaluations = 2, .budget = 100, .fresh = 2, .fresh_s = 20, .time_left_s = 75})
                .find("ETA ~1m15s"),
            std::string::npos);
  const std::string done = ProgressBar::text({.evaluations = 13, .budget = 12, .fresh = 13});
  EXPECT_NE(done.find("12/12 evaluations"), std::string::npos) << done;
  EXPECT_NE(done.find("finishing"), std::string::npos) << done;
}

// The judge's timing loop ends once both minimums are reached: the lagging one sets the share.
TEST(TimingProgress, TheLaggingMinimumSetsTheShareAndThePaceTheTimeLeft) {
  TimingProgress p{.samples = 20,
                   .min_samples = 5,
                   .measured_s = 0.25,
                   .min_time_s = 1,
                   .elapsed_s = 2,
                   .max_wall_s = 60};
  EXPECT_DOUBLE_EQ(p.fraction(), 0.25);
  EXPECT_DOUBLE_EQ(p.left_s(), 6);  // a quarter in 2 s: 6 s more
  EXPECT_EQ(timing_bar_text(p, 8), "timing [##......]  25%  2s elapsed  ETA ~6s");
  p.samples = 1;  // now the samples lag
  EXPECT_DOUBLE_EQ(p.fraction(), 0.2);
}

TEST(TimingProgress, TheWallClockCapsTheShareAndTheTimeLeft) {
  // A slow kernel: 2 samples of 5 wanted in 50 s of a 60 s loop.
  const TimingProgress p{.samples = 2,
                         .min_samples = 5,
                         .measured_s = 40,
                         .min_time_s = 1,
                         .elapsed_s = 50,
                         .max_wall_s = 60};
  EXPECT_NEAR(p.fraction(), 50.0 / 60, 1e-12);
  EXPECT_NEAR(p.left_s(), 10, 1e-9);
  EXPECT_DOUBLE_EQ(TimingProgress{}.left_s(), -1) << "nothing measured: no estimate";
  EXPECT_NE(timing_bar_text(TimingProgress{}).find("ETA --"), std::string::npos);
}

TEST(ProgressBar, ShortDurations) {
  EXPECT_EQ(short_duration(0.4), "0s");
  EXPECT_EQ(short_duration(59), "59s");
  EXPECT_EQ(short_duration(62), "1m02s");
  EXPECT_EQ(short_duration(7380), "2h03m");
}

}  // namespace
}  // namespace kf
