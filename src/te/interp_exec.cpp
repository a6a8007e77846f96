// The interpreter's node classes (see interp_exec.h).
#include "te/interp_exec.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "te/ops.h"

namespace kf::te::detail {

std::string quote_expr(const Expr& e) {
  return "'" + to_string(e) + "'";
}
std::string quote_expr_name(const std::string& name) {
  return "'" + name + "'";
}

namespace {

template <Op OP>
class Unary final : public Node {
 public:
  explicit Unary(NodePtr a) : a_(std::move(a)) {}
  double eval(Frame& f) override { return apply_unary(OP, a_->eval(f), DType::f64); }
  void eval_row(Frame& f, int s, int64_t n, double* out) override {
    a_->eval_row(f, s, n, out);
    for (int64_t i = 0; i < n; ++i) out[i] = apply_unary(OP, out[i], DType::f64);
  }

 private:
  NodePtr a_;
};

class Cast final : public Node {
 public:
  Cast(NodePtr a, DType t) : a_(std::move(a)), t_(t) {}
  double eval(Frame& f) override { return round_to(t_, a_->eval(f)); }
  void eval_row(Frame& f, int s, int64_t n, double* out) override {
    a_->eval_row(f, s, n, out);
    for (int64_t i = 0; i < n; ++i) out[i] = round_to(t_, out[i]);
  }

 private:
  NodePtr a_;
  DType t_;
};

template <Op OP>
class Binary final : public Node {
 public:
  Binary(NodePtr a, NodePtr b) : a_(std::move(a)), b_(std::move(b)) {}
  double eval(Frame& f) override {
    const double x = a_->eval(f);
    return apply_binary(OP, x, b_->eval(f), false);
  }
  void eval_row(Frame& f, int s, int64_t n, double* out) override {
    a_->eval_row(f, s, n, out);
    b_->eval_row(f, s, n, buf_);
    for (int64_t i = 0; i < n; ++i) out[i] = apply_binary(OP, out[i], buf_[i], false);
  }

 private:
  NodePtr a_, b_;
  double buf_[kRowChunk];
};

// Integer / % ceildiv: reports a zero divisor.
class IntDivide final : public Node {
 public:
  IntDivide(Op op, NodePtr a, NodePtr b, std::string where)
      : op_(op), a_(std::move(a)), b_(std::move(b)), where_(std::move(where)) {}
  double eval(Frame& f) override {
    const double x = a_->eval(f), y = b_->eval(f);
    if (y == 0) {
      f.fail("integer division by zero in " + where_);
      return 0;
    }
    return apply_binary(op_, x, y, true);
  }

 private:
  Op op_;
  NodePtr a_, b_;
  std::string where_;
};

class Select final : public Node {
 public:
  Select(NodePtr c, NodePtr a, NodePtr b) : c_(std::move(c)), a_(std::move(a)), b_(std::move(b)) {}
  double eval(Frame& f) override { return c_->eval(f) != 0 ? a_->eval(f) : b_->eval(f); }

 private:
  NodePtr c_, a_, b_;
};

// && and || evaluate their right operand only when needed.
template <bool AND>
class Logic final : public Node {
 public:
  Logic(NodePtr a, NodePtr b) : a_(std::move(a)), b_(std::move(b)) {}
  double eval(Frame& f) override {
    const bool x = a_->eval(f) != 0;
    if (AND ? !x : x) return AND ? 0.0 : 1.0;
    return b_->eval(f) != 0 ? 1.0 : 0.0;
  }

 private:
  NodePtr a_, b_;
};

template <Op OP>
NodePtr unary(std::vector<NodePtr>& a) {
  return NodePtr(new Unary<OP>(std::move(a[0])));
}
template <Op OP>
NodePtr binary(std::vector<NodePtr>& a) {
  return NodePtr(new Binary<OP>(std::move(a[0]), std::move(a[1])));
}

std::string out_of_range(const AccessInfo& info, int dim, int64_t v) {
  return "index " + std::to_string(v) + " is out of range 0.." + std::to_string(info.extents[dim]) +
         " in dimension " + std::to_string(dim + 1) + " of " + quote_expr_name(info.name) + " (" +
         info.where + ")";
}

int64_t floor_div(int64_t x, int64_t y) {
  const int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t x, int64_t y) {
  return -floor_div(-x, y);
}

int64_t coef(const Affine& a, int s) {
  int64_t k = 0;
  for (const auto& [slot, c] : a.terms)
    if (slot == s) k += c;
  return k;
}

class AffineAccess final : public Node {
 public:
  AffineAccess(AccessInfo info, Affine offset, std::vector<DimCheck> checks, NodePtr fallback)
      : info_(std::move(info)),
        offset_(std::move(offset)),
        checks_(std::move(checks)),
        fallback_(std::move(fallback)) {}
  double eval(Frame& f) override {
    const int64_t* s = f.slots.data();
    for (const DimCheck& c : checks_) {
      const int64_t v = c.index.at(s);
      if (v >= 0 && v < c.extent) continue;
      if (fallback_) return fallback_->eval(f);
      f.fail(out_of_range(info_, c.dim, v));
      return 0;
    }
    return info_.data[offset_.at(s)];
  }
  void eval_row(Frame& f, int s, int64_t n, double* out) override {
    // Elements [a, b) of the row pass every check; the others take the per-element path
    // (the else value, or the error).
    int64_t a = 0, b = n;
    for (const DimCheck& c : checks_) {
      const int64_t k = coef(c.index, s), base = c.index.at(f.slots.data());
      if (k == 0) {
        if (base < 0 || base >= c.extent) b = 0;
        continue;
      }
      // 0 <= base + k*i <= extent - 1
      const int64_t lo = k > 0 ? ceil_div(-base, k) : ceil_div(c.extent - 1 - base, k);
      const int64_t hi = (k > 0 ? floor_div(c.extent - 1 - base, k) : floor_div(-base, k)) + 1;
      a = std::max(a, lo);
      b = std::min(b, hi);
    }
    if (a >= b) return Node::eval_row(f, s, n, out);
    if (a > 0) Node::eval_row(f, s, a, out);
    const int64_t step = coef(offset_, s);
    const double* p = info_.data + offset_.at(f.slots.data()) + a * step;
    if (step == 1) {
      for (int64_t i = a; i < b; ++i) out[i] = p[i - a];
    } else {
      for (int64_t i = a; i < b; ++i) out[i] = p[(i - a) * step];
    }
    if (b < n) {
      const int64_t base = f.slots[s];
      f.slots[s] = base + b;
      Node::eval_row(f, s, n - b, out + b);
      f.slots[s] = base;
    }
  }

 private:
  AccessInfo info_;
  Affine offset_;
  std::vector<DimCheck> checks_;
  NodePtr fallback_;
};

class GeneralAccess final : public Node {
 public:
  GeneralAccess(AccessInfo info, std::vector<int64_t> strides, std::vector<NodePtr> idx,
                NodePtr fallback)
      : info_(std::move(info)),
        strides_(std::move(strides)),
        idx_(std::move(idx)),
        fallback_(std::move(fallback)) {}
  double eval(Frame& f) override {
    int64_t off = 0;
    for (size_t d = 0; d < idx_.size(); ++d) {
      const double x = idx_[d]->eval(f);
      if (f.failed) return 0;
      if (!(x >= 0 && x < static_cast<double>(info_.extents[d]))) {
        if (fallback_) return fallback_->eval(f);
        f.fail(out_of_range(info_, static_cast<int>(d),
                            std::isfinite(x) ? static_cast<int64_t>(x) : -1));
        return 0;
      }
      const auto v = static_cast<int64_t>(x);
      off += strides_[d] * v;
    }
    return info_.data[off];
  }

 private:
  AccessInfo info_;
  std::vector<int64_t> strides_;
  std::vector<NodePtr> idx_;
  NodePtr fallback_;
};

}  // namespace

NodePtr make_call(const Expr& e, std::vector<NodePtr> a, bool integer, const std::string& file) {
  const std::string where = quote_expr(e) + " at " + file + ":" + std::to_string(e.loc.line) + ":" +
                            std::to_string(e.loc.col);
  switch (e.op) {
    case Op::neg:
      return unary<Op::neg>(a);
    case Op::logical_not:
      return unary<Op::logical_not>(a);
    case Op::exp:
      return unary<Op::exp>(a);
    case Op::log:
      return unary<Op::log>(a);
    case Op::sqrt:
      return unary<Op::sqrt>(a);
    case Op::rsqrt:
      return unary<Op::rsqrt>(a);
    case Op::tanh:
      return unary<Op::tanh>(a);
    case Op::erf:
      return unary<Op::erf>(a);
    case Op::sigmoid:
      return unary<Op::sigmoid>(a);
    case Op::abs:
      return unary<Op::abs>(a);
    case Op::floor:
      return unary<Op::floor>(a);
    case Op::ceil:
      return unary<Op::ceil>(a);
    case Op::cast:
      return NodePtr(new Cast(std::move(a[0]), e.cast_to));
    case Op::div:
    case Op::mod:
    case Op::ceildiv:
      if (integer) return NodePtr(new IntDivide(e.op, std::move(a[0]), std::move(a[1]), where));
      if (e.op == Op::div) return binary<Op::div>(a);
      return binary<Op::mod>(a);
    case Op::add:
      return binary<Op::add>(a);
    case Op::sub:
      return binary<Op::sub>(a);
    case Op::mul:
      return binary<Op::mul>(a);
    case Op::lt:
      return binary<Op::lt>(a);
    case Op::le:
      return binary<Op::le>(a);
    case Op::gt:
      return binary<Op::gt>(a);
    case Op::ge:
      return binary<Op::ge>(a);
    case Op::eq:
      return binary<Op::eq>(a);
    case Op::ne:
      return binary<Op::ne>(a);
    case Op::min:
      return binary<Op::min>(a);
    case Op::max:
      return binary<Op::max>(a);
    case Op::pow:
      return binary<Op::pow>(a);
    case Op::logical_and:
      return NodePtr(new Logic<true>(std::move(a[0]), std::move(a[1])));
    case Op::logical_or:
      return NodePtr(new Logic<false>(std::move(a[0]), std::move(a[1])));
    case Op::select:
      return NodePtr(new Select(std::move(a[0]), std::move(a[1]), std::move(a[2])));
  }
  KF_CHECK(false) << "unknown op";
  return nullptr;
}

NodePtr make_affine_access(AccessInfo info, Affine offset, std::vector<DimCheck> checks,
                           NodePtr fallback) {
  return NodePtr(
      new AffineAccess(std::move(info), std::move(offset), std::move(checks), std::move(fallback)));
}

NodePtr make_general_access(AccessInfo info, std::vector<int64_t> strides,
                            std::vector<NodePtr> indices, NodePtr fallback) {
  return NodePtr(new GeneralAccess(std::move(info), std::move(strides), std::move(indices),
                                   std::move(fallback)));
}

}  // namespace kf::te::detail
