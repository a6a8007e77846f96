#include "lower/guards_to_bounds.h"

#include "ir/ir_visitor.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "lower/interval.h"

namespace kf::lowering {

namespace {

using ir::Expr;
using ir::Stmt;

class GuardsToBounds : public ir::IRMutator {
 protected:
  Stmt mutate_for(const ir::For* op, const Stmt& s) override {
    Stmt st = IRMutator::mutate_for(op, s);
    const ir::For* f = st.as<ir::For>();
    if (!f || (f->for_kind != ir::ForKind::serial && f->for_kind != ir::ForKind::parallel))
      return st;
    const ir::IfThenElse* g = f->body.as<ir::IfThenElse>();
    if (!g || g->else_case.defined()) return st;
    const ir::Binary* lt = g->condition.as<ir::Binary>();
    if (!lt || lt->op != ir::BinOp::lt || lt->a.type() != ir::Type::i64()) return st;
    const Expr v = ir::Var::make(ir::Type::i64(), f->name);
    // a = v + rest, with rest and the limit free of v.
    const Expr rest = simplify_linear(lt->a - v);
    if (ir::expr_uses_var(rest, f->name) || ir::expr_uses_var(lt->b, f->name)) return st;
    const Expr passing = ir::max(lt->b - rest - f->min, ir::i64(0));
    const Expr extent = simplify_linear(ir::min(f->extent, passing));
    return ir::For::make(f->name, f->min, ir::simplify(extent), f->for_kind, g->then_case);
  }
};

}  // namespace

Stmt guards_to_bounds(const Stmt& s) {
  return GuardsToBounds().mutate(s);
}

}  // namespace kf::lowering
