// The baseline policies (greedy, best-of-n) and beam; the factory. MCTS and evolve are in
// policy_mcts.cpp and policy_evolve.cpp.
#include <algorithm>
#include <cmath>
#include <set>

#include "agents/acceptance.h"
#include "search/policy.h"
#include "search/policy_internal.h"

namespace kf::search {

std::vector<Proposal> moves_of(SearchState& s, const Node& n, size_t max_strategies) {
  std::vector<Proposal> out;
  std::set<std::string> seen;
  const auto keep = [&](std::vector<Proposal> ps) {
    for (Proposal& p : ps)
      if (!s.graph.find(p.child.key) && seen.insert(p.child.key).second)
        out.push_back(std::move(p));
  };
  keep(s.space.strategies(n.candidate, s.result_of(n.key()), max_strategies));
  keep(s.space.knob_moves(n.candidate));
  return out;
}

bool no_regression(const SearchGraph& g, const Node& n) {
  const Node* p = g.find(n.parent);
  return n.ok() && (!p || !p->ok() || n.min_s <= p->min_s);
}

void by_prediction(std::vector<Proposal>& ps) {
  // Unpriced proposals (0) go last, in their order.
  std::stable_sort(ps.begin(), ps.end(), [](const Proposal& a, const Proposal& b) {
    if ((a.predicted_s > 0) != (b.predicted_s > 0)) return a.predicted_s > 0;
    return a.predicted_s > 0 && a.predicted_s < b.predicted_s;
  });
}

void prior_order(std::vector<Proposal>& ps, double parent_predicted_s) {
  std::vector<Proposal> strategies, knobs, unlikely;
  for (Proposal& p : ps) {
    if (parent_predicted_s > 0 && p.predicted_s > kUnlikely * parent_predicted_s)
      unlikely.push_back(std::move(p));
    else
      (p.move.kind == "knob" ? knobs : strategies).push_back(std::move(p));
  }
  by_prediction(knobs);
  by_prediction(unlikely);
  ps = std::move(strategies);
  for (auto* rest : {&knobs, &unlikely})
    for (Proposal& p : *rest) ps.push_back(std::move(p));
}

namespace {

std::string move_id(const Move& m) {
  return m.kind + ":" + m.text;
}

// A generated candidate's recipe steps (with their knobs), sorted, and its thread count: equal
// for two orders of the same steps. "" for a written candidate.
std::string step_set(const agents::CandidateMsg& c) {
  if (!c.generated) return "";
  std::vector<std::string> steps;
  for (const auto& step : c.generated->recipe.steps) {
    agents::Recipe one;
    one.steps.push_back(step);
    steps.push_back(one.to_string());
  }
  std::sort(steps.begin(), steps.end());
  std::string out = std::to_string(c.threads);
  for (const std::string& x : steps) out += "|" + x;
  return out;
}

}  // namespace

void MoveStats::record(const SearchGraph& g, const Node& child) {
  if (child.judged) step_sets_.insert(step_set(child.candidate));
  const Node* parent = g.find(child.parent);
  if (!parent || !parent->ok() || !child.ok() || child.move.kind != "knob") return;
  if (!recorded_.insert(child.key()).second) return;
  Tally& t = by_move_[move_id(child.move)];
  t.log_sum += std::log(child.min_s / parent->min_s);
  ++t.n;
}

double MoveStats::ratio(const Move& m) const {
  auto it = by_move_.find(move_id(m));
  return it == by_move_.end() || it->second.n == 0 ? 0
                                                   : std::exp(it->second.log_sum / it->second.n);
}

MoveStats::Class MoveStats::classify(const Move& m) const {
  const double r = ratio(m);
  if (r <= 0) return Class::unknown;
  return agents::acceptance_policy().faster(r, 1.0) ? Class::helps : Class::no_help;
}

MoveStats::Class MoveStats::classify(const Proposal& p) const {
  const std::string steps = step_set(p.child);
  if (!steps.empty() && step_sets_.count(steps)) return Class::no_help;
  return classify(p.move);
}

size_t MoveStats::pick(const std::vector<Proposal>& ps) const {
  size_t good_knob = ps.size(), unknown_knob = ps.size(), least_bad = ps.size();
  // A reordered recipe has no ratio of its own: it counts as the same time.
  const auto bad = [&](size_t i) {
    const double r = ratio(ps[i].move);
    return r > 0 ? r : 1.0;
  };
  for (size_t i = 0; i < ps.size(); ++i) {
    const Class c = classify(ps[i]);
    if (c == Class::no_help) {
      if (least_bad == ps.size() || bad(i) < bad(least_bad)) least_bad = i;
    } else if (ps[i].move.kind != "knob") {
      return i;
    } else if (c == Class::helps) {
      good_knob = std::min(good_knob, i);
    } else {
      unknown_knob = std::min(unknown_knob, i);
    }
  }
  return good_knob < ps.size() ? good_knob : unknown_knob < ps.size() ? unknown_knob : least_bad;
}

namespace {

// Hill climbing from the best in the planner's order (its rules rank the strategies), then the
// knobs of the best by prediction; a child faster by the acceptance margin becomes the node
// climbed from. Done when the best has no move left.
class Greedy final : public Policy {
 public:
  std::string name() const override { return "greedy"; }
  std::vector<Proposal> next(SearchState& s, size_t n) override {
    const Node* cur = s.graph.find(current_.empty() ? s.root : current_);
    if (!cur) return {};
    std::vector<Proposal> strategies, knobs;
    for (Proposal& p : moves_of(s, *cur))
      (p.move.kind == "knob" ? knobs : strategies).push_back(std::move(p));
    by_prediction(knobs);
    std::vector<Proposal> out = strategies.empty() ? knobs : strategies;
    if (out.size() > n) out.resize(n);
    return out;
  }
  void observe(SearchState& s, const std::vector<Node*>& nodes) override {
    const Node* cur = s.graph.find(current_.empty() ? s.root : current_);
    for (const Node* x : nodes)
      if (x->ok() && cur &&
          (!cur->ok() || agents::acceptance_policy().faster(x->min_s, cur->min_s)))
        cur = x;
    if (cur) current_ = cur->key();
  }

 private:
  std::string current_;
};

// Independent samples: each a random walk from the root of 1 to walk_depth moves, each move
// uniformly random among the planner's strategies and the knob moves of where the walk is.
class BestOfN final : public Policy {
 public:
  explicit BestOfN(const PolicyOptions& o) : depth_(std::max(1, o.walk_depth)) {}
  std::string name() const override { return "best-of-n"; }
  std::vector<Proposal> next(SearchState& s, size_t n) override {
    std::vector<Proposal> out;
    std::set<std::string> taken;
    const Node* root = s.graph.find(s.root);
    for (int tries = 0; root && out.size() < n && tries < 8 * static_cast<int>(n); ++tries) {
      auto p = walk(s, *root);
      if (p && !s.graph.find(p->child.key) && taken.insert(p->child.key).second)
        out.push_back(std::move(*p));
    }
    return out;
  }
  void observe(SearchState&, const std::vector<Node*>&) override {}

 private:
  std::optional<Proposal> walk(SearchState& s, const Node& root) {
    const int depth = std::uniform_int_distribution<int>(1, depth_)(s.rng);
    agents::CandidateMsg at = root.candidate;
    std::string path;
    for (int d = 0; d < depth; ++d) {
      std::vector<Proposal> moves =
          s.space.strategies(at, d == 0 ? s.result_of(root.key()) : nullptr, 12);
      for (Proposal& k : s.space.knob_moves(at)) moves.push_back(std::move(k));
      if (moves.empty()) break;
      Proposal& m = moves[std::uniform_int_distribution<size_t>(0, moves.size() - 1)(s.rng)];
      path += (path.empty() ? "" : " + ") + m.move.text;
      at = m.child;
    }
    if (at.key == root.key()) return std::nullopt;
    at.parent = root.key();
    return Proposal{.parent = root.key(),
                    .move = {.kind = "walk", .text = path},
                    .child = at,
                    .predicted_s = s.space.predict(at)};
  }
  int depth_;
};

// A beam of the `width` fastest nodes. A round expands each beam node with its `expand` most
// promising moves by the cost model; when the round is judged, the children no slower than
// their parent and the old beam compete for the next beam. Done when no beam node has a move.
class Beam final : public Policy {
 public:
  explicit Beam(const PolicyOptions& o)
      : width_(std::max(1, o.beam_width)), expand_(std::max(1, o.beam_expand)) {}
  std::string name() const override { return "beam"; }
  std::vector<Proposal> next(SearchState& s, size_t n) override {
    if (beam_.empty()) beam_ = {s.root};
    if (queue_.empty()) {
      for (const std::string& k : beam_) {
        const Node* b = s.graph.find(k);
        if (!b || !expandable(s, *b)) continue;
        std::vector<Proposal> ms = moves_of(s, *b);
        prior_order(ms, b->predicted_s);
        for (size_t i = 0; i < ms.size() && i < static_cast<size_t>(expand_); ++i)
          if (std::none_of(queue_.begin(), queue_.end(),
                           [&](const Proposal& q) { return q.child.key == ms[i].child.key; }))
            queue_.push_back(std::move(ms[i]));
      }
    }
    std::vector<Proposal> out;
    while (!queue_.empty() && out.size() < n) {
      out.push_back(std::move(queue_.front()));
      queue_.erase(queue_.begin());
    }
    return out;
  }
  void observe(SearchState& s, const std::vector<Node*>& nodes) override {
    for (Node* x : nodes) round_.push_back(x->key());
    if (!queue_.empty()) return;
    std::vector<const Node*> pool;
    std::set<std::string> in;
    for (const std::string& k : beam_)
      if (const Node* b = s.graph.find(k); b && b->ok() && in.insert(k).second) pool.push_back(b);
    for (const std::string& k : round_)
      if (const Node* c = s.graph.find(k); c && no_regression(s.graph, *c) && in.insert(k).second)
        pool.push_back(c);
    round_.clear();
    // A root that timed out stays the beam until a child of it passes.
    if (pool.empty()) return;
    std::stable_sort(pool.begin(), pool.end(),
                     [](const Node* a, const Node* b) { return a->min_s < b->min_s; });
    beam_.clear();
    for (size_t i = 0; i < pool.size() && i < static_cast<size_t>(width_); ++i)
      beam_.push_back(pool[i]->key());
    round_.clear();
  }

 private:
  int width_, expand_;
  std::vector<std::string> beam_, round_;
  std::vector<Proposal> queue_;
};

}  // namespace

std::vector<std::string> policy_names() {
  return {"greedy", "best-of-n", "beam", "mcts", "evolve"};
}

Expected<std::unique_ptr<Policy>> make_policy(const std::string& name, const PolicyOptions& o) {
  if (name == "greedy") return std::unique_ptr<Policy>(new Greedy());
  if (name == "best-of-n") return std::unique_ptr<Policy>(new BestOfN(o));
  if (name == "beam") return std::unique_ptr<Policy>(new Beam(o));
  if (name == "mcts") return make_mcts(o);
  if (name == "evolve") return make_evolve(o);
  return Status::error("unknown policy '" + name + "': greedy, best-of-n, beam, mcts or evolve");
}

}  // namespace kf::search
