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

// The variables a statement binds: its loops, its lets.
struct BoundNames : ir::IRVisitor {
  std::set<std::string> names;
  void visit_for(const ir::For* op) override {
    names.insert(op->name);
    IRVisitor::visit_for(op);
  }
  void visit_let_stmt(const ir::LetStmt* op) override {
    names.insert(op->name);
    IRVisitor::visit_let_stmt(op);
  }
  void visit_let(const ir::Let* op) override {
    names.insert(op->name);
    IRVisitor::visit_let(op);
  }
};

struct VarNames : ir::IRVisitor {
  std::set<std::string> names;
  void visit_var(const ir::Var* op) override { names.insert(op->name); }
};

bool uses_any(const Expr& e, const std::set<std::string>& names) {
  VarNames v;
  v.visit(e);
  for (const std::string& n : v.names)
    if (names.contains(n)) return true;
  return false;
}

// One read the test may compute before the body: its tensor, its index, and the extents of the
// loops around it inside the body, outermost first.
struct Read {
  ir::Type type;
  std::string buffer;
  Expr index;
  std::string key;  // the index as text: equal texts are the same position
  std::vector<Expr> extents;
};

// The reads of integer tensors at indices free of the body's variables, made whenever the
// loops around them run (not under a condition), and the tensors the body writes.
class Survey : public ir::IRVisitor {
 public:
  explicit Survey(std::set<std::string> bound) : bound_(std::move(bound)) {}
  std::vector<Read> reads;
  std::set<std::string> stored;

 protected:
  void visit_for(const ir::For* op) override {
    visit(op->min);
    visit(op->extent);
    // A loop whose extent the test cannot compute hides its reads from the test.
    const bool opaque = uses_any(op->extent, bound_);
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
  void visit_store(const ir::Store* op) override {
    stored.insert(op->buffer);
    IRVisitor::visit_store(op);
  }
  void visit_load(const ir::Load* op) override {
    if (conditional_ == 0 && !op->predicate.defined() && op->type.is_int() &&
        op->type.is_scalar() && !uses_any(op->index, bound_))
      reads.push_back({op->type, op->buffer, op->index, ir::to_string(op->index), extents_});
    if (op->predicate.defined()) {
      ++conditional_;
      IRVisitor::visit_load(op);
      --conditional_;
      return;
    }
    IRVisitor::visit_load(op);
  }

 private:
  std::set<std::string> bound_;
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
std::optional<Stmt> specialize(const Stmt& body) {
  BoundNames b;
  b.visit(body);
  Survey survey(b.names);
  survey.visit(body);
  // Per tensor the body does not write, its positions in order of first appearance.
  std::map<std::string, std::vector<const Read*>> positions;
  for (const Read& r : survey.reads) {
    if (survey.stored.contains(r.buffer)) continue;
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
  // Every loop around a merged read runs first (outermost first, so an inner extent is computed
  // only where the loops around it run), then the equalities: each read of the test is one the
  // body makes.
  for (const auto& [buffer, list] : positions) {
    if (list.size() < 2) continue;
    std::set<std::string> keys;
    for (const Read* r : list) {
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
  Stmt mutate_for(const ir::For* op, const Stmt& s) override {
    Stmt m = IRMutator::mutate_for(op, s);
    const ir::For* f = m.as<ir::For>();
    if (!loops_.contains(f->name) ||
        (f->for_kind != ir::ForKind::serial && f->for_kind != ir::ForKind::parallel))
      return m;
    auto body = specialize(f->body);
    if (!body) return m;
    return ir::For::make(f->name, f->min, f->extent, f->for_kind, *body);
  }

 private:
  const std::set<std::string>& loops_;
};

}  // namespace

Stmt specialize_uniform(const Stmt& s, const std::set<std::string>& loops) {
  if (loops.empty()) return s;
  return Specialize(loops).mutate(s);
}

}  // namespace kf::lowering
