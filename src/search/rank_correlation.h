// Spearman's rank correlation between what a cost model predicted and what the judge measured,
// the figure a search run reports for its cost model (docs/search.md).
//
//   double rho = spearman({1.0, 2.0, 3.0}, {0.9, 2.5, 2.4});   // 0.5
//
// Ties share the mean of their ranks. Fewer than two pairs, or a side with all values equal,
// has no correlation: nullopt.
#pragma once

#include <optional>
#include <vector>

namespace kf::search {

std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace kf::search
