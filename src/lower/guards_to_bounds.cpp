#include "lower/guards_to_bounds.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "ir/ir_printer.h"
#include "ir/ir_visitor.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "lower/interval.h"

namespace kf::lowering {

namespace {

using ir::Expr;
using ir::Stmt;

// A guard on loop variable v: `v + R < E` holds exactly where v < E - R (an upper limit);
// `E <= v + R` where v >= E - R (a lower limit). R and E free of v.
struct Limit {
  Expr at;  // E - R
  bool upper = true;
};

std::optional<Limit> guard_limit(const Expr& cond, const std::string& v) {
  const ir::Binary* c = cond.as<ir::Binary>();
  if (!c || (c->op != ir::BinOp::lt && c->op != ir::BinOp::le) || c->a.type() != ir::Type::i64())
    return std::nullopt;
  const Expr var = ir::Var::make(ir::Type::i64(), v);
  const bool upper = c->op == ir::BinOp::lt && !ir::expr_uses_var(c->b, v);
  const bool lower = c->op == ir::BinOp::le && !ir::expr_uses_var(c->a, v);
  if (!upper && !lower) return std::nullopt;
  const Expr& side = upper ? c->a : c->b;
  const Expr rest = simplify_linear(side - var);
  if (ir::expr_uses_var(rest, v)) return std::nullopt;
  return Limit{simplify_linear((upper ? c->b : c->a) - rest), upper};
}

// The buffers a statement loads from and those it stores to, and whether it has a guard (an if
// without else) at all: most loops have none, and are not scanned.
struct Buffers : ir::IRVisitor {
  std::set<std::string> loaded, stored;
  bool guarded = false;
  void visit_if_then_else(const ir::IfThenElse* op) override {
    guarded = guarded || !op->else_case.defined();
    IRVisitor::visit_if_then_else(op);
  }
  void visit_load(const ir::Load* op) override {
    loaded.insert(op->buffer);
    IRVisitor::visit_load(op);
  }
  void visit_store(const ir::Store* op) override {
    stored.insert(op->buffer);
    IRVisitor::visit_store(op);
  }
};

// The guards of one side (upper or lower limits) that every store of a loop's body sits inside,
// each with the range its limit takes over the loops, lets and guards between the loop and it.
struct Side {
  std::vector<Interval> limits;
  std::vector<std::string> guards;  // each guard's comparison, printed
  bool ok = true;                   // false: some store is under no such guard
};

// Scans a loop's body for the guards on its variable v (alone, or conjuncts of a condition).
struct GuardScan {
  std::string v;
  Scope scope;
  // Buffers nothing in the loop writes: a limit read from one at a fixed index (a sequence's
  // length, `pos[r]`) is a value there.
  std::set<std::string> invariant;
  Side up, low;

  struct Under {
    bool up = false, low = false;
  };

  void guard_in(const Expr& cond, Under& under) {
    if (const ir::Binary* b = cond.as<ir::Binary>(); b && b->op == ir::BinOp::logical_and) {
      guard_in(b->a, under);
      guard_in(b->b, under);
      return;
    }
    const std::optional<Limit> lim = guard_limit(cond, v);
    if (!lim) return;
    Interval i = bounds_of(lim->at, scope, invariant);
    if (!(lim->upper ? i.max : i.min).defined()) return;
    Side& side = lim->upper ? up : low;
    side.limits.push_back(i);
    side.guards.push_back(ir::to_string(cond));
    (lim->upper ? under.up : under.low) = true;
  }

  void scan(const Stmt& s, Under under) {
    if (!s.defined()) return;
    if (const ir::For* f = s.as<ir::For>()) {
      const Interval lo = bounds_of(f->min, scope);
      const Interval hi = bounds_of(simplify_linear(f->min + f->extent - ir::i64(1)), scope);
      scope[f->name] = {lo.min, hi.max, false};
      scan(f->body, under);
      scope.erase(f->name);
    } else if (const ir::Block* b = s.as<ir::Block>()) {
      for (const Stmt& x : b->stmts) scan(x, under);
    } else if (const ir::LetStmt* l = s.as<ir::LetStmt>()) {
      if (l->value.type() == ir::Type::i64()) scope[l->name] = bounds_of(l->value, scope);
      scan(l->body, under);
      scope.erase(l->name);
    } else if (const ir::IfThenElse* g = s.as<ir::IfThenElse>()) {
      Under inner = under;
      if (!g->else_case.defined()) guard_in(g->condition, inner);
      scan(g->then_case, inner);
      scan(g->else_case, under);
    } else if (const ir::Allocate* a = s.as<ir::Allocate>()) {
      scan(a->body, under);
    } else if (const ir::ProducerConsumer* pc = s.as<ir::ProducerConsumer>()) {
      scan(pc->body, under);
    } else if (s.as<ir::Store>() || s.as<ir::TransposeBlock>()) {
      up.ok = up.ok && under.up;
      low.ok = low.ok && under.low;
    }
    // Evaluate, Comment and Prefetch change nothing a skipped iteration would have changed.
  }
};

// The loop's new end (upper) or start (lower): the largest upper limit, or the smallest lower
// one, any guard takes (the same limit under several guards, a vector tail's, counted once), and
// the guards that bound implies (a limit never past it: the only guard, its limit fixed by the
// loops inside); undefined when the side bounds nothing or the bound moves with v itself.
Expr side_bound(const Side& side, const std::string& v, bool upper,
                std::vector<std::string>& implied) {
  if (!side.ok || side.limits.empty()) return Expr();
  Expr bound;
  std::vector<std::string> seen;
  for (const Interval& l : side.limits) {
    const Expr& e = upper ? l.max : l.min;
    std::string text = ir::to_string(e);
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    seen.push_back(std::move(text));
    bound = !bound.defined() ? e : upper ? ir::max(bound, e) : ir::min(bound, e);
  }
  bound = ir::simplify(bound);
  if (ir::expr_uses_var(bound, v)) return Expr();  // an inner range that moves with v
  for (size_t i = 0; i < side.limits.size(); ++i) {
    const Expr& other = upper ? side.limits[i].min : side.limits[i].max;
    if (!other.defined()) continue;
    auto over = const_lower_bound(simplify_linear(upper ? other - bound : bound - other));
    if (over && *over >= 0) implied.push_back(side.guards[i]);
  }
  return bound;
}

// Drops the comparisons (by their printed text) that the loop's new bounds imply from the
// guards' conditions, and a guard left with none.
class DropGuards : public ir::IRMutator {
 public:
  explicit DropGuards(std::vector<std::string> implied) : implied_(std::move(implied)) {}

 protected:
  Stmt mutate_if_then_else(const ir::IfThenElse* op, const Stmt& s) override {
    Stmt st = IRMutator::mutate_if_then_else(op, s);
    const ir::IfThenElse* g = st.as<ir::IfThenElse>();
    if (!g || g->else_case.defined()) return st;
    const Expr kept = without_implied(g->condition);
    if (!kept.defined()) return g->then_case;
    return kept.same_as(g->condition) ? st : ir::IfThenElse::make(kept, g->then_case);
  }

 private:
  Expr without_implied(const Expr& c) const {
    if (const ir::Binary* b = c.as<ir::Binary>(); b && b->op == ir::BinOp::logical_and) {
      const Expr a = without_implied(b->a), d = without_implied(b->b);
      if (a.same_as(b->a) && d.same_as(b->b)) return c;
      return !a.defined() ? d : !d.defined() ? a : ir::logical_and(a, d);
    }
    return std::find(implied_.begin(), implied_.end(), ir::to_string(c)) != implied_.end() ? Expr()
                                                                                           : c;
  }

  std::vector<std::string> implied_;
};

class GuardsToBounds : public ir::IRMutator {
 protected:
  Stmt mutate_for(const ir::For* op, const Stmt& s) override {
    Stmt st = IRMutator::mutate_for(op, s);
    const ir::For* f = st.as<ir::For>();
    if (!f || (f->for_kind != ir::ForKind::serial && f->for_kind != ir::ForKind::parallel))
      return st;
    Buffers b;
    b.visit(f->body);
    if (!b.guarded) return st;
    GuardScan scan{f->name};
    for (const std::string& name : b.loaded)
      if (!b.stored.count(name)) scan.invariant.insert(name);
    scan.scan(f->body, {});
    std::vector<std::string> implied;
    // v runs from the smallest lower limit below the largest upper one: iterations outside
    // them run no store.
    const Expr top = side_bound(scan.up, f->name, true, implied);
    const Expr bottom = side_bound(scan.low, f->name, false, implied);
    if (!top.defined() && !bottom.defined()) return st;
    Expr start = f->min, extent;
    if (!bottom.defined()) {
      // The start stays: the extent stops at the top.
      extent =
          simplify_linear(ir::min(f->extent, ir::max(simplify_linear(top - f->min), ir::i64(0))));
    } else {
      auto past = const_lower_bound(simplify_linear(bottom - f->min));
      start = past && *past >= 0 ? bottom : ir::simplify(ir::max(f->min, bottom));
      Expr end = simplify_linear(f->min + f->extent);
      if (top.defined()) end = ir::min(end, top);
      extent = ir::max(simplify_linear(end - start), ir::i64(0));
    }
    extent = ir::simplify(extent);
    Stmt body = implied.empty() ? f->body : DropGuards(std::move(implied)).mutate(f->body);
    return ir::For::make(f->name, start, extent, f->for_kind, body);
  }
};

}  // namespace

Stmt guards_to_bounds(const Stmt& s) {
  return GuardsToBounds().mutate(s);
}

}  // namespace kf::lowering
