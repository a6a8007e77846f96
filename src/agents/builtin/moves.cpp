// Mechanical forms of the catalog's strategies. Each reads the pipeline's current schedule state
// and proposes groups of primitives; the schedule layer decides legality.
#include "agents/builtin/moves.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "agents/builtin/moves_internal.h"
#include "schedule/primitives.h"
#include "schedule/te_util.h"
#include "te/ast.h"

namespace kf::agents::builtin {

int64_t knob(const Knobs& k, const std::string& name, int64_t fallback) {
  auto it = k.find(name);
  return it == k.end() ? fallback : it->second;
}

sched::Primitive prim(const std::string& text) {
  auto p = sched::parse_primitive(text);
  KF_CHECK(p.has_value()) << "built-in move is malformed: " << text << ": " << p.error().message();
  return *p;
}

std::vector<MoveGroup> per_stage(const sched::Pipeline& p, const std::vector<int>& stages,
                                 const std::string& verb) {
  std::vector<MoveGroup> g;
  for (int i : stages) {
    const std::string& name = p.stages[static_cast<size_t>(i)].name;
    g.push_back({name, {prim(verb + " " + name)}});
  }
  return g;
}

using sched::ComputeKind;
using sched::LoopKind;
using sched::Pipeline;
using sched::Stage;

bool computed(const Stage& s) {
  return s.compute.kind != ComputeKind::inlined;
}

bool has_kind(const Stage& s, LoopKind k) {
  return std::any_of(s.loops.begin(), s.loops.end(),
                     [&](const sched::Loop& l) { return l.kind == k; });
}

bool pure(const sched::Loop& l) {
  return !l.reduce && !l.scan;
}

std::string ref(const Stage& s, const std::string& loop) {
  return s.name + "." + loop;
}

// A loop name not used in stage s: base, base2, base3...
std::string fresh_loop(const Stage& s, const std::string& base) {
  auto used = [&](const std::string& n) {
    if (s.find_loop(n) >= 0) return true;
    return std::any_of(s.splits.begin(), s.splits.end(), [&](const sched::Split& sp) {
      return sp.parent == n || sp.outer == n || sp.inner == n;
    });
  };
  if (!used(base)) return base;
  for (int i = 2;; ++i)
    if (!used(base + std::to_string(i))) return base + std::to_string(i);
}

std::string fresh_stage(const Pipeline& p, const std::string& base) {
  auto used = [&](const std::string& n) {
    if (p.find(n) >= 0) return true;
    for (const auto& t : p.task->inputs)
      if (t.name == n) return true;
    for (const auto& t : p.task->outputs)
      if (t.name == n) return true;
    for (const auto& d : p.task->dims)
      if (d == n) return true;
    return false;
  };
  if (!used(base)) return base;
  for (int i = 2;; ++i)
    if (!used(base + std::to_string(i))) return base + std::to_string(i);
}

// The pure loops of a stage, in nest order (names).
std::vector<std::string> pure_loops(const Stage& s) {
  std::vector<std::string> v;
  for (const auto& l : s.loops)
    if (pure(l)) v.push_back(l.name);
  return v;
}

Expected<std::vector<MoveGroup>> moves_change_layout(const Pipeline& p, const Knobs& k,
                                                     const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    const std::optional<LayoutChange> c = layout_change(p, s);
    if (!c) continue;
    const std::string j = s.vars.back().name;
    MoveGroup mg{s.name, {prim(fmt::format("cache_read {} {} {}", c->input, s.name, c->copy))}};
    std::string order = "reorder_storage " + c->copy;
    for (const auto& d : c->order) order += " " + d;
    mg.moves.push_back(prim(order));
    if (!c->at.empty()) mg.moves.push_back(prim(fmt::format("compute_at {} {}", c->copy, c->at)));
    // The reduction outside j, the vectors along j.
    std::string nest = "reorder " + s.name;
    for (const auto& l : s.loops)
      if (l.name != j) nest += " " + l.name;
    mg.moves.push_back(prim(nest + " " + j));
    mg.moves.push_back(prim(fmt::format("vectorize {} {}", ref(s, j), lanes)));
    g.push_back(std::move(mg));
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_inline_elementwise(const Pipeline& p, const Knobs&,
                                                          const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (s.output >= 0 || s.reduction || s.is_recurrence() || s.compute.kind != ComputeKind::root)
      continue;
    if (is_cache_stage(s) || inlining_recomputes(p, s)) continue;
    g.push_back({s.name, {prim("compute_inline " + s.name)}});
  }
  return g;
}

// Whether every read of stage `name` in e indexes it by each variable in `vars` (a plain index,
// in some dimension): then iterations of loops over those variables read disjoint parts of it.
bool indexed_by_all(const te::Expr& e, const std::string& name, const std::set<std::string>& vars) {
  bool all = true;
  te::visit(e, [&](const te::Expr& x) {
    if (x.kind != te::ExprKind::access || x.ref.kind != te::RefKind::stage || x.name != name)
      return;
    for (const auto& v : vars) {
      bool found = false;
      for (size_t d = 0; d < x.index_count(); ++d)
        found |= x.args[d].kind == te::ExprKind::name && x.args[d].name == v;
      all &= found;
    }
  });
  return all;
}

namespace {

// Whether some access to s in e indexes one of s's dims `dims` with an expression that reads
// one of `vars`; also when e does not read s itself (its readers are computed inside the stage
// e belongs to, with variables of their own: nothing is known).
bool may_walk_dims(const te::Expr& e, const Stage& s, const std::set<std::string>& dims,
                   const std::set<std::string>& vars) {
  bool walks = false, found = false;
  te::visit(e, [&](const te::Expr& x) {
    if (x.kind != te::ExprKind::access || x.ref.kind != te::RefKind::stage || x.name != s.name)
      return;
    found = true;
    for (size_t k = 0; k < x.index_count() && k < s.vars.size(); ++k) {
      if (!dims.count(s.vars[k].name)) continue;
      te::visit(x.args[k], [&](const te::Expr& n) {
        walks = walks || (n.kind == te::ExprKind::name && vars.count(n.name));
      });
    }
  });
  return walks || !found;
}

// For each stage computed inside `host` (through compute_at chains), its pure vars that the
// host's variables `vars` fix, each with the host var that fixes it: the host reads the stage (or
// a stage that reads it) at a plain index of a fixed var. 03's y computes att at y.s.o and reads
// att[b, s, h, c]: att's i is fixed by y's s, b by b. A var read at different values in two
// places is not fixed.
std::map<std::string, std::map<std::string, std::string>> fixed_vars(
    const Pipeline& p, const Stage& host, const std::set<std::string>& vars) {
  std::map<std::string, std::map<std::string, std::string>> fixed;  // the host, stages read so far
  auto& own = fixed[host.name];
  for (const auto& v : vars) own[v] = v;
  const int hi = p.find(host.name);
  // Readers come after what they read: from the host down the program order, reversed.
  for (int xi = static_cast<int>(p.stages.size()) - 1; xi >= 0; --xi) {
    const Stage& x = p.stages[static_cast<size_t>(xi)];
    if (xi != hi && sched::root_host(p, xi) != hi) continue;
    if (!fixed.count(x.name)) continue;  // not read by anything inside the host
    const std::map<std::string, std::string> fx = fixed.at(x.name);
    te::visit(x.body, [&](const te::Expr& e) {
      if (e.kind != te::ExprKind::access || e.ref.kind != te::RefKind::stage) return;
      const int yi = p.find(e.name);
      if (yi < 0 || yi == hi || sched::root_host(p, yi) != hi) return;
      const Stage& y = p.stages[static_cast<size_t>(yi)];
      std::map<std::string, std::string> fy;
      for (size_t d = 0; d < e.index_count() && d < y.vars.size(); ++d) {
        const te::Expr& a = e.args[d];
        if (a.kind != te::ExprKind::name || a.ref.kind != te::RefKind::index_var) continue;
        auto it = fx.find(a.name);
        if (it != fx.end()) fy[y.vars[d].name] = it->second;
      }
      auto [it, first] = fixed.try_emplace(y.name, fy);
      if (first) return;
      std::map<std::string, std::string> both;  // fixed by every read
      for (const auto& [v, o] : it->second)
        if (fy.count(v) && fy.at(v) == o) both[v] = o;
      it->second = std::move(both);
    });
  }
  return fixed;
}

// Whether each iteration of the host's loops over `vars` reads its own part of s (s computed
// there is never computed twice): every consumer of s reads it at plain indices of the vars the
// host fixes in it, and each host var fixes one. Without it, 03's value projection vv, read by
// att over all keys j <= i, went into the rows of y's register tile with att and was computed
// again for every block of six rows (the candidate timed out).
bool reads_own_part(const Pipeline& p, const Stage& host, const Stage& s,
                    const std::set<std::string>& vars) {
  const auto fixed = fixed_vars(p, host, vars);
  for (int ci : p.consumers(p.find(s.name))) {
    const Stage& c = p.stages[static_cast<size_t>(ci)];
    auto it = fixed.find(c.name);
    if (it == fixed.end()) return false;
    std::set<std::string> cvars, origins;
    for (const auto& [v, o] : it->second) {
      cvars.insert(v);
      origins.insert(o);
    }
    if (origins.size() != vars.size() || !indexed_by_all(c.body, s.name, cvars)) return false;
  }
  return true;
}

}  // namespace

Expected<std::vector<MoveGroup>> moves_fuse_into_consumer(const Pipeline& p, const Knobs&,
                                                          const MoveContext&) {
  std::vector<MoveGroup> g;
  // Later stages first, so a chain ms_r → ms → y lands in y's row loop link by link.
  Pipeline work = p;
  for (int si = static_cast<int>(work.stages.size()) - 1; si >= 0; --si) {
    const Stage& s = work.stages[si];
    if (s.output >= 0 || s.compute.kind != ComputeKind::root || is_cache_stage(s)) continue;
    if (s.is_recurrence()) continue;
    const std::vector<int> cons = work.consumers(si);
    if (cons.empty()) continue;
    // The stage every consumer lives in: the consumer itself at root, or the stage at root its
    // compute_at chain ends in (y_r_rf at y_r.b, y_r at y.b: y), with the loop of that stage
    // the chain enters it at ("" for a consumer at root).
    std::vector<std::string> entry(cons.size());
    int hi = -1;
    bool same = true;
    for (size_t k = 0; k < cons.size(); ++k) {
      const int h = sched::root_host(work, cons[k], &entry[k]);
      if (k > 0 && h != hi) same = false;
      hi = h;
    }
    if (!same || hi < 0) continue;
    const Stage& hs = work.stages[hi];
    std::vector<std::string> loops = pure_loops(hs);
    if (loops.empty()) continue;
    // The deepest of the host's loops whose iterations each read their own part of s (it and
    // every loop outside it index s in all the host's reads): s is computed there for just that
    // part (a row of 01's scores, j in 0..i + 1, at o.i: the causal half), never twice. A loop
    // inside it that does not index s (o.d) would compute the same part again per iteration. The
    // host's innermost loop stays inside: it is the one its vectors run along.
    // A stage tiled already (a register tile, or the host of one: its pure loops split) keeps
    // its whole tiles: computed per row of its reader, a tile of MR rows would shrink to one and
    // its packed panel would be filled again per row (50's GEMM + GELU tile fused into the
    // softmax's row loop: 85 ms against 21 ms). It may go to the host's outermost loop only if
    // that loop does not walk a tiled dim (01's batch loop, outside tiles of rows i); its
    // readers can still move into the reader's rows. A split reduction (rfactor's) does not
    // count.
    std::set<std::string> tiled_dims;
    for (const auto& sp : s.splits)
      for (const auto& v : s.vars)
        if (sp.parent == v.name) tiled_dims.insert(v.name);
    const bool tiled = accumulator_of(work, s) >= 0 || !tiled_dims.empty();
    size_t depth = 0;
    std::set<std::string> vars = sched::loop_roots(hs, loops[0]);
    if (tiled && may_walk_dims(hs.body, s, tiled_dims, vars)) continue;
    // Not even the outermost loop's iterations read their own parts (31's column mean mu[o], read
    // by v[b, o] in y's rows b): computed there, s would be computed again per iteration.
    if (!tiled && !reads_own_part(work, hs, s, vars)) continue;
    if (!tiled)
      while (depth + 2 < loops.size() &&
             hs.loops[static_cast<size_t>(hs.find_loop(loops[depth + 1]))].kind ==
                 LoopKind::serial) {
        std::set<std::string> next = vars;
        next.merge(sched::loop_roots(hs, loops[depth + 1]));
        if (!reads_own_part(work, hs, s, next)) break;
        vars = std::move(next);
        ++depth;
      }
    std::string loop = loops[depth];
    // A consumer computed inside host at loop L: fuse at that same loop (or outside it).
    for (const std::string& at : entry) {
      if (at.empty()) continue;
      const int a = hs.find_loop(at), b = hs.find_loop(loop);
      if (a >= 0 && b > a) loop = at;
    }
    MoveGroup mg{s.name, {prim("compute_at " + s.name + " " + ref(hs, loop))}};
    // Only a stage read in part (causal scores) computes less once fused, and only below the
    // host's outermost loop; otherwise the work is the same as at root, in another place (16's
    // chunk states at y.b, its y_r2 read whole at y.h; 03's attention at y.b).
    mg.locality_only = loop == loops[0] || !read_only_in_part(work, s);
    if (sched::apply_primitive(work, mg.moves[0]).ok()) g.push_back(std::move(mg));
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_vectorize_inner(const Pipeline& p, const Knobs& k,
                                                       const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!computed(s) || s.loops.empty() || has_kind(s, LoopKind::vectorized)) continue;
    if (transposing_pack(s)) continue;
    // Lanes along a row var would each run their own reduction, gathering its reads across
    // rows; rfactor_reduction runs the reduction itself as vectors instead.
    if (inline_row_reduction(s)) continue;
    const sched::Loop& inner = s.loops.back();
    if (!pure(inner) || inner.kind != LoopKind::serial) continue;
    g.push_back({s.name, {prim(fmt::format("vectorize {} {}", ref(s, inner.name), lanes))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_reorder_unit_stride(const Pipeline& p, const Knobs&,
                                                           const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!s.reduction || !computed(s) || s.is_recurrence() || s.loops.empty()) continue;
    if (!s.loops.back().reduce || s.vars.empty()) continue;
    // The loop of the stage's last pure var, if it is a loop of its own (not split or fused).
    const std::string j = s.vars.back().name;
    if (s.find_loop(j) < 0) continue;
    // Some operand's last index moves with j at unit stride (B[k, j], a stencil's x[i, j + b]):
    // make j the unit-stride inner loop.
    bool strided = false;
    for (const auto& a : accesses(s.body))
      strided |= std::find(a.last_unit.begin(), a.last_unit.end(), j) != a.last_unit.end();
    if (!strided) continue;
    std::string order = "reorder " + s.name;
    for (const auto& l : s.loops)
      if (l.name != j) order += " " + l.name;
    order += " " + j;
    g.push_back({s.name, {prim(order)}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_rfactor_reduction(const Pipeline& p, const Knobs& k,
                                                         const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!row_reduction(s) || has_kind(s, LoopKind::vectorized)) continue;
    // Long rows along j with an operand copied transposed vectorize better along j
    // (change_layout) than as a horizontal sum per element; attention's scores get that form
    // once fused into their reader's rows.
    if (left_to_change_layout(p, s)) continue;
    // A GEMM's dot products are register_block's: each loaded vector then feeds several FMAs.
    // As vector partial sums every load feeds one (and a transposed operand is gathered).
    if (register_block_target(p, s)) continue;
    const std::string r = s.loops.back().name;
    const std::string ro = fresh_loop(s, r + ".vo"), ri = fresh_loop(s, r + ".vi");
    const std::string rf = fresh_stage(p, s.name + "_rf");
    MoveGroup mg{s.name, {}};
    mg.moves.push_back(prim(fmt::format("split {} {} {} {}", ref(s, r), ro, ri, lanes)));
    mg.moves.push_back(prim(fmt::format("rfactor {} {}", ref(s, ri), rf)));
    // The partials' loops: pure loops, then the reduction's: put the lanes innermost.
    std::string order = "reorder " + rf;
    for (const auto& l : s.loops)
      if (l.name != r) order += " " + l.name;
    order += " " + ro + " " + ri;
    mg.moves.push_back(prim(order));
    mg.moves.push_back(prim(fmt::format("vectorize {}.{} {}", rf, ri, lanes)));
    std::vector<std::string> pl = pure_loops(s);
    if (!pl.empty())
      mg.moves.push_back(prim(fmt::format("compute_at {} {}", rf, ref(s, pl.back()))));
    g.push_back(std::move(mg));
  }
  // Reductions inside a definition have no loop to split: the lowering runs them as vectors.
  for (const Stage& s : p.stages)
    if (inline_row_reduction(s))
      g.push_back({s.name, {prim(fmt::format("vectorize_reductions {} {}", s.name, lanes))}});
  return g;
}

Expected<std::vector<MoveGroup>> moves_parallel_outer(const Pipeline& p, const Knobs&,
                                                      const MoveContext& ctx) {
  std::vector<MoveGroup> g;
  if (ctx.threads <= 1) return g;
  for (const Stage& s : p.stages) {
    if (s.compute.kind != ComputeKind::root || s.loops.empty()) continue;
    if (has_kind(s, LoopKind::parallel)) continue;
    const sched::Loop& outer = s.loops.front();
    if (!pure(outer) || outer.kind != LoopKind::serial) continue;
    g.push_back({s.name, {prim("parallel " + ref(s, outer.name))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_fuse_parallel_loops(const Pipeline& p, const Knobs&,
                                                           const MoveContext& ctx) {
  std::vector<MoveGroup> g;
  if (ctx.threads <= 1) return g;
  for (const Stage& s : p.stages) {
    if (s.compute.kind != ComputeKind::root || s.loops.size() < 3) continue;
    if (has_kind(s, LoopKind::parallel)) continue;
    const sched::Loop &a = s.loops[0], &b = s.loops[1];
    if (!pure(a) || !pure(b) || a.kind != LoopKind::serial || b.kind != LoopKind::serial) continue;
    const std::string f = fresh_loop(s, a.name + "_" + b.name);
    g.push_back({s.name,
                 {prim(fmt::format("fuse {} {} {} {}", s.name, a.name, b.name, f)),
                  prim("parallel " + ref(s, f))}});
  }
  return g;
}

// Whether register_block tiles s: GEMM-like with vectors along its column var, at root, read
// whole (fuse_into_consumer computes just the part read), not yet tiled, with its default loops
// (the strategy owns the stage's nest), and an output only in its own layout.
bool register_block_target(const Pipeline& p, const Stage& s) {
  if (!register_tileable(s) || s.compute.kind != ComputeKind::root) return false;
  if (read_only_in_part(p, s) || accumulator_of(p, s) >= 0) return false;
  if (s.loops.size() != s.vars.size() + s.loop_rvars().size() || !s.splits.empty()) return false;
  return tile_col_var(s) == s.vars.back().name || s.output < 0;
}

Expected<std::vector<MoveGroup>> moves_unroll_reduction(const Pipeline& p, const Knobs& k,
                                                        const MoveContext&) {
  const int64_t u = knob(k, "unroll", 4);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!s.reduction || !computed(s) || s.is_recurrence() || s.where_split) continue;
    // The outermost reduce loop of a register tile (k of C_acc), once.
    if (!register_tile(s)) continue;
    if (std::any_of(s.loops.begin(), s.loops.end(),
                    [](const sched::Loop& l) { return l.reduce && l.kind == LoopKind::unrolled; }))
      continue;
    std::string r;
    for (const auto& l : s.loops)
      if (l.reduce) {
        r = l.name;
        break;
      }
    if (r.empty()) continue;
    const std::string ro = fresh_loop(s, r + ".uo"), ri = fresh_loop(s, r + ".ui");
    g.push_back({s.name,
                 {prim(fmt::format("split {} {} {} {}", ref(s, r), ro, ri, u)),
                  prim(fmt::format("unroll {}", ref(s, ri)))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_accumulate_locally(const Pipeline& p, const Knobs&,
                                                          const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!s.reduction || s.compute.kind != ComputeKind::root || s.is_recurrence()) continue;
    if (accumulator_of(p, s) >= 0 || s.vars.size() < 2 || gemm_like(s) == false) continue;
    std::vector<std::string> pl = pure_loops(s);
    if (pl.size() < 2) continue;
    const std::string acc = fresh_stage(p, s.name + "_row");
    g.push_back({s.name,
                 {prim(fmt::format("cache_write {} {}", s.name, acc)),
                  prim(fmt::format("compute_at {} {}", acc, ref(s, pl.front())))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_tile_2d(const Pipeline& p, const Knobs& k,
                                               const MoveContext&) {
  const int64_t ti = knob(k, "ti", 32), tj = knob(k, "tj", 64);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (s.compute.kind != ComputeKind::root || s.reduction || s.loops.size() < 2) continue;
    if (!s.splits.empty() || has_kind(s, LoopKind::vectorized)) continue;
    const sched::Loop &a = s.loops[s.loops.size() - 2], &b = s.loops.back();
    if (!pure(a) || !pure(b)) continue;
    g.push_back(
        {s.name, {prim(fmt::format("tile {} {} {} {} {}", s.name, a.name, b.name, ti, tj))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_unroll_inner(const Pipeline& p, const Knobs& k,
                                                    const MoveContext&) {
  const int64_t u = knob(k, "unroll", 4);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!computed(s) || s.loops.size() < 2 || is_cache_stage(s)) continue;
    if (has_kind(s, LoopKind::unrolled)) continue;
    // The loop just outside a vectorized innermost loop, when it is serial and pure.
    if (s.loops.back().kind != LoopKind::vectorized) continue;
    const sched::Loop& l = s.loops[s.loops.size() - 2];
    if (!pure(l) || l.kind != LoopKind::serial) continue;
    const std::string lo = fresh_loop(s, l.name + ".uo"), li = fresh_loop(s, l.name + ".ui");
    g.push_back({s.name,
                 {prim(fmt::format("split {} {} {} {}", ref(s, l.name), lo, li, u)),
                  prim(fmt::format("unroll {}", ref(s, li)))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_streaming_stores(const Pipeline& p, const Knobs& k,
                                                        const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (s.output < 0 || s.nontemporal || s.loops.empty()) continue;
    if (p.task->outputs[static_cast<size_t>(s.output)].dtype != DType::f32) continue;
    MoveGroup mg{s.name, {}};
    // Streaming stores are whole vectors: an output whose loops the compiler vectorizes on its
    // own gets its innermost loop vectorized explicitly in the same step.
    if (!has_kind(s, LoopKind::vectorized)) {
      const sched::Loop& inner = s.loops.back();
      if (!pure(inner) || inner.kind != LoopKind::serial) continue;
      mg.moves.push_back(prim(fmt::format("vectorize {} {}", ref(s, inner.name), lanes)));
    }
    mg.moves.push_back(prim("nontemporal " + s.name));
    g.push_back(std::move(mg));
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_prefetch(const Pipeline& p, const Knobs& k,
                                                const MoveContext&) {
  const int64_t distance = knob(k, "distance", 4096);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!computed(s) || s.loops.empty()) continue;
    // A vectorized innermost loop over a plain variable that walks an input's rows.
    const sched::Loop& inner = s.loops.back();
    if (inner.kind != LoopKind::vectorized || inner.prefetch > 0 || !pure(inner)) continue;
    bool streams = false;
    for (const auto& a : accesses(s.body))
      if (a.kind == te::RefKind::input && !a.index_vars.empty() &&
          a.index_vars.back() == inner.name)
        streams = true;
    if (!streams) continue;
    g.push_back({s.name, {prim(fmt::format("prefetch {} {}", ref(s, inner.name), distance))}});
  }
  return g;
}

}  // namespace kf::agents::builtin
