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

// The limit L of a guard `v + R < E` on loop variable v (R and E free of v): the guard holds
// exactly where v < L = E - R. Undefined when the condition has another form.
Expr guard_limit(const Expr& cond, const std::string& v) {
  const ir::Binary* lt = cond.as<ir::Binary>();
  if (!lt || lt->op != ir::BinOp::lt || lt->a.type() != ir::Type::i64()) return Expr();
  const Expr rest = simplify_linear(lt->a - ir::Var::make(ir::Type::i64(), v));
  if (ir::expr_uses_var(rest, v) || ir::expr_uses_var(lt->b, v)) return Expr();
  return simplify_linear(lt->b - rest);
}

// The buffers a statement loads from and those it stores to.
struct Buffers : ir::IRVisitor {
  std::set<std::string> loaded, stored;
  void visit_load(const ir::Load* op) override {
    loaded.insert(op->buffer);
    IRVisitor::visit_load(op);
  }
  void visit_store(const ir::Store* op) override {
    stored.insert(op->buffer);
    IRVisitor::visit_store(op);
  }
};

// Scans a loop's body for the guards on its variable v that every store sits inside (directly,
// or in a conjunction), each with the range its limit takes over the loops, lets and guards
// between the loop and the guard. `ok` is false when some store is not under such a guard or a
// limit has no upper bound there.
struct GuardScan {
  std::string v;
  Scope scope;
  // Buffers nothing in the loop writes: a limit read from one at a fixed index (a sequence's
  // length, `pos[r]`) is a value there.
  std::set<std::string> invariant;
  std::vector<Interval> limits;
  std::vector<std::string> guards;  // the guards' conditions, printed
  bool ok = true;

  void guard_in(const Expr& cond, bool& guarded) {
    if (const ir::Binary* b = cond.as<ir::Binary>(); b && b->op == ir::BinOp::logical_and) {
      guard_in(b->a, guarded);
      guard_in(b->b, guarded);
      return;
    }
    const Expr lim = guard_limit(cond, v);
    if (!lim.defined()) return;
    Interval i = bounds_of(lim, scope, invariant);
    if (!i.max.defined()) return;
    limits.push_back(i);
    guards.push_back(ir::to_string(cond));
    guarded = true;
  }

  void scan(const Stmt& s, bool guarded) {
    if (!ok || !s.defined()) return;
    if (const ir::For* f = s.as<ir::For>()) {
      const Interval lo = bounds_of(f->min, scope);
      const Interval hi = bounds_of(simplify_linear(f->min + f->extent - ir::i64(1)), scope);
      scope[f->name] = {lo.min, hi.max, false};
      scan(f->body, guarded);
      scope.erase(f->name);
    } else if (const ir::Block* b = s.as<ir::Block>()) {
      for (const Stmt& x : b->stmts) scan(x, guarded);
    } else if (const ir::LetStmt* l = s.as<ir::LetStmt>()) {
      if (l->value.type() == ir::Type::i64()) scope[l->name] = bounds_of(l->value, scope);
      scan(l->body, guarded);
      scope.erase(l->name);
    } else if (const ir::IfThenElse* g = s.as<ir::IfThenElse>()) {
      bool inner = guarded;
      if (!g->else_case.defined()) guard_in(g->condition, inner);
      scan(g->then_case, inner);
      scan(g->else_case, guarded);
    } else if (const ir::Allocate* a = s.as<ir::Allocate>()) {
      scan(a->body, guarded);
    } else if (const ir::ProducerConsumer* pc = s.as<ir::ProducerConsumer>()) {
      scan(pc->body, guarded);
    } else if (s.as<ir::Store>() || s.as<ir::TransposeBlock>()) {
      ok = ok && guarded;
    }
    // Evaluate, Comment and Prefetch change nothing a skipped iteration would have changed.
  }
};

// Drops the guards (by their printed conditions) that the loop's new bound implies.
class DropGuards : public ir::IRMutator {
 public:
  explicit DropGuards(std::vector<std::string> implied) : implied_(std::move(implied)) {}

 protected:
  Stmt mutate_if_then_else(const ir::IfThenElse* op, const Stmt& s) override {
    Stmt st = IRMutator::mutate_if_then_else(op, s);
    const ir::IfThenElse* g = st.as<ir::IfThenElse>();
    if (g && !g->else_case.defined() &&
        std::find(implied_.begin(), implied_.end(), ir::to_string(g->condition)) != implied_.end())
      return g->then_case;
    return st;
  }

 private:
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
    GuardScan scan{f->name};
    for (const std::string& name : b.loaded)
      if (!b.stored.count(name)) scan.invariant.insert(name);
    scan.scan(f->body, false);
    if (!scan.ok || scan.limits.empty()) return st;
    // v runs below the largest limit any guard takes: iterations past it run no store.
    Expr top;
    std::vector<std::string> seen;  // the same limit under several guards (a vector tail's)
    for (const Interval& l : scan.limits) {
      std::string text = ir::to_string(l.max);
      if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
      seen.push_back(std::move(text));
      top = top.defined() ? ir::max(top, l.max) : l.max;
    }
    top = ir::simplify(top);
    if (ir::expr_uses_var(top, f->name)) return st;  // an inner range that moves with v
    const Expr passing = ir::max(simplify_linear(top - f->min), ir::i64(0));
    const Expr extent = ir::simplify(simplify_linear(ir::min(f->extent, passing)));
    // A guard whose limit is never below the new bound (the only guard, with a limit the loops
    // inside do not move) holds on every iteration left.
    std::vector<std::string> implied;
    for (size_t i = 0; i < scan.limits.size(); ++i) {
      if (!scan.limits[i].min.defined()) continue;
      auto over = const_lower_bound(simplify_linear(scan.limits[i].min - top));
      if (over && *over >= 0) implied.push_back(scan.guards[i]);
    }
    Stmt body = implied.empty() ? f->body : DropGuards(std::move(implied)).mutate(f->body);
    return ir::For::make(f->name, f->min, extent, f->for_kind, body);
  }
};

}  // namespace

Stmt guards_to_bounds(const Stmt& s) {
  return GuardsToBounds().mutate(s);
}

}  // namespace kf::lowering
