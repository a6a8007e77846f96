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

// Applies `texts` to `trial` as moves of `g`; false (and `g` incomplete) when one is refused.
bool add_moves(sched::Pipeline& trial, MoveGroup& g, const std::vector<std::string>& texts) {
  for (const std::string& text : texts) {
    g.moves.push_back(prim(text));
    if (!sched::apply_primitive(trial, g.moves.back()).ok()) return false;
  }
  return true;
}

// The row tile of stage `s`'s moving-range reduction over `rows` rows, or nothing when it does
// not apply: the reduction must mask into a stage that reads s's innermost variable x, which
// must be s's innermost loop, unsplit; with rows > 1, the row loop r directly outside it, whose
// stages (the reduction's producers, computed per row) move to the block of rows.
std::optional<MoveGroup> row_tile(const sched::Pipeline& p, const sched::Stage& s, const Knobs& k,
                                  int64_t rows) {
  if (s.vars.empty() || s.loops.empty() || !computed(s)) return std::nullopt;
  const std::string x = s.vars.back().name;
  if (s.loops.back().name != x) return std::nullopt;
  if (rows > 1 &&
      (s.loops.size() < 2 || s.loops[s.loops.size() - 2].kind != sched::LoopKind::serial))
    return std::nullopt;
  const std::string r = rows > 1 ? s.loops[s.loops.size() - 2].name : "";
  const std::string m = sched::unique_stage_name(p, s.name + "_m");
  const int64_t cols = k.at("cols"), lanes = k.at("lanes");
  const std::string S = s.name;
  // The stages computed at the row loop, consumers first (the order they are placed in).
  std::vector<std::string> at_row;
  for (size_t i = p.stages.size(); i-- > 0;)
    if (rows > 1 && p.stages[i].compute.kind == sched::ComputeKind::at &&
        p.stages[i].compute.stage == S && p.stages[i].compute.loop == r)
      at_row.push_back(p.stages[i].name);
  std::vector<std::string> texts;
  // Out of the row loop to the loop around it (a stage computed there, 01's packed keys, may read
  // them), producers first (a consumer still inside the row reads them from outside), then into
  // the block consumers first (a producer's loop must enclose its consumers).
  const size_t ri = s.loops.size() - 2;  // the row loop's index, when rows > 1
  for (auto a = at_row.rbegin(); a != at_row.rend(); ++a)
    texts.push_back(ri > 0 ? fmt::format("compute_at {} {}.{}", *a, S, s.loops[ri - 1].name)
                           : "compute_root " + *a);
  texts.push_back(fmt::format("split {}.{} {}.o {}.i {}", S, x, x, x, cols));
  if (rows > 1) {
    texts.push_back(fmt::format("split {}.{} {}.o {}.i {}", S, r, r, r, rows));
    texts.push_back(fmt::format("reorder {} {}.o {}.o {}.i {}.i", S, r, x, r, x));
  }
  texts.push_back(fmt::format("vectorize {}.{}.i {}", S, x, lanes));
  for (const std::string& a : at_row)
    texts.push_back(fmt::format("compute_at {} {}.{}.o", a, S, r));
  texts.push_back(fmt::format("mask_range {} {}", S, m));
  if (rows > 1) texts.push_back(fmt::format("compute_at {} {}.{}.o", m, S, x));
  MoveGroup g{S, {}};
  sched::Pipeline trial = p;
  if (!add_moves(trial, g, texts)) return std::nullopt;
  const sched::Stage& n = trial.stages[static_cast<size_t>(trial.find(m))];
  if (std::none_of(n.vars.begin(), n.vars.end(),
                   [&](const te::IndexVar& v) { return v.name == x; }))
    return std::nullopt;
  // The masked stage's loops with its reduction loops moved outside x (and the rows): each
  // key's weight is loaded once per row and its values once for all the rows.
  std::string order, tail;
  for (const sched::Loop& l : n.loops)
    if (l.name == r)
      tail = " " + r;
    else if (l.name != x)
      order += " " + l.name;
  texts = {fmt::format("reorder {}{}{} {}", m, order, tail, x),
           fmt::format("split {}.{} {}.o {}.i {}", m, x, x, x, lanes),
           fmt::format("vectorize {}.{}.i {}", m, x, lanes), fmt::format("unroll {}.{}.o", m, x)};
  if (rows > 1) texts.push_back(fmt::format("unroll {}.{}", m, r));
  if (!add_moves(trial, g, texts)) return std::nullopt;
  return g;
}

// The tile over `rows` rows where it applies, else over one row.
std::optional<MoveGroup> row_tile(const sched::Pipeline& p, const sched::Stage& s, const Knobs& k) {
  const int64_t rows = knob(k, "rows", 1);
  if (auto g = row_tile(p, s, k, rows)) return g;
  return rows > 1 ? row_tile(p, s, k, 1) : std::nullopt;
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
  const Knobs k = {{"cols", 64}, {"lanes", 16}, {"rows", 1}};
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
  s.knobs = {
      {"rows", 8, {1, 4, 8}, "rows per tile (one where the row loop is not next to the columns)"},
      {"cols", 64, {32, 64, 128}, "columns of the row per tile (a multiple of lanes)"},
      {"lanes", 16, {8, 16}, "vector lanes (16 = one AVX-512 register of f32)"}};
  s.moves = moves;
  s.propose = propose;
  return s;
}

}  // namespace kf::agents::builtin
