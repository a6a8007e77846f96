// Mechanical forms of the register-tile strategies: register_block (with or without the
// epilogue fused), pack_operand and double_buffer_pack.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "agents/builtin/moves.h"
#include "agents/builtin/moves_internal.h"
#include "schedule/primitives.h"
#include "schedule/te_util.h"
#include "te/ast.h"

namespace kf::agents::builtin {

using sched::ComputeKind;
using sched::LoopKind;
using sched::Pipeline;
using sched::Stage;

// The moves that pack the operand a register tile `acc` (computed in `host`) streams along j into
// a contiguous panel once per column tile (host's loop jo): the first input read along j through
// plain variables, stored transposed when j is not its last dimension (W[o, i] of a linear layer),
// so the micro-kernel reads it unit-stride. With `transposed_only`, only such an operand.
std::vector<sched::Primitive> pack_moves(const Pipeline& p, const te::Expr& body,
                                         const std::string& host, const std::string& acc,
                                         const std::string& j, const std::string& jo, int64_t lanes,
                                         bool transposed_only) {
  for (const auto& a : accesses(body)) {
    if (a.kind != te::RefKind::input) continue;
    auto pos = std::find(a.index_vars.begin(), a.index_vars.end(), j);
    if (pos == a.index_vars.end()) continue;
    if (std::find(a.index_vars.begin(), a.index_vars.end(), "") != a.index_vars.end()) continue;
    const bool transposed = a.index_vars.back() != j;
    if (transposed_only && !transposed) continue;
    const std::string packed = fresh_stage(p, a.tensor + "_pk");
    std::vector<sched::Primitive> moves;
    moves.push_back(prim(fmt::format("cache_read {} {} {}", a.tensor, acc, packed)));
    if (transposed) {
      std::string order = "reorder_storage " + packed;
      for (const auto& v : a.index_vars)
        if (v != j) order += " " + v;
      order += " " + j;
      moves.push_back(prim(order));
    }
    moves.push_back(prim(fmt::format("compute_at {} {}.{}", packed, host, jo)));
    if (!transposed) moves.push_back(prim(fmt::format("vectorize {}.{} {}", packed, j, lanes)));
    return moves;
  }
  return {};
}

// The tile stage's part of a register tile (below): the tile stage (an accumulator of reduction
// r, or r itself) is computed at the host's row tile with r's reduction loops outside its rows ti
// and columns tj. Alone, it adds a second reduction to a host tiled already.
void append_tile_stage_moves(std::vector<sched::Primitive>& out, const Stage& host,
                             const std::string& hi, const std::string& tile, const Stage& r,
                             const std::string& ti, const std::string& tj, int64_t lanes) {
  out.push_back(prim(fmt::format("compute_at {} {}.{}.o", tile, host.name, hi)));
  std::string tile_order = "reorder " + tile;
  for (const auto& v : r.vars)
    if (v.name != ti && v.name != tj) tile_order += " " + v.name;
  for (int rv : r.loop_rvars()) tile_order += " " + r.reduce_vars[rv].name;
  out.push_back(prim(tile_order + " " + ti + " " + tj));
  out.push_back(prim(fmt::format("unroll {}.{}", tile, ti)));
  out.push_back(prim(fmt::format("vectorize {}.{} {}", tile, tj, lanes)));
}

// The moves of an MR x NR register tile: the host stage (whose loops carry the tile) splits its
// row var hi and column var hj and orders row tiles inside column tiles, rows unrolled, columns
// vectors; then the tile stage's part (above).
void append_tile_moves(std::vector<sched::Primitive>& out, const Stage& host, const std::string& hi,
                       const std::string& hj, const std::string& tile, const Stage& r,
                       const std::string& ti, const std::string& tj, int64_t mr, int64_t nr,
                       int64_t lanes) {
  const std::string io = hi + ".o", ii = hi + ".i", jo = hj + ".o", ji = hj + ".i";
  out.push_back(prim(fmt::format("split {}.{} {} {} {}", host.name, hi, io, ii, mr)));
  out.push_back(prim(fmt::format("split {}.{} {} {} {}", host.name, hj, jo, ji, nr)));
  std::string order = "reorder " + host.name;
  for (const auto& v : host.vars)
    if (v.name != hi && v.name != hj) order += " " + v.name;
  out.push_back(prim(order + fmt::format(" {} {} {} {}", jo, io, ii, ji)));
  out.push_back(prim(fmt::format("unroll {}.{}", host.name, ii)));
  out.push_back(prim(fmt::format("vectorize {}.{} {}", host.name, ji, lanes)));
  append_tile_stage_moves(out, host, hi, tile, r, ti, tj, lanes);
}

Expected<std::vector<MoveGroup>> moves_register_block(const Pipeline& p, const Knobs& k,
                                                      const MoveContext&) {
  const int64_t mr = knob(k, "mr", 6), nr = knob(k, "nr", 32), lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!register_block_target(p, s)) continue;
    const std::string j = tile_col_var(s), i = tile_row_var(s, j);
    const std::string acc = fresh_stage(p, s.name + "_acc");
    MoveGroup mg{s.name, {prim(fmt::format("cache_write {} {}", s.name, acc))}};
    if (j != s.vars.back().name) {
      std::string layout = "reorder_storage " + s.name;
      for (const auto& v : s.vars)
        if (v.name != j) layout += " " + v.name;
      mg.moves.push_back(prim(layout + " " + j));
    }
    append_tile_moves(mg.moves, s, i, j, acc, s, i, j, mr, nr, lanes);
    // An operand read transposed along j (W[o, i]) would be gathered lane by lane: the tile is
    // only worth having with that operand packed, so the packing is part of the same step.
    for (auto& m : pack_moves(p, s.body, s.name, acc, j, j + ".o", lanes, true))
      mg.moves.push_back(m);
    g.push_back(std::move(mg));
  }
  return g;
}

namespace {

// How consumer c reads producer stage `prod`: every access through plain variables of c, the
// same ones each time, one per dimension (z[n, k, p, q] in y[n, k, p, q] = max(z[n, k, p, q], 0)).
// Returns, for each dim of the producer, the consumer var that indexes it; empty if c reads it
// any other way (shifted, transposed into fewer dims, reduced over).
std::vector<std::string> pointwise_map(const Stage& c, const Stage& prod) {
  std::optional<std::vector<std::string>> map;
  bool ok = true;
  te::visit(c.body, [&](const te::Expr& x) {
    if (x.kind != te::ExprKind::access || x.ref.kind != te::RefKind::stage || x.name != prod.name)
      return;
    std::vector<std::string> m;
    for (size_t d = 0; d < x.index_count(); ++d)
      m.push_back(x.args[d].kind == te::ExprKind::name &&
                          x.args[d].ref.kind == te::RefKind::index_var
                      ? x.args[d].name
                      : "");
    if (map && *map != m) ok = false;
    map = m;
  });
  if (!ok || !map || map->size() != prod.vars.size() || c.reduction || c.is_recurrence()) return {};
  std::set<std::string> seen;
  for (const auto& v : *map)
    if (v.empty() || !seen.insert(v).second) return {};
  if (c.vars.size() != map->size()) return {};
  return *map;
}

// The elementwise chain from a reduction stage to the stage it ends in: r -> e1 -> ... -> end,
// each link read pointwise and by nothing else. The chain ends at an output, or at the last
// intermediate before a reader that is not such a link (the GELU before a softmax's row max and
// sum, which need whole rows): that stage is written once, from the tile. Fills the stages to
// inline and, for each dim of r, the end's var for it; false when r's own result goes anywhere
// else (register_block's case).
bool epilogue_chain(const Pipeline& p, int r, std::vector<std::string>& inline_stages, int& out,
                    std::vector<std::string>& dims) {
  dims.clear();
  for (const auto& v : p.stages[r].vars) dims.push_back(v.name);
  int cur = r;
  auto end_here = [&] {
    // Only a link that would have been inlined (computed at root) can end the chain.
    if (inline_stages.empty() || inline_stages.back() != p.stages[cur].name) return false;
    inline_stages.pop_back();
    out = cur;
    return true;
  };
  for (int guard = 0; guard < 16; ++guard) {
    const std::vector<int> rd = p.readers(cur);
    if (rd.size() != 1) return end_here();
    const Stage& c = p.stages[rd[0]];
    std::vector<std::string> m = pointwise_map(c, p.stages[cur]);
    if (m.empty() || is_cache_stage(c)) return end_here();
    if (c.output < 0 && (c.compute.kind == ComputeKind::at || !c.splits.empty())) return end_here();
    // dims[d] is cur's var for r's dim d; m[e] is c's var for cur's dim e.
    for (auto& d : dims) {
      const auto& cv = p.stages[cur].vars;
      auto it =
          std::find_if(cv.begin(), cv.end(), [&](const te::IndexVar& v) { return v.name == d; });
      if (it == cv.end()) return false;
      d = m[static_cast<size_t>(it - cv.begin())];
    }
    if (c.output >= 0) {
      out = rd[0];
      return c.compute.kind == ComputeKind::root;
    }
    if (c.compute.kind == ComputeKind::root) inline_stages.push_back(c.name);
    cur = rd[0];
  }
  return false;
}

}  // namespace

Expected<std::vector<MoveGroup>> moves_register_block_epilogue(const Pipeline& p, const Knobs& k,
                                                               const MoveContext& ctx) {
  const int64_t mr = knob(k, "mr", 6), nr = knob(k, "nr", 32), lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  struct TileEnd {
    int stage;
    std::string row, col;
    size_t group;
  };
  std::vector<TileEnd> ends;
  std::vector<std::string> inlined;
  std::set<std::string> fused;
  for (size_t ri = 0; ri < p.stages.size(); ++ri) {
    const Stage& s = p.stages[ri];
    if (!register_tileable(s) || s.compute.kind != ComputeKind::root || s.output >= 0) continue;
    if (read_only_in_part(p, s)) continue;
    if (accumulator_of(p, s) >= 0 || !s.splits.empty()) continue;
    if (s.loops.size() != s.vars.size() + s.loop_rvars().size()) continue;
    std::vector<std::string> inl, dims;
    int oi = -1;
    if (!epilogue_chain(p, static_cast<int>(ri), inl, oi, dims)) continue;
    const Stage& o = p.stages[oi];
    if (!o.splits.empty() || o.loops.size() != o.vars.size()) continue;
    const std::string j = s.vars.back().name, i = tile_row_var(s, j);
    size_t id = 0;
    while (s.vars[id].name != i) ++id;
    const std::string oi_v = dims[id], oj_v = dims.back();
    if (o.vars.back().name != oj_v) continue;  // the tile's vectors must be the output's rows
    // A second reduction whose chain ends in the same tile (09's gate and up projections, both
    // read by h) is computed into it too: one group, both accumulators in registers.
    auto same = std::find_if(ends.begin(), ends.end(), [&](const TileEnd& e) {
      return e.stage == oi && e.row == oi_v && e.col == oj_v;
    });
    const bool joins = same != ends.end();
    MoveGroup fresh{s.name, {}};
    MoveGroup& mg = joins ? g[same->group] : fresh;
    for (const auto& e : inl)
      if (std::find(inlined.begin(), inlined.end(), e) == inlined.end()) {
        mg.moves.push_back(prim("compute_inline " + e));
        inlined.push_back(e);
      }
    // The reduction itself is the tile, computed at the end stage's row tile.
    if (joins)
      append_tile_stage_moves(mg.moves, o, oi_v, s.name, s, i, j, lanes);
    else
      append_tile_moves(mg.moves, o, oi_v, oj_v, s.name, s, i, j, mr, nr, lanes);
    for (auto& m : pack_moves(p, s.body, o.name, s.name, j, oj_v + ".o", lanes, false))
      mg.moves.push_back(m);
    if (!joins) {
      ends.push_back({oi, oi_v, oj_v, g.size()});
      g.push_back(std::move(fresh));
    }
    fused.insert(s.name);
  }
  // The other GEMM-like reductions (09's down projection) get the plain tile in the same step:
  // left naive, they would dominate every measurement of this one (and the tuning of its knobs).
  if (g.empty()) return g;
  auto plain = moves_register_block(p, k, ctx);
  if (!plain) return plain.error();
  for (MoveGroup& mg : *plain)
    if (!fused.contains(mg.target)) g.push_back(std::move(mg));
  return g;
}

Expected<std::vector<MoveGroup>> moves_pack_operand(const Pipeline& p, const Knobs& k,
                                                    const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    const int ai = accumulator_of(p, s);
    if (ai < 0) continue;
    const Stage& acc = p.stages[ai];
    if (acc.compute.kind != ComputeKind::at || acc.vars.size() < 2) continue;
    // The tile's vector var: its vectorized loop (register_block's column var).
    std::string j = acc.vars.back().name;
    for (const auto& l : acc.loops)
      if (l.kind == LoopKind::vectorized &&
          std::any_of(acc.vars.begin(), acc.vars.end(),
                      [&](const te::IndexVar& v) { return v.name == l.name; }))
        j = l.name;
    // The j.o loop of the stage the tile lives in: the panel is packed once per column tile.
    std::string jo;
    for (const auto& sp : s.splits)
      if (sp.kind == sched::SplitKind::split && sp.parent == j) jo = sp.outer;
    if (jo.empty()) continue;
    std::vector<sched::Primitive> moves =
        pack_moves(p, acc.body, s.name, acc.name, j, jo, lanes, false);
    if (!moves.empty()) g.push_back({s.name, std::move(moves)});
  }
  return g;
}

// For a pack (cache_read stage) filled at a serial or parallel loop (one chunk of it per
// thread), the loop of its reader that can carry
// the next panel's rows (its outermost serial reduction loop: the micro-kernel's k); "" when the
// pack is not such a stage or is double buffered already.
std::string double_buffer_carrier(const Pipeline& p, const Stage& s) {
  if (s.origin != sched::StageOrigin::cache_read || s.reduction || s.double_buffer ||
      s.compute.kind != ComputeKind::at || s.loops.empty())
    return "";
  const int host = p.find(s.compute.stage);
  if (host < 0) return "";
  const int l = p.stages[host].find_loop(s.compute.loop);
  const LoopKind lk = l < 0 ? LoopKind::vectorized : p.stages[host].loops[l].kind;
  if (lk != LoopKind::serial && lk != LoopKind::parallel) return "";
  const int si = p.find(s.name);
  for (int r : p.readers(si)) {
    const Stage& c = p.stages[r];
    for (const sched::Loop& loop : c.loops)
      if (loop.reduce && (loop.kind == LoopKind::serial || loop.kind == LoopKind::unrolled))
        return ref(c, loop.name);
  }
  return "";
}

Expected<std::vector<MoveGroup>> moves_double_buffer(const Pipeline& p, const Knobs& k,
                                                     const MoveContext&) {
  const int64_t every = knob(k, "every", 32);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    const std::string carrier = double_buffer_carrier(p, s);
    if (carrier.empty()) continue;
    g.push_back({s.name, {prim(fmt::format("double_buffer {} {} {}", s.name, carrier, every))}});
  }
  return g;
}

}  // namespace kf::agents::builtin
