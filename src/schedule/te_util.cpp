#include "schedule/te_util.h"

#include "support/check.h"
#include "te/parser.h"

namespace kf::sched {

using te::Expr;
using te::ExprKind;
using te::Op;
using te::RefKind;
using te::ValueType;

Expr int_lit(int64_t v) {
  Expr e;
  e.kind = ExprKind::number;
  e.type = ValueType::i64;
  e.number = static_cast<double>(v);
  return e;
}

Expr float_lit(double v) {
  Expr e;
  e.kind = ExprKind::number;
  e.type = ValueType::f64;
  e.number = v;
  return e;
}

Expr var_ref(RefKind kind, int index, const std::string& name, ValueType type) {
  Expr e;
  e.kind = ExprKind::name;
  e.name = name;
  e.ref = {kind, index};
  e.type = type;
  return e;
}

Expr stage_access(const std::string& name, int stage, std::vector<Expr> indices, ValueType type) {
  Expr e;
  e.kind = ExprKind::access;
  e.name = name;
  e.ref = {RefKind::stage, stage};
  e.type = type;
  e.args = std::move(indices);
  return e;
}

Expr float_call(Op op, Expr x) {
  Expr e;
  e.kind = ExprKind::call;
  e.op = op;
  e.name = te::op_name(op);
  e.type = ValueType::f64;
  e.args = {std::move(x)};
  return e;
}

Expr binary(Op op, Expr a, Expr b) {
  Expr e;
  e.kind = ExprKind::call;
  e.op = op;
  e.name = te::op_name(op);
  switch (op) {
    case Op::lt:
    case Op::le:
    case Op::gt:
    case Op::ge:
    case Op::eq:
    case Op::ne:
    case Op::logical_and:
    case Op::logical_or:
      e.type = ValueType::boolean;
      break;
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::div:
    case Op::mod:
    case Op::min:
    case Op::max:
    case Op::ceildiv:
      e.type =
          a.type == ValueType::i64 && b.type == ValueType::i64 ? ValueType::i64 : ValueType::f64;
      break;
    case Op::pow:
      e.type = ValueType::f64;
      break;
    case Op::neg:
    case Op::logical_not:
    case Op::exp:
    case Op::log:
    case Op::sqrt:
    case Op::rsqrt:
    case Op::tanh:
    case Op::erf:
    case Op::sigmoid:
    case Op::abs:
    case Op::floor:
    case Op::ceil:
    case Op::select:
    case Op::cast:
      KF_CHECK(false) << "binary() of " << te::op_name(op);
  }
  e.args = {std::move(a), std::move(b)};
  return e;
}

Expr logical_and(Expr a, Expr b) {
  return binary(Op::logical_and, std::move(a), std::move(b));
}

void flatten_product(const Expr& e, std::vector<Expr>& out) {
  if (e.kind == ExprKind::call && e.op == Op::mul && e.type == ValueType::f64) {
    flatten_product(e.args[0], out);
    flatten_product(e.args[1], out);
  } else {
    out.push_back(e);
  }
}

Expr map_names(const Expr& e, const std::function<std::optional<Expr>(const Expr&)>& f) {
  if (e.kind == ExprKind::name) {
    if (auto r = f(e)) return *r;
    return e;
  }
  Expr out = e;
  for (Expr& a : out.args) a = map_names(a, f);
  return out;
}

Expr map_accesses(const Expr& e, const std::function<std::optional<Expr>(const Expr&)>& f) {
  Expr out = e;
  for (Expr& a : out.args) a = map_accesses(a, f);
  if (out.kind == ExprKind::access) {
    if (auto r = f(out)) return *r;
  }
  return out;
}

void remap_stage_refs(Expr& e, const std::function<int(int)>& f) {
  if (e.kind == ExprKind::access && e.ref.kind == RefKind::stage) e.ref.index = f(e.ref.index);
  for (Expr& a : e.args) remap_stage_refs(a, f);
}

void remap_rvars(Expr& e, const std::function<int(int)>& f) {
  if (e.kind == ExprKind::name && e.ref.kind == RefKind::reduce_var) e.ref.index = f(e.ref.index);
  if (e.kind == ExprKind::reduce)
    for (int& r : e.rvars) r = f(r);
  for (Expr& a : e.args) remap_rvars(a, f);
}

bool reads_stage(const Expr& e, int s) {
  bool found = false;
  te::visit(e, [&](const Expr& x) {
    if (x.kind == ExprKind::access && x.ref.kind == RefKind::stage && x.ref.index == s)
      found = true;
  });
  return found;
}

bool uses_var(const Expr& e, RefKind kind, int index) {
  bool found = false;
  te::visit(e, [&](const Expr& x) {
    if (x.kind == ExprKind::name && x.ref.kind == kind && x.ref.index == index) found = true;
  });
  return found;
}

size_t eager_operands(const Expr& e) {
  if (e.kind == ExprKind::call && e.op == te::Op::select) return 1;
  if (e.kind == ExprKind::access && e.has_else) return e.args.size() - 1;
  return e.args.size();
}

int expr_cost(const Expr& e) {
  int c = 0;
  te::visit(e, [&](const Expr& x) {
    if (x.kind == ExprKind::reduce) c += 100;
    if (x.kind != ExprKind::call || x.type == ValueType::i64 || x.type == ValueType::boolean)
      return;
    switch (x.op) {
      case te::Op::exp:
      case te::Op::log:
      case te::Op::tanh:
      case te::Op::erf:
      case te::Op::sigmoid:
      case te::Op::pow:
        c += 20;
        break;
      case te::Op::div:
      case te::Op::sqrt:
      case te::Op::rsqrt:
        c += 8;
        break;
      default:
        c += 1;
    }
  });
  return c;
}

std::optional<int64_t> const_int(const Expr& e) {
  if (e.type != ValueType::i64) return std::nullopt;
  switch (e.kind) {
    case ExprKind::number:
      return static_cast<int64_t>(e.number);
    case ExprKind::call: {
      if (e.args.size() != 2) return std::nullopt;
      auto a = const_int(e.args[0]), b = const_int(e.args[1]);
      if (!a || !b) return std::nullopt;
      switch (e.op) {
        case Op::add:
          return *a + *b;
        case Op::sub:
          return *a - *b;
        case Op::mul:
          return *a * *b;
        case Op::div:
          return *b == 0 ? std::nullopt : std::optional<int64_t>(*a / *b);
        case Op::mod:
          return *b == 0 ? std::nullopt : std::optional<int64_t>(*a % *b);
        case Op::min:
          return std::min(*a, *b);
        case Op::max:
          return std::max(*a, *b);
        case Op::ceildiv:
          if (*b <= 0 || *a < 0) return std::nullopt;
          return (*a + *b - 1) / *b;
        case Op::neg:
        case Op::logical_not:
        case Op::lt:
        case Op::le:
        case Op::gt:
        case Op::ge:
        case Op::eq:
        case Op::ne:
        case Op::logical_and:
        case Op::logical_or:
        case Op::exp:
        case Op::log:
        case Op::sqrt:
        case Op::rsqrt:
        case Op::tanh:
        case Op::erf:
        case Op::sigmoid:
        case Op::abs:
        case Op::floor:
        case Op::ceil:
        case Op::pow:
        case Op::select:
        case Op::cast:
          return std::nullopt;
      }
      return std::nullopt;
    }
    case ExprKind::name:
    case ExprKind::access:
    case ExprKind::reduce:
      return std::nullopt;
  }
  return std::nullopt;
}

bool index_within(const Expr& idx, const std::vector<te::IndexVar>& stage_vars,
                  const Expr& extent) {
  if (idx.kind != ExprKind::name || idx.ref.kind != RefKind::index_var) return false;
  const te::IndexVar& v = stage_vars[idx.ref.index];
  return te::to_string(v.lo) == "0" && te::to_string(v.hi) == te::to_string(extent);
}

Expr formula_to_te(const Formula& f, const Task& task) {
  auto parsed = te::parse_expression(f.text(), "<shape formula>", 1);
  KF_CHECK(parsed.has_value()) << "shape formula '" << f.text()
                               << "': " << parsed.error().message();
  std::function<void(Expr&)> resolve = [&](Expr& e) {
    for (Expr& a : e.args) resolve(a);
    e.type = ValueType::i64;
    if (e.kind != ExprKind::name) return;
    for (size_t i = 0; i < task.dims.size(); ++i)
      if (task.dims[i] == e.name) e.ref = {RefKind::dim, static_cast<int>(i)};
    for (size_t i = 0; i < task.derived.size(); ++i)
      if (task.derived[i].first == e.name) e.ref = {RefKind::derived, static_cast<int>(i)};
    for (size_t i = 0; i < task.scalars.size(); ++i)
      if (task.scalars[i].name == e.name) e.ref = {RefKind::scalar, static_cast<int>(i)};
    KF_CHECK(e.ref.kind != RefKind::none)
        << "shape formula '" << f.text() << "' reads unknown '" << e.name << "'";
  };
  resolve(*parsed);
  return *parsed;
}

namespace {

bool is_number(const te::Expr& e, double v) {
  return e.kind == te::ExprKind::number && e.number == v;
}

bool is_call(const te::Expr& e, te::Op op) {
  return e.kind == te::ExprKind::call && e.op == op;
}

}  // namespace

const te::Expr* softplus_arg(const te::Expr& e) {
  if (!is_call(e, te::Op::log) || !is_call(e.args[0], te::Op::add)) return nullptr;
  const te::Expr& s = e.args[0];
  for (int k = 0; k < 2; ++k)
    if (is_number(s.args[static_cast<size_t>(k)], 1.0) &&
        is_call(s.args[static_cast<size_t>(1 - k)], te::Op::exp))
      return &s.args[static_cast<size_t>(1 - k)].args[0];
  return nullptr;
}

int tanh_softplus_calls(const Expr& e) {
  int n = 0;
  te::visit(e, [&](const Expr& x) {
    if (x.kind == ExprKind::call && x.op == te::Op::tanh && softplus_arg(x.args[0])) ++n;
  });
  return n;
}

bool approximable(te::Op op) {
  switch (op) {
    case te::Op::exp:
    case te::Op::log:
    case te::Op::tanh:
    case te::Op::erf:
    case te::Op::sigmoid:
      return true;
    default:
      return false;
  }
}

int approximable_calls(const Expr& e) {
  int n = 0;
  te::visit(e, [&](const Expr& x) {
    if (x.kind == ExprKind::call && approximable(x.op) && !x.approx) ++n;
  });
  return n;
}

namespace {

// The reads in e whose index holds a read `through` accepts (the tensor read an index goes
// through: a page table, a group id).
template <typename Through>
int reads_through(const Expr& e, const Through& through) {
  int n = 0;
  te::visit(e, [&](const Expr& x) {
    if (x.kind != ExprKind::access) return;
    bool gathered = false;
    for (const Expr& index : x.args)
      te::visit(index,
                [&](const Expr& y) { gathered |= y.kind == ExprKind::access && through(y); });
    if (gathered) ++n;
  });
  return n;
}

}  // namespace

int divided_gathers(const Expr& e) {
  auto divides_var = [](const Expr& x) {
    if (x.kind != ExprKind::call || (x.op != te::Op::div && x.op != te::Op::mod)) return false;
    const Expr& a = x.args[0];
    const Expr& b = x.args[1];
    const bool var = a.kind == ExprKind::name && (a.ref.kind == te::RefKind::index_var ||
                                                  a.ref.kind == te::RefKind::reduce_var);
    return var && b.kind == ExprKind::name && b.ref.kind == te::RefKind::dim;
  };
  return reads_through(e, [&](const Expr& table) {
    bool divided = false;
    for (const Expr& inner : table.args)
      te::visit(inner, [&](const Expr& z) { divided |= divides_var(z); });
    return divided;
  });
}

int gathered_reads(const Expr& e) {
  return reads_through(e, [](const Expr&) { return true; });
}

bool vectorizable_reduce(const Expr& x) {
  if (x.kind != ExprKind::reduce || x.rvars.size() != 1 || x.args[0].type != te::ValueType::f64)
    return false;
  if (x.reduce_op == te::ReduceOp::argmax || x.reduce_op == te::ReduceOp::argmin) return false;
  bool nested = false;
  te::visit(x.args[0], [&](const Expr& y) { nested |= y.kind == ExprKind::reduce; });
  return !nested;
}

}  // namespace kf::sched
