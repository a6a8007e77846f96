// Static evaluation of extents (see static_eval.h).
#include "te/static_eval.h"

#include <cmath>

#include "te/ops.h"

namespace kf::te {

bool is_static(const Expr& e) {
  bool ok = true;
  visit(e, [&](const Expr& x) {
    if (x.kind == ExprKind::access || x.kind == ExprKind::reduce) ok = false;
    if (x.kind == ExprKind::name &&
        (x.ref.kind == RefKind::index_var || x.ref.kind == RefKind::reduce_var))
      ok = false;
  });
  return ok;
}

Expected<double> eval_static(const Expr& e, const Bindings& env) {
  switch (e.kind) {
    case ExprKind::number:
      return e.number;
    case ExprKind::name: {
      auto it = env.find(e.name);
      if (it == env.end()) return Status::error("'" + e.name + "' has no value at this shape");
      return it->second;
    }
    case ExprKind::access:
    case ExprKind::reduce:
      return Status::error("'" + to_string(e) + "' is not a static size");
    case ExprKind::call:
      break;
  }
  const bool integer = e.type == ValueType::i64;
  if (e.op == Op::select) {
    auto c = eval_static(e.args[0], env);
    if (!c) return c;
    return eval_static(e.args[*c != 0 ? 1 : 2], env);
  }
  std::vector<double> v;
  for (const Expr& a : e.args) {
    auto x = eval_static(a, env);
    if (!x) return x;
    v.push_back(*x);
  }
  if (v.size() == 1) return apply_unary(e.op, v[0], e.cast_to);
  if (integer && (e.op == Op::div || e.op == Op::mod || e.op == Op::ceildiv) && v[1] == 0)
    return Status::error("division by zero in '" + to_string(e) + "'");
  return apply_binary(e.op, v[0], v[1], integer);
}

Expected<int64_t> eval_static_int(const Expr& e, const Bindings& env) {
  auto v = eval_static(e, env);
  if (!v) return v.error();
  if (std::trunc(*v) != *v) return Status::error("'" + to_string(e) + "' is not an integer");
  return static_cast<int64_t>(*v);
}

}  // namespace kf::te
