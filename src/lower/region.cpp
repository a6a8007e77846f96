#include "lower/region.h"

#include <algorithm>
#include <set>
#include <string>

#include "ir/simplify.h"
#include "lower/expr_to_ir.h"
#include "schedule/te_util.h"
#include "support/check.h"

namespace kf::lowering {

using ir::Expr;

namespace {

std::string placeholder(int stage, char kind, int index) {
  return "$" + std::to_string(stage) + "." + kind + std::to_string(index);
}

void collect(const te::Expr& e, int producer, std::vector<const te::Expr*>& out) {
  if (e.kind == te::ExprKind::access && e.ref.kind == te::RefKind::stage && e.ref.index == producer)
    out.push_back(&e);
  for (const te::Expr& a : e.args) collect(a, producer, out);
}

// An ExprLowerer for stage c whose variables are placeholders ("$c.vD", "$c.rR"). Stages read
// through their live views when they are i64 values already computed at the region's point
// (their reads at a fixed index are then values); other stages through opaque views. The
// task's inputs are values too: nothing writes them.
struct PlaceholderLowerer {
  NameGen names;
  std::vector<BufferView> dummies;
  std::set<std::string> invariant;  // buffers whose reads at a fixed index are values
  ExprLowerer lower;

  PlaceholderLowerer(const sched::Pipeline& p, int c, int at_stage, const LiveViews* live)
      : dummies(p.stages.size()),
        lower(p, c,
              ExprLowerer::Bindings{
                  [c](int d) { return ir::Var::make(ir::Type::i64(), placeholder(c, 'v', d)); },
                  [c](int r) { return ir::Var::make(ir::Type::i64(), placeholder(c, 'r', r)); },
                  [this](int s) -> const BufferView& { return dummies[s]; }},
              names) {
    if (p.task)
      for (const TensorSpec& t : p.task->inputs) invariant.insert(t.name);
    for (size_t s = 0; s < p.stages.size(); ++s) {
      BufferView& v = dummies[s];
      if (live && static_cast<int>(s) != at_stage && p.stages[s].type == te::ValueType::i64) {
        auto it = live->find(static_cast<int>(s));
        if (it != live->end() && !it->second.offset.defined()) {
          v = it->second;
          invariant.insert(v.name);
          continue;
        }
      }
      v.name = "$opaque";
      v.storage = ir::Type::i64();
      v.mins.assign(p.stages[s].vars.size(), ir::i64(0));
      v.strides.assign(p.stages[s].vars.size(), ir::i64(1));
    }
  }
  Expr index(const te::Expr& e) { return ExprLowerer::convert(lower.lower(e), ir::Type::i64()); }
};

void bound_by_predicate(const te::Expr& w, int c, PlaceholderLowerer& pl, Scope& scope) {
  if (w.kind != te::ExprKind::call) return;
  if (w.op == te::Op::logical_and) {
    for (const te::Expr& a : w.args) bound_by_predicate(a, c, pl, scope);
    return;
  }
  if (w.op != te::Op::lt && w.op != te::Op::le) return;
  auto is_rvar = [](const te::Expr& x) {
    return x.kind == te::ExprKind::name && x.ref.kind == te::RefKind::reduce_var;
  };
  // `r < E` / `r <= E` caps r from above; `E <= r` / `E < r` (a sliding window's start) from
  // below.
  const bool above = is_rvar(w.args[0]);
  if (!above && !is_rvar(w.args[1])) return;
  const te::Expr& r = w.args[above ? 0 : 1];
  auto it = scope.find(placeholder(c, 'r', r.ref.index));
  if (it == scope.end()) return;
  const Interval e = bounds_of(pl.index(w.args[above ? 1 : 0]), scope, pl.invariant);
  Interval& v = it->second;
  const ir::Expr shift = ir::i64(w.op == te::Op::lt ? 1 : 0);
  if (above && e.max.defined()) {
    const Expr cap = simplify_linear(e.max - shift);
    v.max = v.max.defined() ? ir::simplify(ir::min(v.max, cap)) : cap;
    v.exact = false;
  } else if (!above && e.min.defined()) {
    const Expr floor = simplify_linear(e.min + shift);
    v.min = v.min.defined() ? ir::simplify(ir::max(v.min, floor)) : floor;
    v.exact = false;
  }
}

Scope scope_for(const sched::Pipeline& p, int c, const NestPoint& at, PlaceholderLowerer& pl,
                const LiveViews* live) {
  const sched::Stage& s = p.stages[c];
  Scope scope;
  const std::vector<int>& rvars = s.loop_rvars();
  if (c == at.stage) {
    for (size_t d = 0; d < s.vars.size(); ++d)
      scope[placeholder(c, 'v', static_cast<int>(d))] =
          at.tree->root_range(static_cast<int>(d), at.ctx);
    for (size_t k = 0; k < rvars.size(); ++k)
      scope[placeholder(c, 'r', rvars[k])] =
          at.tree->root_range(static_cast<int>(s.vars.size() + k), at.ctx);
  } else {
    Region rq = required_region(p, c, at, live);
    for (size_t d = 0; d < s.vars.size(); ++d)
      scope[placeholder(c, 'v', static_cast<int>(d))] = {
          rq.min[d], simplify_linear(rq.min[d] + rq.extent[d] - ir::i64(1)), true};
    for (int r : rvars) {
      Expr lo = pl.lower.lower_static(s.reduce_vars[r].lo);
      Expr hi = pl.lower.lower_static(s.reduce_vars[r].hi);
      scope[placeholder(c, 'r', r)] = {lo, simplify_linear(hi - ir::i64(1)), true};
    }
  }
  // Reduction variables that are not loops (inline reductions): from their ranges.
  for (size_t r = 0; r < s.reduce_vars.size(); ++r) {
    if (std::find(rvars.begin(), rvars.end(), static_cast<int>(r)) != rvars.end()) continue;
    Interval lo = bounds_of(pl.index(s.reduce_vars[r].lo), scope, pl.invariant);
    Interval hi = bounds_of(pl.index(s.reduce_vars[r].hi), scope, pl.invariant);
    Interval v{lo.min, hi.max.defined() ? simplify_linear(hi.max - ir::i64(1)) : Expr(), false};
    scope[placeholder(c, 'r', static_cast<int>(r))] = v;
  }
  // A stage with a predicate updates only where it holds: a conjunct `r < E` on a reduction
  // variable r (mask_range's moving bounds) caps r's values at E's largest there, `E <= r` at
  // E's smallest from below, so a causal row reads its producers up to the diagonal and a
  // sliding window's from its start, not over the whole static range.
  if (s.where) bound_by_predicate(*s.where, c, pl, scope);
  return scope;
}

}  // namespace

Region full_region(const sched::Pipeline& p, int stage) {
  NameGen names;
  ExprLowerer lo(p, stage, {}, names);
  Region r;
  for (size_t d = 0; d < p.stages[stage].vars.size(); ++d) {
    Expr e = lo.stage_extent(stage, static_cast<int>(d));
    r.min.push_back(ir::i64(0));
    r.extent.push_back(e);
    auto c = ir::as_const_int(e);
    r.nominal.push_back(c ? std::optional<int64_t>(*c) : std::nullopt);
  }
  return r;
}

Region required_region(const sched::Pipeline& p, int producer, const NestPoint& at,
                       const LiveViews* live) {
  const sched::Stage& ps = p.stages[producer];
  const size_t n = ps.vars.size();
  const Region full = full_region(p, producer);
  std::vector<Interval> box(n);
  std::vector<std::optional<int64_t>> nominal(n);
  std::vector<bool> clamped(n, false), seen(n, false), nominal_known(n, true);

  std::vector<int> consumers = p.consumers(producer);
  for (int c : consumers) {
    const sched::Stage& cs = p.stages[c];
    std::vector<const te::Expr*> accesses;
    collect(cs.body, producer, accesses);
    if (cs.where) collect(*cs.where, producer, accesses);
    for (const te::IndexVar& v : cs.reduce_vars) {
      collect(v.lo, producer, accesses);
      collect(v.hi, producer, accesses);
    }
    if (accesses.empty()) continue;
    PlaceholderLowerer pl(p, c, at.stage, live);
    const Scope scope = scope_for(p, c, at, pl, live);
    // Loops bound at this point whose values may run past their extent (a split of a split with
    // tails, guarded further in): a read that is in the domain at every real iteration can
    // still get an interval that runs past it here.
    const bool may_overshoot = !at.ctx.overshoot.empty();
    for (const te::Expr* a : accesses) {
      for (size_t d = 0; d < n; ++d) {
        Interval i = bounds_of(pl.index(a->args[d]), scope, pl.invariant);
        Expr last = simplify_linear(full.extent[d] - ir::i64(1));
        std::optional<int64_t> nom;
        if (!i.bounded()) {
          i = {ir::i64(0), last, false};
          clamped[d] = true;
          nom = full.nominal[d];
        } else {
          nom = const_upper_bound(simplify_linear(i.max - i.min + ir::i64(1)));
          const bool inside = sched::index_within(a->args[d], cs.vars, ps.vars[d].hi);
          if ((a->has_else && !inside) || !i.exact) {
            auto lb = const_lower_bound(i.min);
            if (!lb || *lb < 0) i.min = ir::max(i.min, ir::i64(0));
            i.max = ir::min(i.max, last);
            clamped[d] = true;
          } else if (!inside || may_overshoot) {
            // A read the consumer guards (a masked rfactor chunk, a tail, an overshooting loop,
            // a select branch: 03's RoPE reads kp[r - 1] only where r is odd) can make the
            // interval run past the producer's domain on either side; the producer is never
            // computed outside it (computing kp at r = -1 read wk_rope before its start).
            if (auto over = const_upper_bound(simplify_linear(i.max - last));
                !(over && *over <= 0)) {
              i.max = ir::simplify(ir::min(i.max, last));
              clamped[d] = true;
            }
            if (auto lb = const_lower_bound(i.min); !inside && (!lb || *lb < 0)) {
              i.min = ir::max(i.min, ir::i64(0));
              clamped[d] = true;
            }
          }
        }
        if (full.nominal[d] && (!nom || *nom > *full.nominal[d])) nom = full.nominal[d];
        if (!nom) nominal_known[d] = false;
        if (!seen[d]) {
          box[d] = i;
          nominal[d] = nom;
        } else {
          box[d] = hull(box[d], i);
          if (nom && nominal[d]) nominal[d] = std::max(*nominal[d], *nom);
          // Two reads at a constant offset: the hull's nominal size grows by the offset. At
          // offsets with no constant bound (kr's reads of kp at r - 1, r and min(r + 1, L - 1))
          // only the producer's whole extent bounds it.
          Expr lo_diff = simplify_linear(box[d].max - box[d].min + ir::i64(1));
          if (auto c = const_upper_bound(lo_diff)) {
            nominal[d] = *c;
          } else {
            nominal[d] = full.nominal[d];
            if (!nominal[d]) nominal_known[d] = false;
          }
        }
        seen[d] = true;
      }
    }
  }
  Region r;
  for (size_t d = 0; d < n; ++d) {
    if (!seen[d]) {
      r.min.push_back(ir::i64(0));
      r.extent.push_back(full.extent[d]);
      r.nominal.push_back(full.nominal[d]);
      continue;
    }
    Expr mn = ir::simplify(box[d].min);
    Expr ext = simplify_linear(box[d].max - box[d].min + ir::i64(1));
    if (clamped[d]) ext = ir::max(ext, ir::i64(0));
    r.min.push_back(mn);
    r.extent.push_back(ir::simplify(ext));
    std::optional<int64_t> nom = nominal_known[d] ? nominal[d] : std::nullopt;
    if (auto c = ir::as_const_int(r.extent.back())) nom = *c;
    r.nominal.push_back(nom);
  }
  return r;
}

}  // namespace kf::lowering
