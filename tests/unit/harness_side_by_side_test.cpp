// The order of the solutions in the side-by-side timing loop (harness/side_by_side.h): over a
// full cycle every solution holds every position equally often, and (up to three solutions: the
// candidate, the reference and one more) follows every other one.
#include <gtest/gtest.h>

#include <map>

#include "harness/side_by_side.h"

namespace kf {
namespace {

TEST(RoundOrder, TwoSolutionsAlternateInPairs) {
  std::vector<size_t> seq;
  for (int r = 0; r < 4; ++r)
    for (size_t i : round_order(2, r)) seq.push_back(i);
  EXPECT_EQ(seq, (std::vector<size_t>{0, 1, 1, 0, 1, 0, 0, 1}));
}

TEST(RoundOrder, EverySolutionHoldsEveryPositionAndFollowsEveryOther) {
  for (size_t n = 1; n <= 4; ++n) {
    std::map<std::pair<size_t, size_t>, int> position;  // (solution, position) -> rounds
    std::map<std::pair<size_t, size_t>, int> follows;   // (before, after) within a round
    for (int r = 0; r < static_cast<int>(2 * n); ++r) {
      const auto order = round_order(n, r);
      ASSERT_EQ(order.size(), n);
      for (size_t p = 0; p < n; ++p) {
        ++position[{order[p], p}];
        if (p > 0) ++follows[{order[p - 1], order[p]}];
      }
    }
    for (size_t i = 0; i < n; ++i)
      for (size_t p = 0; p < n; ++p) EXPECT_EQ((position[{i, p}]), 2) << n << " " << i << " " << p;
    for (size_t a = 0; a < n; ++a)
      for (size_t b = 0; b < n; ++b)
        if (a != b && n == 3) {
          EXPECT_GE((follows[{a, b}]), 1) << b << " after " << a;
        }
  }
}

}  // namespace
}  // namespace kf
