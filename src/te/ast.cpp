// Names of the TE operators and the canonical printer of ASTs and programs (see ast.h).
#include "te/ast.h"

#include <cmath>
#include <cstdio>

#include "support/check.h"

namespace kf::te {

int op_arity(Op op) {
  switch (op) {
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
    case Op::cast:
      return 1;
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::div:
    case Op::mod:
    case Op::lt:
    case Op::le:
    case Op::gt:
    case Op::ge:
    case Op::eq:
    case Op::ne:
    case Op::logical_and:
    case Op::logical_or:
    case Op::min:
    case Op::max:
    case Op::pow:
    case Op::ceildiv:
      return 2;
    case Op::select:
      return 3;
  }
  KF_CHECK(false) << "unknown op";
  return 0;
}

std::string op_name(Op op) {
  switch (op) {
    case Op::neg:
      return "-";
    case Op::logical_not:
      return "!";
    case Op::add:
      return "+";
    case Op::sub:
      return "-";
    case Op::mul:
      return "*";
    case Op::div:
      return "/";
    case Op::mod:
      return "%";
    case Op::lt:
      return "<";
    case Op::le:
      return "<=";
    case Op::gt:
      return ">";
    case Op::ge:
      return ">=";
    case Op::eq:
      return "==";
    case Op::ne:
      return "!=";
    case Op::logical_and:
      return "&&";
    case Op::logical_or:
      return "||";
    case Op::exp:
      return "exp";
    case Op::log:
      return "log";
    case Op::sqrt:
      return "sqrt";
    case Op::rsqrt:
      return "rsqrt";
    case Op::tanh:
      return "tanh";
    case Op::erf:
      return "erf";
    case Op::sigmoid:
      return "sigmoid";
    case Op::abs:
      return "abs";
    case Op::floor:
      return "floor";
    case Op::ceil:
      return "ceil";
    case Op::min:
      return "min";
    case Op::max:
      return "max";
    case Op::pow:
      return "pow";
    case Op::ceildiv:
      return "ceildiv";
    case Op::select:
      return "select";
    case Op::cast:
      return "cast";
  }
  KF_CHECK(false) << "unknown op";
  return "";
}

std::string reduce_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::prod:
      return "prod";
    case ReduceOp::max:
      return "max";
    case ReduceOp::min:
      return "min";
    case ReduceOp::argmax:
      return "argmax";
    case ReduceOp::argmin:
      return "argmin";
    case ReduceOp::logsumexp:
      return "logsumexp";
  }
  KF_CHECK(false) << "unknown reduction";
  return "";
}

std::string value_type_name(ValueType t) {
  switch (t) {
    case ValueType::unknown:
      return "unknown";
    case ValueType::f64:
      return "float";
    case ValueType::i64:
      return "integer";
    case ValueType::boolean:
      return "condition";
  }
  KF_CHECK(false) << "unknown value type";
  return "";
}

namespace {

bool is_infix(Op op) {
  return op_arity(op) == 2 &&
         !(op == Op::min || op == Op::max || op == Op::pow || op == Op::ceildiv);
}

std::string number_text(const Expr& e) {
  if (std::isinf(e.number)) return e.number > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", e.number);
  std::string s = buf;
  // A float literal keeps a '.' or exponent so it re-parses as a float.
  if (e.type == ValueType::f64 && s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string join(const std::vector<Expr>& v, size_t n, const Stage* stage) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + to_string(v[i], stage);
  return s;
}

std::string var_text(const IndexVar& v, const Stage* stage) {
  return v.name + " in " + to_string(v.lo, stage) + ".." + to_string(v.hi, stage);
}

std::string decl_text(const VarDecl& d) {
  if (d.bounds.size() != 2) return d.name;
  return d.name + " in " + to_string(d.bounds[0]) + ".." + to_string(d.bounds[1]);
}

}  // namespace

std::string to_string(const Expr& e, const Stage* stage) {
  switch (e.kind) {
    case ExprKind::number:
      return number_text(e);
    case ExprKind::name:
      return e.name;
    case ExprKind::access: {
      std::string s = e.name + "[" + join(e.args, e.index_count(), stage) + "]";
      if (e.has_else) s = "(" + s + " else " + to_string(e.args.back(), stage) + ")";
      return s;
    }
    case ExprKind::call: {
      if (e.op == Op::cast)
        return std::string(dtype_name(e.cast_to)) + "(" + join(e.args, 1, stage) + ")";
      if (e.op == Op::neg || e.op == Op::logical_not)
        return "(" + op_name(e.op) + to_string(e.args[0], stage) + ")";
      if (is_infix(e.op))
        return "(" + to_string(e.args[0], stage) + " " + op_name(e.op) + " " +
               to_string(e.args[1], stage) + ")";
      return op_name(e.op) + (e.approx ? "~" : "") + "(" + join(e.args, e.args.size(), stage) + ")";
    }
    case ExprKind::reduce: {
      std::string vars;
      if (stage && !e.rvars.empty()) {
        for (size_t i = 0; i < e.rvars.size(); ++i)
          vars += (i ? ", " : "") + var_text(stage->reduce_vars[e.rvars[i]], stage);
      } else {
        for (size_t i = 0; i < e.decls.size(); ++i) vars += (i ? ", " : "") + decl_text(e.decls[i]);
      }
      return reduce_name(e.reduce_op) + "(" + vars + ": " + to_string(e.args[0], stage) + ")";
    }
  }
  KF_CHECK(false) << "unknown expression kind";
  return "";
}

std::string to_string(const Ast& ast) {
  std::string s;
  for (const Statement& st : ast.statements) {
    s += st.target + "[";
    for (size_t i = 0; i < st.lhs.size(); ++i) s += (i ? ", " : "") + decl_text(st.lhs[i]);
    s += "] = " + to_string(st.body) + "\n";
  }
  return s;
}

std::string to_string(const Program& p) {
  std::string s;
  for (const Stage& st : p.stages) {
    s += st.name + "[";
    for (size_t i = 0; i < st.vars.size(); ++i) s += (i ? ", " : "") + var_text(st.vars[i], &st);
    s += "] : " + value_type_name(st.type);
    if (st.output >= 0) s += " -> output " + std::to_string(st.output);
    if (st.scan_dim >= 0) s += " scan " + st.vars[st.scan_dim].name;
    s += "\n  = " + to_string(st.body, &st) + "\n";
  }
  return s;
}

}  // namespace kf::te
