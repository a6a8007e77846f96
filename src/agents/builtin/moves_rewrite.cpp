// Mechanical forms of the strategies that rewrite a stage's arithmetic rather than its loops.
#include <fmt/format.h>

#include "agents/builtin/moves.h"
#include "schedule/primitives.h"

namespace kf::agents::builtin {

bool reciprocal_applies(const sched::Pipeline& p, const std::string& stage) {
  auto move = sched::parse_primitive("reciprocal " + stage);
  KF_CHECK(move.has_value()) << move.error().message();
  sched::Pipeline trial = p;
  return sched::apply_primitive(trial, *move).ok();
}

Expected<std::vector<MoveGroup>> moves_strength_reduce(const sched::Pipeline& p, const Knobs&,
                                                       const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const sched::Stage& s : p.stages) {
    if (!reciprocal_applies(p, s.name)) continue;
    auto move = sched::parse_primitive("reciprocal " + s.name);
    KF_CHECK(move.has_value()) << move.error().message();
    g.push_back({s.name, {*move}});
  }
  return g;
}

}  // namespace kf::agents::builtin
