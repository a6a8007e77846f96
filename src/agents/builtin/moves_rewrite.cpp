// Mechanical forms of the strategies that change what a stage computes, or how often, rather
// than its loops: strength_reduce (reciprocals) and recompute_vs_store.
#include <fmt/format.h>

#include <set>

#include "agents/builtin/moves.h"
#include "agents/builtin/moves_internal.h"
#include "schedule/primitives.h"

namespace kf::agents::builtin {
namespace {

bool transcendental(te::Op op) {
  switch (op) {
    case te::Op::exp:
    case te::Op::log:
    case te::Op::tanh:
    case te::Op::erf:
    case te::Op::sigmoid:
    case te::Op::pow:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::vector<int> recomputed_transcendentals(const sched::Pipeline& p) {
  std::vector<int> out;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const sched::Stage& s = p.stages[i];
    if (s.compute.kind != sched::ComputeKind::inlined || s.reduction || s.loops.empty()) continue;
    bool costly = false;
    te::visit(s.body, [&](const te::Expr& e) {
      if (e.kind == te::ExprKind::call && transcendental(e.op)) costly = true;
    });
    if (costly && p.consumers(static_cast<int>(i)).size() >= 2) out.push_back(static_cast<int>(i));
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_recompute_vs_store(const sched::Pipeline& p, const Knobs& k,
                                                          const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (int i : recomputed_transcendentals(p)) {
    const sched::Stage& s = p.stages[static_cast<size_t>(i)];
    // Computed once per outer iteration of its last reader (a row, for a softmax), where every
    // other reader is computed too: the values stay in L1 between the readers. A reader
    // computed inside another stage (a row sum's vector partials) moves with the stage at root
    // that hosts it. They move latest first: an earlier one may be read by a later one (y_r
    // reads m through e).
    const std::vector<int> readers = p.consumers(i);
    const int last_index = readers.back();
    const sched::Stage& last = p.stages[static_cast<size_t>(last_index)];
    if (last.loops.empty() || last.loops[0].reduce || last.loops[0].scan) continue;
    const std::string at = last.name + "." + last.loops[0].name;
    std::set<int> hosts;
    for (int r : readers) {
      while (r >= 0 && p.stages[static_cast<size_t>(r)].compute.kind == sched::ComputeKind::at)
        r = p.find(p.stages[static_cast<size_t>(r)].compute.stage);
      if (r >= 0 && r != last_index) hosts.insert(r);
    }
    MoveGroup mg{s.name, {}};
    for (auto h = hosts.rbegin(); h != hosts.rend(); ++h)
      mg.moves.push_back(
          prim(fmt::format("compute_at {} {}", p.stages[static_cast<size_t>(*h)].name, at)));
    mg.moves.push_back(prim(fmt::format("compute_at {} {}", s.name, at)));
    const sched::Loop& inner = s.loops.back();
    if (!inner.reduce && !inner.scan && inner.kind == sched::LoopKind::serial)
      mg.moves.push_back(prim(fmt::format("vectorize {}.{} {}", s.name, inner.name, lanes)));
    g.push_back(std::move(mg));
  }
  return g;
}

bool reciprocal_applies(const sched::Pipeline& p, const std::string& stage) {
  sched::Pipeline trial = p;
  return sched::apply_primitive(trial, prim("reciprocal " + stage)).ok();
}

Expected<std::vector<MoveGroup>> moves_strength_reduce(const sched::Pipeline& p, const Knobs&,
                                                       const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const sched::Stage& s : p.stages) {
    if (reciprocal_applies(p, s.name)) g.push_back({s.name, {prim("reciprocal " + s.name)}});
  }
  return g;
}

}  // namespace kf::agents::builtin
