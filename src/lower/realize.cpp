#include "lower/realize.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "ir/ir_visitor.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "lower/loop_tree.h"
#include "lower/region.h"
#include "support/check.h"

namespace kf::lowering {

namespace {

using ir::Expr;
using ir::Stmt;
using sched::LoopKind;

struct Realization {
  int stage = -1;
  const sched::Stage* s = nullptr;
  std::unique_ptr<LoopTree> tree;
  BufferView view;
  std::vector<int> all;         // every loop, in nest order
  std::vector<int> init_order;  // pure loops inside the outermost reduction loop
  int first_reduce = -1;
};

Expr var(const std::string& name) {
  return ir::Var::make(ir::Type::i64(), name);
}

Expr product(const std::vector<Expr>& v) {
  Expr p = ir::i64(1);
  for (const Expr& e : v) p = p * e;
  return ir::simplify(p);
}

bool is_arg_reduce(const sched::Stage& s) {
  return s.reduction &&
         (s.body.reduce_op == te::ReduceOp::argmax || s.body.reduce_op == te::ReduceOp::argmin);
}

class Realizer {
 public:
  Realizer(const sched::Pipeline& p, const RealizeOptions& o) : p_(p), o_(o) {}

  Stmt run() {
    std::vector<int> roots;
    for (size_t s = 0; s < p_.stages.size(); ++s)
      if (p_.stages[s].compute.kind == sched::ComputeKind::root)
        roots.push_back(static_cast<int>(s));
    std::vector<std::pair<int, Region>> regions;
    for (int s : roots) {
      Region full = full_region(p_, s);
      views_[s] = root_view(s, full);
      regions.push_back({s, full});
    }
    std::vector<Stmt> body;
    for (auto& [s, full] : regions)
      body.push_back(
          ir::ProducerConsumer::make(p_.stages[s].name, true, realize(s, full, views_[s])));
    Stmt all = ir::Block::make(body);
    for (size_t i = regions.size(); i-- > 0;) {
      const int s = regions[i].first;
      if (p_.stages[s].output >= 0) continue;
      const BufferView& v = views_[s];
      Expr size = padded_size(p_.stages[s], regions[i].second.extent);
      all = ir::Allocate::make(v.name, v.storage, size, ir::MemoryKind::heap, all);
      if (!v.value_buffer.empty())
        all = ir::Allocate::make(v.value_buffer, arg_value_type(p_.stages[s]), size,
                                 ir::MemoryKind::heap, all);
    }
    return all;
  }

 private:
  ir::Type storage_type(const sched::Stage& s) const {
    if (s.output >= 0) return ir::type_of(p_.task->outputs[s.output].dtype);
    return value_type(*p_.task, s.type);
  }
  ir::Type arg_value_type(const sched::Stage& s) const {
    return value_type(*p_.task, s.body.args[0].type);
  }

  // The extents of stage s's buffer as stored: the innermost stored dim rounded up to a
  // multiple of s.row_align (align_storage, which only an intermediate of two or more dims
  // takes), so that every row starts where the first one does modulo a cache line.
  static std::vector<Expr> stored_extents(const sched::Stage& s, std::vector<Expr> extents) {
    if (s.row_align > 0) {
      const auto d = static_cast<size_t>(s.storage_order.back());
      const Expr a = ir::i64(s.row_align);
      extents[d] = ir::simplify((extents[d] + (a - ir::i64(1))) / a * a);
    }
    return extents;
  }
  static Expr padded_size(const sched::Stage& s, const std::vector<Expr>& extents) {
    return product(stored_extents(s, extents));
  }

  // A buffer named `name` holding `extents` elements per dim, starting at `mins`.
  BufferView make_view(int stage, const std::string& name, const std::vector<Expr>& logical,
                       const std::vector<Expr>& mins) const {
    const sched::Stage& s = p_.stages[stage];
    const std::vector<Expr> extents = stored_extents(s, logical);
    BufferView v;
    v.name = name;
    v.storage = storage_type(s);
    v.mins = mins;
    v.strides.assign(extents.size(), ir::i64(1));
    Expr stride = ir::i64(1);
    for (size_t k = s.storage_order.size(); k-- > 0;) {
      const int d = s.storage_order[k];
      v.strides[d] = stride;
      stride = ir::simplify(stride * extents[d]);
    }
    if (is_arg_reduce(s)) v.value_buffer = name + ".val";
    return v;
  }

  BufferView root_view(int stage, const Region& full) const {
    const sched::Stage& s = p_.stages[stage];
    std::vector<Expr> zeros(s.vars.size(), ir::i64(0));
    if (s.output < 0) return make_view(stage, s.name, full.extent, zeros);
    // Outputs keep the task's row-major layout (and a separate buffer of best values).
    BufferView v = make_view(stage, p_.task->outputs[s.output].name, full.extent, zeros);
    Expr stride = ir::i64(1);
    for (size_t d = s.vars.size(); d-- > 0;) {
      v.strides[d] = stride;
      stride = ir::simplify(stride * full.extent[d]);
    }
    if (is_arg_reduce(s)) v.value_buffer = s.name + ".val";
    return v;
  }

  int lanes_for(const sched::Stage& s, const sched::Loop& l) const {
    if (l.lanes > 0) return l.lanes;
    return s.type == te::ValueType::f64 && p_.task->dtype != DType::f64 ? o_.lanes_f32
                                                                        : o_.lanes_f64;
  }

  Stmt realize(int stage, const Region& region, const BufferView& view) {
    const sched::Stage& s = p_.stages[stage];
    NameGen tmp;
    ExprLowerer lo(p_, stage, {}, tmp);
    std::vector<TreeRoot> roots;
    for (size_t d = 0; d < s.vars.size(); ++d)
      roots.push_back({s.vars[d].name, region.min[d], region.extent[d], region.nominal[d]});
    for (int r : s.loop_rvars()) {
      Expr lo_e = lo.lower_static(s.reduce_vars[r].lo);
      Expr ext = ir::simplify(lo.lower_static(s.reduce_vars[r].hi) - lo_e);
      auto c = ir::as_const_int(ext);
      roots.push_back(
          {s.reduce_vars[r].name, lo_e, ext, c ? std::optional<int64_t>(*c) : std::nullopt});
    }
    NestContext start;
    start.tails = tail_depth_;
    start.in_tail = tail_depth_ > kFullTailNesting;
    Realization r;
    r.stage = stage;
    r.s = &s;
    r.tree = std::make_unique<LoopTree>(s, roots);
    r.view = view;
    for (size_t l = 0; l < s.loops.size(); ++l) {
      r.all.push_back(static_cast<int>(l));
      if (s.loops[l].reduce && r.first_reduce < 0) r.first_reduce = static_cast<int>(l);
    }
    if (r.first_reduce >= 0)
      for (size_t l = r.first_reduce; l < s.loops.size(); ++l)
        if (!s.loops[l].reduce) r.init_order.push_back(static_cast<int>(l));
    return emit(r, r.all, 0, start, false);
  }

  Stmt emit(const Realization& r, const std::vector<int>& order, size_t k, const NestContext& ctx,
            bool init) {
    if (k == order.size()) return point(r, ctx, init);
    if (!init && order[k] == r.first_reduce)
      return ir::Block::make(
          {emit(r, r.init_order, 0, ctx, true), emit_leaf(r, order, k, ctx, false)});
    return emit_leaf(r, order, k, ctx, init);
  }

  // The loop of leaf order[k] (or its partitioned/strip-mined form) and everything inside.
  Stmt emit_leaf(const Realization& r, const std::vector<int>& order, size_t k,
                 const NestContext& ctx, bool init) {
    const sched::Loop& loop = r.s->loops[order[k]];
    const std::string name = r.tree->var_name(loop.name);
    const Extent ext = r.tree->extent(loop.name, ctx);
    auto body = [&](NestContext c, Expr guard, bool exact) {
      c.bound.insert(loop.name);
      if (!exact) c.overshoot.insert(loop.name);
      return after_bind(r, order, k, c, init, guard);
    };
    if (loop.kind == LoopKind::vectorized && lanes_for(*r.s, loop) > 1)
      return emit_vector(r, loop, name, ext, ctx, lanes_for(*r.s, loop), body);

    // An rfactor predicate (outer * factor + inner < extent) holds for whole iterations of its
    // outer loop but the last: partition that loop as a split's outer loop would be.
    const std::optional<sched::WhereSplit>& ws = r.s->where_split;
    if (ws && ws->outer == loop.name && !ctx.where_full && !ctx.in_tail && !init) {
      NameGen tmp;
      ExprLowerer lo(p_, r.stage, {}, tmp);
      const Expr e = lo.lower_static(ws->extent), f = ir::i64(ws->factor);
      const Expr main = ir::simplify(e / f);
      NestContext full = ctx, tail = ctx;
      full.where_full = true;
      if (ext.exact) full.trips[loop.name] = {var(name), main};
      enter_tail(tail);
      Stmt m = with_hoisted(name, ir::For::make(name, ir::i64(0), main, ir::ForKind::serial,
                                                body(full, Expr(), ext.exact)));
      ++tail_depth_;
      Stmt t = ir::IfThenElse::make(ir::lt(main * f, e),
                                    ir::LetStmt::make(name, main, body(tail, Expr(), ext.exact)));
      --tail_depth_;
      return ir::Block::make({m, t});
    }
    const int sp = r.tree->split_as_outer(loop.name);
    if (sp >= 0 && !ctx.full.count(sp) && wants_partition(r, order, k, sp, ctx)) {
      const sched::Split& split = r.s->splits[sp];
      const Extent pe = r.tree->extent(split.parent, ctx);
      const Expr f = ir::i64(split.factor);
      const Expr main = ir::simplify(pe.expr / f);
      NestContext full = ctx;
      full.full.insert(sp);
      const ir::ForKind fk =
          loop.kind == LoopKind::parallel ? ir::ForKind::parallel : ir::ForKind::serial;
      Stmt m;
      if (fk == ir::ForKind::parallel && chunk_per_thread(r, loop, ext)) {
        m = chunked(name, loop.name, main, full,
                    [&](const NestContext& c) { return body(c, Expr(), true); });
      } else {
        if (fk == ir::ForKind::serial && ext.exact) full.trips[loop.name] = {var(name), main};
        m = with_hoisted(name,
                         ir::For::make(name, ir::i64(0), main, fk, body(full, Expr(), ext.exact)));
      }
      NestContext tail = ctx;
      enter_tail(tail);
      ++tail_depth_;
      Stmt t = ir::IfThenElse::make(ir::lt(main * f, pe.expr),
                                    ir::LetStmt::make(name, main, body(tail, Expr(), ext.exact)));
      --tail_depth_;
      return ir::Block::make({m, t});
    }
    if (loop.kind == LoopKind::unrolled) {
      // Unrolled when the trip count is a constant; a tail runs as a plain loop instead.
      auto c = ir::as_const_int(ext.expr);
      if (c && *c <= 64)
        return ir::For::make(name, ir::i64(0), ext.expr, ir::ForKind::unrolled,
                             body(ctx, Expr(), ext.exact));
      // A tile's partial extent (min(12, M - i.o*12), the last rows): its nominal count,
      // unrolled, each iteration guarded, so the tile's accumulators keep constant indices and
      // the tail runs from registers like the full tiles (as a plain loop it ran from memory, at
      // a fraction of the speed).
      if (!c && ext.nominal && *ext.nominal <= kMaxGuardedUnroll && !ctx.in_tail)
        return ir::For::make(name, ir::i64(0), ir::i64(*ext.nominal), ir::ForKind::unrolled,
                             body(ctx, ir::lt(var(name), ext.expr), ext.exact));
    }
    const ir::ForKind fk =
        loop.kind == LoopKind::parallel ? ir::ForKind::parallel : ir::ForKind::serial;
    if (fk == ir::ForKind::parallel && chunk_per_thread(r, loop, ext))
      return chunked(name, loop.name, ext.expr, ctx,
                     [&](const NestContext& c) { return body(c, Expr(), true); });
    NestContext c = ctx;
    if (fk == ir::ForKind::serial && ext.exact) c.trips[loop.name] = {var(name), ext.expr};
    return with_hoisted(name,
                        ir::For::make(name, ir::i64(0), ext.expr, fk, body(c, Expr(), ext.exact)));
  }

  // Whether the parallel loop `loop` is lowered as one contiguous chunk per thread: a producer
  // computed at it is double buffered (filled an iteration ahead, which needs the iterations
  // that follow one another on a thread).
  bool chunk_per_thread(const Realization& r, const sched::Loop& loop, const Extent& ext) const {
    if (!ext.exact || tail_depth_ > 0) return false;
    for (const sched::Stage& q : p_.stages)
      if (q.double_buffer && q.compute.kind == sched::ComputeKind::at &&
          q.compute.stage == r.s->name && q.compute.loop == loop.name)
        return true;
    return false;
  }

  // for (t = 0; t < threads; ++t) in parallel:  (chunk = ceil(n / threads))
  //   for (k = 0; k < min(chunk, n - t * chunk); ++k) { L = t * chunk + k; body }
  // The same iterations as a parallel For, each thread's in order.
  Stmt chunked(const std::string& name, const std::string& leaf, const Expr& n, NestContext ctx,
               const std::function<Stmt(const NestContext&)>& body) {
    // The thread count is read once, outside the parallel loop, so every chunk agrees on it.
    const std::string t = name + ".thread", k = name + ".in", count = name + ".count",
                      nt = name + ".threads";
    const Expr threads = var(nt);
    const Expr chunk = ir::simplify((n + threads - ir::i64(1)) / threads);
    const Expr first = var(t) * chunk;
    ctx.trips[leaf] = {var(k), var(count)};
    Stmt in = with_hoisted(name, ir::For::make(k, ir::i64(0), var(count), ir::ForKind::serial,
                                               ir::LetStmt::make(name, first + var(k), body(ctx))));
    in = ir::LetStmt::make(count, ir::max(ir::i64(0), ir::min(chunk, n - first)), in);
    return ir::LetStmt::make(
        nt, ir::max(ir::i64(1), ir::Var::make(ir::Type::i64(), ir::kNumThreadsVar)),
        ir::For::make(t, ir::i64(0), threads, ir::ForKind::parallel, in));
  }

  // `loop` wrapped in the allocations that double-buffered producers inside it hoisted out of
  // its body (their two copies live across its iterations).
  Stmt with_hoisted(const std::string& loop_var, Stmt loop) {
    auto it = hoisted_.find(loop_var);
    if (it == hoisted_.end()) return loop;
    for (const Hoisted& h : it->second)
      loop = ir::Allocate::make(h.name, h.type, h.size, ir::MemoryKind::heap, loop);
    hoisted_.erase(it);
    return loop;
  }

  template <typename Body>
  Stmt emit_vector(const Realization& r, const sched::Loop& loop, const std::string& name,
                   const Extent& ext, const NestContext& ctx, int w, Body& body) {
    auto c = ir::as_const_int(ext.expr);
    if (c && *c == w)
      return ir::For::make(name, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                           body(ctx, Expr(), ext.exact));
    if ((c && *c < w) || (ext.nominal && *ext.nominal <= w)) {
      int lanes = 2;
      const int64_t need = c ? *c : *ext.nominal;
      while (lanes < need && lanes < w) lanes *= 2;
      Expr guard = (c && *c == lanes) ? Expr() : ir::lt(var(name), ext.expr);
      return ir::For::make(name, ir::i64(0), ir::i64(lanes), ir::ForKind::vectorized,
                           body(ctx, guard, ext.exact));
    }
    const std::string lane = name + ".vec";
    NestContext sc = ctx;
    sc.leaf_values[loop.name] = var(name) * ir::i64(w) + var(lane);
    if (!c && ext.nominal && *ext.nominal % w == 0 && *ext.nominal / w <= kMaxMaskedStrips) {
      // A tile's partial extent (min(32, N - j.o*32)): its nominal count of masked vectors,
      // unrolled, so the tile's accumulators keep constant indices (and stay in registers).
      Expr g = ir::lt(var(name) * ir::i64(w) + var(lane), ext.expr);
      return ir::For::make(name, ir::i64(0), ir::i64(*ext.nominal / w), ir::ForKind::unrolled,
                           ir::For::make(lane, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                                         body(sc, g, ext.exact)));
    }
    if (ctx.in_tail) {
      // In a tail: one loop of (masked) vectors.
      Expr g = c && *c % w == 0 ? Expr() : ir::lt(var(name) * ir::i64(w) + var(lane), ext.expr);
      Expr count = ir::simplify((ext.expr + ir::i64(w - 1)) / ir::i64(w));
      return ir::For::make(name, ir::i64(0), count, ir::ForKind::serial,
                           ir::For::make(lane, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                                         body(sc, g, ext.exact)));
    }
    // Strip-mine: vectors of w lanes, then one masked vector for the rest.
    const Expr main = ir::simplify(ext.expr / ir::i64(w));
    auto mc = ir::as_const_int(main);
    Stmt m = ir::For::make(name, ir::i64(0), main,
                           mc && *mc <= 8 ? ir::ForKind::unrolled : ir::ForKind::serial,
                           ir::For::make(lane, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                                         body(sc, Expr(), ext.exact)));
    if (c && *c % w == 0) return m;
    Expr g = ir::lt(var(name) * ir::i64(w) + var(lane), ext.expr);
    Stmt t = ir::IfThenElse::make(
        ir::lt(main * ir::i64(w), ext.expr),
        ir::LetStmt::make(name, main,
                          ir::For::make(lane, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                                        body(sc, g, ext.exact))));
    (void)r;
    return ir::Block::make({m, t});
  }

  // Whether to split the outer loop of split `sp` into full iterations and a tail: when the
  // inner side has loops that need a constant trip count, inside this loop.
  bool wants_partition(const Realization& r, const std::vector<int>& order, size_t k, int sp,
                       const NestContext& ctx) const {
    if (ctx.in_tail) return false;
    const sched::Split& split = r.s->splits[sp];
    bool hot = false;
    for (const std::string& leaf : r.tree->leaves_of(split.inner)) {
      const int j = r.s->find_loop(leaf);
      const bool later =
          std::find(order.begin() + static_cast<long>(k) + 1, order.end(), j) != order.end();
      const LoopKind kind = r.s->loops[j].kind;
      hot = hot || (later && (kind == LoopKind::vectorized || kind == LoopKind::unrolled));
    }
    // Stages computed at or inside this loop get regions whose extents depend on the tail.
    for (const sched::Stage& q : p_.stages)
      if (q.compute.kind == sched::ComputeKind::at && q.compute.stage == r.s->name &&
          std::find(order.begin() + static_cast<long>(k), order.end(),
                    r.s->find_loop(q.compute.loop)) != order.end())
        hot = true;
    if (!hot) return false;
    NestContext c = ctx;
    c.bound.insert(split.outer);
    const Extent ie = r.tree->extent(split.inner, c);
    return !(ie.exact && ir::as_const_int(ie.expr));
  }

  // Inside the loop of order[k]: guards for variables that may overshoot, producers computed
  // at this loop, then the inner loops.
  Stmt after_bind(const Realization& r, const std::vector<int>& order, size_t k, NestContext ctx,
                  bool init, const Expr& guard) {
    const sched::Loop& loop = r.s->loops[order[k]];
    std::vector<Expr> conds;
    if (guard.defined()) conds.push_back(guard);
    std::vector<std::string> frontier = r.tree->parents_of(loop.name);
    std::set<std::string> done;
    while (!frontier.empty()) {
      const std::string n = frontier.back();
      frontier.pop_back();
      if (!done.insert(n).second) continue;
      bool complete = true;
      for (const std::string& l : r.tree->leaves_of(n)) complete = complete && ctx.bound.count(l);
      if (!complete) continue;
      bool over = false;
      for (const std::string& c : r.tree->children_of(n)) over = over || ctx.overshoot.count(c);
      if (over) {
        const Extent e = r.tree->extent(n, ctx);
        conds.push_back(ir::lt(r.tree->value(n, ctx), e.expr));
        if (!e.exact) ctx.overshoot.insert(n);
      }
      for (const std::string& p : r.tree->parents_of(n)) frontier.push_back(p);
    }
    // A guarded iteration may not run: nothing computed here may rely on the previous one.
    if (!conds.empty()) ctx.trips.erase(loop.name);
    Stmt inner;
    std::vector<int> producers;
    if (!init)
      for (size_t q = 0; q < p_.stages.size(); ++q) {
        const sched::ComputeLoc& c = p_.stages[q].compute;
        if (c.kind == sched::ComputeKind::at && c.stage == r.s->name && c.loop == loop.name)
          producers.push_back(static_cast<int>(q));
      }
    if (producers.empty()) {
      inner = emit(r, order, k + 1, ctx, init);
    } else {
      NestPoint at{r.tree.get(), ctx, r.stage, order[k]};
      inner = inject(producers, 0, at, [&] { return emit(r, order, k + 1, ctx, init); });
    }
    if (conds.empty()) return inner;
    Expr all = conds[0];
    for (size_t i = 1; i < conds.size(); ++i) all = ir::logical_and(all, conds[i]);
    return ir::IfThenElse::make(all, inner);
  }

  Stmt inject(const std::vector<int>& producers, size_t i, const NestPoint& at,
              const std::function<Stmt()>& rest) {
    if (i == producers.size()) return rest();
    const int P = producers[i];
    const sched::Stage& ps = p_.stages[P];
    const Region R = required_region(p_, P, at, &views_);
    Region named = R;
    std::vector<std::pair<std::string, Expr>> lets;
    // Region minimums stay explicit so that index arithmetic cancels (C_acc[(C.i.o*6 + 2 -
    // C.i.o*6)*32] is C_acc[64]); extents that are not constants get a name.
    for (size_t d = 0; d < R.min.size(); ++d) {
      if (!ir::as_const_int(R.extent[d])) {
        lets.push_back({ps.name + ".extent." + std::to_string(d), R.extent[d]});
        named.extent[d] = var(lets.back().first);
      }
    }
    std::vector<Expr> alloc;
    bool constant = true;
    for (size_t d = 0; d < R.min.size(); ++d) {
      alloc.push_back(R.nominal[d] ? ir::i64(*R.nominal[d]) : named.extent[d]);
      constant = constant && R.nominal[d].has_value();
    }
    BufferView v = make_view(P, ps.name, alloc, named.min);
    const Expr size = padded_size(ps, alloc);
    if (ps.double_buffer) {
      std::optional<Stmt> db = double_buffered(producers, i, at, rest, R, named, lets, v);
      if (db) return *db;
    }
    auto bytes = ir::as_const_int(size);
    const bool stack = constant && bytes && *bytes * v.storage.bytes() <= o_.max_stack_bytes;
    views_[P] = v;
    Stmt produce = ir::ProducerConsumer::make(ps.name, true, realize(P, named, v));
    Stmt body = ir::Block::make({produce, inject(producers, i + 1, at, rest)});
    views_.erase(P);
    const ir::MemoryKind mem = stack ? ir::MemoryKind::stack : ir::MemoryKind::heap;
    body = ir::Allocate::make(v.name, v.storage, size, mem, body);
    if (!v.value_buffer.empty())
      body = ir::Allocate::make(v.value_buffer, arg_value_type(ps), size, mem, body);
    for (size_t l = lets.size(); l-- > 0;)
      body = ir::LetStmt::make(lets[l].first, lets[l].second, body);
    return body;
  }

  Stmt point(const Realization& r, const NestContext& ctx, bool init) {
    const sched::Stage& s = *r.s;
    const size_t n = s.vars.size();
    std::vector<Expr> vals(n);
    for (size_t d = 0; d < n; ++d) vals[d] = r.tree->root_value(static_cast<int>(d), ctx);
    std::map<int, Expr> rvals;
    const std::vector<int>& rv = s.loop_rvars();
    for (size_t k = 0; k < rv.size(); ++k)
      rvals[rv[k]] = r.tree->root_value(static_cast<int>(n + k), ctx);
    const BufferView& v = r.view;
    Expr idx = ir::i64(0);
    for (size_t d = 0; d < n; ++d) {
      Expr off = ir::is_const(v.mins[d], 0) ? vals[d] : vals[d] - v.mins[d];
      idx = idx + (ir::is_const(v.strides[d], 1) ? off : off * v.strides[d]);
    }
    if (v.offset.defined()) idx = idx + v.offset;
    idx = ir::simplify(idx);
    const ir::Type vt = value_type(*p_.task, s.type);
    const te::ReduceOp op = s.body.reduce_op;
    if (init) {
      if (!is_arg_reduce(s))
        return ir::Store::make(v.name, idx,
                               ExprLowerer::convert(reduce_identity(op, vt), v.storage));
      // No index yet (-1), as the oracle reports an empty range.
      return ir::Block::make(
          {ir::Store::make(v.value_buffer, idx, reduce_identity(op, arg_value_type(s))),
           ir::Store::make(v.name, idx, ExprLowerer::convert(ir::i64(-1), v.storage))});
    }
    ExprLowerer::Bindings b;
    b.index_var = [&](int d) { return vals[d]; };
    b.reduce_var = [&](int x) { return rvals.at(x); };
    b.stage_view = [this](int x) -> const BufferView& { return views_.at(x); };
    b.natural_lanes = p_.task->dtype == DType::f64 ? o_.lanes_f64 : o_.lanes_f32;
    ExprLowerer el(p_, r.stage, b, names_);
    Stmt st;
    if (!s.reduction) {
      st = ir::Store::make(v.name, idx, ExprLowerer::convert(el.lower(s.body), v.storage));
    } else if (!is_arg_reduce(s)) {
      Expr x = ExprLowerer::convert(el.lower(s.body.args[0]), vt);
      Expr acc = ExprLowerer::convert(ir::Load::make(v.storage, v.name, idx), vt);
      st =
          ir::Store::make(v.name, idx, ExprLowerer::convert(reduce_combine(op, acc, x), v.storage));
    } else {
      const ir::Type at = arg_value_type(s);
      Expr x = ExprLowerer::convert(el.lower(s.body.args[0]), at);
      Expr best = ir::Load::make(at, v.value_buffer, idx);
      Expr cur = ExprLowerer::convert(ir::Load::make(v.storage, v.name, idx), ir::Type::i64());
      Expr k = rvals.at(rv[0]);
      Expr strictly = op == te::ReduceOp::argmax ? ir::gt(x, best) : ir::lt(x, best);
      // The first value taken, then strictly better ones; ties go to the lowest index whatever
      // the loop order, as in the oracle's ascending scan.
      Expr better = ir::logical_or(ir::logical_or(ir::lt(cur, ir::i64(0)), strictly),
                                   ir::logical_and(ir::eq(x, best), ir::lt(k, cur)));
      const std::string c = names_.fresh(s.name + ".better");
      Expr cv = ir::Var::make(ir::Type::boolean(), c);
      st = ir::LetStmt::make(
          c, better,
          ir::Block::make(
              {ir::Store::make(v.value_buffer, idx, ir::select(cv, x, best)),
               ir::Store::make(v.name, idx,
                               ExprLowerer::convert(ir::select(cv, k, cur), v.storage))}));
    }
    if (s.where && !ctx.where_full) st = ir::IfThenElse::make(el.lower(*s.where), st);
    return with_preludes(el.take_preludes(), st);
  }

  // Producer P computed at a loop L whose iterations run in order on one thread (a serial For
  // from 0, or one thread's chunk of a parallel loop: NestContext::trips gives the index k of
  // the iteration in that run and the run's length n), filled one iteration ahead into the other
  // half of a buffer of two copies (hoisted around the run):
  //   if (k == 0) fill copy L&1 for iteration L
  //   row = 0
  //   ... consumers; in every EVERY-th iteration of the double_buffer loop:
  //         if (k + 1 < n && row < rows) { fill row `row` of copy (L+1)&1; prefetch the inputs
  //         of row + kRowsAhead; ++row }
  //   if (k + 1 < n) fill the rows left of copy (L+1)&1
  // nullopt (the caller fills P in place) when L is not such a loop or P's extent moves with L.
  std::optional<Stmt> double_buffered(const std::vector<int>& producers, size_t i,
                                      const NestPoint& at, const std::function<Stmt()>& rest,
                                      const Region& R, const Region& named,
                                      const std::vector<std::pair<std::string, Expr>>& lets,
                                      BufferView v) {
    const int P = producers[i];
    const sched::Stage& ps = p_.stages[P];
    const std::string leaf = p_.stages[at.stage].loops[at.loop].name;
    auto trip = at.ctx.trips.find(leaf);  // serial loops only
    if (trip == at.ctx.trips.end()) return std::nullopt;
    const std::string lvar = at.tree->var_name(leaf);
    std::vector<Expr> extent;
    for (size_t d = 0; d < R.extent.size(); ++d) {
      if (ir::expr_uses_var(R.extent[d], lvar)) return std::nullopt;
      extent.push_back(R.nominal[d] ? ir::i64(*R.nominal[d]) : R.extent[d]);
    }
    const Expr copy = padded_size(ps, extent);
    const Expr l = var(lvar), index = trip->second.index, n = trip->second.count;
    v.offset = ir::simplify((l % ir::i64(2)) * copy);
    views_[P] = v;
    const Stmt fill = realize(P, named, v);
    Stmt body = inject(producers, i + 1, at, rest);
    views_.erase(P);
    hoisted_[lvar].push_back({v.name, v.storage, ir::simplify(copy * ir::i64(2))});

    // The next iteration's fill, split into its outermost loop's rows.
    const Stmt next = ir::substitute(lvar, l + ir::i64(1), fill);
    const Expr has_next = ir::lt(index + ir::i64(1), n);
    const ir::For* rows = next.as<ir::For>();
    const Stmt first = ir::IfThenElse::make(ir::eq(index, ir::i64(0)),
                                            ir::ProducerConsumer::make(ps.name, true, fill));
    Stmt all;
    if (!rows || rows->for_kind != ir::ForKind::serial) {
      all = ir::Block::make({first, body, ir::IfThenElse::make(has_next, next)});
    } else {
      const std::string cursor = names_.fresh(ps.name + ".row");
      const Expr done = ir::Load::make(ir::Type::i64(), cursor, ir::i64(0));
      const std::string row = names_.fresh(ps.name + ".next_row");
      const Expr r = var(row);
      const Stmt step = ir::LetStmt::make(
          row, rows->min + done,
          ir::Block::make(
              {ir::substitute(rows->name, r, rows->body),
               input_prefetches(ir::substitute(rows->name, r + ir::i64(kRowsAhead), rows->body)),
               ir::Store::make(cursor, ir::i64(0), done + ir::i64(1))}));
      const sched::DoubleBuffer& db = *ps.double_buffer;
      const std::string carrier = db.stage + "." + db.loop;
      const Stmt one = ir::IfThenElse::make(
          ir::eq(ir::Var::make(ir::Type::i64(), carrier) % ir::i64(db.every), ir::i64(0)),
          ir::IfThenElse::make(ir::logical_and(has_next, ir::lt(done, rows->extent)), step));
      const std::string left = names_.fresh(ps.name + ".rows_done");
      const Expr lv = ir::Var::make(ir::Type::i64(), left);
      const Stmt rest_of_rows = ir::IfThenElse::make(
          has_next, ir::LetStmt::make(left, done,
                                      ir::For::make(rows->name, rows->min + lv, rows->extent - lv,
                                                    ir::ForKind::serial, rows->body)));
      all = ir::Block::make({first, ir::Store::make(cursor, ir::i64(0), ir::i64(0)),
                             InsertAtLoop(carrier, one).mutate(body), rest_of_rows});
      all = ir::Allocate::make(cursor, ir::Type::i64(), ir::i64(1), ir::MemoryKind::stack, all);
    }
    for (size_t k = lets.size(); k-- > 0;)
      all = ir::LetStmt::make(lets[k].first, lets[k].second, all);
    return all;
  }

  // Inserts `step` at the top of the body of every serial or unrolled loop named `loop` that no
  // parallel or vectorized loop encloses (the step updates one cursor: it runs once per
  // iteration, on one thread, in order).
  class InsertAtLoop : public ir::IRMutator {
   public:
    InsertAtLoop(std::string loop, Stmt step) : loop_(std::move(loop)), step_(std::move(step)) {}
    Stmt mutate_for(const ir::For* op, const Stmt& s) override {
      const bool serial =
          op->for_kind == ir::ForKind::serial || op->for_kind == ir::ForKind::unrolled;
      outside_ += !serial;
      Stmt inner = ir::IRMutator::mutate_for(op, s);
      outside_ -= !serial;
      if (op->name != loop_ || !serial || outside_ > 0) return inner;
      const ir::For* f = inner.as<ir::For>();
      return ir::For::make(f->name, f->min, f->extent, f->for_kind,
                           ir::Block::make({step_, f->body}));
    }

   private:
    std::string loop_;
    Stmt step_;
    int outside_ = 0;  // enclosing parallel or vectorized loops
  };

  // Prefetches of the task inputs that `s` loads (the stores and their values dropped).
  Stmt input_prefetches(const Stmt& s) const {
    class ToPrefetch : public ir::IRMutator {
     public:
      explicit ToPrefetch(const Task& t) {
        for (const auto& in : t.inputs) inputs_.insert(in.name);
      }
      Stmt mutate_store(const ir::Store* op, const Stmt&) override {
        class Loads : public ir::IRVisitor {
         public:
          explicit Loads(const std::set<std::string>& in) : in_(in) {}
          std::vector<Stmt> hints;
          void visit_load(const ir::Load* load) override {
            // Not a gathered address: computing it would read an index array rows ahead.
            if (in_.count(load->buffer) && !ir::expr_has_load(load->index))
              hints.push_back(ir::Prefetch::make(load->buffer, load->index));
            ir::IRVisitor::visit_load(load);
          }

         private:
          const std::set<std::string>& in_;
        } loads(inputs_);
        loads.visit(op->value);
        return ir::Block::make(std::move(loads.hints));  // empty when it reads no input
      }

     private:
      std::set<std::string> inputs_;
    };
    return ToPrefetch(*p_.task).mutate(s);
  }

  struct Hoisted {
    std::string name;
    ir::Type type;
    Expr size;
  };
  std::map<std::string, std::vector<Hoisted>> hoisted_;  // by loop variable
  static constexpr int64_t kRowsAhead = 4;

  const sched::Pipeline& p_;
  RealizeOptions o_;
  NameGen names_;
  std::map<int, BufferView> views_;
  static constexpr int64_t kMaxMaskedStrips = 4;
  static constexpr int64_t kMaxGuardedUnroll = 16;  // rows of a register tile's tail

  static void enter_tail(NestContext& c) {
    ++c.tails;
    c.in_tail = c.tails > kFullTailNesting;
  }

  int tail_depth_ = 0;  // > 0 while emitting the tail copy of a partitioned loop
};

}  // namespace

Stmt realize_stages(const sched::Pipeline& p, const RealizeOptions& options) {
  return Realizer(p, options).run();
}

}  // namespace kf::lowering
