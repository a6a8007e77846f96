#include "ir/vectorize_loops.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "ir/ir_printer.h"
#include "ir/ir_visitor.h"
#include "ir/simplify.h"

namespace kf::ir {
namespace {

// Thrown inside the vectorizer when the loop cannot be vectorized; caught in vectorize_loops.
struct CannotVectorize {
  std::string reason;
};

bool same_expr(const Expr& a, const Expr& b) {
  return a.same_as(b) || (a.type() == b.type() && to_string(a) == to_string(b));
}

Expr reduction_identity(ReduceOp op, Type t) {
  switch (op) {
    case ReduceOp::add:
      return make_zero(t);
    case ReduceOp::mul:
      return make_one(t);
    case ReduceOp::min:
      return t.is_float() ? make_const(t, std::numeric_limits<double>::infinity())
                          : make_const(t, t.kind() == ScalarKind::i32 ? 2147483647.0 : 9.2e18);
    case ReduceOp::max:
      return t.is_float() ? make_const(t, -std::numeric_limits<double>::infinity())
                          : make_const(t, t.kind() == ScalarKind::i32 ? -2147483648.0 : -9.2e18);
  }
  return Expr();
}

std::optional<ReduceOp> reduce_op_of(BinOp op) {
  switch (op) {
    case BinOp::add:
      return ReduceOp::add;
    case BinOp::mul:
      return ReduceOp::mul;
    case BinOp::min:
      return ReduceOp::min;
    case BinOp::max:
      return ReduceOp::max;
    case BinOp::sub:
    case BinOp::div:
    case BinOp::mod:
    case BinOp::eq:
    case BinOp::ne:
    case BinOp::lt:
    case BinOp::le:
    case BinOp::gt:
    case BinOp::ge:
    case BinOp::logical_and:
    case BinOp::logical_or:
      return std::nullopt;
  }
  return std::nullopt;
}

// Rewrites the body of one vectorized loop (the loop itself is dropped by the caller).
class Vectorizer : public IRMutator {
 public:
  Vectorizer(const std::string& var, const Expr& min, int lanes, int* mask_count)
      : var_(var), lanes_(lanes), ramp_(Ramp::make(min, i64(1), lanes)), mask_count_(mask_count) {}

 protected:
  Expr mutate_var(const Var* op, const Expr& e) override {
    if (op->type.is_vector()) fail("a vector variable " + op->name + " inside");
    if (op->name == var_) return ramp_;
    auto it = widened_.find(op->name);
    return it == widened_.end() ? e : it->second;
  }
  Expr mutate_cast(const Cast* op, const Expr& e) override {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return e;
    return Cast::make(op->type.with_lanes(v.type().lanes()), v);
  }
  Expr mutate_binary(const Binary* op, const Expr& e) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a.same_as(op->a) && b.same_as(op->b)) return e;
    int w = std::max(a.type().lanes(), b.type().lanes());
    return Binary::make(op->op, widen(a, w), widen(b, w));
  }
  Expr mutate_select(const Select* op, const Expr& e) override {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
      return e;
    int w = std::max({c.type().lanes(), t.type().lanes(), f.type().lanes()});
    return Select::make(c.type().is_scalar() ? c : widen(c, w), widen(t, w), widen(f, w));
  }
  Expr mutate_load(const Load* op, const Expr& e) override {
    if (op->type.is_vector()) fail("a vector load from " + op->buffer + " inside");
    Expr i = mutate(op->index), p = mutate(op->predicate);
    if (per_lane_.count(op->buffer)) {  // every lane reads its own copy: never masked
      check_per_lane(op->buffer, i, p);
      return Load::make(op->type.with_lanes(lanes_), op->buffer, i, Expr());
    }
    // Under a vector condition, a load whose address varies across lanes touches only the
    // active lanes; a uniform load (same address in every lane) stays a scalar load.
    if (predicate_.defined() && (i.type().is_vector() || p.defined())) {
      i = widen(i, lanes_);
      p = p.defined() ? logical_and(widen(p, lanes_), predicate_) : predicate_;
    }
    if (i.same_as(op->index) && p.same_as(op->predicate)) return e;
    int w = std::max(i.type().lanes(), p.defined() ? p.type().lanes() : 1);
    return Load::make(op->type.with_lanes(w), op->buffer, widen(i, w),
                      p.defined() ? widen(p, w) : p);
  }
  Expr mutate_call(const Call* op, const Expr& e) override {
    std::vector<Expr> args;
    int w = 1;
    bool changed = false;
    for (const Expr& a : op->args) {
      args.push_back(mutate(a));
      w = std::max(w, args.back().type().lanes());
      changed = changed || !args.back().same_as(a);
    }
    if (!changed) return e;
    for (Expr& a : args) a = widen(a, w);
    return Call::make(op->fn, std::move(args), op->approx);
  }
  Expr mutate_ramp(const Ramp*, const Expr&) override { fail("a ramp inside"); }
  Expr mutate_broadcast(const Broadcast*, const Expr&) override { fail("a broadcast inside"); }
  Expr mutate_vector_reduce(const VectorReduce*, const Expr&) override {
    fail("a vector reduction inside");
  }
  Expr mutate_let(const Let* op, const Expr& e) override {
    Expr v = mutate(op->value);
    Expr b = with_binding(op->name, v, [&] { return mutate(op->body); });
    if (v.same_as(op->value) && b.same_as(op->body)) return e;
    return Let::make(op->name, v, b);
  }

  Stmt mutate_for(const For* op, const Stmt& s) override {
    Expr mn = mutate(op->min), ex = mutate(op->extent);
    if (mn.type().is_vector() || ex.type().is_vector())
      fail("loop " + op->name + " has bounds that depend on " + var_);
    Stmt b = mutate(op->body);
    if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return s;
    return For::make(op->name, mn, ex, op->for_kind, b);
  }
  Stmt mutate_store(const Store* op, const Stmt& s) override {
    Expr i = mutate(op->index), v = mutate(op->value), p = mutate(op->predicate);
    if (per_lane_.count(op->buffer)) {
      check_per_lane(op->buffer, i, p);
      v = widen(v, lanes_);
      // Under a vector condition the inactive lanes keep their value.
      if (predicate_.defined())
        v = Select::make(predicate_, v,
                         Load::make(op->value.type().with_lanes(lanes_), op->buffer, i, Expr()));
      return Store::make(op->buffer, i, v, Expr());
    }
    if (i.type().is_scalar() && v.type().is_vector()) return reduction(op, i, v, p);
    if (i.type().is_scalar() && predicate_.defined())
      fail("a scalar store to " + op->buffer + " under a vector condition");
    if (i.type().is_scalar()) {
      if (i.same_as(op->index) && v.same_as(op->value) && p.same_as(op->predicate)) return s;
      return Store::make(op->buffer, i, v, p);
    }
    if (p.defined()) p = widen(p, lanes_);
    if (predicate_.defined()) p = p.defined() ? logical_and(p, predicate_) : predicate_;
    return Store::make(op->buffer, i, widen(v, lanes_), p);
  }
  // A scalar stack buffer of constant size inside the loop (an inline reduction's accumulator,
  // acc[1]) gets one copy per lane: a buffer of vectors, read and written a whole element at a
  // time, so each lane accumulates its own sum in the same order as the scalar loop did.
  Stmt mutate_allocate(const Allocate* op, const Stmt&) override {
    if (op->memory != MemoryKind::stack || !as_const_int(op->extent) ||
        op->element_type.is_vector())
      fail("allocation " + op->name + " inside");
    per_lane_.insert(op->name);
    Stmt b = mutate(op->body);
    per_lane_.erase(op->name);
    return Allocate::make(op->name, op->element_type.with_lanes(lanes_), op->extent, op->memory, b);
  }
  Stmt mutate_if_then_else(const IfThenElse* op, const Stmt& s) override {
    Expr c = mutate(op->condition);
    if (c.type().is_scalar()) {
      Stmt t = mutate(op->then_case), f = mutate(op->else_case);
      if (c.same_as(op->condition) && t.same_as(op->then_case) && f.same_as(op->else_case))
        return s;
      return IfThenElse::make(c, t, f);
    }
    // The condition is computed once, into a mask variable.
    std::string mask_name = var_ + ".mask" + std::to_string((*mask_count_)++);
    Expr mask = Var::make(c.type(), mask_name);
    Expr outer = predicate_;
    predicate_ = outer.defined() ? logical_and(outer, mask) : mask;
    Stmt t = mutate(op->then_case);
    Stmt f;
    if (op->else_case.defined()) {
      predicate_ = outer.defined() ? logical_and(outer, logical_not(mask)) : logical_not(mask);
      f = mutate(op->else_case);
    }
    predicate_ = outer;
    return LetStmt::make(mask_name, c, Block::make({t, f}));
  }
  Stmt mutate_let_stmt(const LetStmt* op, const Stmt& s) override {
    Expr v = mutate(op->value);
    Stmt b = with_binding(op->name, v, [&] { return mutate(op->body); });
    if (v.same_as(op->value) && b.same_as(op->body)) return s;
    return LetStmt::make(op->name, v, b);
  }

 private:
  [[noreturn]] void fail(const std::string& reason) { throw CannotVectorize{reason}; }
  // A per-lane buffer is read and written a whole element (one value per lane) at a time: by
  // an index the same in every lane, unmasked.
  void check_per_lane(const std::string& buffer, const Expr& index, const Expr& predicate) {
    if (index.type().is_vector() || predicate.defined())
      fail("a per-lane buffer " + buffer + " indexed by " + var_);
  }

  Expr widen(const Expr& e, int lanes) {
    if (e.type().lanes() == lanes) return e;
    if (e.type().is_scalar()) return Broadcast::make(e, lanes);
    fail("vectors of " + std::to_string(e.type().lanes()) + " and " + std::to_string(lanes) +
         " lanes mixed");
  }

  template <typename F>
  auto with_binding(const std::string& name, const Expr& value, F f) -> decltype(f()) {
    if (value.type().is_scalar()) return f();
    widened_[name] = Var::make(value.type(), name);
    auto r = f();
    widened_.erase(name);
    return r;
  }

  // buf[i] = buf[i] op rest, with a vector `rest`: fold rest horizontally.
  Stmt reduction(const Store* op, const Expr& index, const Expr& value, const Expr& pred) {
    const Binary* b = value.as<Binary>();
    std::optional<ReduceOp> rop = b ? reduce_op_of(b->op) : std::nullopt;
    if (!rop || pred.defined()) fail("a vector value stored to a scalar index of " + op->buffer);
    auto is_self = [&](const Expr& x) {  // buf[index], widened to a Broadcast by mutate_binary
      const Broadcast* bc = x.as<Broadcast>();
      const Load* l = bc ? bc->value.as<Load>() : nullptr;
      return l && l->buffer == op->buffer && l->type.is_scalar() && !l->predicate.defined() &&
             same_expr(l->index, index);
    };
    Expr self, rest;
    if (is_self(b->a)) {
      self = b->a.as<Broadcast>()->value;
      rest = b->b;
    } else if (is_self(b->b)) {
      self = b->b.as<Broadcast>()->value;
      rest = b->a;
    } else {
      fail("a vector value stored to a scalar index of " + op->buffer + " (not a reduction)");
    }
    if (predicate_.defined())
      rest = Select::make(predicate_, rest, reduction_identity(*rop, rest.type()));
    return Store::make(op->buffer, index,
                       Binary::make(b->op, self, VectorReduce::make(*rop, rest)));
  }

  std::string var_;
  int lanes_;
  Expr ramp_;
  int* mask_count_;                      // numbers the mask variables of the whole pass
  Expr predicate_;                       // the active lanes under vector conditions
  std::map<std::string, Expr> widened_;  // Lets whose value became a vector
  std::set<std::string> per_lane_;       // scalar buffers allocated inside: one copy per lane
};

class VectorizeLoops : public IRMutator {
 protected:
  Stmt mutate_for(const For* op, const Stmt& s) override {
    Stmt body = mutate(op->body);
    if (op->for_kind != ForKind::vectorized) {
      if (body.same_as(op->body)) return s;
      return For::make(op->name, op->min, op->extent, op->for_kind, body);
    }
    auto extent = as_const_int(simplify(op->extent));
    std::string reason;
    if (!extent) {
      reason = "extent " + to_string(op->extent) + " is not a constant";
    } else if (*extent <= 1 || !is_valid_lanes(static_cast<int>(*extent))) {
      reason = "extent " + std::to_string(*extent) + " is not a power of two in 2..64";
    } else {
      try {
        Vectorizer v(op->name, op->min, static_cast<int>(*extent), &mask_count_);
        return simplify(v.mutate(body));
      } catch (const CannotVectorize& c) {
        reason = c.reason;
      }
    }
    return For::make(op->name, op->min, op->extent, ForKind::serial,
                     Block::make({Comment::make("not vectorized: " + reason), body}));
  }

 private:
  int mask_count_ = 0;
};

}  // namespace

Stmt vectorize_loops(const Stmt& s) {
  return VectorizeLoops().mutate(s);
}

}  // namespace kf::ir
