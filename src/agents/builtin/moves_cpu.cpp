// Mechanical forms of strategies about cache lines and threads: aligned_loads (rows padded to
// whole cache lines), split_k_parallel (a reduction split across threads when its output is too
// small to share) and avoid_false_sharing (parallel chunks of whole lines).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "agents/builtin/moves.h"
#include "agents/builtin/moves_internal.h"
#include "schedule/primitives.h"

namespace kf::agents::builtin {

using sched::ComputeKind;
using sched::LoopKind;
using sched::Pipeline;
using sched::Stage;

namespace {

// A cache line's worth of a float stage's elements (f32: 16, f64: 8).
int64_t line_elems(const Pipeline& p) {
  return p.task && p.task->dtype == DType::f64 ? 8 : 16;
}

// The product of the extents of S's pure dims at the bench shape.
int64_t outputs_per_call(const Stage& s, const Bindings* bench) {
  int64_t n = 1;
  for (const te::IndexVar& v : s.vars) n *= bench_extent(bench, v.hi);
  return n;
}

// The roots (split-tree variables) of stage c's vectorized loop; empty if it has none.
std::set<std::string> vector_roots(const Stage& c) {
  for (const sched::Loop& l : c.loops)
    if (l.kind == LoopKind::vectorized) return sched::loop_roots(c, l.name);
  return {};
}

// Whether stage c's vector loop walks the rows of s (its dim d, the innermost stored) in every
// access c makes to s: dim d indexed by the vector loop's variable, no other dim by it. A vector
// loop that gathers across s's rows instead would only see its strides become a power of two
// (22's statistics vectorized across channels: 0.96x once z's rows were padded from 62 to 64).
bool walks_rows(const Stage& c, const Stage& s, size_t d) {
  const std::set<std::string> roots = vector_roots(c);
  bool found = false, ok = true;
  te::visit(c.body, [&](const te::Expr& x) {
    if (x.kind != te::ExprKind::access || x.ref.kind != te::RefKind::stage || x.name != s.name)
      return;
    found = true;
    for (size_t k = 0; k < x.index_count(); ++k) {
      bool uses_root = false;
      te::visit(x.args[k], [&](const te::Expr& n) {
        uses_root = uses_root || (n.kind == te::ExprKind::name && roots.count(n.name));
      });
      const bool plain = x.args[k].kind == te::ExprKind::name && roots.count(x.args[k].name);
      if (k == d ? !plain : uses_root) ok = false;
    }
  });
  return found && ok;
}

}  // namespace

std::vector<int> misaligned_rows(const Pipeline& p) {
  std::vector<int> out;
  if (!p.task) return out;
  const BenchShape bench(*p.task);
  if (!bench.env) return out;
  const int64_t line = line_elems(p);
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const Stage& s = p.stages[i];
    if (s.output >= 0 || s.compute.kind != ComputeKind::root || s.vars.size() < 2) continue;
    if (s.type != te::ValueType::f64 || s.row_align > 0 || s.storage_order.empty()) continue;
    const auto d = static_cast<size_t>(s.storage_order.back());
    const int64_t row = bench_extent(bench.env, s.vars[d].hi);
    // A row shorter than a line would mostly be padding.
    if (row < line || row % line == 0) continue;
    // Some vector loop walks the rows and none gathers across them.
    bool vector = false, across = false;
    if (has_kind(s, LoopKind::vectorized)) {
      const bool own = vector_roots(s).count(s.vars[d].name) > 0;
      vector = vector || own;
      across = across || !own;
    }
    for (int c : p.consumers(static_cast<int>(i))) {
      const Stage& r = p.stages[static_cast<size_t>(c)];
      if (!has_kind(r, LoopKind::vectorized)) continue;
      const bool walks = walks_rows(r, s, d);
      vector = vector || walks;
      across = across || !walks;
    }
    if (vector && !across) out.push_back(static_cast<int>(i));
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_aligned_loads(const Pipeline& p, const Knobs&,
                                                     const MoveContext&) {
  return per_stage(p, misaligned_rows(p), "align_storage");
}

std::vector<SplitK> split_k_candidates(const Pipeline& p, int threads) {
  std::vector<SplitK> out;
  if (threads <= 1 || !p.task) return out;
  const BenchShape bench(*p.task);
  if (!bench.env) return out;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const Stage& s = p.stages[i];
    if (!s.reduction || s.compute.kind != ComputeKind::root || s.loop_rvars().size() != 1) continue;
    if (has_kind(s, LoopKind::parallel) || has_kind(s, LoopKind::vectorized) || !s.splits.empty())
      continue;
    if (s.body.reduce_op == te::ReduceOp::argmax || s.body.reduce_op == te::ReduceOp::argmin)
      continue;
    const te::IndexVar& r = s.reduce_vars[static_cast<size_t>(s.loop_rvars()[0])];
    // Too few outputs for every thread to get some, and a reduction long enough that a slice
    // per thread outweighs the fork and the combine.
    if (outputs_per_call(s, bench.env) >= threads) continue;
    const int64_t steps = bench_extent(bench.env, r.hi);
    if (steps < 1024 * threads) continue;
    out.push_back({static_cast<int>(i), (steps + threads - 1) / threads});
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_split_k_parallel(const Pipeline& p, const Knobs&,
                                                        const MoveContext& ctx) {
  std::vector<MoveGroup> g;
  for (const SplitK& k : split_k_candidates(p, ctx.threads)) {
    const Stage& s = p.stages[static_cast<size_t>(k.stage)];
    const te::IndexVar& r = s.reduce_vars[static_cast<size_t>(s.loop_rvars()[0])];
    const std::string t = fresh_loop(s, r.name + ".t"), c = fresh_loop(s, r.name + ".c");
    const std::string part = fresh_stage(p, s.name + "_sk");
    MoveGroup mg{s.name, {}};
    mg.moves.push_back(prim(fmt::format("split {} {} {} {}", ref(s, r.name), t, c, k.chunk)));
    mg.moves.push_back(prim(fmt::format("rfactor {} {}", ref(s, t), part)));
    // A thread's slice outermost; its partials accumulate in a local buffer (registers) and
    // are stored once: accumulated in place, the threads' few partials would share a line
    // and every step of each thread would invalidate it in the other's cache.
    std::string order = "reorder " + part + " " + t;
    for (const te::IndexVar& v : s.vars) order += " " + v.name;
    const std::string acc = fresh_stage(p, part + "_acc");
    mg.moves.push_back(prim(order + " " + c));
    mg.moves.push_back(prim(fmt::format("cache_write {} {}", part, acc)));
    mg.moves.push_back(prim(fmt::format("compute_at {} {}.{}", acc, part, t)));
    mg.moves.push_back(prim(fmt::format("parallel {}.{}", part, t)));
    g.push_back(std::move(mg));
  }
  return g;
}

std::vector<int> first_touch_stages(const Pipeline& p, const MoveContext& ctx) {
  std::vector<int> out;
  if (!ctx.machine || ctx.machine->numa_nodes < 2 || ctx.threads < 2) return out;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const Stage& s = p.stages[i];
    if (s.output >= 0 || s.compute.kind != ComputeKind::root || s.loops.empty()) continue;
    if (has_kind(s, LoopKind::parallel) || s.is_recurrence()) continue;
    const sched::Loop& outer = s.loops.front();
    if (!pure(outer) || outer.kind != LoopKind::serial) continue;
    bool parallel_reader = false;
    for (int r : p.readers(static_cast<int>(i)))
      parallel_reader =
          parallel_reader || has_kind(p.stages[static_cast<size_t>(r)], LoopKind::parallel);
    if (parallel_reader) out.push_back(static_cast<int>(i));
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_numa_first_touch(const Pipeline& p, const Knobs&,
                                                        const MoveContext& ctx) {
  std::vector<MoveGroup> g;
  for (int i : first_touch_stages(p, ctx)) {
    const Stage& s = p.stages[static_cast<size_t>(i)];
    g.push_back({s.name, {prim("parallel " + ref(s, s.loops.front().name))}});
  }
  return g;
}

std::vector<int> line_sharing_loops(const Pipeline& p, int threads) {
  std::vector<int> out;
  if (threads <= 1) return out;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const Stage& s = p.stages[i];
    if (s.compute.kind != ComputeKind::root || s.storage_order.empty()) continue;
    for (const sched::Loop& l : s.loops) {
      if (l.kind != LoopKind::parallel || !pure(l)) continue;
      // The parallel loop walks the stage's innermost stored dim itself: each iteration writes
      // one element, so the chunk boundaries between threads fall inside lines.
      const auto d = static_cast<size_t>(s.storage_order.back());
      if (l.name == s.vars[d].name) out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_avoid_false_sharing(const Pipeline& p, const Knobs& k,
                                                           const MoveContext& ctx) {
  const int64_t line = knob(k, "line", line_elems(p));
  std::vector<MoveGroup> g;
  for (int i : line_sharing_loops(p, ctx.threads)) {
    const Stage& s = p.stages[static_cast<size_t>(i)];
    for (const sched::Loop& l : s.loops) {
      if (l.kind != LoopKind::parallel) continue;
      const std::string o = fresh_loop(s, l.name + ".ln"), in = fresh_loop(s, l.name + ".li");
      g.push_back({s.name,
                   {prim(fmt::format("split {} {} {} {}", ref(s, l.name), o, in, line)),
                    prim(fmt::format("parallel {}.{}", s.name, o))}});
    }
  }
  return g;
}

}  // namespace kf::agents::builtin
