#include "search/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

namespace kf::search {

nlohmann::json Move::to_json() const {
  return {{"kind", kind}, {"text", text}, {"proposer", proposer}};
}

Node& SearchGraph::add(agents::CandidateMsg c, const std::string& parent, Move m,
                       double predicted_s) {
  auto n = std::make_unique<Node>();
  n->candidate = std::move(c);
  n->parent = parent;
  n->move = m;
  n->predicted_s = predicted_s;
  if (Node* p = find(parent)) {
    n->depth = p->depth + 1;
    p->children.push_back(n->key());
  }
  const std::string key = n->key();
  edges_.push_back({parent, key, std::move(m)});
  order_.push_back(key);
  return *(nodes_[key] = std::move(n));
}

void SearchGraph::add_edge(const std::string& parent, const std::string& child, Move m) {
  edges_.push_back({parent, child, std::move(m)});
}

Node* SearchGraph::find(const std::string& key) {
  auto it = nodes_.find(key);
  return it == nodes_.end() ? nullptr : it->second.get();
}

const Node* SearchGraph::find(const std::string& key) const {
  auto it = nodes_.find(key);
  return it == nodes_.end() ? nullptr : it->second.get();
}

std::vector<const Node*> SearchGraph::ranked() const {
  std::vector<const Node*> out;
  for (const std::string& k : order_)
    if (const Node* n = find(k); n->ok()) out.push_back(n);
  std::stable_sort(out.begin(), out.end(),
                   [](const Node* a, const Node* b) { return a->min_s < b->min_s; });
  return out;
}

const Node* SearchGraph::best() const {
  auto r = ranked();
  return r.empty() ? nullptr : r.front();
}

std::vector<Node*> SearchGraph::nodes() {
  std::vector<Node*> out;
  for (const std::string& k : order_) out.push_back(find(k));
  return out;
}

std::vector<const Node*> SearchGraph::nodes() const {
  std::vector<const Node*> out;
  for (const std::string& k : order_) out.push_back(find(k));
  return out;
}

std::string tree_text(const std::vector<AttemptRecord>& attempts) {
  std::map<std::string, std::vector<const AttemptRecord*>> below;  // parent key -> attempts
  std::string best;
  double best_s = 0;
  for (const AttemptRecord& a : attempts) {
    if (!a.detail.is_object() || !a.detail.contains("move")) continue;
    below[a.detail.value("parent", std::string())].push_back(&a);
    if (a.verdict == "ok" && a.median_s > 0 && !a.candidate_key.empty() &&
        (best.empty() || a.median_s < best_s)) {
      best = a.candidate_key;
      best_s = a.median_s;
    }
  }
  std::string out;
  std::set<std::string> shown;
  std::function<void(const std::string&, int)> walk = [&](const std::string& parent, int depth) {
    auto it = below.find(parent);
    if (it == below.end()) return;
    for (const AttemptRecord* a : it->second) {
      const nlohmann::json& m = a->detail["move"];
      const bool again = !a->candidate_key.empty() && !shown.insert(a->candidate_key).second;
      out += fmt::format(
          "{}{} {} [{}{}] {}{}\n", std::string(2 * depth, ' '),
          a->candidate_key == best && !again ? "*" : "-",
          m.is_object() ? m.value("text", std::string()) : std::string(),
          m.is_object() ? m.value("proposer", std::string()) : std::string(),
          a->detail.contains("predicted_s")
              ? fmt::format(", predicted {:.3f} ms", 1e3 * a->detail.value("predicted_s", 0.0))
              : "",
          again ? "= the same candidate as before"
                : (a->median_s > 0 ? fmt::format("{} {:.3f} ms", a->verdict, 1e3 * a->median_s)
                                   : a->verdict),
          a->candidate_key.empty() ? "" : fmt::format("  ({})", a->candidate_key.substr(0, 10)));
      if (!again && !a->candidate_key.empty()) walk(a->candidate_key, depth + 1);
    }
  };
  walk("", 0);
  return out;
}

}  // namespace kf::search
