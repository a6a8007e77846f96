#include "ir/substitute.h"

#include "ir/ir_visitor.h"

namespace kf::ir {
namespace {

class Substitute : public IRMutator {
 public:
  explicit Substitute(const std::map<std::string, Expr>& r) : replacements_(r) {}

 private:
  // Runs f with `name` shadowed when it is one of the replaced names.
  template <typename F>
  auto shadowing(const std::string& name, F f) {
    if (!replacements_.count(name)) return f();
    std::multiset<std::string>::iterator it = shadowed_.insert(name);
    auto r = f();
    shadowed_.erase(it);
    return r;
  }

 protected:
  Expr mutate_var(const Var* op, const Expr& e) override {
    auto it = replacements_.find(op->name);
    if (it == replacements_.end() || shadowed_.count(op->name)) return e;
    return it->second;
  }
  Expr mutate_let(const Let* op, const Expr& e) override {
    Expr v = mutate(op->value);
    Expr b = shadowing(op->name, [&] { return mutate(op->body); });
    if (v.same_as(op->value) && b.same_as(op->body)) return e;
    return Let::make(op->name, v, b);
  }
  Stmt mutate_let_stmt(const LetStmt* op, const Stmt& s) override {
    Expr v = mutate(op->value);
    Stmt b = shadowing(op->name, [&] { return mutate(op->body); });
    if (v.same_as(op->value) && b.same_as(op->body)) return s;
    return LetStmt::make(op->name, v, b);
  }
  Stmt mutate_for(const For* op, const Stmt& s) override {
    Expr mn = mutate(op->min), ex = mutate(op->extent);
    Stmt b = shadowing(op->name, [&] { return mutate(op->body); });
    if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return s;
    return For::make(op->name, mn, ex, op->for_kind, b);
  }

 private:
  const std::map<std::string, Expr>& replacements_;
  std::multiset<std::string> shadowed_;
};

class UsesVar : public IRVisitor {
 public:
  explicit UsesVar(const std::string& name) : name_(name) {}
  bool found = false;

 protected:
  void visit_var(const Var* op) override { found = found || op->name == name_; }

 private:
  const std::string& name_;
};

class UsesBuffer : public IRVisitor {
 public:
  explicit UsesBuffer(const std::string& name) : name_(name) {}
  bool found = false;

 protected:
  void visit_load(const Load* op) override {
    found = found || op->buffer == name_;
    IRVisitor::visit_load(op);
  }
  void visit_store(const Store* op) override {
    found = found || op->buffer == name_;
    IRVisitor::visit_store(op);
  }
  void visit_transpose_block(const TransposeBlock* op) override {
    found = found || op->dst == name_ || op->src == name_;
    IRVisitor::visit_transpose_block(op);
  }

 private:
  const std::string& name_;
};

}  // namespace

Expr substitute(const std::string& name, const Expr& replacement, const Expr& e) {
  std::map<std::string, Expr> r{{name, replacement}};
  return Substitute(r).mutate(e);
}

Stmt substitute(const std::string& name, const Expr& replacement, const Stmt& s) {
  std::map<std::string, Expr> r{{name, replacement}};
  return Substitute(r).mutate(s);
}

Stmt substitute(const std::map<std::string, Expr>& replacements, const Stmt& s) {
  return Substitute(replacements).mutate(s);
}

bool expr_has_load(const Expr& e) {
  class HasLoad : public IRVisitor {
   public:
    bool found = false;

   protected:
    void visit_load(const Load*) override { found = true; }
  } v;
  v.visit(e);
  return v.found;
}

bool expr_uses_var(const Expr& e, const std::string& name) {
  UsesVar v(name);
  v.visit(e);
  return v.found;
}

bool stmt_uses_var(const Stmt& s, const std::string& name) {
  UsesVar v(name);
  v.visit(s);
  return v.found;
}

bool stmt_uses_buffer(const Stmt& s, const std::string& buffer) {
  UsesBuffer v(buffer);
  v.visit(s);
  return v.found;
}

}  // namespace kf::ir
