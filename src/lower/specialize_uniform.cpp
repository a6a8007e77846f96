#include "lower/specialize_uniform.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "ir/ir_printer.h"
#include "ir/ir_visitor.h"

namespace kf::lowering {

namespace {

using ir::Expr;
using ir::Stmt;

// What a loop body binds (its loops, its lets) and the buffers it writes.
struct BodyFacts : ir::IRVisitor {
  std::set<std::string> bound, stored;
  void visit_for(const ir::For* op) override {
    bound.insert(op->name);
    IRVisitor::visit_for(op);
  }
  void visit_let_stmt(const ir::LetStmt* op) override {
    bound.insert(op->name);
    IRVisitor::visit_let_stmt(op);
  }
  void visit_let(const ir::Let* op) override {
    bound.insert(op->name);
    IRVisitor::visit_let(op);
  }
  void visit_store(const ir::Store* op) override {
    stored.insert(op->buffer);
    IRVisitor::visit_store(op);
  }
};

// The variables an expression reads and the buffers it loads from.
struct Reads : ir::IRVisitor {
  std::set<std::string> vars, buffers;
  void visit_var(const ir::Var* op) override { vars.insert(op->name); }
  void visit_load(const ir::Load* op) override {
    buffers.insert(op->buffer);
    IRVisitor::visit_load(op);
  }
};

// Whether `e` can be computed before the body: it reads no variable the body binds and no
// buffer the body writes.
bool computable_before(const Expr& e, const BodyFacts& body) {
  Reads r;
  r.visit(e);
  for (const std::string& v : r.vars)
    if (body.bound.contains(v)) return false;
  for (const std::string& b : r.buffers)
    if (body.stored.contains(b)) return false;
  return true;
}

// One read the test may compute before the body: its tensor, its index, and either the
// tensor's extent (an allocation around the loop: the test checks the index against it) or the
// extents of the loops around the read inside the body, outermost first (the test requires them
// to run, so it reads only what the body would).
struct Read {
  ir::Type type;
  std::string buffer;
  Expr index;
  std::string key;  // the index as text: equal texts are the same position
  Expr bound;       // the tensor's extent, when known
  std::vector<Expr> extents;
};

// The reads of integer tensors the body does not write, at indices the test can compute: all of
// them where the tensor's extent is known; elsewhere those made whenever the loops around them
// run (outside conditions, inside loops whose extents the test can compute).
class Survey : public ir::IRVisitor {
 public:
  Survey(const BodyFacts& body, const std::map<std::string, Expr>& allocated)
      : body_(body), allocated_(allocated) {}
  std::vector<Read> reads;

 protected:
  void visit_for(const ir::For* op) override {
    visit(op->min);
    visit(op->extent);
    const bool opaque = !computable_before(op->extent, body_);
    extents_.push_back(op->extent);
    conditional_ += opaque;
    visit(op->body);
    conditional_ -= opaque;
    extents_.pop_back();
  }
  void visit_if_then_else(const ir::IfThenElse* op) override {
    visit(op->condition);
    ++conditional_;
    visit(op->then_case);
    if (op->else_case.defined()) visit(op->else_case);
    --conditional_;
  }
  void visit_select(const ir::Select* op) override {
    visit(op->condition);
    ++conditional_;
    visit(op->true_value);
    visit(op->false_value);
    --conditional_;
  }
  void visit_load(const ir::Load* op) override {
    if (!op->predicate.defined() && op->type.is_int() && op->type.is_scalar() &&
        !body_.stored.contains(op->buffer) && computable_before(op->index, body_)) {
      auto a = allocated_.find(op->buffer);
      if (a != allocated_.end())
        reads.push_back({op->type, op->buffer, op->index, ir::to_string(op->index), a->second, {}});
      else if (conditional_ == 0)
        reads.push_back(
            {op->type, op->buffer, op->index, ir::to_string(op->index), Expr(), extents_});
    }
    if (op->predicate.defined()) {
      ++conditional_;
      IRVisitor::visit_load(op);
      --conditional_;
      return;
    }
    IRVisitor::visit_load(op);
  }

 private:
  const BodyFacts& body_;
  const std::map<std::string, Expr>& allocated_;
  std::vector<Expr> extents_;
  int conditional_ = 0;
};

// Reads every listed position of a tensor at its first listed position.
class Merge : public ir::IRMutator {
 public:
  // buffer -> (the index every merged read takes, the keys of the positions merged)
  std::map<std::string, std::pair<Expr, std::set<std::string>>> to;

 protected:
  Expr mutate_load(const ir::Load* op, const Expr& e) override {
    Expr l = IRMutator::mutate_load(op, e);
    const ir::Load* n = l.as<ir::Load>();
    auto it = to.find(n->buffer);
    if (it == to.end() || n->predicate.defined() ||
        !it->second.second.contains(ir::to_string(n->index)))
      return l;
    return ir::Load::make(n->type, n->buffer, it->second.first);
  }
};

// The loop body with its specialized version in front, or nullopt when nothing in it can merge.
std::optional<Stmt> specialize(const Stmt& body, const std::map<std::string, Expr>& allocated) {
  BodyFacts facts;
  facts.visit(body);
  Survey survey(facts, allocated);
  survey.visit(body);
  // Per tensor, its positions in order of first appearance.
  std::map<std::string, std::vector<const Read*>> positions;
  for (const Read& r : survey.reads) {
    auto& list = positions[r.buffer];
    if (std::none_of(list.begin(), list.end(), [&](const Read* q) { return q->key == r.key; }))
      list.push_back(&r);
  }
  Merge merge;
  Expr test;
  std::set<std::string> tested;
  auto require = [&](const Expr& c) {
    if (!tested.insert(ir::to_string(c)).second) return;
    test = test.defined() ? ir::logical_and(test, c) : c;
  };
  // First what makes each read of the test safe (its index within the tensor, or every loop
  // around it running, outermost first so an inner extent is computed only where the loops
  // around it run), then the equalities.
  for (const auto& [buffer, list] : positions) {
    if (list.size() < 2) continue;
    std::set<std::string> keys;
    for (const Read* r : list) {
      if (r->bound.defined()) {
        require(ir::le(ir::make_zero(r->index.type()), r->index));
        require(ir::lt(r->index, r->bound));
      }
      for (const Expr& ext : r->extents) require(ir::lt(ir::make_zero(ext.type()), ext));
      keys.insert(r->key);
    }
    merge.to[buffer] = {list.front()->index, keys};
  }
  if (merge.to.empty()) return std::nullopt;
  for (const auto& [buffer, list] : positions) {
    if (!merge.to.contains(buffer)) continue;
    const Read& first = *list.front();
    const Expr at = ir::Load::make(first.type, buffer, first.index);
    for (size_t i = 1; i < list.size(); ++i)
      require(ir::eq(ir::Load::make(list[i]->type, buffer, list[i]->index), at));
  }
  return ir::IfThenElse::make(test, merge.mutate(body), body);
}

class Specialize : public ir::IRMutator {
 public:
  explicit Specialize(const std::set<std::string>& loops) : loops_(loops) {}

 protected:
  Stmt mutate_allocate(const ir::Allocate* op, const Stmt& s) override {
    // An allocation shadows one of the same name around it for its body only; the extent of one
    // of vectors is not in the elements a scalar index counts, so it is not known there.
    const auto outer = allocated_.find(op->name);
    const bool shadows = outer != allocated_.end();
    const Expr saved = shadows ? outer->second : Expr();
    if (op->element_type.is_scalar())
      allocated_[op->name] = op->extent;
    else
      allocated_.erase(op->name);
    Stmt m = IRMutator::mutate_allocate(op, s);
    if (shadows)
      allocated_[op->name] = saved;
    else
      allocated_.erase(op->name);
    return m;
  }
  Stmt mutate_for(const ir::For* op, const Stmt& s) override {
    Stmt m = IRMutator::mutate_for(op, s);
    const ir::For* f = m.as<ir::For>();
    if (!loops_.contains(f->name) ||
        (f->for_kind != ir::ForKind::serial && f->for_kind != ir::ForKind::parallel))
      return m;
    auto body = specialize(f->body, allocated_);
    if (!body) return m;
    return ir::For::make(f->name, f->min, f->extent, f->for_kind, *body);
  }

 private:
  const std::set<std::string>& loops_;
  std::map<std::string, Expr> allocated_;  // the allocations around the node: their extents
};

}  // namespace

Stmt specialize_uniform(const Stmt& s, const std::set<std::string>& loops) {
  if (loops.empty()) return s;
  return Specialize(loops).mutate(s);
}

}  // namespace kf::lowering
