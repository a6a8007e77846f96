#include "ir/simplify.h"

#include <cmath>

#include "ir/ir_visitor.h"
#include "ir/substitute.h"
#include "support/check.h"

namespace kf::ir {
namespace {

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Folds `a op b` for scalar constants; returns an undefined Expr when it cannot.
Expr fold_int(BinOp op, Type t, int64_t a, int64_t b) {
  switch (op) {
    case BinOp::add:
      return IntImm::make(t, wrap_add(a, b));
    case BinOp::sub:
      return IntImm::make(t, wrap_sub(a, b));
    case BinOp::mul:
      return IntImm::make(t, wrap_mul(a, b));
    case BinOp::div:
      if (b == 0 || (b == -1 && a == INT64_MIN)) return Expr();
      return IntImm::make(t, a / b);
    case BinOp::mod:
      if (b == 0 || b == -1) return b == -1 ? IntImm::make(t, 0) : Expr();
      return IntImm::make(t, a % b);
    case BinOp::min:
      return IntImm::make(t, a < b ? a : b);
    case BinOp::max:
      return IntImm::make(t, a > b ? a : b);
    case BinOp::eq:
      return bool_imm(a == b);
    case BinOp::ne:
      return bool_imm(a != b);
    case BinOp::lt:
      return bool_imm(a < b);
    case BinOp::le:
      return bool_imm(a <= b);
    case BinOp::gt:
      return bool_imm(a > b);
    case BinOp::ge:
      return bool_imm(a >= b);
    case BinOp::logical_and:
      return bool_imm(a && b);
    case BinOp::logical_or:
      return bool_imm(a || b);
  }
  return Expr();
}

Expr fold_float(BinOp op, Type t, double a, double b) {
  switch (op) {
    case BinOp::add:
      return FloatImm::make(t, a + b);
    case BinOp::sub:
      return FloatImm::make(t, a - b);
    case BinOp::mul:
      return FloatImm::make(t, a * b);
    case BinOp::div:
      return FloatImm::make(t, a / b);
    case BinOp::min:
      return FloatImm::make(t, a < b ? a : b);
    case BinOp::max:
      return FloatImm::make(t, a > b ? a : b);
    case BinOp::eq:
      return bool_imm(a == b);
    case BinOp::ne:
      return bool_imm(a != b);
    case BinOp::lt:
      return bool_imm(a < b);
    case BinOp::le:
      return bool_imm(a <= b);
    case BinOp::gt:
      return bool_imm(a > b);
    case BinOp::ge:
      return bool_imm(a >= b);
    case BinOp::mod:
    case BinOp::logical_and:
    case BinOp::logical_or:
      return Expr();
  }
  return Expr();
}

bool is_scalar_const_or_var(const Expr& e) {
  return e.as<IntImm>() || e.as<FloatImm>() || e.as<Var>();
}

// Values cheap enough to copy into every use.
bool is_substitutable(const Expr& e) {
  if (is_scalar_const_or_var(e)) return true;
  if (const Broadcast* b = e.as<Broadcast>()) return is_scalar_const_or_var(b->value);
  if (const Ramp* r = e.as<Ramp>()) return is_scalar_const_or_var(r->base) && is_const(r->stride);
  return false;
}

bool is_no_op(const Stmt& s) {
  if (const Block* b = s.as<Block>()) return b->stmts.empty();
  if (const Evaluate* e = s.as<Evaluate>()) return is_const(e->value);
  return false;
}

class Simplifier : public IRMutator {
 protected:
  Expr mutate_cast(const Cast* op, const Expr& e) override {
    Expr v = mutate(op->value);
    if (v.type() == op->type) return v;
    Type t = op->type;
    if (const Broadcast* b = v.as<Broadcast>())
      return mutate(Broadcast::make(Cast::make(t.scalar(), b->value), b->lanes));
    if (t.is_scalar()) {
      auto ci = as_const_int(v);
      auto cf = as_const_float(v);
      if (ci && t.is_float()) return FloatImm::make(t, static_cast<double>(*ci));
      if (ci && t.is_int()) return IntImm::make(t, *ci);
      if (ci && t.is_bool()) return bool_imm(*ci != 0);
      if (cf && t.is_float()) return FloatImm::make(t, *cf);
      if (cf && t.is_bool()) return bool_imm(*cf != 0);
      if (cf && t.is_int() && std::isfinite(*cf) && std::fabs(*cf) < 9.2e18)
        return IntImm::make(t, static_cast<int64_t>(*cf));
    }
    if (v.same_as(op->value)) return e;
    return Cast::make(t, v);
  }

  Expr mutate_binary(const Binary* op, const Expr& e) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    Expr r = simplify_binary(op->op, a, b);
    if (r.defined()) return r;
    if (a.same_as(op->a) && b.same_as(op->b)) return e;
    return Binary::make(op->op, a, b);
  }

  Expr mutate_not(const Not* op, const Expr& e) override {
    Expr a = mutate(op->a);
    if (auto c = as_const_int(a); c && a.type().is_scalar()) return bool_imm(*c == 0);
    if (const Not* n = a.as<Not>()) return n->a;
    if (a.same_as(op->a)) return e;
    return Not::make(a);
  }

  Expr mutate_select(const Select* op, const Expr& e) override {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (auto k = as_const_int(c)) return *k ? t : f;
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
      return e;
    return Select::make(c, t, f);
  }

  Expr mutate_load(const Load* op, const Expr& e) override {
    Expr i = mutate(op->index), p = mutate(op->predicate);
    if (auto k = as_const_int(p); k && *k) p = Expr();
    if (i.same_as(op->index) && p.same_as(op->predicate)) return e;
    return Load::make(op->type, op->buffer, i, p);
  }

  Expr mutate_vector_reduce(const VectorReduce* op, const Expr& e) override {
    Expr v = mutate(op->value);
    if (const Broadcast* b = v.as<Broadcast>()) {
      if (op->op == ReduceOp::min || op->op == ReduceOp::max) return b->value;
    }
    if (v.same_as(op->value)) return e;
    return VectorReduce::make(op->op, v);
  }

  Expr mutate_let(const Let* op, const Expr& e) override {
    Expr v = mutate(op->value);
    if (is_substitutable(v)) return mutate(substitute(op->name, v, op->body));
    Expr b = mutate(op->body);
    if (!expr_uses_var(b, op->name)) return b;
    if (v.same_as(op->value) && b.same_as(op->body)) return e;
    return Let::make(op->name, v, b);
  }

  Stmt mutate_for(const For* op, const Stmt& s) override {
    Expr mn = mutate(op->min), ex = mutate(op->extent);
    auto n = as_const_int(ex);
    if (n && *n <= 0) return Block::make({});
    if (n && *n == 1) return mutate(substitute(op->name, mn, op->body));
    Stmt b = mutate(op->body);
    if (is_no_op(b)) return Block::make({});
    if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return s;
    return For::make(op->name, mn, ex, op->for_kind, b);
  }

  Stmt mutate_block(const Block* op, const Stmt& s) override {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const Stmt& c : op->stmts) {
      Stmt m = mutate(c);
      changed = changed || !m.same_as(c);
      if (is_no_op(m)) {
        changed = true;
        continue;
      }
      stmts.push_back(m);
    }
    if (!changed) return s;
    return Block::make(std::move(stmts));
  }

  Stmt mutate_store(const Store* op, const Stmt& s) override {
    Expr i = mutate(op->index), v = mutate(op->value), p = mutate(op->predicate);
    if (auto k = as_const_int(p)) {
      if (!*k) return Block::make({});
      p = Expr();
    }
    if (i.same_as(op->index) && v.same_as(op->value) && p.same_as(op->predicate)) return s;
    return Store::make(op->buffer, i, v, p);
  }

  Stmt mutate_if_then_else(const IfThenElse* op, const Stmt& s) override {
    Expr c = mutate(op->condition);
    if (auto k = as_const_int(c)) {
      if (*k) return mutate(op->then_case);
      return op->else_case.defined() ? mutate(op->else_case) : Block::make({});
    }
    Stmt t = mutate(op->then_case), f = mutate(op->else_case);
    if (f.defined() && is_no_op(f)) f = Stmt();
    if (is_no_op(t) && !f.defined()) return Block::make({});
    if (c.same_as(op->condition) && t.same_as(op->then_case) && f.same_as(op->else_case)) return s;
    return IfThenElse::make(c, t, f);
  }

  Stmt mutate_let_stmt(const LetStmt* op, const Stmt& s) override {
    Expr v = mutate(op->value);
    if (is_substitutable(v)) return mutate(substitute(op->name, v, op->body));
    Stmt b = mutate(op->body);
    if (!stmt_uses_var(b, op->name)) return b;
    if (v.same_as(op->value) && b.same_as(op->body)) return s;
    return LetStmt::make(op->name, v, b);
  }

  Stmt mutate_producer_consumer(const ProducerConsumer* op, const Stmt& s) override {
    Stmt b = mutate(op->body);
    if (is_no_op(b)) return b;
    if (b.same_as(op->body)) return s;
    return ProducerConsumer::make(op->name, op->is_producer, b);
  }

 private:
  // Returns the simplified a op b, or an undefined Expr when no rule applies.
  Expr simplify_binary(BinOp op, const Expr& a, const Expr& b) {
    Type t = a.type();
    // Constants.
    if (t.is_scalar()) {
      auto ia = as_const_int(a), ib = as_const_int(b);
      if (ia && ib) return fold_int(op, t, *ia, *ib);
      auto fa = as_const_float(a), fb = as_const_float(b);
      if (fa && fb) return fold_float(op, t, *fa, *fb);
    }
    // Vectors: broadcasts and ramps.
    const Broadcast* ba = a.as<Broadcast>();
    const Broadcast* bb = b.as<Broadcast>();
    if (ba && bb) return mutate(Broadcast::make(Binary::make(op, ba->value, bb->value), ba->lanes));
    const Ramp* ra = a.as<Ramp>();
    const Ramp* rb = b.as<Ramp>();
    if (op == BinOp::add || op == BinOp::sub) {
      if (ra && bb)
        return mutate(Ramp::make(Binary::make(op, ra->base, bb->value), ra->stride, ra->lanes));
      if (ra && rb)
        return mutate(Ramp::make(Binary::make(op, ra->base, rb->base),
                                 Binary::make(op, ra->stride, rb->stride), ra->lanes));
      if (op == BinOp::add && ba && rb)
        return mutate(Ramp::make(ba->value + rb->base, rb->stride, rb->lanes));
    }
    if (op == BinOp::mul) {
      if (ra && bb)
        return mutate(Ramp::make(ra->base * bb->value, ra->stride * bb->value, ra->lanes));
      if (ba && rb)
        return mutate(Ramp::make(ba->value * rb->base, ba->value * rb->stride, rb->lanes));
    }
    if (t.is_int()) return simplify_int(op, a, b);
    if (t.is_float()) return simplify_float(op, a, b);
    return simplify_bool(op, a, b);
  }

  // b op a, simplified (for commutative ops, to move a constant a to the right).
  Expr swapped(BinOp op, const Expr& a, const Expr& b) {
    Expr r = simplify_binary(op, b, a);
    return r.defined() ? r : Binary::make(op, b, a);
  }

  Expr simplify_int(BinOp op, const Expr& a, const Expr& b) {
    bool a_const = is_const(a), b_const = is_const(b);
    switch (op) {
      case BinOp::add:
        if (is_const(a, 0)) return b;
        if (is_const(b, 0)) return a;
        if (a_const && !b_const) return swapped(op, a, b);  // constants to the right
        if (b_const) {
          // (x + c1) + c2 → x + (c1 + c2);  (x - c1) + c2 → x + (c2 - c1)
          if (const Binary* x = a.as<Binary>(); x && is_const(x->b)) {
            if (x->op == BinOp::add) return mutate(x->a + mutate(x->b + b));
            if (x->op == BinOp::sub) return mutate(x->a + mutate(b - x->b));
          }
        }
        return Expr();
      case BinOp::sub:
        if (is_const(b, 0)) return a;
        if (b_const) {
          if (const Binary* x = a.as<Binary>(); x && is_const(x->b) && x->op == BinOp::add)
            return mutate(x->a + mutate(x->b - b));
        }
        return Expr();
      case BinOp::mul:
        if (is_const(a, 1)) return b;
        if (is_const(b, 1)) return a;
        if (is_const(a, 0)) return a;
        if (is_const(b, 0)) return b;
        if (a_const && !b_const) return swapped(op, a, b);
        return Expr();
      case BinOp::div:
        if (is_const(b, 1)) return a;
        return Expr();
      case BinOp::mod:
        if (is_const(b, 1)) return make_zero(a.type());
        return Expr();
      case BinOp::min:
      case BinOp::max:
      case BinOp::eq:
      case BinOp::ne:
      case BinOp::lt:
      case BinOp::le:
      case BinOp::gt:
      case BinOp::ge:
      case BinOp::logical_and:
      case BinOp::logical_or:
        return Expr();
    }
    return Expr();
  }

  Expr simplify_float(BinOp op, const Expr& a, const Expr& b) {
    switch (op) {
      case BinOp::sub:
        if (is_const(b, 0) && !std::signbit(*as_const_float(b))) return a;  // x - (+0) == x
        return Expr();
      case BinOp::mul:
        if (is_const(a, 1)) return b;
        if (is_const(b, 1)) return a;
        return Expr();
      case BinOp::div:
        if (is_const(b, 1)) return a;
        return Expr();
      case BinOp::add:
      case BinOp::mod:
      case BinOp::min:
      case BinOp::max:
      case BinOp::eq:
      case BinOp::ne:
      case BinOp::lt:
      case BinOp::le:
      case BinOp::gt:
      case BinOp::ge:
      case BinOp::logical_and:
      case BinOp::logical_or:
        return Expr();
    }
    return Expr();
  }

  Expr simplify_bool(BinOp op, const Expr& a, const Expr& b) {
    auto ka = as_const_int(a), kb = as_const_int(b);
    switch (op) {
      case BinOp::logical_and:
        if (ka) return *ka ? b : a;
        if (kb) return *kb ? a : b;
        return Expr();
      case BinOp::logical_or:
        if (ka) return *ka ? a : b;
        if (kb) return *kb ? b : a;
        return Expr();
      case BinOp::add:
      case BinOp::sub:
      case BinOp::mul:
      case BinOp::div:
      case BinOp::mod:
      case BinOp::min:
      case BinOp::max:
      case BinOp::eq:
      case BinOp::ne:
      case BinOp::lt:
      case BinOp::le:
      case BinOp::gt:
      case BinOp::ge:
        return Expr();
    }
    return Expr();
  }
};

}  // namespace

Expr simplify(const Expr& e) {
  return Simplifier().mutate(e);
}
Stmt simplify(const Stmt& s) {
  return Simplifier().mutate(s);
}

}  // namespace kf::ir
