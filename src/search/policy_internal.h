// What the policies' source files share (not part of the search's interface).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
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

// What each knob move did where it was judged, so that the same move elsewhere in the graph is
// ordered by that evidence (the "all moves as first" idea of MCTS, RAVE: a move's value carries
// over between nodes of one tree). A knob move is known by its text: "register_block.nr 32 -> 48"
// is the same change wherever it is made, and on these design spaces it mostly does the same
// thing (a tile width that leaves a tail is slow under every parent); without this, 20-evaluation
// GEMM searches made one slow knob change under three (MCTS) and five (greedy) parents. Strategy
// moves are not carried over: their effect depends on what came before (rfactor alone made an
// rmsnorm 2x slower, after vectorizing 2.5x faster), and the planner weighs them per node.
// It also knows which recipes were judged as sets of steps: a proposal whose recipe is a judged
// one's steps in another order (rfactor then inline after inline then rfactor) almost always
// gives the same loops, so it is not new evidence; it counts as a move known to not help.
class MoveStats {
 public:
  // A judged child: its recipe's steps; against its parent, once per child, only for a knob
  // move and when both passed.
  void record(const SearchGraph& g, const Node& child);
  // The geometric mean of child / parent minimum time over the move's records; 0 when none.
  double ratio(const Move& m) const;
  // Known to help: every record so far made its child faster by the acceptance margin (on
  // average). Known to not help: measured, and not faster by the margin. Unknown: not measured.
  enum class Class { helps = 0, unknown = 1, no_help = 2 };
  Class classify(const Move& m) const;
  // A proposal: its move's class, or no_help when its child reorders a judged recipe.
  Class classify(const Proposal& p) const;
  // The move to take next of `ps` (a list in prior order), by classify(proposal): the first
  // strategy move not known to not help, else the first knob move known to help, else the first
  // unknown one, else the not-helping move with the best ratio. ps.size() when ps is empty.
  size_t pick(const std::vector<Proposal>& ps) const;

 private:
  struct Tally {
    double log_sum = 0;
    int n = 0;
  };
  std::map<std::string, Tally> by_move_;  // kind + text -> records
  std::set<std::string> recorded_;        // child keys recorded
  std::set<std::string> step_sets_;       // step_set() of every judged child
};

}  // namespace kf::search
