#include "search/space.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "agents/builtin/brain.h"
#include "agents/strategy.h"
#include "search/cost_model.h"

namespace kf::search {

using agents::CandidateMsg;
using agents::Recipe;

Proposal SearchSpace::make(const CandidateMsg& parent, Move m, CandidateMsg child) const {
  child.parent = parent.key;
  Proposal p{.parent = parent.key, .move = std::move(m), .child = std::move(child)};
  p.predicted_s = predict(p.child);
  return p;
}

double SearchSpace::predict(const CandidateMsg& c) const {
  const CostEstimate e = estimate_cost(env_.compiled, c, env_.machine, env_.target, c.threads);
  return std::isfinite(e.seconds) && e.seconds > 0 ? e.seconds : 0;
}

std::vector<Proposal> SearchSpace::strategies(const CandidateMsg& n, const RunResult* result,
                                              size_t max) {
  if (auto it = strategies_.find(n.key); it != strategies_.end()) return it->second;
  return strategies_[n.key] = strategies(
             n, agents::evidence_from_result(result ? *result : RunResult{}, threads_), max);
}

std::vector<Proposal> SearchSpace::strategies(const CandidateMsg& n,
                                              const agents::Evidence& evidence, size_t max) {
  agents::PlanInput in;
  in.task = &env_.compiled;
  in.best = &n;
  in.evidence = evidence;
  in.ctx = env_.move_context(threads_);
  in.stop_fraction = 2;  // a search decides when to stop; the planner lists what it can
  in.filter = env_.strategies();
  std::vector<Proposal> out;
  const std::string proposer = env_.brain.roles.at("planner");
  for (const agents::Plan& plan : env_.brain.planner->proposals(in, max)) {
    auto child = env_.brain.implementer->implement(plan, env_.work(&n, threads_));
    if (!child || child->key == n.key) continue;
    Recipe step;
    step.steps.push_back({plan.strategy, plan.knobs});
    const std::string text = plan.strategy.empty() ? plan.text.substr(0, 120) : step.to_string();
    out.push_back(make(
        n, {.kind = plan.strategy.empty() ? "llm" : "strategy", .text = text, .proposer = proposer},
        std::move(*child)));
    out.back().plan = plan;
  }
  return out;
}

std::vector<Proposal> SearchSpace::knob_moves(const CandidateMsg& n) {
  std::vector<Proposal> out;
  if (!n.generated) return out;
  const Recipe& recipe = n.generated->recipe;
  for (size_t i = 0; i < recipe.steps.size(); ++i) {
    const agents::Strategy* s = agents::find_strategy(recipe.steps[i].strategy);
    if (!s) continue;
    for (const agents::Knob& k : s->knobs) {
      if (env_.pins().pinned(s->id, k.name)) continue;  // held by a person (--pin)
      auto v = recipe.steps[i].knobs.find(k.name);
      const int64_t now = v == recipe.steps[i].knobs.end() ? k.initial : v->second;
      auto at = std::find(k.values.begin(), k.values.end(), now);
      if (at == k.values.end()) continue;
      for (auto next : {at == k.values.begin() ? k.values.end() : at - 1, at + 1}) {
        if (next == k.values.end()) continue;
        Recipe r = recipe;
        r.steps[i].knobs[k.name] = *next;
        auto child = agents::builtin::generate(r, env_.work(&n, threads_),
                                               fmt::format("search:{}={}", k.name, *next));
        if (!child || child->key == n.key) continue;
        out.push_back(make(
            n,
            {.kind = "knob",
             .text = fmt::format("{}.{} {} -> {}", recipe.steps[i].strategy, k.name, now, *next)},
            std::move(*child)));
      }
    }
  }
  return out;
}

std::optional<Proposal> SearchSpace::crossover(const CandidateMsg& a, const CandidateMsg& b,
                                               Rng& rng) {
  if (!a.generated || !b.generated) return std::nullopt;
  const Recipe& ra = a.generated->recipe;
  const Recipe& rb = b.generated->recipe;
  if (ra.steps.empty() || rb.steps.empty()) return std::nullopt;
  // Each cut of a and of b, from a random start: the first that applies and is new wins.
  const size_t cuts = (ra.steps.size() + 1) * (rb.steps.size() + 1);
  const size_t start = std::uniform_int_distribution<size_t>(0, cuts - 1)(rng);
  for (size_t t = 0; t < cuts; ++t) {
    const size_t c = (start + t) % cuts;
    const size_t i = c / (rb.steps.size() + 1), j = c % (rb.steps.size() + 1);
    Recipe r;
    r.steps.assign(ra.steps.begin(), ra.steps.begin() + static_cast<long>(i));
    std::set<std::string> have;
    for (const auto& s : r.steps) have.insert(s.strategy);
    for (size_t k = j; k < rb.steps.size(); ++k)
      if (!have.count(rb.steps[k].strategy)) r.steps.push_back(rb.steps[k]);
    if (r.to_string() == ra.to_string() || r.to_string() == rb.to_string()) continue;
    auto child = agents::builtin::generate(r, env_.work(&a, threads_), "search:crossover");
    if (!child || child->key == a.key || child->key == b.key) continue;
    return make(a,
                {.kind = "crossover",
                 .text = fmt::format("{} step(s) of {} + {} of {}", i, a.key.substr(0, 8),
                                     rb.steps.size() - j, b.key.substr(0, 8))},
                std::move(*child));
  }
  return std::nullopt;
}

std::string SearchSpace::traits(const CandidateMsg& c) {
  if (!c.generated) return "written:" + c.origin;
  std::set<std::string> s;
  for (const auto& step : c.generated->recipe.steps) s.insert(step.strategy);
  std::string out;
  for (const auto& x : s) out += x + ",";
  return out + (c.threads > 1 ? "parallel" : "serial");
}

Node& add_judged(SearchGraph& g, const Proposal& p, const RunResult& r, int eval_index) {
  Node& n = g.add(p.child, p.parent, p.move, p.predicted_s);
  n.judged = true;
  n.verdict = r.verdict;
  n.message = r.message;
  n.eval_index = eval_index;
  if (r.verdict == Verdict::ok && r.timing) {
    n.min_s = r.timing->min_s;
    n.median_s = r.timing->median_s;
  }
  return n;
}

}  // namespace kf::search
