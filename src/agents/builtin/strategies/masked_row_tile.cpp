// masked_row_tile, a strategy as a unit: its catalog entry, its mechanical form and the built-in
// planner's rule for it, in this one file (listed once in agents/builtin/strategies/units.def).
//
// A reduction over a range that moves with the row (causal attention's P @ V, `sum(j in 0..i +
// 1: pe[i, j] * v[j, d])`) runs inline, once per output vector: each vector of d walks all the
// row's keys again, reading p[i, j] once per vector, with one accumulator whose adds form a
// single dependence chain. An expert writes the row's output as a tile of vectors accumulated
// together: for each key, one broadcast of p and one FMA per vector, the chains independent.
// The moves: the row's columns split into tiles of `cols` (`split S.d d.o d.i COLS`,
// vectorized), the reduction masked into a stage of its own computed per tile (`mask_range`),
// its key loop outside the columns, which are unrolled vectors: registers.
#include <fmt/format.h>

#include <algorithm>

#include "agents/builtin/moves.h"
#include "agents/builtin/moves_internal.h"
#include "agents/roles.h"
#include "schedule/primitives.h"

namespace kf::agents::builtin {
namespace {

// The row tile of stage `s`'s moving-range reduction, or nothing when it does not apply: the
// reduction must mask into a stage that reads s's innermost variable, which must be s's
// innermost loop, unsplit.
std::optional<MoveGroup> row_tile(const sched::Pipeline& p, const sched::Stage& s, const Knobs& k) {
  if (s.vars.empty() || s.loops.empty() || s.compute.kind == sched::ComputeKind::inlined)
    return std::nullopt;
  const std::string x = s.vars.back().name;
  if (s.loops.back().name != x) return std::nullopt;
  const std::string m = sched::unique_stage_name(p, s.name + "_m");
  const int64_t cols = k.at("cols"), lanes = k.at("lanes");
  MoveGroup g{s.name,
              {prim(fmt::format("split {}.{} {}.o {}.i {}", s.name, x, x, x, cols)),
               prim(fmt::format("vectorize {}.{}.i {}", s.name, x, lanes)),
               prim(fmt::format("mask_range {} {}", s.name, m))}};
  sched::Pipeline trial = p;
  for (const sched::Primitive& move : g.moves)
    if (!sched::apply_primitive(trial, move).ok()) return std::nullopt;
  const sched::Stage& n = trial.stages[static_cast<size_t>(trial.find(m))];
  if (std::none_of(n.vars.begin(), n.vars.end(),
                   [&](const te::IndexVar& v) { return v.name == x; }))
    return std::nullopt;
  // The masked stage's loops with its reduction loops moved outside x: x innermost.
  std::string order;
  for (const sched::Loop& l : n.loops)
    if (l.name != x) order += " " + l.name;
  const std::vector<std::string> rest = {fmt::format("reorder {}{} {}", m, order, x),
                                         fmt::format("split {}.{} {}.o {}.i {}", m, x, x, x, lanes),
                                         fmt::format("vectorize {}.{}.i {}", m, x, lanes),
                                         fmt::format("unroll {}.{}.o", m, x)};
  for (const std::string& text : rest) {
    g.moves.push_back(prim(text));
    if (!sched::apply_primitive(trial, g.moves.back()).ok()) return std::nullopt;
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves(const sched::Pipeline& p, const Knobs& k,
                                       const MoveContext&) {
  std::vector<MoveGroup> out;
  for (const sched::Stage& s : p.stages)
    if (auto g = row_tile(p, s, k)) out.push_back(std::move(*g));
  return out;
}

// A moving-range reduction that reads its producers per row (they are computed inside its
// stage's loops: fused), so its own loop over the row's keys is what remains. On 01 after
// fusion, vector loops and the score layout: 1.30x the kernel (31.8 -> 24.4 ms).
std::optional<Proposal> propose(const ProposeInput& in) {
  int n = 0;
  const Knobs k = {{"cols", 64}, {"lanes", 16}};
  for (const sched::Stage& s : in.pipeline.stages) {
    bool fused = false;
    for (const sched::Stage& o : in.pipeline.stages)
      fused = fused || (o.compute.kind == sched::ComputeKind::at && o.compute.stage == s.name);
    n += fused && row_tile(in.pipeline, s, k).has_value();
  }
  if (n == 0) return std::nullopt;
  return Proposal{.strategy = "masked_row_tile",
                  .expected = std::min(in.headroom, 1.3),
                  .why = fmt::format("{} reductions over a range that moves with the row run "
                                     "inline once per output vector, one dependence chain each; "
                                     "masked into a stage, a row's vectors accumulate together in "
                                     "registers, one load of the weight per key",
                                     n)};
}

}  // namespace

Strategy masked_row_tile() {
  Strategy s;
  s.id = "masked_row_tile";
  s.name = "Register-tile a row's moving-range reduction";
  s.scope = StrategyScope::generic;
  s.description =
      "Mask a reduction whose range moves with the row (a causal P @ V) into a stage of its own "
      "over the static range, computed per tile of the row's columns, with its key loop outside "
      "the columns: the tile's vectors accumulate in registers, each key's weight loaded once.";
  s.evidence =
      "An inline reduction over a causal or windowed range inside a vectorized row: its loop "
      "runs once per output vector.";
  s.knobs = {{"cols", 64, {32, 64, 128}, "columns of the row per tile (a multiple of lanes)"},
             {"lanes", 16, {8, 16}, "vector lanes (16 = one AVX-512 register of f32)"}};
  s.moves = moves;
  s.propose = propose;
  return s;
}

}  // namespace kf::agents::builtin
