// The strategy catalog: the named optimizations an expert reaches for, each with a description a
// person or an LLM can read, the evidence that suggests it, and — where the schedule language can
// express it — its mechanical form as schedule moves for the built-in brain.
//
//   const Strategy* s = find_strategy("register_block");
//   Knobs k = s->default_knobs();                       // {"mr": 6, "nr": 32, "lanes": 16}
//   Expected<std::vector<MoveGroup>> g = s->moves(pipeline, k);
//   // each group is applied atomically by the implementer; a group that is illegal for the
//   // pipeline is skipped with its reason, the others still apply
//
// A candidate of the built-in brain is a Recipe: the list of strategy applications (with their
// knob values) that, replayed from the default schedule, produce its schedule trace. The
// autotuner changes knob values and replays; the planner appends strategies.
//
// The catalog is one explicit list (strategy_catalog.cpp), never registered by static
// initializers. A strategy with no mechanical form (moves == nullptr) is still in the catalog:
// the LLM brain and the human can apply it; the built-in planner never picks it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/machine.h"
#include "harness/target.h"
#include "schedule/pipeline.h"
#include "schedule/trace.h"
#include "support/status.h"

namespace kf::agents {

using Knobs = std::map<std::string, int64_t>;

// A numeric parameter of a strategy and the values the autotuner tries.
struct Knob {
  std::string name;
  int64_t initial = 0;
  std::vector<int64_t> values;  // candidates for the autotuner, including `initial`
  std::string meaning;
};

// Primitives that go together (e.g. split + reorder + vectorize of one stage): all or none.
struct MoveGroup {
  std::string target;  // the stage, for messages
  std::vector<sched::Primitive> moves;
  // The moves change where the work runs, not how much of it there is (a producer fused at its
  // reader's outermost loop computes its whole slice per iteration): the planner expects
  // locality's gain from them, not the strategy's.
  bool locality_only = false;
};

// What a mechanical form may know besides the pipeline: the machine and the thread count.
// Knob values a person fixed (`--pin register_block.mr=6`): every step of that strategy the
// built-in brain makes takes the value, and neither its autotuner nor a search's knob moves
// change it.
struct KnobPins {
  std::map<std::string, Knobs> by_strategy;  // strategy -> knob -> value
  bool empty() const { return by_strategy.empty(); }
  bool pinned(const std::string& strategy, const std::string& knob) const;
  // Sets the pinned knobs of `strategy` in `knobs`.
  void apply(const std::string& strategy, Knobs& knobs) const;
  // Whether `knobs` of `strategy` hold every pinned value.
  bool holds(const std::string& strategy, const Knobs& knobs) const;
  nlohmann::json to_json() const;
  static KnobPins from_json(const nlohmann::json& j);  // missing or mistyped: none
  // From "strategy.knob=value" texts; fails naming a text whose strategy is not in the
  // catalog, whose knob is not one of the strategy's, or whose value is not a positive integer.
  static Expected<KnobPins> parse(const std::vector<std::string>& texts);
};

struct MoveContext {
  const MachineInfo* machine = nullptr;
  int threads = 1;
  const Target* target = nullptr;  // what kernels are generated for (nullptr: AVX-512)
  const KnobPins* pins = nullptr;  // nullptr: none
};

using MovesFn = Expected<std::vector<MoveGroup>> (*)(const sched::Pipeline&, const Knobs&,
                                                     const MoveContext&);

struct Evidence;  // agents/roles.h

// A strategy the built-in planner proposes, with the speedup it expects and why.
struct Proposal {
  std::string strategy;
  double expected = 1;
  std::string why;
};

// What a strategy's proposal rule reads: the best's scheduled pipeline, the evidence, the
// machine, and the headroom (attainable / achieved) that caps every expectation.
struct ProposeInput {
  const sched::Pipeline& pipeline;
  const Evidence& evidence;
  const MoveContext& ctx;
  double headroom = 1;
};
using ProposeFn = std::optional<Proposal> (*)(const ProposeInput&);

enum class StrategyScope { generic, cpu };

struct Strategy {
  std::string id;    // snake_case, stable: stored in plans and recipes
  std::string name;  // "Register-block the reduction"
  StrategyScope scope = StrategyScope::generic;
  std::string description;  // what it does and why it helps
  std::string evidence;     // what in a profile or a spec suggests it
  std::vector<Knob> knobs;
  MovesFn moves = nullptr;  // nullptr: no schedule moves
  // Strategies the built-in brain applies through the autotuner instead of moves: the knob it
  // tunes ("threads", "lanes"). Empty with no moves: LLM brain and human only.
  std::string tuned_knob;
  // A rewrite of the program rather than of its loops (online_softmax): the implementer puts it
  // ahead of the recipe's loop scheduling, which then replays on the rewritten stages.
  bool rewrite_first = false;
  // The built-in planner's rule for it, for a strategy that is a unit of its own (its entry,
  // moves and rule in one file, agents/builtin/strategies/); nullptr: the planner's own rules
  // propose it (agents/builtin/planner.cpp).
  ProposeFn propose = nullptr;

  Knobs default_knobs() const;
  bool mechanical() const { return moves != nullptr || !tuned_knob.empty(); }
};

// The whole catalog, in a fixed order.
const std::vector<Strategy>& strategy_catalog();
// nullptr when unknown.
const Strategy* find_strategy(const std::string& id);

// One application of a strategy in a recipe.
struct Step {
  std::string strategy;
  Knobs knobs;
  nlohmann::json to_json() const;
  static Expected<Step> from_json(const nlohmann::json& j);
};

struct Recipe {
  std::vector<Step> steps;
  nlohmann::json to_json() const;
  static Expected<Recipe> from_json(const nlohmann::json& j);
  std::string to_string() const;  // "register_block(mr=6,nr=32) + parallel_outer()"
  bool has(const std::string& strategy) const;
};

// The result of replaying a recipe on the default pipeline: the schedule trace, and for each
// step the groups that did not apply (with the reason).
struct Realized {
  sched::Schedule schedule;
  std::vector<std::string> skipped;  // "vectorize_inner on y_r: cannot vectorize y_r.i: ..."
  std::vector<int> applied_groups;   // per step: how many groups applied
};

// Replays `recipe` on a copy of `base` (the default pipeline). Fails only when a step names an
// unknown or non-mechanical strategy.
Expected<Realized> realize_recipe(const sched::Pipeline& base, const Recipe& recipe,
                                  const MoveContext& ctx);

}  // namespace kf::agents
