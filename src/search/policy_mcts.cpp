// MCTS over moves (policy.h): UCT with progressive widening, the best value backed up, expansion
// in the prior order (the planner's, the cost model's for knobs) corrected by what each move did
// elsewhere in the tree (MoveStats), dead ends pruned.
#include <cmath>
#include <map>
#include <set>

#include "agents/acceptance.h"
#include "search/policy_internal.h"

namespace kf::search {
namespace {

// Progressive widening: a node visited n times may have ceil(kWiden * n^kAlpha) children (one up
// to 4 visits, two up to 16, three up to 36), so the budget deepens the promising branches instead
// of trying every move of the root first. A stalled node widens regardless (mcts_may_widen).
constexpr double kWiden = 0.5;
constexpr double kAlpha = 0.5;

class Mcts final : public Policy {
 public:
  explicit Mcts(const PolicyOptions& o) : c_(o.mcts_c) {}
  std::string name() const override { return "mcts"; }

  std::vector<Proposal> next(SearchState& s, size_t n) override {
    std::vector<Proposal> out;
    while (out.size() < n) {
      Node* leaf = select(s);
      if (!leaf) break;
      std::vector<Proposal>& untried = untried_[leaf->key()];
      const size_t i = stats_.pick(untried);
      if (i >= untried.size()) break;
      Proposal p = std::move(untried[i]);
      untried.erase(untried.begin() + static_cast<std::ptrdiff_t>(i));
      if (s.graph.find(p.child.key) || taken_.count(p.child.key)) continue;
      taken_.insert(p.child.key);
      ++pending_[leaf->key()];
      owner_[p.child.key] = leaf->key();
      out.push_back(std::move(p));
    }
    return out;
  }

  void observe(SearchState& s, const std::vector<Node*>& nodes) override {
    for (Node* x : nodes) {
      if (auto o = owner_.find(x->key()); o != owner_.end()) {
        --pending_[o->second];
        owner_.erase(o);
      }
      if (!x->ok()) x->dead = true;
      stats_.record(s.graph, *x);
      // The best value below each node on the path, and one more visit.
      for (Node* up = x; up; up = s.graph.find(up->parent)) {
        ++up->visits;
        if (x->ok() && (best_below_[up->key()] == 0 || x->min_s < best_below_[up->key()]))
          best_below_[up->key()] = x->min_s;
        if (up->parent.empty()) break;
      }
    }
  }

 private:
  // Loads a node's moves once, in the prior order (policy_internal.h).
  std::vector<Proposal>& moves(SearchState& s, Node& x) {
    auto it = untried_.find(x.key());
    if (it != untried_.end()) return it->second;
    std::vector<Proposal> ms = moves_of(s, x);
    prior_order(ms, x.predicted_s);
    return untried_[x.key()] = std::move(ms);
  }

  // Whether a child of x (or a node below one) is faster than x by the acceptance margin; a root
  // that failed is improved on by anything that passed.
  bool improved(SearchState& s, const Node& x) const {
    for (const std::string& k : x.children) {
      const Node* c = s.graph.find(k);
      if (!c || c->parent != x.key()) continue;
      auto it = best_below_.find(k);
      if (it == best_below_.end() || it->second <= 0) continue;
      if (!x.ok() || agents::acceptance_policy().faster(it->second, x.min_s)) return true;
    }
    return false;
  }

  double uct(const Node& parent, const Node& child, double best) const {
    auto it = best_below_.find(child.key());
    const double q = it == best_below_.end() || it->second <= 0 ? 0 : best / it->second;
    return q + c_ * std::sqrt(std::log(std::max(1, parent.visits)) / std::max(1, child.visits));
  }

  // The node to expand next: one whose next move is not known to not help (MoveStats) while the
  // tree has such a node, so the budget goes to changes not yet seen to fail; else one with any
  // move left. nullptr when the whole tree is a dead end or only work in flight is left.
  Node* select(SearchState& s) {
    if (Node* x = descend(s, true)) return x;
    return descend(s, false);
  }

  // Down from the root by UCT until a node may widen. With `fresh_only`, a node whose next move
  // is known to not help and that has no live child to descend into is passed over.
  Node* descend(SearchState& s, bool fresh_only) {
    const Node* best_node = s.graph.best();
    const double best = best_node ? best_node->min_s : 0;
    std::set<std::string> passed;
    for (int restarts = 0; restarts < 1000; ++restarts) {
      Node* x = s.graph.find(s.root);
      while (x && !x->dead) {
        std::vector<Proposal>& untried = moves(s, *x);
        std::erase_if(untried, [&](const Proposal& p) {
          return s.graph.find(p.child.key) || taken_.count(p.child.key);
        });
        const size_t next = stats_.pick(untried);
        const bool fresh =
            next < untried.size() &&
            (!fresh_only || stats_.classify(untried[next]) != MoveStats::Class::no_help);
        const int expanded = static_cast<int>(x->children.size()) + pending_[x->key()];
        if (fresh && mcts_may_widen(x->visits, expanded, pending_[x->key()], improved(s, *x)))
          return x;
        Node* pick = nullptr;
        for (const std::string& k : x->children) {
          Node* c = s.graph.find(k);
          if (!c || c->dead || !c->ok() || c->parent != x->key() || passed.count(k)) continue;
          if (!pick || uct(*x, *c, best) > uct(*x, *pick, best)) pick = c;
        }
        if (!pick) {
          if (fresh) return x;  // every child is a dead end: widen anyway
          if (untried.empty() && pending_[x->key()] == 0)
            x->dead = true;  // nothing left here: pruned
          else
            passed.insert(x->key());  // only unhelpful moves or work in flight: not now
          break;
        }
        x = pick;
      }
      const Node* root = s.graph.find(s.root);
      if (!root || root->dead || passed.count(s.root)) return nullptr;
    }
    return nullptr;
  }

  double c_;
  std::map<std::string, std::vector<Proposal>> untried_;
  std::map<std::string, int> pending_;        // proposals in flight per parent
  std::map<std::string, std::string> owner_;  // a proposal's child key -> the node expanded
  std::map<std::string, double> best_below_;
  std::set<std::string> taken_;
  MoveStats stats_;
};

}  // namespace

bool mcts_may_widen(int visits, int expanded, int pending, bool improved) {
  const int allowed = static_cast<int>(std::ceil(kWiden * std::pow(std::max(1, visits), kAlpha)));
  const bool stalled = expanded > 0 && pending == 0 && !improved;
  return expanded < allowed || stalled;
}

std::unique_ptr<Policy> make_mcts(const PolicyOptions& o) {
  return std::make_unique<Mcts>(o);
}

}  // namespace kf::search
