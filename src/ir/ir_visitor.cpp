#include "ir/ir_visitor.h"

#include "support/check.h"

namespace kf::ir {

// --- IRVisitor --------------------------------------------------------------------------------

void IRVisitor::visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
    case ExprKind::int_imm:
      return visit_int_imm(e.as<IntImm>());
    case ExprKind::float_imm:
      return visit_float_imm(e.as<FloatImm>());
    case ExprKind::var:
      return visit_var(e.as<Var>());
    case ExprKind::cast:
      return visit_cast(e.as<Cast>());
    case ExprKind::binary:
      return visit_binary(e.as<Binary>());
    case ExprKind::not_:
      return visit_not(e.as<Not>());
    case ExprKind::select:
      return visit_select(e.as<Select>());
    case ExprKind::load:
      return visit_load(e.as<Load>());
    case ExprKind::call:
      return visit_call(e.as<Call>());
    case ExprKind::ramp:
      return visit_ramp(e.as<Ramp>());
    case ExprKind::broadcast:
      return visit_broadcast(e.as<Broadcast>());
    case ExprKind::vector_reduce:
      return visit_vector_reduce(e.as<VectorReduce>());
    case ExprKind::let:
      return visit_let(e.as<Let>());
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::for_:
      return visit_for(s.as<For>());
    case StmtKind::block:
      return visit_block(s.as<Block>());
    case StmtKind::store:
      return visit_store(s.as<Store>());
    case StmtKind::allocate:
      return visit_allocate(s.as<Allocate>());
    case StmtKind::if_then_else:
      return visit_if_then_else(s.as<IfThenElse>());
    case StmtKind::let_stmt:
      return visit_let_stmt(s.as<LetStmt>());
    case StmtKind::evaluate:
      return visit_evaluate(s.as<Evaluate>());
    case StmtKind::producer_consumer:
      return visit_producer_consumer(s.as<ProducerConsumer>());
    case StmtKind::comment:
      return visit_comment(s.as<Comment>());
    case StmtKind::prefetch:
      return visit_prefetch(s.as<Prefetch>());
    case StmtKind::transpose_block:
      return visit_transpose_block(s.as<TransposeBlock>());
  }
}

void IRVisitor::visit_int_imm(const IntImm*) {}
void IRVisitor::visit_float_imm(const FloatImm*) {}
void IRVisitor::visit_var(const Var*) {}
void IRVisitor::visit_cast(const Cast* op) {
  visit(op->value);
}
void IRVisitor::visit_binary(const Binary* op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit_not(const Not* op) {
  visit(op->a);
}
void IRVisitor::visit_select(const Select* op) {
  visit(op->condition);
  visit(op->true_value);
  visit(op->false_value);
}
void IRVisitor::visit_load(const Load* op) {
  visit(op->index);
  visit(op->predicate);
}
void IRVisitor::visit_call(const Call* op) {
  for (const Expr& a : op->args) visit(a);
}
void IRVisitor::visit_ramp(const Ramp* op) {
  visit(op->base);
  visit(op->stride);
}
void IRVisitor::visit_broadcast(const Broadcast* op) {
  visit(op->value);
}
void IRVisitor::visit_vector_reduce(const VectorReduce* op) {
  visit(op->value);
}
void IRVisitor::visit_let(const Let* op) {
  visit(op->value);
  visit(op->body);
}

void IRVisitor::visit_for(const For* op) {
  visit(op->min);
  visit(op->extent);
  visit(op->body);
}
void IRVisitor::visit_block(const Block* op) {
  for (const Stmt& s : op->stmts) visit(s);
}
void IRVisitor::visit_store(const Store* op) {
  visit(op->index);
  visit(op->value);
  visit(op->predicate);
}
void IRVisitor::visit_allocate(const Allocate* op) {
  visit(op->extent);
  visit(op->body);
}
void IRVisitor::visit_if_then_else(const IfThenElse* op) {
  visit(op->condition);
  visit(op->then_case);
  visit(op->else_case);
}
void IRVisitor::visit_let_stmt(const LetStmt* op) {
  visit(op->value);
  visit(op->body);
}
void IRVisitor::visit_evaluate(const Evaluate* op) {
  visit(op->value);
}
void IRVisitor::visit_producer_consumer(const ProducerConsumer* op) {
  visit(op->body);
}
void IRVisitor::visit_comment(const Comment*) {}
void IRVisitor::visit_prefetch(const Prefetch* op) {
  visit(op->index);
}
void IRVisitor::visit_transpose_block(const TransposeBlock* op) {
  visit(op->dst_index);
  visit(op->dst_stride);
  visit(op->src_index);
  visit(op->src_stride);
}

// --- IRMutator --------------------------------------------------------------------------------

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
    case ExprKind::int_imm:
      return mutate_int_imm(e.as<IntImm>(), e);
    case ExprKind::float_imm:
      return mutate_float_imm(e.as<FloatImm>(), e);
    case ExprKind::var:
      return mutate_var(e.as<Var>(), e);
    case ExprKind::cast:
      return mutate_cast(e.as<Cast>(), e);
    case ExprKind::binary:
      return mutate_binary(e.as<Binary>(), e);
    case ExprKind::not_:
      return mutate_not(e.as<Not>(), e);
    case ExprKind::select:
      return mutate_select(e.as<Select>(), e);
    case ExprKind::load:
      return mutate_load(e.as<Load>(), e);
    case ExprKind::call:
      return mutate_call(e.as<Call>(), e);
    case ExprKind::ramp:
      return mutate_ramp(e.as<Ramp>(), e);
    case ExprKind::broadcast:
      return mutate_broadcast(e.as<Broadcast>(), e);
    case ExprKind::vector_reduce:
      return mutate_vector_reduce(e.as<VectorReduce>(), e);
    case ExprKind::let:
      return mutate_let(e.as<Let>(), e);
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
    case StmtKind::for_:
      return mutate_for(s.as<For>(), s);
    case StmtKind::block:
      return mutate_block(s.as<Block>(), s);
    case StmtKind::store:
      return mutate_store(s.as<Store>(), s);
    case StmtKind::allocate:
      return mutate_allocate(s.as<Allocate>(), s);
    case StmtKind::if_then_else:
      return mutate_if_then_else(s.as<IfThenElse>(), s);
    case StmtKind::let_stmt:
      return mutate_let_stmt(s.as<LetStmt>(), s);
    case StmtKind::evaluate:
      return mutate_evaluate(s.as<Evaluate>(), s);
    case StmtKind::producer_consumer:
      return mutate_producer_consumer(s.as<ProducerConsumer>(), s);
    case StmtKind::comment:
      return mutate_comment(s.as<Comment>(), s);
    case StmtKind::prefetch:
      return mutate_prefetch(s.as<Prefetch>(), s);
    case StmtKind::transpose_block:
      return mutate_transpose_block(s.as<TransposeBlock>(), s);
  }
  return s;
}

Expr IRMutator::mutate_int_imm(const IntImm*, const Expr& e) {
  return e;
}
Expr IRMutator::mutate_float_imm(const FloatImm*, const Expr& e) {
  return e;
}
Expr IRMutator::mutate_var(const Var*, const Expr& e) {
  return e;
}

Expr IRMutator::mutate_cast(const Cast* op, const Expr& e) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return e;
  return Cast::make(op->type.with_lanes(v.type().lanes()), v);
}

Expr IRMutator::mutate_binary(const Binary* op, const Expr& e) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return e;
  return Binary::make(op->op, a, b);
}

Expr IRMutator::mutate_not(const Not* op, const Expr& e) {
  Expr a = mutate(op->a);
  if (a.same_as(op->a)) return e;
  return Not::make(a);
}

Expr IRMutator::mutate_select(const Select* op, const Expr& e) {
  Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
  return Select::make(c, t, f);
}

Expr IRMutator::mutate_load(const Load* op, const Expr& e) {
  Expr i = mutate(op->index), p = mutate(op->predicate);
  if (i.same_as(op->index) && p.same_as(op->predicate)) return e;
  return Load::make(op->type, op->buffer, i, p);
}

Expr IRMutator::mutate_call(const Call* op, const Expr& e) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& a : op->args) {
    args.push_back(mutate(a));
    changed = changed || !args.back().same_as(a);
  }
  if (!changed) return e;
  return Call::make(op->fn, std::move(args), op->approx);
}

Expr IRMutator::mutate_ramp(const Ramp* op, const Expr& e) {
  Expr b = mutate(op->base), s = mutate(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return e;
  return Ramp::make(b, s, op->lanes);
}

Expr IRMutator::mutate_broadcast(const Broadcast* op, const Expr& e) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return e;
  return Broadcast::make(v, op->lanes);
}

Expr IRMutator::mutate_vector_reduce(const VectorReduce* op, const Expr& e) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return e;
  return VectorReduce::make(op->op, v);
}

Expr IRMutator::mutate_let(const Let* op, const Expr& e) {
  Expr v = mutate(op->value), b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return e;
  return Let::make(op->name, v, b);
}

Stmt IRMutator::mutate_for(const For* op, const Stmt& s) {
  Expr mn = mutate(op->min), ex = mutate(op->extent);
  Stmt b = mutate(op->body);
  if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return s;
  return For::make(op->name, mn, ex, op->for_kind, b);
}

Stmt IRMutator::mutate_block(const Block* op, const Stmt& s) {
  std::vector<Stmt> stmts;
  bool changed = false;
  for (const Stmt& c : op->stmts) {
    stmts.push_back(mutate(c));
    changed = changed || !stmts.back().same_as(c);
  }
  if (!changed) return s;
  return Block::make(std::move(stmts));
}

Stmt IRMutator::mutate_store(const Store* op, const Stmt& s) {
  Expr i = mutate(op->index), v = mutate(op->value), p = mutate(op->predicate);
  if (i.same_as(op->index) && v.same_as(op->value) && p.same_as(op->predicate)) return s;
  return Store::make(op->buffer, i, v, p);
}

Stmt IRMutator::mutate_allocate(const Allocate* op, const Stmt& s) {
  Expr ex = mutate(op->extent);
  Stmt b = mutate(op->body);
  if (ex.same_as(op->extent) && b.same_as(op->body)) return s;
  return Allocate::make(op->name, op->element_type, ex, op->memory, b);
}

Stmt IRMutator::mutate_if_then_else(const IfThenElse* op, const Stmt& s) {
  Expr c = mutate(op->condition);
  Stmt t = mutate(op->then_case), f = mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && f.same_as(op->else_case)) return s;
  return IfThenElse::make(c, t, f);
}

Stmt IRMutator::mutate_let_stmt(const LetStmt* op, const Stmt& s) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return s;
  return LetStmt::make(op->name, v, b);
}

Stmt IRMutator::mutate_evaluate(const Evaluate* op, const Stmt& s) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return s;
  return Evaluate::make(v);
}

Stmt IRMutator::mutate_producer_consumer(const ProducerConsumer* op, const Stmt& s) {
  Stmt b = mutate(op->body);
  if (b.same_as(op->body)) return s;
  return ProducerConsumer::make(op->name, op->is_producer, b);
}

Stmt IRMutator::mutate_comment(const Comment*, const Stmt& s) {
  return s;
}

Stmt IRMutator::mutate_prefetch(const Prefetch* op, const Stmt& s) {
  Expr i = mutate(op->index);
  if (i.same_as(op->index)) return s;
  return Prefetch::make(op->buffer, i);
}

Stmt IRMutator::mutate_transpose_block(const TransposeBlock* op, const Stmt& s) {
  Expr di = mutate(op->dst_index), ds = mutate(op->dst_stride);
  Expr si = mutate(op->src_index), ss = mutate(op->src_stride);
  if (di.same_as(op->dst_index) && ds.same_as(op->dst_stride) && si.same_as(op->src_index) &&
      ss.same_as(op->src_stride))
    return s;
  return TransposeBlock::make(op->dst, di, ds, op->src, si, ss, op->type, op->lanes);
}

}  // namespace kf::ir
