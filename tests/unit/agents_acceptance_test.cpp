// The acceptance rule (agents/acceptance.h) at its edges: the margin, the near-miss band, the
// median-only case and the paired run.
#include <gtest/gtest.h>

#include "agents/acceptance.h"

namespace kf::agents {
namespace {

RunResult timed(double min_s, double median_s) {
  RunResult r;
  r.verdict = Verdict::ok;
  r.timing = Timing{};
  r.timing->min_s = min_s;
  r.timing->median_s = median_s;
  return r;
}

TEST(Acceptance, FasterMeansBeyondTheMargin) {
  const AcceptancePolicy& p = acceptance_policy();
  EXPECT_TRUE(p.faster(0.96, 1.0));
  EXPECT_FALSE(p.faster(0.97, 1.0)) << "3% is noise";
  EXPECT_FALSE(p.faster(0.99, 1.0));
}

TEST(Acceptance, ANearMissIsWithinFifteenPercentButNotFaster) {
  const AcceptancePolicy& p = acceptance_policy();
  const RunResult best = timed(1.0, 1.0);
  EXPECT_TRUE(p.near_miss(timed(0.98, 0.98), best));
  EXPECT_TRUE(p.near_miss(timed(1.14, 1.2), best));
  EXPECT_FALSE(p.near_miss(timed(1.15, 1.2), best));
  EXPECT_FALSE(p.near_miss(timed(0.9, 0.9), best)) << "faster is not a near miss";
  EXPECT_FALSE(p.near_miss(RunResult{}, best)) << "untimed";
}

TEST(Acceptance, ADisturbedTimingIsANearMissUpToTwiceTheBest) {
  const AcceptancePolicy& p = acceptance_policy();
  const RunResult best = timed(1.0, 1.0);
  RunResult noisy = timed(1.6, 2.0);
  noisy.timing->spread = 0.7;  // samples from 1.6 to ~3: something else ran
  EXPECT_TRUE(p.near_miss(noisy, best)) << "one disturbed reading does not discard it";
  noisy.timing->min_s = 2.0;
  EXPECT_FALSE(p.near_miss(noisy, best)) << "twice as slow at its fastest: slower";
  RunResult steady = timed(1.6, 1.62);
  steady.timing->spread = 0.03;
  EXPECT_FALSE(p.near_miss(steady, best)) << "a steady 60% slower is slower";
}

TEST(Acceptance, FasterByTheMedianOnly) {
  const AcceptancePolicy& p = acceptance_policy();
  const RunResult best = timed(1.0, 1.0);
  EXPECT_TRUE(p.faster_by_median_only(timed(1.0, 0.9), best));
  EXPECT_FALSE(p.faster_by_median_only(timed(0.9, 0.9), best)) << "faster by the minimum too";
  EXPECT_FALSE(p.faster_by_median_only(timed(1.2, 0.9), best)) << "the minimum too far off";
  EXPECT_FALSE(p.faster_by_median_only(timed(1.0, 0.99), best));
}

TEST(Acceptance, APairWinsAtTwoPercentByMedianAndMinimum) {
  const AcceptancePolicy& p = acceptance_policy();
  RunResult pair = timed(1.0, 1.0);
  pair.rival_timing = Timing{};
  pair.vs_rival.median = 1.02;
  pair.vs_rival.min = 1.03;
  EXPECT_TRUE(p.wins_pair(pair));
  pair.vs_rival.min = 1.01;
  EXPECT_FALSE(p.wins_pair(pair)) << "both must win";
  pair.vs_rival.min = 1.05;
  pair.verdict = Verdict::wrong_answer;
  EXPECT_FALSE(p.wins_pair(pair));
  RunResult unpaired = timed(1.0, 1.0);
  unpaired.vs_rival.median = unpaired.vs_rival.min = 2;
  EXPECT_FALSE(p.wins_pair(unpaired)) << "not measured beside the best";
}

}  // namespace
}  // namespace kf::agents
