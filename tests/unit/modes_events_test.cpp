// The console rendering of run events (modes/events.h): the counter and the notes of read-back
// lines, and the spread of a candidate timed once.
#include <gtest/gtest.h>

#include <string>

#include "modes/events.h"

namespace kf {
namespace {

AttemptJudged judged() {
  return {.run_id = "r1",
          .seq = 4,
          .evaluation = 3,
          .budget_evals = 8,
          .kind = "plan",
          .strategy = "tile_2d",
          .label = "builtin:tile_2d",
          .candidate = "k",
          .verdict = "ok",
          .median_s = 2e-3,
          .min_s = 1.9e-3,
          .vs_reference = 1.5,
          .spread = 0.04,
          .roofline_fraction = 0.3};
}

TEST(ConsoleLine, AMeasurementCountsAgainstTheBudget) {
  const std::string line = console_line(judged());
  EXPECT_EQ(line.rfind("[  3/8] plan", 0), 0u) << line;
  EXPECT_NE(line.find("1.50x"), std::string::npos) << line;
  EXPECT_NE(line.find("  4%"), std::string::npos) << line;
  EXPECT_EQ(line.find("stored"), std::string::npos) << line;
}

TEST(ConsoleLine, ReadBacksSayWhetherTheySpentBudget) {
  AttemptJudged own = judged();
  own.reused = true;
  const std::string spent = console_line(own);
  EXPECT_EQ(spent.rfind("[  3/8]", 0), 0u) << spent;
  EXPECT_NE(spent.find("(stored)"), std::string::npos) << spent;

  AttemptJudged earlier = judged();
  earlier.reused = true;
  earlier.spent = false;
  const std::string free = console_line(earlier);
  EXPECT_EQ(free.rfind("[  -/8]", 0), 0u) << free;
  EXPECT_NE(free.find("(an earlier run's measurement: no budget spent)"), std::string::npos)
      << free;
}

TEST(ConsoleLine, OneSampleHasNoSpread) {
  AttemptJudged once = judged();
  once.spread = -1;
  const std::string line = console_line(once);
  EXPECT_EQ(line.substr(line.size() - 2), " -") << line;
  EXPECT_FALSE(event_json(once, 1.0).contains("spread"));
  EXPECT_TRUE(event_json(judged(), 1.0).contains("spread"));
}

}  // namespace
}  // namespace kf
