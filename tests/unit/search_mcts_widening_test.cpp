// MCTS's widening rule (search/policy_internal.h): progressive widening by visits, and a stalled
// node (children judged, none faster than it) takes its next move as greedy would.
#include <gtest/gtest.h>

#include "search/policy_internal.h"

namespace kf::search {
namespace {

TEST(MctsWidening, VisitsAllowOneChildUpToFourThenTwoUpToSixteen) {
  EXPECT_TRUE(mcts_may_widen(1, 0, 0, false));  // a fresh node takes its first child
  for (int visits : {1, 2, 3, 4}) EXPECT_FALSE(mcts_may_widen(visits, 1, 0, true)) << visits;
  for (int visits : {5, 9, 16}) {
    EXPECT_TRUE(mcts_may_widen(visits, 1, 0, true)) << visits;
    EXPECT_FALSE(mcts_may_widen(visits, 2, 0, true)) << visits;
  }
  EXPECT_TRUE(mcts_may_widen(17, 2, 0, true));
  EXPECT_FALSE(mcts_may_widen(36, 3, 0, true));
}

TEST(MctsWidening, AStalledNodeWidensButNotWhileAChildIsBeingJudged) {
  EXPECT_TRUE(mcts_may_widen(2, 1, 0, false));   // its one child was no faster: try the next
  EXPECT_TRUE(mcts_may_widen(3, 7, 0, false));   // however many it has tried
  EXPECT_FALSE(mcts_may_widen(2, 1, 1, false));  // the child's verdict is not in yet
  EXPECT_FALSE(mcts_may_widen(2, 1, 0, true));   // a child improved on it: deepen instead
}

}  // namespace
}  // namespace kf::search
