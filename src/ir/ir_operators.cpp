// Constants and operator overloads declared in ir.h.
#include <cmath>

#include "ir/ir.h"
#include "support/check.h"

namespace kf::ir {

Expr i64(int64_t v) {
  return IntImm::make(Type::i64(), v);
}
Expr i32(int64_t v) {
  return IntImm::make(Type::i32(), v);
}
Expr f32(double v) {
  return FloatImm::make(Type::f32(), v);
}
Expr f64(double v) {
  return FloatImm::make(Type::f64(), v);
}
Expr bool_imm(bool v) {
  return IntImm::make(Type::boolean(), v ? 1 : 0);
}

Expr make_const(Type t, double v) {
  Expr s;
  if (t.is_float()) {
    s = FloatImm::make(t.scalar(), v);
  } else {
    KF_CHECK(std::isfinite(v) && v == std::floor(v))
        << "non-integer constant " << v << " of " << to_string(t);
    s = IntImm::make(t.scalar(), static_cast<int64_t>(v));
  }
  return t.is_vector() ? Broadcast::make(s, t.lanes()) : s;
}

Expr make_zero(Type t) {
  return make_const(t, 0);
}
Expr make_one(Type t) {
  return make_const(t, 1);
}

std::optional<int64_t> as_const_int(const Expr& e) {
  if (!e.defined()) return std::nullopt;
  if (const IntImm* i = e.as<IntImm>()) return i->value;
  if (const Broadcast* b = e.as<Broadcast>()) return as_const_int(b->value);
  return std::nullopt;
}

std::optional<double> as_const_float(const Expr& e) {
  if (!e.defined()) return std::nullopt;
  if (const FloatImm* f = e.as<FloatImm>()) return f->value;
  if (const Broadcast* b = e.as<Broadcast>()) return as_const_float(b->value);
  return std::nullopt;
}

bool is_const(const Expr& e) {
  return as_const_int(e) || as_const_float(e);
}

bool is_const(const Expr& e, double v) {
  if (auto i = as_const_int(e)) return static_cast<double>(*i) == v;
  if (auto f = as_const_float(e)) return *f == v;
  return false;
}

namespace {

Expr like(const Expr& e, double v) {
  KF_CHECK(e.defined()) << "operator on an undefined Expr";
  return make_const(e.type(), v);
}

}  // namespace

Expr operator+(Expr a, Expr b) {
  return Binary::make(BinOp::add, std::move(a), std::move(b));
}
Expr operator-(Expr a, Expr b) {
  return Binary::make(BinOp::sub, std::move(a), std::move(b));
}
Expr operator*(Expr a, Expr b) {
  return Binary::make(BinOp::mul, std::move(a), std::move(b));
}
Expr operator/(Expr a, Expr b) {
  return Binary::make(BinOp::div, std::move(a), std::move(b));
}
Expr operator%(Expr a, Expr b) {
  return Binary::make(BinOp::mod, std::move(a), std::move(b));
}
Expr operator-(Expr a) {
  Expr zero = like(a, 0);
  return std::move(zero) - std::move(a);
}
Expr operator+(Expr a, double b) {
  Expr c = like(a, b);
  return std::move(a) + std::move(c);
}
Expr operator-(Expr a, double b) {
  Expr c = like(a, b);
  return std::move(a) - std::move(c);
}
Expr operator*(Expr a, double b) {
  Expr c = like(a, b);
  return std::move(a) * std::move(c);
}
Expr operator/(Expr a, double b) {
  Expr c = like(a, b);
  return std::move(a) / std::move(c);
}
Expr operator%(Expr a, double b) {
  Expr c = like(a, b);
  return std::move(a) % std::move(c);
}
Expr operator+(double a, Expr b) {
  return like(b, a) + std::move(b);
}
Expr operator-(double a, Expr b) {
  return like(b, a) - std::move(b);
}
Expr operator*(double a, Expr b) {
  return like(b, a) * std::move(b);
}

Expr min(Expr a, Expr b) {
  return Binary::make(BinOp::min, std::move(a), std::move(b));
}
Expr max(Expr a, Expr b) {
  return Binary::make(BinOp::max, std::move(a), std::move(b));
}
Expr eq(Expr a, Expr b) {
  return Binary::make(BinOp::eq, std::move(a), std::move(b));
}
Expr ne(Expr a, Expr b) {
  return Binary::make(BinOp::ne, std::move(a), std::move(b));
}
Expr lt(Expr a, Expr b) {
  return Binary::make(BinOp::lt, std::move(a), std::move(b));
}
Expr le(Expr a, Expr b) {
  return Binary::make(BinOp::le, std::move(a), std::move(b));
}
Expr gt(Expr a, Expr b) {
  return Binary::make(BinOp::gt, std::move(a), std::move(b));
}
Expr ge(Expr a, Expr b) {
  return Binary::make(BinOp::ge, std::move(a), std::move(b));
}
Expr logical_and(Expr a, Expr b) {
  return Binary::make(BinOp::logical_and, std::move(a), std::move(b));
}
Expr logical_or(Expr a, Expr b) {
  return Binary::make(BinOp::logical_or, std::move(a), std::move(b));
}
Expr logical_not(Expr a) {
  return Not::make(std::move(a));
}
Expr select(Expr c, Expr t, Expr f) {
  return Select::make(std::move(c), std::move(t), std::move(f));
}
Expr cast(Type t, Expr e) {
  if (e.type() == t) return e;
  return Cast::make(t, std::move(e));
}

}  // namespace kf::ir
