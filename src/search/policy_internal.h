// What the policies' source files share (not part of the search's interface).
#pragma once

#include <memory>
#include <vector>

#include "search/policy.h"

namespace kf::search {

// The prior order of a node's moves for the tree policies: the planner's strategies in its order
// (its rules rank them: greedy's strength), then knob moves by predicted time, then any move the
// cost model predicts kUnlikely times slower than the node itself (its ranking is rough; it
// demotes, it does not drop).
inline constexpr double kUnlikely = 3.0;
void prior_order(std::vector<Proposal>& ps, double parent_predicted_s);
std::unique_ptr<Policy> make_mcts(const PolicyOptions& o);
// MCTS's widening rule: a node with `expanded` children (of which `pending` are still being
// judged) may take one more when its `visits` allow it (progressive widening, ceil(0.5 n^0.5)),
// or when it has stalled: its children are judged and none was faster than it (`improved`
// false), so its next move in the prior order is tried, as greedy would.
bool mcts_may_widen(int visits, int expanded, int pending, bool improved);
std::unique_ptr<Policy> make_evolve(const PolicyOptions& o);

}  // namespace kf::search
