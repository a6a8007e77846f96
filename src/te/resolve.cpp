// Name resolution and typing of TE expressions within one stage (see sema_internal.h).
#include <algorithm>

#include "te/lexer.h"
#include "te/parser.h"
#include "te/sema_internal.h"
#include "te/static_eval.h"

namespace kf::te::detail {

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

namespace {

ValueType element_type(DType t) {
  return is_floating(t) ? ValueType::f64 : ValueType::i64;
}
bool numeric(ValueType t) {
  return t == ValueType::f64 || t == ValueType::i64;
}
ValueType join(ValueType a, ValueType b) {
  return a == ValueType::i64 && b == ValueType::i64 ? ValueType::i64 : ValueType::f64;
}
std::string a_type(ValueType t) {
  switch (t) {
    case ValueType::unknown:
      return "an untyped expression";
    case ValueType::f64:
      return "the float expression";
    case ValueType::i64:
      return "the integer expression";
    case ValueType::boolean:
      return "the condition";
  }
  return "";
}

template <typename T, typename F>
int find_by_name(const std::vector<T>& v, const std::string& name, F get) {
  for (size_t i = 0; i < v.size(); ++i)
    if (get(v[i]) == name) return static_cast<int>(i);
  return -1;
}

int find_input(const Task& t, const std::string& n) {
  return find_by_name(t.inputs, n, [](const TensorSpec& s) { return s.name; });
}
int find_output(const Task& t, const std::string& n) {
  return find_by_name(t.outputs, n, [](const TensorSpec& s) { return s.name; });
}

class Resolver {
 public:
  explicit Resolver(StageContext& c) : c_(c) {}

  Status expr(Expr& e) {
    switch (e.kind) {
      case ExprKind::number:
        return ok_status();
      case ExprKind::name:
        return name(e);
      case ExprKind::access:
        return access(e);
      case ExprKind::call:
        return call(e);
      case ExprKind::reduce:
        return reduce(e);
    }
    KF_CHECK(false) << "unknown expression kind";
    return ok_status();
  }

 private:
  Status err(SourceLoc at, const std::string& msg) const { return error_at(c_.file, at, msg); }

  Status want(const Expr& arg, const std::string& context, const std::string& expected,
              bool ok) const {
    if (ok) return ok_status();
    return err(arg.loc, context + " expects " + expected + ", got " + a_type(arg.type) + " " +
                            quote(to_string(arg)));
  }
  Status want_number(const Expr& arg, const std::string& context) const {
    return want(arg, context, "a number", numeric(arg.type));
  }
  Status want_condition(const Expr& arg, const std::string& context) const {
    return want(arg, context, "a condition (a comparison)", arg.type == ValueType::boolean);
  }
  Status want_integer(const Expr& arg, const std::string& context) const {
    if (arg.type == ValueType::i64) return ok_status();
    return err(arg.loc, context + " expects an integer, got " + a_type(arg.type) + " " +
                            quote(to_string(arg)) +
                            (arg.type == ValueType::f64 ? "; convert with i64(...)" : ""));
  }

  bool is_tensor(const std::string& n) const {
    return find_input(c_.task, n) >= 0 || find_output(c_.task, n) >= 0 || n == c_.stage.name ||
           c_.later_targets.count(n) ||
           std::any_of(c_.earlier.begin(), c_.earlier.end(),
                       [&](const Stage& s) { return s.name == n; });
  }

  // What a bare name means here (ref.kind none if nothing).
  Ref lookup(const std::string& n) const {
    for (auto it = c_.active.rbegin(); it != c_.active.rend(); ++it)
      if (c_.stage.reduce_vars[*it].name == n) return {RefKind::reduce_var, *it};
    const auto name_of = [](const auto& x) { return x.name; };
    if (int i = find_by_name(c_.stage.vars, n, name_of); i >= 0) return {RefKind::index_var, i};
    if (int i = find_by_name(c_.task.dims, n, [](const std::string& s) { return s; }); i >= 0)
      return {RefKind::dim, i};
    if (int i = find_by_name(c_.task.derived, n, [](const auto& d) { return d.first; }); i >= 0)
      return {RefKind::derived, i};
    if (int i = find_by_name(c_.task.scalars, n, name_of); i >= 0) return {RefKind::scalar, i};
    return {};
  }

  Status name(Expr& e) {
    e.ref = lookup(e.name);
    switch (e.ref.kind) {
      case RefKind::index_var:
      case RefKind::reduce_var:
      case RefKind::dim:
      case RefKind::derived:
        e.type = ValueType::i64;
        return ok_status();
      case RefKind::scalar:
        e.type = element_type(c_.task.scalars[e.ref.index].dtype);
        return ok_status();
      case RefKind::none:
      case RefKind::input:
      case RefKind::stage:
        break;
    }
    if (is_tensor(e.name))
      return err(e.loc,
                 quote(e.name) + " is a tensor: expected an access such as " + e.name + "[...]");
    return err(e.loc, "unbound name " + quote(e.name) +
                          ": expected an index variable of the left-hand side, a reduction "
                          "variable, a dim, a derived size or a scalar");
  }

  // Finds the tensor an access reads; sets ref and type, returns its rank.
  Expected<size_t> tensor_of(Expr& e) {
    const Task& t = c_.task;
    if (int i = find_input(t, e.name); i >= 0) {
      e.ref = {RefKind::input, i};
      e.type = element_type(t.inputs[i].dtype);
      return t.inputs[i].shape.size();
    }
    if (e.name == c_.stage.name) {  // a recurrence
      e.ref = {RefKind::stage, static_cast<int>(c_.earlier.size())};
      e.type = c_.stage.type;
      return c_.stage.vars.size();
    }
    for (size_t i = c_.earlier.size(); i-- > 0;) {
      if (c_.earlier[i].name != e.name) continue;
      e.ref = {RefKind::stage, static_cast<int>(i)};
      e.type = c_.earlier[i].type;
      c_.stages_read.push_back(static_cast<int>(i));
      return c_.earlier[i].vars.size();
    }
    if (find_output(t, e.name) >= 0 || c_.later_targets.count(e.name))
      return err(e.loc, quote(e.name) +
                            " is read before it is defined; statements run in the "
                            "order they are written");
    if (lookup(e.name).kind != RefKind::none)
      return err(e.loc, quote(e.name) + " is not a tensor: expected a name without '[...]'");
    return err(e.loc, "unknown tensor " + quote(e.name) +
                          ": expected an input, an output or an intermediate defined above");
  }

  Expr extent_of(const Expr& e, size_t d) const {
    if (e.ref.kind == RefKind::input)
      return formula_expr(c_.task, c_.task.inputs[e.ref.index].shape[d], e.loc);
    return c_.earlier[e.ref.index].vars[d].hi;
  }

  Status access(Expr& e) {
    auto rank = tensor_of(e);
    if (!rank) return rank.error();
    const size_t n = e.index_count();
    if (n != *rank)
      return err(e.loc, quote(e.name) + " has " + std::to_string(*rank) + " dimension" +
                            (*rank == 1 ? "" : "s") + ": expected " + std::to_string(*rank) +
                            " ind" + (*rank == 1 ? "ex" : "ices") + ", got " + std::to_string(n));
    const bool self =
        e.ref.kind == RefKind::stage && e.ref.index == static_cast<int>(c_.earlier.size());
    for (size_t d = 0; d < n; ++d) {
      Expr& idx = e.args[d];
      KF_RETURN_IF_ERROR(expr(idx));
      KF_RETURN_IF_ERROR(
          want_integer(idx, "index " + std::to_string(d + 1) + " of " + quote(e.name)));
      const bool var = idx.kind == ExprKind::name &&
                       (idx.ref.kind == RefKind::index_var || idx.ref.kind == RefKind::reduce_var);
      if (!var || self) continue;
      Use u;
      u.var_kind = idx.ref.kind;
      u.var = idx.ref.index;
      u.extent = extent_of(e, d);
      u.where = to_string(e) + " (dimension " + std::to_string(d + 1) + " of " + e.name + ")";
      u.loc = idx.loc;
      u.soft = e.has_else;
      c_.uses.push_back(std::move(u));
    }
    if (e.has_else) {
      KF_RETURN_IF_ERROR(expr(e.args.back()));
      KF_RETURN_IF_ERROR(want_number(e.args.back(), "'else' of " + quote(e.name)));
    }
    if (self) c_.self_reads.push_back(&e);
    return ok_status();
  }

  Status call(Expr& e) {
    for (Expr& a : e.args) KF_RETURN_IF_ERROR(expr(a));
    const std::string ctx = quote(e.name);
    switch (e.op) {
      case Op::neg:
      case Op::abs:
      case Op::floor:
      case Op::ceil:
        KF_RETURN_IF_ERROR(want_number(e.args[0], ctx));
        e.type = e.args[0].type;
        return ok_status();
      case Op::logical_not:
        KF_RETURN_IF_ERROR(want_condition(e.args[0], ctx));
        e.type = ValueType::boolean;
        return ok_status();
      case Op::add:
      case Op::sub:
      case Op::mul:
      case Op::div:
      case Op::mod:
      case Op::min:
      case Op::max:
        KF_RETURN_IF_ERROR(want_number(e.args[0], ctx));
        KF_RETURN_IF_ERROR(want_number(e.args[1], ctx));
        e.type = join(e.args[0].type, e.args[1].type);
        return ok_status();
      case Op::lt:
      case Op::le:
      case Op::gt:
      case Op::ge:
      case Op::eq:
      case Op::ne:
        KF_RETURN_IF_ERROR(want_number(e.args[0], ctx));
        KF_RETURN_IF_ERROR(want_number(e.args[1], ctx));
        e.type = ValueType::boolean;
        return ok_status();
      case Op::logical_and:
      case Op::logical_or:
        KF_RETURN_IF_ERROR(want_condition(e.args[0], ctx));
        KF_RETURN_IF_ERROR(want_condition(e.args[1], ctx));
        e.type = ValueType::boolean;
        return ok_status();
      case Op::exp:
      case Op::log:
      case Op::sqrt:
      case Op::rsqrt:
      case Op::tanh:
      case Op::erf:
      case Op::sigmoid:
        KF_RETURN_IF_ERROR(want_number(e.args[0], ctx));
        e.type = ValueType::f64;
        return ok_status();
      case Op::pow:
        KF_RETURN_IF_ERROR(want_number(e.args[0], ctx));
        KF_RETURN_IF_ERROR(want_number(e.args[1], ctx));
        e.type = ValueType::f64;
        return ok_status();
      case Op::ceildiv:
        KF_RETURN_IF_ERROR(want_integer(e.args[0], ctx));
        KF_RETURN_IF_ERROR(want_integer(e.args[1], ctx));
        e.type = ValueType::i64;
        return ok_status();
      case Op::select:
        KF_RETURN_IF_ERROR(want_condition(e.args[0], ctx));
        KF_RETURN_IF_ERROR(want_number(e.args[1], ctx));
        KF_RETURN_IF_ERROR(want_number(e.args[2], ctx));
        e.type = join(e.args[1].type, e.args[2].type);
        return ok_status();
      case Op::cast:
        KF_RETURN_IF_ERROR(
            want(e.args[0], ctx, "a number or a condition", e.args[0].type != ValueType::unknown));
        e.type = element_type(e.cast_to);
        return ok_status();
    }
    KF_CHECK(false) << "unknown op";
    return ok_status();
  }

  // What else the name of a new reduction variable already means, or "".
  std::string taken(const std::string& n) const {
    switch (lookup(n).kind) {
      case RefKind::index_var:
        return "an index variable of the left-hand side";
      case RefKind::reduce_var:
        return "an enclosing reduction variable";
      case RefKind::dim:
        return "a dim";
      case RefKind::derived:
        return "a derived size";
      case RefKind::scalar:
        return "a scalar";
      case RefKind::none:
      case RefKind::input:
      case RefKind::stage:
        break;
    }
    return is_tensor(n) ? "a tensor" : "";
  }

  Status reduce(Expr& e) {
    const bool arg = e.reduce_op == ReduceOp::argmax || e.reduce_op == ReduceOp::argmin;
    if (arg && e.decls.size() != 1)
      return err(e.loc, quote(e.name) + " takes exactly one variable, got " +
                            std::to_string(e.decls.size()));
    const size_t depth = c_.active.size();
    for (VarDecl& d : e.decls) {
      if (std::string t = taken(d.name); !t.empty())
        return err(d.loc,
                   quote(d.name) + " is already " + t + ": a reduction variable needs a new name");
      IndexVar v;
      v.name = d.name;
      v.loc = d.loc;
      const bool explicit_range = !d.bounds.empty();
      if (explicit_range) {
        for (Expr& b : d.bounds) {
          KF_RETURN_IF_ERROR(expr(b));
          KF_RETURN_IF_ERROR(want_integer(b, "the range of " + quote(d.name)));
        }
        v.lo = std::move(d.bounds[0]);
        v.hi = std::move(d.bounds[1]);
        v.is_static = is_static(v.lo) && is_static(v.hi);
      }
      const int id = static_cast<int>(c_.stage.reduce_vars.size());
      c_.stage.reduce_vars.push_back(std::move(v));
      c_.explicit_range.push_back(explicit_range);
      c_.active.push_back(id);
      e.rvars.push_back(id);
    }
    e.decls.clear();
    KF_RETURN_IF_ERROR(expr(e.args[0]));
    KF_RETURN_IF_ERROR(want_number(e.args[0], quote(e.name)));
    c_.active.resize(depth);
    e.type = arg                                  ? ValueType::i64
             : e.reduce_op == ReduceOp::logsumexp ? ValueType::f64
                                                  : e.args[0].type;
    return ok_status();
  }

  StageContext& c_;
};

void set_loc(Expr& e, SourceLoc loc) {
  e.loc = loc;
  for (Expr& a : e.args) set_loc(a, loc);
}

}  // namespace

Status resolve_expr(StageContext& c, Expr& e) {
  return Resolver(c).expr(e);
}

Status resolve_static(const Task& task, const std::string& file, Expr& e) {
  Stage scratch;
  const std::vector<Stage> none;
  const std::set<std::string> no_targets;
  const std::vector<Bindings> no_shapes;
  StageContext c{task, file, none, no_targets, no_shapes, scratch};
  KF_RETURN_IF_ERROR(resolve_expr(c, e));
  if (!is_static(e))
    return error_at(file, e.loc,
                    "expected a static size (literals, dims, derived sizes, scalars), got " +
                        quote(to_string(e)));
  return ok_status();
}

Expr formula_expr(const Task& task, const Formula& f, SourceLoc loc) {
  auto e = parse_expression(f.text(), "<shape formula>", 1);
  KF_CHECK(e.has_value()) << "shape formula '" << f.text()
                          << "' does not parse as TE: " << e.error().message();
  Status s = resolve_static(task, "<shape formula>", *e);
  KF_CHECK(s.ok()) << "shape formula '" << f.text() << "': " << s.message();
  set_loc(*e, loc);
  return std::move(*e);
}

}  // namespace kf::te::detail
