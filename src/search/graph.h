// The search graph: candidates are nodes, the moves that made them are edges. Two paths to the
// same candidate key share one node (the second is one more edge into it), so nothing is judged
// twice. The graph is rebuilt from the run's attempts in the store (each judged node is an
// attempt whose detail holds its edge: parent, move, proposer, predicted time), which is what
// `kforge show RUN` prints as a tree and what a resumed search replays.
//
//   SearchGraph g;
//   Node& root = g.add(root_candidate, "", {.kind = "root", .text = "first candidate"}, 0);
//   if (Node* n = g.find(child.key)) g.add_edge(parent, n->key(), move);   // a second path
//   const Node* best = g.best();                       // fastest judged ok, by minimum time
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/messages.h"
#include "harness/run_result.h"
#include "store/store.h"

namespace kf::search {

// An edge: how a child was made from its parent.
struct Move {
  std::string kind;                  // "root", "strategy", "knob", "crossover", "llm", "human"
  std::string text;                  // "register_block(mr=6,nr=32)", "register_block.nr 32 -> 48"
  std::string proposer = "builtin";  // "builtin", "llm", "human"
  nlohmann::json to_json() const;
};

struct Edge {
  std::string parent, child;
  Move move;
};

struct Node {
  agents::CandidateMsg candidate;
  std::string parent;  // the first edge's parent key ("" for the root)
  Move move;           // the first edge's move
  int depth = 0;
  double predicted_s = 0;  // the cost model's estimate (0: none)
  // Judged:
  bool judged = false;
  Verdict verdict = Verdict::ok;
  double min_s = 0, median_s = 0;  // 0 unless ok and timed
  int eval_index = 0;              // 1-based, in the order the search judged them
  std::string message;
  // The policies' bookkeeping.
  std::vector<std::string> children;  // keys, in the order they were added
  int visits = 0;
  bool dead = false;  // pruned: failed, or nothing left to expand

  const std::string& key() const { return candidate.key; }
  bool ok() const { return judged && verdict == Verdict::ok && min_s > 0; }
};

class SearchGraph {
 public:
  // Adds a node (its first edge from `parent`); the key must be new.
  Node& add(agents::CandidateMsg c, const std::string& parent, Move m, double predicted_s);
  // One more path into an existing node.
  void add_edge(const std::string& parent, const std::string& child, Move m);
  Node* find(const std::string& key);
  const Node* find(const std::string& key) const;
  // The fastest node judged ok (by minimum time), nullptr when none.
  const Node* best() const;
  // Nodes judged ok, fastest first.
  std::vector<const Node*> ranked() const;
  const std::vector<Edge>& edges() const { return edges_; }
  size_t size() const { return order_.size(); }
  // Every node, in the order they were added.
  std::vector<Node*> nodes();
  std::vector<const Node*> nodes() const;

 private:
  std::map<std::string, std::unique_ptr<Node>> nodes_;
  std::vector<std::string> order_;
  std::vector<Edge> edges_;
};

// The run's search tree as text, from its stored attempts (`kforge show` for a search run): each
// judged node under its parent with its move, proposer, verdict and time; a second path to a node
// is a line of its own ("= same as ..."). The best is marked with '*'.
std::string tree_text(const std::vector<AttemptRecord>& attempts);

}  // namespace kf::search
