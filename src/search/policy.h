// Search policies: which proposals to judge next. One interface, five policies (docs/search.md):
//   greedy     hill climbing in the planner's order from the best, then its knobs (the optimize
//              loop's way of working, without its confirmations)
//   best-of-n  independent samples: random walks of 1 to 4 uniformly random moves from the root
//   beam       a beam of the `width` fastest nodes; each round every beam node is expanded with
//              its first `expand` moves in the prior order (the planner's strategies in its
//              order, then knobs by the cost model); a child slower than its parent does not
//              enter the next beam (the regression gate)
//   mcts       UCT over moves with progressive widening (a node of n visits has at most
//              ceil(0.5 n^0.5) children; a stalled node, none of whose children is faster than
//              it, widens regardless), reward = best time / time below the node (the best value
//              backed up), expansion in the prior order, dead ends pruned
//   evolve     islands of small populations: tournament parents, mutation by a move or a knob,
//              crossover of recipes, novelty checked before judging (a new candidate, and a
//              trait cell of the archive it would fill or improve on by prediction), migration
//              of each island's best to the next every few generations
//
// Call order (search/engine.cpp drives it; modelled on TVM's search strategies):
//   1. the engine judges the root (the implementer's first candidate) and adds it to the graph
//   2. while the budget lasts:
//        batch = policy.next(state, n)     up to n proposals, in the order to judge them;
//                                          empty: the policy has nothing left to try
//        the engine turns a proposal whose child is already in the graph into an edge to that
//        node (nothing judged), compiles the rest in parallel, judges them one at a time
//        policy.observe(state, nodes)      the nodes the batch's proposals became, in order
//   3. the engine's refinement pass over the knobs of the top nodes, then the final run.
// A policy is deterministic given the seed and what it observes (a resumed run replays it).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/run_result.h"
#include "search/graph.h"
#include "search/space.h"

namespace kf::search {

// What a policy sees.
struct SearchState {
  SearchGraph& graph;
  SearchSpace& space;
  Rng& rng;
  const std::map<std::string, RunResult>& results;  // judged node key -> its result
  std::string root;                                 // the root's key
  const RunResult* result_of(const std::string& key) const {
    auto it = results.find(key);
    return it == results.end() ? nullptr : &it->second;
  }
};

struct PolicyOptions {
  int beam_width = 4;
  int beam_expand = 3;  // moves tried per beam node and round
  double mcts_c = 0.5;  // UCT exploration weight
  int population = 4;   // per island
  int islands = 2;
  int migrate_every = 3;  // generations
  double crossover_rate = 0.3;
  int walk_depth = 4;  // best-of-n: the longest random walk
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  virtual std::vector<Proposal> next(SearchState& s, size_t n) = 0;
  virtual void observe(SearchState& s, const std::vector<Node*>& nodes) = 0;
};

// "greedy", "best-of-n", "beam", "mcts", "evolve"; fails naming them.
Expected<std::unique_ptr<Policy>> make_policy(const std::string& name, const PolicyOptions& o);
std::vector<std::string> policy_names();

// Shared by the policies: every move of `n` (the planner's strategies, then its knobs), each
// not yet in the graph as a child of n.
std::vector<Proposal> moves_of(SearchState& s, const Node& n, size_t max_strategies = 12);
// Whether a judged node is at least as fast as its parent (the regression gate), by minimum time.
bool no_regression(const SearchGraph& g, const Node& n);
// Whether a policy may expand `n`: it passed, or it is the root (which may have timed out).
inline bool expandable(const SearchState& s, const Node& n) {
  return n.ok() || n.key() == s.root;
}

}  // namespace kf::search
