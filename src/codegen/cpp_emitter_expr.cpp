// Expressions of the C++ emitter (see cpp_emitter.h).
#include <fmt/format.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "codegen/cpp_emitter.h"
#include "support/check.h"

namespace kf {

using namespace ir;

namespace {

// C++ operator precedence, higher binds tighter.
constexpr int kPrimary = 16, kUnary = 15, kMul = 13, kAdd = 12, kRel = 10, kEq = 9, kBitAnd = 8,
              kBitOr = 6, kAnd = 5, kOr = 4, kTernary = 3;

std::string float_literal(double v, bool is_double) {
  if (std::isnan(v)) return is_double ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  if (std::isinf(v)) {
    std::string inf = is_double ? "__builtin_inf()" : "__builtin_inff()";
    return v > 0 ? inf : "-" + inf;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, is_double ? "%.15g" : "%.9g", v);
  if (is_double && std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return is_double ? s : s + "f";
}

bool is_64bit(Type t) {
  return t.kind() == ScalarKind::f64 || t.kind() == ScalarKind::i64;
}

}  // namespace

std::string CppEmitter::expr(const Expr& e, int min_prec) {
  KF_CHECK(e.defined()) << "codegen of an undefined Expr";
  int prec = kPrimary;
  std::string s = expr_node(e, &prec);
  return prec < min_prec ? "(" + s + ")" : s;
}

const CppEmitter::BufferInfo& CppEmitter::buffer(const std::string& name) const {
  auto it = buffers_.find(name);
  KF_CHECK(it != buffers_.end()) << "codegen: buffer " << name
                                 << " is neither a parameter nor allocated here";
  return it->second;
}

std::string CppEmitter::expr_node(const Expr& e, int* prec) {
  switch (e.kind()) {
    case ExprKind::int_imm: {
      std::string s = int_imm(e.as<IntImm>());
      if (s[0] == '-') *prec = kUnary;
      return s;
    }
    case ExprKind::float_imm: {
      std::string s = float_imm(e.as<FloatImm>());
      if (s[0] == '-') *prec = kUnary;
      return s;
    }
    case ExprKind::var:
      if (e.as<Var>()->name == kNumThreadsVar) return prelude_.num_threads() + "()";
      return cpp_name(e.as<Var>()->name);
    case ExprKind::cast:
      return cast(e.as<Cast>(), prec);
    case ExprKind::binary:
      return binary(e.as<Binary>(), prec);
    case ExprKind::not_: {
      const Not* op = e.as<Not>();
      *prec = kUnary;
      return (op->type.is_vector() ? "~" : "!") + expr(op->a, kUnary);
    }
    case ExprKind::select:
      return select(e.as<Select>(), prec);
    case ExprKind::load:
      return load(e.as<Load>(), prec);
    case ExprKind::call:
      return call(e.as<Call>());
    case ExprKind::ramp: {
      const Ramp* op = e.as<Ramp>();
      return prelude_.ramp(op->type) + "(" + expr(op->base) + ", " + expr(op->stride) + ")";
    }
    case ExprKind::broadcast: {
      const Broadcast* op = e.as<Broadcast>();
      return prelude_.splat(op->type) + "(" + expr(op->value) + ")";
    }
    case ExprKind::vector_reduce: {
      const VectorReduce* op = e.as<VectorReduce>();
      std::string s = prelude_.reduce(op->op, op->value.type()) + "(" + expr(op->value) + ")";
      if (op->type.kind() == ScalarKind::bf16) s = prelude_.round_bf16(op->type) + "(" + s + ")";
      return s;
    }
    case ExprKind::let:
      return let(e.as<Let>());
  }
  return "?";
}

std::string CppEmitter::int_imm(const IntImm* op) {
  switch (op->type.kind()) {
    case ScalarKind::boolean:
      return op->value ? "true" : "false";
    case ScalarKind::i32:
      return fmt::format("int32_t({})", op->value);
    case ScalarKind::i64:
      if (op->value == INT64_MIN) return "(-9223372036854775807 - 1)";
      return std::to_string(op->value);
    case ScalarKind::f32:
    case ScalarKind::f64:
    case ScalarKind::bf16:
      break;
  }
  KF_CHECK(false) << "IntImm of a floating type";
  return "?";
}

std::string CppEmitter::float_imm(const FloatImm* op) {
  return float_literal(op->value, op->type.kind() == ScalarKind::f64);
}

std::string CppEmitter::cast(const Cast* op, int* prec) {
  Type to = op->type, from = op->value.type();
  std::string to_c = prelude_.value_type(to), from_c = prelude_.value_type(from);
  std::string v;
  if (to.is_scalar()) {
    if (to_c == from_c) {
      v = expr(op->value, kPrimary);
    } else {
      v = fmt::format("static_cast<{}>({})", to_c, expr(op->value));
    }
    if (to.kind() == ScalarKind::bf16 && from.kind() != ScalarKind::bf16)
      v = prelude_.round_bf16(to) + "(" + v + ")";
    return v;
  }
  if (to.is_bool()) {  // numeric → mask: lanes that are nonzero
    std::string cmp = expr(op->value, kRel + 1) + " != " + from_c + "{}";
    if (is_64bit(from)) return fmt::format("__builtin_convertvector({}, {})", cmp, to_c);
    *prec = kEq;
    return cmp;
  }
  if (from.is_bool()) {  // mask → 1 / 0
    *prec = kUnary;
    return fmt::format("-__builtin_convertvector({}, {})", expr(op->value), to_c);
  }
  v = to_c == from_c ? expr(op->value, kPrimary)
                     : fmt::format("__builtin_convertvector({}, {})", expr(op->value), to_c);
  if (to.kind() == ScalarKind::bf16 && from.kind() != ScalarKind::bf16)
    v = prelude_.round_bf16(to) + "(" + v + ")";
  return v;
}

// An operand of + - * /: a vector Broadcast may appear as its scalar (GCC widens it).
std::string CppEmitter::arith_operand(const Expr& e, int min_prec, bool vector) {
  if (const Broadcast* b = e.as<Broadcast>(); b && vector) return expr(b->value, min_prec);
  return expr(e, min_prec);
}

std::string CppEmitter::binary(const Binary* op, int* prec) {
  Type t = op->a.type();
  bool vec = t.is_vector();
  auto infix = [&](int p, const std::string& sym, bool scalar_operands) {
    *prec = p;
    bool a_scalar = scalar_operands && !op->b.as<Broadcast>();
    return arith_operand(op->a, p, a_scalar) + sym + arith_operand(op->b, p + 1, scalar_operands);
  };
  auto rounded = [&](std::string s) {
    if (t.kind() != ScalarKind::bf16) return s;
    *prec = kPrimary;
    return prelude_.round_bf16(t) + "(" + s + ")";
  };
  // ramp(b, 1, W) < xW(n), the tail mask, is lanes l < n - b: no i64 vectors needed.
  if (op->op == BinOp::lt && vec && t.kind() == ScalarKind::i64) {
    const Ramp* r = op->a.as<Ramp>();
    const Broadcast* n = op->b.as<Broadcast>();
    if (r && n && is_const(r->stride, 1)) {
      std::string count = is_const(r->base, 0)
                              ? expr(n->value)
                              : expr(n->value, kAdd) + " - " + expr(r->base, kAdd + 1);
      return prelude_.first_lanes(t.lanes()) + "(" + count + ")";
    }
  }
  auto compare = [&](int p, const std::string& sym) {
    std::string s = infix(p, sym, false);
    if (!vec || !is_64bit(t)) return s;
    *prec = kPrimary;
    return fmt::format("__builtin_convertvector({}, {})", s, prelude_.value_type(op->type));
  };
  switch (op->op) {
    case BinOp::add:
      return rounded(infix(kAdd, " + ", vec));
    case BinOp::sub:
      return rounded(infix(kAdd, " - ", vec));
    case BinOp::mul:
      return rounded(infix(kMul, " * ", vec));
    case BinOp::div:
      return rounded(infix(kMul, " / ", vec));
    case BinOp::mod:
      return infix(kMul, " % ", false);
    case BinOp::min:
    case BinOp::max:
      return prelude_.min_max(op->op, t) + "(" + expr(op->a) + ", " + expr(op->b) + ")";
    case BinOp::eq:
      return compare(kEq, " == ");
    case BinOp::ne:
      return compare(kEq, " != ");
    case BinOp::lt:
      return compare(kRel, " < ");
    case BinOp::le:
      return compare(kRel, " <= ");
    case BinOp::gt:
      return compare(kRel, " > ");
    case BinOp::ge:
      return compare(kRel, " >= ");
    case BinOp::logical_and:
      return vec ? infix(kBitAnd, " & ", false) : infix(kAnd, " && ", false);
    case BinOp::logical_or:
      return vec ? infix(kBitOr, " | ", false) : infix(kOr, " || ", false);
  }
  return "?";
}

// A vector bool (an i32xN mask) as the mask type GCC's vector ?: wants for value_type's lanes.
std::string CppEmitter::mask_for(const Expr& mask, Type value_type) {
  if (!is_64bit(value_type)) return expr(mask, kOr);
  return fmt::format("__builtin_convertvector({}, {})", expr(mask),
                     prelude_.value_type(Type::i64(value_type.lanes())));
}

std::string CppEmitter::select(const Select* op, int* prec) {
  *prec = kTernary;
  std::string c = op->condition.type().is_vector() ? mask_for(op->condition, op->type)
                                                   : expr(op->condition, kOr);
  return c + " ? " + expr(op->true_value, kOr) + " : " + expr(op->false_value, kTernary);
}

std::string CppEmitter::load(const Load* op, int* prec) {
  const BufferInfo& b = buffer(op->buffer);
  std::string name = cpp_name(op->buffer);
  const Ramp* r = op->index.as<Ramp>();
  if (b.promoted_lanes) {
    std::string s = fmt::format("{}[{}]", name, *as_const_int(r->base) / b.promoted_lanes);
    if (!op->predicate.defined()) return s;
    *prec = kTernary;
    return mask_for(op->predicate, op->type) + " ? " + s + " : " + prelude_.value_type(op->type) +
           "{}";
  }
  if (op->index.type().is_scalar()) {  // a scalar, or one whole element of a vector buffer
    std::string s = name + "[" + expr(op->index) + "]";
    if (b.storage == ScalarKind::bf16 && b.element.is_scalar()) s = "static_cast<float>(" + s + ")";
    if (!op->predicate.defined()) return s;
    *prec = kTernary;
    return expr(op->predicate, kOr) + " ? " + s + " : " + expr(make_zero(op->type), kTernary);
  }
  KF_CHECK(b.element.is_scalar()) << "vector index into vector buffer " << op->buffer;
  bool masked = op->predicate.defined();
  std::string mask = masked ? ", " + expr(op->predicate) : "";
  if (r && is_const(r->stride, 1)) {
    std::string ptr = is_const(r->base, 0) ? name : name + " + " + expr(r->base, kAdd + 1);
    return prelude_.load(op->type, b.storage, masked) + "(" + ptr + mask + ")";
  }
  return prelude_.gather(op->type, b.storage, masked) + "(" + name + ", " + expr(op->index) + mask +
         ")";
}

std::string CppEmitter::call(const Call* op) {
  std::vector<std::string> args;
  for (const Expr& a : op->args) args.push_back(expr(a));
  std::string s;
  const bool fast = op->approx && CppPrelude::has_fast_form(op->fn, op->type);
  if (op->type.is_scalar() && !fast) {
    s = CppPrelude::math_builtin(op->fn, op->type, args);
  } else {
    s = prelude_.math(op->fn, op->type, op->approx) + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
    s += ")";
  }
  if (op->type.kind() == ScalarKind::bf16) s = prelude_.round_bf16(op->type) + "(" + s + ")";
  return s;
}

std::string CppEmitter::let(const Let* op) {
  // A GCC statement expression keeps the binding local and the value lazy.
  return fmt::format("({{ const {} {} = {}; {}; }})", prelude_.value_type(op->value.type()),
                     cpp_name(op->name), expr(op->value), expr(op->body));
}

}  // namespace kf
