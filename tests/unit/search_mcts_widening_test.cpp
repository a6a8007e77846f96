// MCTS's widening rule (search/policy_internal.h): progressive widening by visits, and a stalled
// node (children judged, none faster than it) takes its next move as greedy would. MoveStats:
// what a move did under one parent orders the same move under another.
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

Node& judged(SearchGraph& g, const std::string& key, const std::string& parent, Move m,
             double min_s) {
  agents::CandidateMsg c;
  c.key = key;
  Node& n = g.add(c, parent, std::move(m), 0);
  n.judged = true;
  n.min_s = n.median_s = min_s;
  return n;
}

Proposal move(const std::string& kind, const std::string& text) {
  Proposal p;
  p.move = {.kind = kind, .text = text};
  return p;
}

TEST(MoveStats, AMoveSlowUnderOneParentGoesLastUnderAnother) {
  SearchGraph g;
  judged(g, "root", "", {.kind = "root", .text = "first"}, 1.0);
  const Move wide{.kind = "knob", .text = "register_block.nr 32 -> 48"};
  const Move tall{.kind = "knob", .text = "register_block.mr 6 -> 8"};
  MoveStats stats;
  EXPECT_EQ(stats.classify(wide), MoveStats::Class::unknown);
  stats.record(g, judged(g, "a", "root", wide, 1.2));
  stats.record(g, judged(g, "b", "root", tall, 0.8));
  stats.record(g, *g.find("a"));  // a child counts once
  EXPECT_NEAR(stats.ratio(wide), 1.2, 1e-12);
  EXPECT_NEAR(stats.ratio(tall), 0.8, 1e-12);
  EXPECT_EQ(stats.classify(wide), MoveStats::Class::no_help);
  EXPECT_EQ(stats.classify(tall), MoveStats::Class::helps);

  // Under another parent, in prior order [wide, other knob, tall]: the helping knob first,
  // then the unknown one, the slow one last.
  std::vector<Proposal> ps = {move("knob", wide.text), move("knob", "pack_operand.lanes 16 -> 8"),
                              move("knob", tall.text)};
  EXPECT_EQ(stats.pick(ps), 2u);
  ps.pop_back();
  EXPECT_EQ(stats.pick(ps), 1u);
  ps.pop_back();
  EXPECT_EQ(stats.pick(ps), 0u);  // only the slow one is left: still a move
  ps.pop_back();
  EXPECT_EQ(stats.pick(ps), 0u);  // none: ps.size()

  // A strategy keeps the planner's place ahead of every knob move.
  ps = {move("knob", tall.text), move("strategy", "unroll_reduction(unroll=4)")};
  EXPECT_EQ(stats.pick(ps), 1u);
}

TEST(MoveStats, RecordsOnlyChildrenOfPassedParentsAndAveragesGeometrically) {
  SearchGraph g;
  judged(g, "root", "", {.kind = "root", .text = "first"}, 1.0);
  const Move m{.kind = "knob", .text = "vectorize_inner.lanes 16 -> 8"};
  MoveStats stats;
  stats.record(g, judged(g, "a", "root", m, 0.5));
  Node& failed = judged(g, "b", "a", m, 0);  // no time: failed
  stats.record(g, failed);
  stats.record(g, judged(g, "c", "b", m, 0.1));  // its parent failed: no ratio
  stats.record(g, judged(g, "d", "a", m, 1.0));  // 0.5 -> 1.0: twice as slow
  EXPECT_NEAR(stats.ratio(m), 1.0, 1e-12);       // sqrt(0.5 * 2)
  EXPECT_EQ(stats.classify(m), MoveStats::Class::no_help);

  // A strategy's effect depends on what came before it: not carried over.
  const Move rfactor{.kind = "strategy", .text = "rfactor_reduction(lanes=16)"};
  stats.record(g, judged(g, "e", "a", rfactor, 1.0));
  EXPECT_EQ(stats.classify(rfactor), MoveStats::Class::unknown);
}

Proposal recipe_proposal(const std::string& key, const std::vector<std::string>& strategies) {
  Proposal p = move("strategy", strategies.back() + "()");
  p.child.key = key;
  p.child.generated.emplace();
  for (const std::string& st : strategies) p.child.generated->recipe.steps.push_back({st, {}});
  return p;
}

TEST(MoveStats, AReorderingOfAJudgedRecipeIsNotNewEvidence) {
  SearchGraph g;
  judged(g, "root", "", {.kind = "root", .text = "first"}, 1.0);
  const Proposal judged_one = recipe_proposal("x", {"rfactor_reduction", "inline_elementwise"});
  Node& x = g.add(judged_one.child, "root", judged_one.move, 0);
  x.judged = true;
  x.min_s = 0.9;
  MoveStats stats;
  stats.record(g, x);
  const Proposal reordered = recipe_proposal("y", {"inline_elementwise", "rfactor_reduction"});
  const Proposal longer =
      recipe_proposal("z", {"inline_elementwise", "rfactor_reduction", "vectorize_inner"});
  EXPECT_EQ(stats.classify(reordered), MoveStats::Class::no_help);
  EXPECT_EQ(stats.classify(longer), MoveStats::Class::unknown);
  // The planner's first strategy is the reordering: the next one is taken instead.
  EXPECT_EQ(stats.pick({reordered, longer}), 1u);
  EXPECT_EQ(stats.pick({reordered}), 0u);
}

}  // namespace
}  // namespace kf::search
