// realize_stages (realize.h): the realizer's nests, their placement and partitioning; its
// leaves are in realize_fill.cpp.
#include "lower/realize.h"

#include "lower/realize_internal.h"

namespace kf::lowering {
namespace realize_detail {

Stmt Realizer::run() {
  std::vector<int> roots;
  for (size_t s = 0; s < p_.stages.size(); ++s)
    if (p_.stages[s].compute.kind == sched::ComputeKind::root) roots.push_back(static_cast<int>(s));
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

Stmt Realizer::realize(int stage, const Region& region, const BufferView& view) {
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

bool Realizer::chunk_per_thread(const Realization& r, const sched::Loop& loop,
                                const Extent& ext) const {
  if (!ext.exact || tail_depth_ > 0) return false;
  for (const sched::Stage& q : p_.stages)
    if (q.double_buffer && q.compute.kind == sched::ComputeKind::at &&
        q.compute.stage == r.s->name && q.compute.loop == loop.name)
      return true;
  return false;
}

bool Realizer::wants_partition(const Realization& r, const std::vector<int>& order, size_t k,
                               int sp, const NestContext& ctx) const {
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

Stmt Realizer::after_bind(const Realization& r, const std::vector<int>& order, size_t k,
                          NestContext ctx, bool init, const Expr& guard) {
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

Stmt Realizer::inject(const std::vector<int>& producers, size_t i, const NestPoint& at,
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

BufferView Realizer::make_view(int stage, const std::string& name, const std::vector<Expr>& logical,
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

Stmt Realizer::emit(const Realization& r, const std::vector<int>& order, size_t k,
                    const NestContext& ctx, bool init) {
  if (k == order.size()) return point(r, ctx, init);
  if (!init && order[k] == r.first_reduce)
    return ir::Block::make(
        {emit(r, r.init_order, 0, ctx, true), emit_leaf(r, order, k, ctx, false)});
  return emit_leaf(r, order, k, ctx, init);
}

Stmt Realizer::emit_leaf(const Realization& r, const std::vector<int>& order, size_t k,
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

Stmt Realizer::chunked(const std::string& name, const std::string& leaf, const Expr& n,
                       NestContext ctx, const std::function<Stmt(const NestContext&)>& body) {
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
  return ir::LetStmt::make(nt,
                           ir::max(ir::i64(1), ir::Var::make(ir::Type::i64(), ir::kNumThreadsVar)),
                           ir::For::make(t, ir::i64(0), threads, ir::ForKind::parallel, in));
}

}  // namespace realize_detail

ir::Stmt realize_stages(const sched::Pipeline& p, const RealizeOptions& options) {
  return realize_detail::Realizer(p, options).run();
}

}  // namespace kf::lowering
