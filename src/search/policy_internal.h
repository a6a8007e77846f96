// What the policies' source files share (not part of the search's interface).
#pragma once

#include <memory>
#include <vector>

#include "search/policy.h"

namespace kf::search {

// Cost-model order: the fastest predicted first, unpriced proposals last in their order.
void by_prediction(std::vector<Proposal>& ps);
// The prior order of a node's moves for the tree policies: the planner's strategies in its order
// (its rules rank them: greedy's strength), then knob moves by predicted time, then any move the
// cost model predicts kUnlikely times slower than the node itself (its ranking is rough; it
// demotes, it does not drop).
inline constexpr double kUnlikely = 3.0;
void prior_order(std::vector<Proposal>& ps, double parent_predicted_s);
std::unique_ptr<Policy> make_mcts(const PolicyOptions& o);
std::unique_ptr<Policy> make_evolve(const PolicyOptions& o);

}  // namespace kf::search
