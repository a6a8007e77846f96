// The design space a search walks: what can be done to a node. Brain-neutral where it can be:
// strategy moves come from the team's planner (Planner::proposals, ranked by its rules or asked
// of a model) and are carried out by its implementer; knob moves and crossover work on the
// recipes of candidates the built-in brain generated (a written candidate has neither). Every
// proposal's child is made here (generated or written source, its key) and priced by the cost
// model, so a policy can rank proposals and drop duplicates before anything is compiled.
//
//   SearchSpace space(env, threads);
//   std::vector<Proposal> ps = space.strategies(node, result, 8);   // the planner's, best first
//   std::vector<Proposal> ks = space.knob_moves(node);              // each knob one value away
//   std::optional<Proposal> x = space.crossover(a, b, rng);         // a's prefix + b's suffix
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "agents/messages.h"
#include "harness/run_result.h"
#include "modes/run_env.h"
#include "search/graph.h"

namespace kf::search {

struct Proposal {
  std::string parent;  // key
  Move move;
  agents::CandidateMsg child;
  double predicted_s = 0;            // the cost model's time (0: none)
  std::optional<agents::Plan> plan;  // a strategy move's plan, with the planner's reasons
};

// Cost-model order: the fastest predicted first, unpriced proposals last in their order.
void by_prediction(std::vector<Proposal>& ps);

// Adds the node a judged proposal became, with its result's verdict and times; `eval_index` is
// the evaluation that judged it.
Node& add_judged(SearchGraph& g, const Proposal& p, const RunResult& r, int eval_index);

using Rng = std::mt19937_64;

class SearchSpace {
 public:
  SearchSpace(RunEnv& env, int threads) : env_(env), threads_(threads) {}

  // The planner's plans for `c` (evidence from its judged result; nullptr: from its structure
  // alone), each carried out by the implementer; plans that do not apply are left out. At most
  // `max`, in the planner's order. Cached per candidate: the planner is asked once.
  std::vector<Proposal> strategies(const agents::CandidateMsg& c, const RunResult* result,
                                   size_t max);
  // The same from evidence a caller gathered (a profile's findings); not cached.
  std::vector<Proposal> strategies(const agents::CandidateMsg& c, const agents::Evidence& evidence,
                                   size_t max);
  // For a generated candidate: every knob of every recipe step moved one value up and one down
  // in its strategy's list of values (the autotuner's neighbourhood).
  std::vector<Proposal> knob_moves(const agents::CandidateMsg& c);
  // For two generated candidates: the first steps of `a`'s recipe followed by the last of `b`'s
  // (those not in a's part), at a random cut; nullopt when no cut gives a recipe that applies
  // and is new.
  std::optional<Proposal> crossover(const agents::CandidateMsg& a, const agents::CandidateMsg& b,
                                    Rng& rng);
  // The cost model's time for a candidate (0 when it cannot say).
  double predict(const agents::CandidateMsg& c) const;
  // Program traits of a candidate, for an evolutionary archive: its recipe's strategies
  // (sorted, without knobs) and whether it is parallel; a written candidate's origin.
  static std::string traits(const agents::CandidateMsg& c);

 private:
  Proposal make(const agents::CandidateMsg& parent, Move m, agents::CandidateMsg child) const;
  RunEnv& env_;
  int threads_;
  std::map<std::string, std::vector<Proposal>> strategies_;  // node key -> cached proposals
};

}  // namespace kf::search
