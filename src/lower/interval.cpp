#include "lower/interval.h"

#include <vector>

#include "ir/ir_printer.h"
#include "ir/simplify.h"

namespace kf::lowering {

using ir::BinOp;
using ir::Expr;

namespace {

struct Linear;
void decompose(const Expr& e, int64_t scale, Linear& out);

struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;  // atom, coefficient (order of first appearance)
  std::map<std::string, size_t> index;          // atom text -> position in terms
  int64_t constant = 0;

  void add(const Expr& atom, int64_t coef) {
    const std::string key = ir::to_string(atom);
    auto it = index.find(key);
    if (it == index.end()) {
      index[key] = terms.size();
      terms.push_back({atom, coef});
    } else {
      terms[it->second].second += coef;
    }
  }
};

void decompose(const Expr& e, int64_t scale, Linear& out) {
  if (auto c = ir::as_const_int(e); c && e.type().is_scalar()) {
    out.constant += scale * *c;
    return;
  }
  if (const ir::Binary* b = e.as<ir::Binary>()) {
    switch (b->op) {
      case BinOp::add:
        decompose(b->a, scale, out);
        decompose(b->b, scale, out);
        return;
      case BinOp::sub:
        decompose(b->a, scale, out);
        decompose(b->b, -scale, out);
        return;
      case BinOp::mul:
        if (auto c = ir::as_const_int(b->b)) {
          decompose(b->a, scale * *c, out);
          return;
        }
        if (auto c = ir::as_const_int(b->a)) {
          decompose(b->b, scale * *c, out);
          return;
        }
        // (x + y - x)*s with s a variable: canonicalize the sum, keep the product.
        if (b->b.as<ir::Var>() || b->a.as<ir::Var>()) {
          const Expr& v = b->b.as<ir::Var>() ? b->b : b->a;
          Expr sum = simplify_linear(b->b.as<ir::Var>() ? b->a : b->b);
          if (auto c = ir::as_const_int(sum)) {
            out.add(v, scale * *c);
          } else {
            out.add(sum * v, scale);
          }
          return;
        }
        break;
      case BinOp::min:
        out.add(ir::min(simplify_linear(b->a), simplify_linear(b->b)), scale);
        return;
      case BinOp::max:
        out.add(ir::max(simplify_linear(b->a), simplify_linear(b->b)), scale);
        return;
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
        break;
    }
  }
  out.add(e, scale);
}

Expr rebuild(const Linear& l, ir::Type t) {
  Expr sum;
  for (const auto& [atom, coef] : l.terms) {
    if (coef == 0) continue;
    const int64_t m = coef < 0 ? -coef : coef;
    Expr mag = m == 1 ? atom : atom * ir::make_const(t, static_cast<double>(m));
    if (!sum.defined()) {
      sum = coef > 0 ? mag : ir::make_zero(t) - mag;
    } else {
      sum = coef > 0 ? sum + mag : sum - mag;
    }
  }
  if (!sum.defined()) return ir::make_const(t, static_cast<double>(l.constant));
  if (l.constant > 0) return sum + ir::make_const(t, static_cast<double>(l.constant));
  if (l.constant < 0) return sum - ir::make_const(t, static_cast<double>(-l.constant));
  return sum;
}

bool is_int(const Expr& e) {
  return e.defined() && e.type() == ir::Type::i64();
}

std::optional<int64_t> bound(const Expr& e, bool upper, const std::set<std::string>& signed_vars);

std::optional<int64_t> atom_bound(const Expr& e, bool upper, const std::set<std::string>& sv) {
  if (auto c = ir::as_const_int(e)) return *c;
  if (const ir::Var* v = e.as<ir::Var>()) {
    if (!upper && !sv.count(v->name)) return 0;
    return std::nullopt;
  }
  if (const ir::Binary* b = e.as<ir::Binary>()) {
    auto a1 = bound(b->a, upper, sv), b1 = bound(b->b, upper, sv);
    switch (b->op) {
      case BinOp::min:
        if (upper) {
          if (a1 && b1) return std::min(*a1, *b1);
          return a1 ? a1 : b1;
        }
        if (a1 && b1) return std::min(*a1, *b1);
        return std::nullopt;
      case BinOp::max:
        if (!upper) {
          if (a1 && b1) return std::max(*a1, *b1);
          return a1 ? a1 : b1;
        }
        if (a1 && b1) return std::max(*a1, *b1);
        return std::nullopt;
      case BinOp::div:
        if (auto c = ir::as_const_int(b->b); c && *c > 0 && a1) return *a1 / *c;
        return std::nullopt;
      case BinOp::mod:
        if (auto c = ir::as_const_int(b->b); c && *c > 0) {
          auto lo = bound(b->a, false, sv);
          if (lo && *lo >= 0) return upper ? *c - 1 : 0;
        }
        return std::nullopt;
      case BinOp::mul: {
        // Products of non-negative factors are non-negative.
        if (!upper) {
          auto la = bound(b->a, false, sv), lb = bound(b->b, false, sv);
          if (la && lb && *la >= 0 && *lb >= 0) return *la * *lb;
        }
        return std::nullopt;
      }
      case BinOp::add:
      case BinOp::sub:
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
  }
  if (const ir::Cast* c = e.as<ir::Cast>())
    if (c->value.type().is_int()) return bound(c->value, upper, sv);
  return std::nullopt;
}

std::optional<int64_t> bound(const Expr& e, bool upper, const std::set<std::string>& sv) {
  if (!is_int(e)) return std::nullopt;
  Linear l;
  decompose(e, 1, l);
  int64_t total = l.constant;
  for (const auto& [atom, coef] : l.terms) {
    if (coef == 0) continue;
    auto b = atom_bound(atom, coef > 0 ? upper : !upper, sv);
    if (!b) return std::nullopt;
    total += coef * *b;
  }
  return total;
}

bool same(const Expr& a, const Expr& b) {
  return a.same_as(b) || ir::to_string(a) == ir::to_string(b);
}

}  // namespace

Expr simplify_linear(const Expr& e) {
  if (!is_int(e)) return ir::simplify(e);
  Linear l;
  decompose(ir::simplify(e), 1, l);
  return rebuild(l, e.type());
}

std::optional<int64_t> const_upper_bound(const Expr& e) {
  return bound(e, true, {});
}

std::optional<int64_t> const_lower_bound(const Expr& e, const std::set<std::string>& signed_vars) {
  return bound(e, false, signed_vars);
}

Interval hull(const Interval& a, const Interval& b) {
  Interval r;
  r.exact = a.exact && b.exact;
  auto pick = [](const Expr& x, const Expr& y, bool lower) -> Expr {
    if (!x.defined() || !y.defined()) return Expr();
    if (same(x, y)) return x;
    Expr d = simplify_linear(x - y);
    if (auto c = ir::as_const_int(d)) return (lower ? *c <= 0 : *c >= 0) ? x : y;
    return lower ? ir::min(x, y) : ir::max(x, y);
  };
  r.min = pick(a.min, b.min, true);
  r.max = pick(a.max, b.max, false);
  if (r.min.defined() && r.min.as<ir::Binary>() && r.min.as<ir::Binary>()->op == BinOp::min)
    r.exact = false;
  if (r.max.defined() && r.max.as<ir::Binary>() && r.max.as<ir::Binary>()->op == BinOp::max)
    r.exact = false;
  return r;
}

Interval bounds_of(const Expr& e, const Scope& scope, const std::set<std::string>& invariant) {
  auto is_point = [](const Interval& i) { return i.bounded() && same(i.min, i.max); };
  if (const ir::Load* l = e.as<ir::Load>()) {
    if (!e.type().is_int() || !e.type().is_scalar() || l->predicate.defined() ||
        !invariant.count(l->buffer))
      return Interval::everything();
    Interval at = bounds_of(l->index, scope, invariant);
    if (!is_point(at)) return Interval::everything();
    return Interval::point(ir::Load::make(e.type(), l->buffer, at.min));
  }
  if (!is_int(e)) return Interval::everything();
  if (ir::as_const_int(e)) return Interval::point(e);
  if (const ir::Var* v = e.as<ir::Var>()) {
    auto it = scope.find(v->name);
    return it == scope.end() ? Interval::point(e) : it->second;
  }
  if (const ir::Cast* c = e.as<ir::Cast>()) {
    if (c->value.type().is_int() && c->value.type().is_scalar()) {
      Interval in = bounds_of(c->value, scope, invariant);
      if (in.min.defined()) in.min = ir::cast(ir::Type::i64(), in.min);
      if (in.max.defined()) in.max = ir::cast(ir::Type::i64(), in.max);
      return in;
    }
    return Interval::everything();
  }
  if (const ir::Let* l = e.as<ir::Let>()) {
    Scope inner = scope;
    inner[l->name] = bounds_of(l->value, scope, invariant);
    return bounds_of(l->body, inner, invariant);
  }
  if (const ir::Select* s = e.as<ir::Select>()) {
    Interval r = hull(bounds_of(s->true_value, scope, invariant),
                      bounds_of(s->false_value, scope, invariant));
    r.exact = false;
    return r;
  }
  const ir::Binary* b = e.as<ir::Binary>();
  if (!b) return Interval::everything();
  Interval x = bounds_of(b->a, scope, invariant), y = bounds_of(b->b, scope, invariant);
  const bool ex = x.exact && y.exact;
  auto both = [](const Expr& p, const Expr& q, auto f) -> Expr {
    return p.defined() && q.defined() ? f(p, q) : Expr();
  };
  switch (b->op) {
    case BinOp::add:
      return {both(x.min, y.min, [](Expr p, Expr q) { return p + q; }),
              both(x.max, y.max, [](Expr p, Expr q) { return p + q; }), ex};
    case BinOp::sub:
      return {both(x.min, y.max, [](Expr p, Expr q) { return p - q; }),
              both(x.max, y.min, [](Expr p, Expr q) { return p - q; }), ex};
    case BinOp::mul: {
      // A point is the operands' points combined (never e itself: its variables are the
      // scope's names, which the result must not mention).
      if (is_point(x) && is_point(y)) return {x.min * y.min, x.min * y.min, ex};
      auto c = ir::as_const_int(b->b);
      const Interval* v = &x;
      if (!c) {
        c = ir::as_const_int(b->a);
        v = &y;
      }
      if (!c) return Interval::everything();
      Expr k = ir::i64(*c);
      Expr lo = v->min.defined() ? v->min * k : Expr(), hi = v->max.defined() ? v->max * k : Expr();
      if (*c < 0) std::swap(lo, hi);
      return {lo, hi, v->exact};
    }
    case BinOp::div: {
      if (is_point(x) && is_point(y)) return {x.min / y.min, x.min / y.min, ex};
      auto c = ir::as_const_int(b->b);
      if (!c || *c <= 0) return Interval::everything();
      return {x.min.defined() ? x.min / ir::i64(*c) : Expr(),
              x.max.defined() ? x.max / ir::i64(*c) : Expr(), x.exact};
    }
    case BinOp::mod: {
      if (is_point(x) && is_point(y)) return {x.min % y.min, x.min % y.min, ex};
      auto c = ir::as_const_int(b->b);
      if (!c || *c <= 0) return Interval::everything();
      return {ir::i64(0), ir::i64(*c - 1), false};
    }
    case BinOp::min:
      return {both(x.min, y.min, [](Expr p, Expr q) { return ir::min(p, q); }),
              x.max.defined() && y.max.defined() ? ir::min(x.max, y.max)
                                                 : (x.max.defined() ? x.max : y.max),
              false};
    case BinOp::max:
      return {x.min.defined() && y.min.defined() ? ir::max(x.min, y.min)
                                                 : (x.min.defined() ? x.min : y.min),
              both(x.max, y.max, [](Expr p, Expr q) { return ir::max(p, q); }), false};
    case BinOp::eq:
    case BinOp::ne:
    case BinOp::lt:
    case BinOp::le:
    case BinOp::gt:
    case BinOp::ge:
    case BinOp::logical_and:
    case BinOp::logical_or:
      return Interval::everything();
  }
  return Interval::everything();
}

}  // namespace kf::lowering
