// uniform_gather_tile, a strategy as a unit: its catalog entry, its mechanical form and the
// built-in planner's rule for it, in this one file (listed once in
// agents/builtin/strategies/units.def).
//
// A register tile over rows that reads its operand through a per-row index (a grouped GEMM's
// rhs[grp[m], k, n], one weight matrix per group of rows) loads each weight vector once per row
// of the tile: the C++ compiler cannot know that the rows share a group, so a 6-row tile makes
// six loads per vector per k where a dense GEMM makes one, and the micro-kernel is bound by its
// loads. An expert writes the tile for one group and runs it where the rows agree, which is
// nearly every tile when groups are hundreds of rows long. The move: `specialize_uniform` on
// the loop that carries the tile (where its accumulator is computed): the body runs once more in
// a version whose index reads are merged, taken where they hold one value.
#include <fmt/format.h>

#include <algorithm>

#include "agents/builtin/moves.h"
#include "agents/builtin/moves_internal.h"
#include "agents/roles.h"
#include "schedule/primitives.h"

namespace kf::agents::builtin {
namespace {

// Whether an unrolled loop (the tile's rows) runs inside loop li of stage si: one of si's own
// loops after it, or a loop of a stage computed at li or a loop inside it.
bool unrolled_inside(const sched::Pipeline& p, size_t si, size_t li) {
  const sched::Stage& s = p.stages[si];
  for (size_t l = li + 1; l < s.loops.size(); ++l)
    if (s.loops[l].kind == sched::LoopKind::unrolled) return true;
  for (const sched::Stage& q : p.stages) {
    if (q.compute.kind != sched::ComputeKind::at || q.compute.stage != s.name) continue;
    const int at = s.find_loop(q.compute.loop);
    if (at < static_cast<int>(li)) continue;
    if (std::any_of(q.loops.begin(), q.loops.end(),
                    [](const sched::Loop& l) { return l.kind == sched::LoopKind::unrolled; }))
      return true;
  }
  return false;
}

// Per stage, the innermost loop a stage is computed at (the tile's accumulator) with unrolled
// rows inside it, when specialize_uniform accepts it (something inside gathers).
Expected<std::vector<MoveGroup>> moves(const sched::Pipeline& p, const Knobs&, const MoveContext&) {
  std::vector<MoveGroup> out;
  for (size_t si = 0; si < p.stages.size(); ++si) {
    const sched::Stage& s = p.stages[si];
    if (s.compute.kind == sched::ComputeKind::inlined) continue;
    for (size_t li = s.loops.size(); li-- > 0;) {
      const sched::Loop& l = s.loops[li];
      const bool hosts = std::any_of(p.stages.begin(), p.stages.end(), [&](const sched::Stage& q) {
        return q.compute.kind == sched::ComputeKind::at && q.compute.stage == s.name &&
               q.compute.loop == l.name;
      });
      if (!hosts || l.uniform || !unrolled_inside(p, si, li)) continue;
      MoveGroup g{s.name, {prim(fmt::format("specialize_uniform {}.{}", s.name, l.name))}};
      sched::Pipeline trial = p;
      if (sched::apply_primitive(trial, g.moves.back()).ok()) out.push_back(std::move(g));
      break;
    }
  }
  return out;
}

// A register tile whose rows gather their operand through an index: its loads, not its FMAs,
// bound it. On 14 (grouped GEMM, 6 x 64 tile): 1.20x the kernel (47.4 -> 39.4 ms).
std::optional<Proposal> propose(const ProposeInput& in) {
  auto g = moves(in.pipeline, {}, in.ctx);
  if (!g || g->empty()) return std::nullopt;
  return Proposal{.strategy = "uniform_gather_tile",
                  .expected = std::min(in.headroom, 1.3),
                  .why = fmt::format("{} register tiles read their operand through a per-row index "
                                     "(one load per row of the tile for each vector); a version "
                                     "of the tile for rows that share the index loads it once",
                                     g->size())};
}

}  // namespace

Strategy uniform_gather_tile() {
  Strategy s;
  s.id = "uniform_gather_tile";
  s.name = "Specialize a gathering tile for rows that agree";
  s.scope = StrategyScope::generic;
  s.description =
      "Give the loop that carries a register tile a second body for the iterations where the "
      "tile's rows read the same index (one group, one page): the operand is loaded once for "
      "all rows there, the original body runs elsewhere.";
  s.evidence =
      "A register tile over rows whose operand is read through an index tensor per row "
      "(grouped or ragged GEMM, gathered experts); load-bound micro-kernel.";
  s.knobs = {};
  s.moves = moves;
  s.propose = propose;
  return s;
}

}  // namespace kf::agents::builtin
