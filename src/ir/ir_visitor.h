// IRVisitor and IRMutator: the two base classes every IR pass is written with.
//
// IRVisitor walks a tree read-only; override the visit_* of the nodes you care about and call
// the base version to keep walking into children:
//
//   class CountLoads : public IRVisitor {
//    public:
//     int count = 0;
//    protected:
//     void visit_load(const Load* op) override { ++count; IRVisitor::visit_load(op); }
//   };
//   CountLoads c; c.visit(stmt);
//
// IRMutator rebuilds a tree bottom-up. Each mutate_* gets the node and its handle; the default
// mutates the children and returns the handle itself when no child changed (so unchanged
// subtrees are shared, and `same_as` tells a pass whether anything happened):
//
//   class RenameBuffer : public IRMutator {
//    protected:
//     Expr mutate_load(const Load* op, const Expr& e) override {
//       Expr l = IRMutator::mutate_load(op, e);
//       const Load* n = l.as<Load>();
//       return n->buffer == "A" ? Load::make(n->type, "A2", n->index, n->predicate) : l;
//     }
//   };
//   Stmt s2 = RenameBuffer().mutate(s);
//
// Undefined children (an absent predicate or else case) are skipped by both.
#pragma once

#include "ir/ir.h"

namespace kf::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  // Dispatch on the node kind; an undefined handle is ignored.
  void visit(const Expr& e);
  void visit(const Stmt& s);

 protected:
  virtual void visit_int_imm(const IntImm* op);
  virtual void visit_float_imm(const FloatImm* op);
  virtual void visit_var(const Var* op);
  virtual void visit_cast(const Cast* op);
  virtual void visit_binary(const Binary* op);
  virtual void visit_not(const Not* op);
  virtual void visit_select(const Select* op);
  virtual void visit_load(const Load* op);
  virtual void visit_call(const Call* op);
  virtual void visit_ramp(const Ramp* op);
  virtual void visit_broadcast(const Broadcast* op);
  virtual void visit_vector_reduce(const VectorReduce* op);
  virtual void visit_let(const Let* op);

  virtual void visit_for(const For* op);
  virtual void visit_block(const Block* op);
  virtual void visit_store(const Store* op);
  virtual void visit_allocate(const Allocate* op);
  virtual void visit_if_then_else(const IfThenElse* op);
  virtual void visit_let_stmt(const LetStmt* op);
  virtual void visit_evaluate(const Evaluate* op);
  virtual void visit_producer_consumer(const ProducerConsumer* op);
  virtual void visit_comment(const Comment* op);
  virtual void visit_prefetch(const Prefetch* op);
  virtual void visit_transpose_block(const TransposeBlock* op);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  // Dispatch on the node kind; an undefined handle is returned as is.
  Expr mutate(const Expr& e);
  Stmt mutate(const Stmt& s);

 protected:
  virtual Expr mutate_int_imm(const IntImm* op, const Expr& e);
  virtual Expr mutate_float_imm(const FloatImm* op, const Expr& e);
  virtual Expr mutate_var(const Var* op, const Expr& e);
  virtual Expr mutate_cast(const Cast* op, const Expr& e);
  virtual Expr mutate_binary(const Binary* op, const Expr& e);
  virtual Expr mutate_not(const Not* op, const Expr& e);
  virtual Expr mutate_select(const Select* op, const Expr& e);
  virtual Expr mutate_load(const Load* op, const Expr& e);
  virtual Expr mutate_call(const Call* op, const Expr& e);
  virtual Expr mutate_ramp(const Ramp* op, const Expr& e);
  virtual Expr mutate_broadcast(const Broadcast* op, const Expr& e);
  virtual Expr mutate_vector_reduce(const VectorReduce* op, const Expr& e);
  virtual Expr mutate_let(const Let* op, const Expr& e);

  virtual Stmt mutate_for(const For* op, const Stmt& s);
  virtual Stmt mutate_block(const Block* op, const Stmt& s);
  virtual Stmt mutate_store(const Store* op, const Stmt& s);
  virtual Stmt mutate_allocate(const Allocate* op, const Stmt& s);
  virtual Stmt mutate_if_then_else(const IfThenElse* op, const Stmt& s);
  virtual Stmt mutate_let_stmt(const LetStmt* op, const Stmt& s);
  virtual Stmt mutate_evaluate(const Evaluate* op, const Stmt& s);
  virtual Stmt mutate_producer_consumer(const ProducerConsumer* op, const Stmt& s);
  virtual Stmt mutate_comment(const Comment* op, const Stmt& s);
  virtual Stmt mutate_prefetch(const Prefetch* op, const Stmt& s);
  virtual Stmt mutate_transpose_block(const TransposeBlock* op, const Stmt& s);
};

}  // namespace kf::ir
