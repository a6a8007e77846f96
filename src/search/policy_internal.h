// What the policies' source files share (not part of the search's interface).
#pragma once

#include <memory>
#include <vector>

#include "search/policy.h"

namespace kf::search {

// Cost-model order: the fastest predicted first, unpriced proposals last in their order.
void by_prediction(std::vector<Proposal>& ps);
std::unique_ptr<Policy> make_mcts(const PolicyOptions& o);
std::unique_ptr<Policy> make_evolve(const PolicyOptions& o);

}  // namespace kf::search
