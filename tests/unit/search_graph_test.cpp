#include <gtest/gtest.h>

#include "search/graph.h"

namespace kf::search {
namespace {

agents::CandidateMsg cand(const std::string& key) {
  agents::CandidateMsg c;
  c.key = key;
  c.source = "// " + key;
  return c;
}

TEST(SearchGraph, TwoPathsToOneCandidateShareItsNode) {
  SearchGraph g;
  g.add(cand("root"), "", {.kind = "root", .text = "default"}, 0);
  g.add(cand("a"), "root", {.kind = "strategy", .text = "tile"}, 1.0);
  g.add(cand("b"), "root", {.kind = "strategy", .text = "vectorize"}, 2.0);
  g.add(cand("ab"), "a", {.kind = "strategy", .text = "vectorize"}, 0.5);
  g.add_edge("b", "ab", {.kind = "strategy", .text = "tile"});
  EXPECT_EQ(g.size(), 4u);
  EXPECT_EQ(g.edges().size(), 5u);
  EXPECT_EQ(g.find("ab")->parent, "a") << "the first path names the parent";
  EXPECT_EQ(g.find("ab")->depth, 2);
  EXPECT_EQ(g.find("root")->children, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(g.best(), nullptr) << "nothing judged yet";
  for (auto [key, t] : {std::pair{"root", 4.0}, {"a", 2.0}, {"b", 3.0}, {"ab", 1.0}}) {
    Node* n = g.find(key);
    n->judged = true;
    n->min_s = n->median_s = t;
  }
  g.find("ab")->verdict = Verdict::wrong_answer;
  EXPECT_EQ(g.best()->key(), "a") << "a wrong answer is never the best, however fast";
  ASSERT_EQ(g.ranked().size(), 3u);
  EXPECT_EQ(g.ranked()[2]->key(), "root");
}

AttemptRecord attempt(int seq, const std::string& key, const std::string& parent,
                      const std::string& move, const std::string& verdict, double median) {
  AttemptRecord a;
  a.seq = seq;
  a.kind = "search";
  a.candidate_key = key;
  a.verdict = verdict;
  a.median_s = median;
  a.detail = {{"parent", parent},
              {"move", {{"kind", "strategy"}, {"text", move}, {"proposer", "builtin"}}}};
  return a;
}

TEST(SearchGraph, TheTreeTextNestsChildrenMarksTheBestAndSaysWhereTwoPathsMeet) {
  std::vector<AttemptRecord> as = {
      attempt(1, "root000000", "", "default schedule", "ok", 4e-3),
      attempt(2, "aaaa000000", "root000000", "tile", "ok", 1e-3),
      attempt(3, "bbbb000000", "root000000", "vectorize", "wrong_answer", 0),
      attempt(4, "cccc000000", "aaaa000000", "unroll", "ok", 2e-3),
      attempt(5, "cccc000000", "root000000", "unroll+tile", "duplicate", 0)};
  AttemptRecord other;
  other.kind = "final";
  as.push_back(other);
  const std::string t = tree_text(as);
  EXPECT_EQ(t,
            "- default schedule [builtin] ok 4.000 ms  (root000000)\n"
            "  * tile [builtin] ok 1.000 ms  (aaaa000000)\n"
            "    - unroll [builtin] ok 2.000 ms  (cccc000000)\n"
            "  - vectorize [builtin] wrong_answer  (bbbb000000)\n"
            "  - unroll+tile [builtin] = the same candidate as before  (cccc000000)\n");
}

}  // namespace
}  // namespace kf::search
