#include <gtest/gtest.h>

#include <cmath>

#include "search/rank_correlation.h"

namespace kf::search {
namespace {

TEST(Spearman, SameOrderIsOneReversedIsMinusOne) {
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {10, 20, 30, 400}), 1.0);
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
}

TEST(Spearman, OneSwapOfThree) {
  // ranks (1,2,3) against (1,3,2): 1 - 6*2/(3*8) = 0.5
  EXPECT_DOUBLE_EQ(*spearman({1.0, 2.0, 3.0}, {0.9, 2.5, 2.4}), 0.5);
}

TEST(Spearman, TiesShareTheirMeanRank) {
  // (1, 2.5, 2.5, 4) against (1, 2, 3, 4): Pearson on ranks = 4.5 / sqrt(4.5 * 5)
  EXPECT_NEAR(*spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(4.5 * 5.0), 1e-12);
}

TEST(Spearman, NoCorrelationWithoutTwoPairsOrWithAConstantSide) {
  EXPECT_FALSE(spearman({1}, {1}));
  EXPECT_FALSE(spearman({1, 2}, {1}));
  EXPECT_FALSE(spearman({5, 5, 5}, {1, 2, 3}));
}

}  // namespace
}  // namespace kf::search
