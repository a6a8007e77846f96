// Evolution over candidates (policy.h): islands of small populations, tournament selection,
// mutation by a move or a knob, crossover of recipes, a diversity archive keyed by program
// traits, novelty checked before judging, and migration between islands; a mutation prefers moves
// not seen to fail elsewhere (MoveStats).
#include <algorithm>
#include <map>
#include <set>

#include "search/policy_internal.h"

namespace kf::search {
namespace {

class Evolve final : public Policy {
 public:
  explicit Evolve(const PolicyOptions& o)
      : o_(o), islands_(static_cast<size_t>(std::max(1, o.islands))) {}
  std::string name() const override { return "evolve"; }

  std::vector<Proposal> next(SearchState& s, size_t n) override {
    std::vector<Proposal> out;
    std::set<std::string> taken;
    // Each slot goes to the next island in turn; an island with nothing to offer is skipped.
    for (size_t tries = 0; out.size() < n && tries < 4 * islands_.size() * std::max<size_t>(n, 1);
         ++tries) {
      const size_t island = turn_++ % islands_.size();
      auto p = offspring(s, island, taken);
      if (!p) continue;
      taken.insert(p->child.key);
      island_of_[p->child.key] = island;
      out.push_back(std::move(*p));
    }
    return out;
  }

  void observe(SearchState& s, const std::vector<Node*>& nodes) override {
    for (Node* x : nodes) {
      auto it = island_of_.find(x->key());
      const size_t island = it == island_of_.end() ? 0 : it->second;
      stats_.record(s.graph, *x);
      if (!x->ok()) continue;
      join(s, island, x->key());
      const std::string cell = SearchSpace::traits(x->candidate);
      const Node* elite = s.graph.find(archive_[cell]);
      if (!elite || x->min_s < elite->min_s) archive_[cell] = x->key();
      // A generation is one population's worth of offspring per island.
      if (++born_ % (islands_.size() * static_cast<size_t>(std::max(1, o_.population))) == 0 &&
          ++generation_ % std::max(1, o_.migrate_every) == 0)
        migrate(s);
    }
  }

 private:
  // Keeps the island's population to the fastest `population` members.
  void join(SearchState& s, size_t island, const std::string& key) {
    std::vector<std::string>& pop = islands_[island];
    if (std::find(pop.begin(), pop.end(), key) == pop.end()) pop.push_back(key);
    std::stable_sort(pop.begin(), pop.end(), [&](const std::string& a, const std::string& b) {
      return s.graph.find(a)->min_s < s.graph.find(b)->min_s;
    });
    if (pop.size() > static_cast<size_t>(std::max(1, o_.population)))
      pop.resize(static_cast<size_t>(o_.population));
  }

  // Each island's best joins the next island.
  void migrate(SearchState& s) {
    std::vector<std::string> best(islands_.size());
    for (size_t i = 0; i < islands_.size(); ++i)
      if (!islands_[i].empty()) best[i] = islands_[i].front();
    for (size_t i = 0; i < islands_.size(); ++i)
      if (!best[i].empty() && islands_.size() > 1) join(s, (i + 1) % islands_.size(), best[i]);
  }

  // Tournament of two: the faster of two members drawn at random (the root for an empty island).
  const Node* parent(SearchState& s, size_t island) {
    const std::vector<std::string>& pop = islands_[island];
    if (pop.empty()) return s.graph.find(s.root);
    std::uniform_int_distribution<size_t> pick(0, pop.size() - 1);
    const Node* a = s.graph.find(pop[pick(s.rng)]);
    const Node* b = s.graph.find(pop[pick(s.rng)]);
    return a->min_s <= b->min_s ? a : b;
  }

  // Novel: a candidate not judged or taken, whose trait cell is empty, or whose predicted time
  // beats the cell elite's measured one (a cell of a slow program kind is worth one more try
  // only with a reason).
  bool novel(SearchState& s, const Proposal& p, const std::set<std::string>& taken) {
    if (s.graph.find(p.child.key) || taken.count(p.child.key)) return false;
    const Node* elite = s.graph.find(archive_[SearchSpace::traits(p.child)]);
    return !elite || (p.predicted_s > 0 && p.predicted_s < elite->min_s);
  }

  std::optional<Proposal> offspring(SearchState& s, size_t island,
                                    const std::set<std::string>& taken) {
    const Node* a = parent(s, island);
    if (!a || !expandable(s, *a)) return std::nullopt;
    std::optional<Proposal> fallback;
    for (int t = 0; t < 6; ++t) {
      std::optional<Proposal> p;
      const std::vector<std::string>& pop = islands_[island];
      if (pop.size() >= 2 &&
          std::uniform_real_distribution<double>(0, 1)(s.rng) < o_.crossover_rate) {
        const Node* b =
            s.graph.find(pop[std::uniform_int_distribution<size_t>(0, pop.size() - 1)(s.rng)]);
        if (b && b != a) p = s.space.crossover(a->candidate, b->candidate, s.rng);
      } else {
        // Mutation: of three moves drawn at random, the best predicted of those not seen to
        // not help elsewhere (MoveStats), else the best predicted.
        std::vector<Proposal> ms = moves_of(s, *a);
        if (ms.empty()) continue;
        std::uniform_int_distribution<size_t> pick(0, ms.size() - 1);
        std::vector<Proposal> three;
        for (int i = 0; i < 3; ++i) three.push_back(ms[pick(s.rng)]);
        by_prediction(three);
        std::stable_partition(three.begin(), three.end(), [&](const Proposal& m) {
          return stats_.classify(m) != MoveStats::Class::no_help;
        });
        p = three.front();
      }
      if (!p || s.graph.find(p->child.key) || taken.count(p->child.key)) continue;
      if (novel(s, *p, taken)) return p;
      if (!fallback) fallback = p;
    }
    return fallback;
  }

  PolicyOptions o_;
  std::vector<std::vector<std::string>> islands_;  // members' keys, fastest first
  std::map<std::string, std::string> archive_;     // trait cell -> its fastest node's key
  std::map<std::string, size_t> island_of_;        // proposal's child key -> island
  size_t turn_ = 0, born_ = 0, generation_ = 0;
  MoveStats stats_;
};

}  // namespace

std::unique_ptr<Policy> make_evolve(const PolicyOptions& o) {
  return std::make_unique<Evolve>(o);
}

}  // namespace kf::search
