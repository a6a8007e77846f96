#include "ir/ir.h"

#include <kforge/kernel.h>

#include "support/check.h"

namespace kf::ir {

ExprKind Expr::kind() const {
  KF_CHECK(node_) << "kind() of an undefined Expr";
  return node_->kind;
}

Type Expr::type() const {
  KF_CHECK(node_) << "type() of an undefined Expr";
  return node_->type;
}

StmtKind Stmt::kind() const {
  KF_CHECK(node_) << "kind() of an undefined Stmt";
  return node_->kind;
}

namespace {

template <typename T, typename... Args>
Expr make_expr(Args&&... args) {
  return Expr(std::make_shared<const T>(std::forward<Args>(args)...));
}

template <typename T, typename... Args>
Stmt make_stmt(Args&&... args) {
  return Stmt(std::make_shared<const T>(std::forward<Args>(args)...));
}

void check_defined(const Expr& e, const char* what) {
  KF_CHECK(e.defined()) << what;
}

float round_to_bf16(double v) {
  float f = static_cast<float>(v);
  uint16_t b = kf::bf16::from_float(f);
  return kf::bf16::to_float(b);
}

}  // namespace

// --- expression constructors ------------------------------------------------------------------

Expr IntImm::make(Type t, int64_t value) {
  KF_CHECK(t.is_scalar() && (t.is_int() || t.is_bool())) << "IntImm of type " << to_string(t);
  if (t.kind() == ScalarKind::i32) value = static_cast<int32_t>(value);
  if (t.is_bool()) value = value != 0;
  return make_expr<IntImm>(t, value);
}

Expr FloatImm::make(Type t, double value) {
  KF_CHECK(t.is_scalar() && t.is_float()) << "FloatImm of type " << to_string(t);
  switch (t.kind()) {
    case ScalarKind::f32:
      value = static_cast<float>(value);
      break;
    case ScalarKind::bf16:
      value = round_to_bf16(value);
      break;
    case ScalarKind::f64:
    case ScalarKind::i32:
    case ScalarKind::i64:
    case ScalarKind::boolean:
      break;
  }
  return make_expr<FloatImm>(t, value);
}

Expr Var::make(Type t, std::string name) {
  KF_CHECK(!name.empty()) << "Var without a name";
  KF_CHECK(is_valid_lanes(t.lanes())) << "Var " << name << " with lanes " << t.lanes();
  return make_expr<Var>(t, std::move(name));
}

Expr Cast::make(Type t, Expr value) {
  check_defined(value, "Cast of an undefined Expr");
  KF_CHECK(t.lanes() == value.type().lanes())
      << "Cast changes lanes: " << to_string(value.type()) << " -> " << to_string(t);
  return make_expr<Cast>(t, std::move(value));
}

Expr Binary::make(BinOp op, Expr a, Expr b) {
  check_defined(a, "Binary with an undefined operand");
  check_defined(b, "Binary with an undefined operand");
  Type t = a.type();
  KF_CHECK(t == b.type()) << "Binary operands differ in type: " << to_string(t) << " vs "
                          << to_string(b.type());
  switch (op) {
    case BinOp::add:
    case BinOp::sub:
    case BinOp::mul:
    case BinOp::div:
    case BinOp::min:
    case BinOp::max:
      KF_CHECK(!t.is_bool()) << "arithmetic on booleans";
      return make_expr<Binary>(t, op, std::move(a), std::move(b));
    case BinOp::mod:
      KF_CHECK(t.is_int()) << "Mod of type " << to_string(t) << " (integers only)";
      return make_expr<Binary>(t, op, std::move(a), std::move(b));
    case BinOp::eq:
    case BinOp::ne:
    case BinOp::lt:
    case BinOp::le:
    case BinOp::gt:
    case BinOp::ge:
      return make_expr<Binary>(Type::boolean(t.lanes()), op, std::move(a), std::move(b));
    case BinOp::logical_and:
    case BinOp::logical_or:
      KF_CHECK(t.is_bool()) << "logical op on " << to_string(t);
      return make_expr<Binary>(t, op, std::move(a), std::move(b));
  }
  KF_CHECK(false) << "unknown BinOp";
  return Expr();
}

Expr Not::make(Expr a) {
  check_defined(a, "Not of an undefined Expr");
  KF_CHECK(a.type().is_bool()) << "Not of " << to_string(a.type());
  Type t = a.type();
  return make_expr<Not>(t, std::move(a));
}

Expr Select::make(Expr condition, Expr true_value, Expr false_value) {
  check_defined(condition, "Select with an undefined condition");
  check_defined(true_value, "Select with an undefined value");
  check_defined(false_value, "Select with an undefined value");
  Type t = true_value.type();
  KF_CHECK(t == false_value.type()) << "Select values differ in type";
  KF_CHECK(condition.type().is_bool()) << "Select condition of " << to_string(condition.type());
  KF_CHECK(condition.type().is_scalar() || condition.type().lanes() == t.lanes())
      << "Select condition lanes " << condition.type().lanes() << " vs " << t.lanes();
  return make_expr<Select>(t, std::move(condition), std::move(true_value), std::move(false_value));
}

Expr Load::make(Type t, std::string buffer, Expr index, Expr predicate) {
  check_defined(index, "Load with an undefined index");
  KF_CHECK(index.type().is_int()) << "Load index of type " << to_string(index.type());
  KF_CHECK(index.type().is_scalar() || index.type().lanes() == t.lanes())
      << "Load of " << to_string(t) << " with index of " << index.type().lanes() << " lanes";
  if (predicate.defined()) {
    KF_CHECK(predicate.type() == Type::boolean(t.lanes()))
        << "Load predicate of type " << to_string(predicate.type());
  }
  return make_expr<Load>(t, std::move(buffer), std::move(index), std::move(predicate));
}

int math_fn_arity(MathFn f) {
  switch (f) {
    case MathFn::exp:
    case MathFn::log:
    case MathFn::sqrt:
    case MathFn::rsqrt:
    case MathFn::tanh:
    case MathFn::erf:
    case MathFn::sigmoid:
    case MathFn::abs:
    case MathFn::floor:
    case MathFn::ceil:
      return 1;
    case MathFn::pow:
      return 2;
    case MathFn::fma:
      return 3;
  }
  return 0;
}

std::string to_string(MathFn f) {
  switch (f) {
    case MathFn::exp:
      return "exp";
    case MathFn::log:
      return "log";
    case MathFn::sqrt:
      return "sqrt";
    case MathFn::rsqrt:
      return "rsqrt";
    case MathFn::tanh:
      return "tanh";
    case MathFn::erf:
      return "erf";
    case MathFn::sigmoid:
      return "sigmoid";
    case MathFn::abs:
      return "abs";
    case MathFn::floor:
      return "floor";
    case MathFn::ceil:
      return "ceil";
    case MathFn::pow:
      return "pow";
    case MathFn::fma:
      return "fma";
  }
  return "?";
}

Expr Call::make(MathFn fn, std::vector<Expr> args, bool approx) {
  KF_CHECK(static_cast<int>(args.size()) == math_fn_arity(fn))
      << to_string(fn) << " takes " << math_fn_arity(fn) << " arguments, got " << args.size();
  for (const Expr& a : args) check_defined(a, "Call with an undefined argument");
  Type t = args[0].type();
  for (const Expr& a : args)
    KF_CHECK(a.type() == t) << to_string(fn) << " arguments differ in type";
  KF_CHECK(t.is_float() || (fn == MathFn::abs && t.is_int()))
      << to_string(fn) << " of " << to_string(t);
  return make_expr<Call>(t, fn, std::move(args), approx);
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
  check_defined(base, "Ramp with an undefined base");
  check_defined(stride, "Ramp with an undefined stride");
  KF_CHECK(base.type().is_scalar() && base.type().is_int())
      << "Ramp base of " << to_string(base.type());
  KF_CHECK(stride.type() == base.type()) << "Ramp stride differs in type from base";
  KF_CHECK(lanes > 1 && is_valid_lanes(lanes)) << "Ramp of " << lanes << " lanes";
  Type t = base.type().with_lanes(lanes);
  return make_expr<Ramp>(t, std::move(base), std::move(stride), lanes);
}

Expr Broadcast::make(Expr value, int lanes) {
  check_defined(value, "Broadcast of an undefined Expr");
  KF_CHECK(value.type().is_scalar()) << "Broadcast of a vector";
  KF_CHECK(lanes > 1 && is_valid_lanes(lanes)) << "Broadcast to " << lanes << " lanes";
  Type t = value.type().with_lanes(lanes);
  return make_expr<Broadcast>(t, std::move(value), lanes);
}

std::string to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::add:
      return "add";
    case ReduceOp::mul:
      return "mul";
    case ReduceOp::min:
      return "min";
    case ReduceOp::max:
      return "max";
  }
  return "?";
}

Expr VectorReduce::make(ReduceOp op, Expr value) {
  check_defined(value, "VectorReduce of an undefined Expr");
  KF_CHECK(value.type().is_vector()) << "VectorReduce of a scalar";
  KF_CHECK(!value.type().is_bool()) << "VectorReduce of booleans";
  Type t = value.type().scalar();
  return make_expr<VectorReduce>(t, op, std::move(value));
}

Expr Let::make(std::string name, Expr value, Expr body) {
  check_defined(value, "Let with an undefined value");
  check_defined(body, "Let with an undefined body");
  Type t = body.type();
  return make_expr<Let>(t, std::move(name), std::move(value), std::move(body));
}

// --- statement constructors -------------------------------------------------------------------

std::string to_string(ForKind k) {
  switch (k) {
    case ForKind::serial:
      return "serial";
    case ForKind::parallel:
      return "parallel";
    case ForKind::vectorized:
      return "vectorized";
    case ForKind::unrolled:
      return "unrolled";
  }
  return "?";
}

Stmt For::make(std::string name, Expr min, Expr extent, ForKind kind, Stmt body) {
  check_defined(min, "For with an undefined min");
  check_defined(extent, "For with an undefined extent");
  KF_CHECK(min.type() == Type::i64() && extent.type() == Type::i64())
      << "For " << name << " bounds must be i64";
  KF_CHECK(body.defined()) << "For " << name << " without a body";
  return make_stmt<For>(std::move(name), std::move(min), std::move(extent), kind, std::move(body));
}

Stmt Block::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (const Block* b = s.as<Block>()) {
      flat.insert(flat.end(), b->stmts.begin(), b->stmts.end());
      continue;
    }
    flat.push_back(std::move(s));
  }
  if (flat.size() == 1) return flat[0];
  return make_stmt<Block>(std::move(flat));
}

Stmt Store::make(std::string buffer, Expr index, Expr value, Expr predicate) {
  check_defined(index, "Store with an undefined index");
  check_defined(value, "Store with an undefined value");
  KF_CHECK(index.type().is_int()) << "Store index of type " << to_string(index.type());
  KF_CHECK(index.type().is_scalar() || index.type().lanes() == value.type().lanes())
      << "Store to " << buffer << ": index lanes " << index.type().lanes() << " vs value lanes "
      << value.type().lanes();
  if (predicate.defined()) {
    KF_CHECK(predicate.type() == Type::boolean(value.type().lanes()))
        << "Store predicate of type " << to_string(predicate.type());
  }
  return make_stmt<Store>(std::move(buffer), std::move(index), std::move(value),
                          std::move(predicate));
}

std::string to_string(MemoryKind m) {
  switch (m) {
    case MemoryKind::stack:
      return "stack";
    case MemoryKind::heap:
      return "heap";
  }
  return "?";
}

Stmt Allocate::make(std::string name, Type element_type, Expr extent, MemoryKind memory,
                    Stmt body) {
  check_defined(extent, "Allocate with an undefined extent");
  KF_CHECK(extent.type() == Type::i64()) << "Allocate " << name << " extent must be i64";
  KF_CHECK(is_valid_lanes(element_type.lanes())) << "Allocate " << name << " element lanes";
  KF_CHECK(body.defined()) << "Allocate " << name << " without a body";
  return make_stmt<Allocate>(std::move(name), element_type, std::move(extent), memory,
                             std::move(body));
}

Stmt IfThenElse::make(Expr condition, Stmt then_case, Stmt else_case) {
  check_defined(condition, "IfThenElse with an undefined condition");
  KF_CHECK(condition.type().is_bool()) << "IfThenElse condition of " << to_string(condition.type());
  KF_CHECK(then_case.defined()) << "IfThenElse without a then case";
  return make_stmt<IfThenElse>(std::move(condition), std::move(then_case), std::move(else_case));
}

Stmt LetStmt::make(std::string name, Expr value, Stmt body) {
  check_defined(value, "LetStmt with an undefined value");
  KF_CHECK(body.defined()) << "LetStmt " << name << " without a body";
  return make_stmt<LetStmt>(std::move(name), std::move(value), std::move(body));
}

Stmt Evaluate::make(Expr value) {
  check_defined(value, "Evaluate of an undefined Expr");
  return make_stmt<Evaluate>(std::move(value));
}

Stmt ProducerConsumer::make(std::string name, bool is_producer, Stmt body) {
  KF_CHECK(body.defined()) << "ProducerConsumer " << name << " without a body";
  return make_stmt<ProducerConsumer>(std::move(name), is_producer, std::move(body));
}

Stmt Prefetch::make(std::string buffer, Expr index) {
  check_defined(index, "Prefetch with an undefined index");
  KF_CHECK(index.type().is_int()) << "Prefetch index of " << to_string(index.type());
  return make_stmt<Prefetch>(std::move(buffer), std::move(index));
}

Stmt TransposeBlock::make(std::string dst, Expr dst_index, Expr dst_stride, std::string src,
                          Expr src_index, Expr src_stride, Type type, int lanes) {
  for (const Expr* e : {&dst_index, &dst_stride, &src_index, &src_stride}) {
    check_defined(*e, "TransposeBlock with an undefined index or stride");
    KF_CHECK(e->type() == Type::i64()) << "TransposeBlock index of " << to_string(e->type());
  }
  KF_CHECK(type.is_scalar() && lanes > 1)
      << "TransposeBlock of " << lanes << " x " << to_string(type);
  KF_CHECK(dst != src) << "TransposeBlock within one buffer " << dst;
  return make_stmt<TransposeBlock>(std::move(dst), std::move(dst_index), std::move(dst_stride),
                                   std::move(src), std::move(src_index), std::move(src_stride),
                                   type, lanes);
}

Stmt Comment::make(std::string text) {
  KF_CHECK(text.find('\n') == std::string::npos) << "Comment with a newline";
  return make_stmt<Comment>(std::move(text));
}

// --- functions --------------------------------------------------------------------------------

std::string to_string(ParamKind k) {
  switch (k) {
    case ParamKind::input:
      return "input";
    case ParamKind::output:
      return "output";
    case ParamKind::dim:
      return "dim";
    case ParamKind::scalar:
      return "scalar";
  }
  return "?";
}

std::vector<Param> params_from_task(const Task& task) {
  std::vector<Param> params;
  for (const TensorSpec& t : task.inputs)
    params.push_back({t.name, ParamKind::input, type_of(t.dtype)});
  for (const TensorSpec& t : task.outputs)
    params.push_back({t.name, ParamKind::output, type_of(t.dtype)});
  for (const std::string& d : task.dims) params.push_back({d, ParamKind::dim, Type::i64()});
  for (const ScalarSpec& s : task.scalars) {
    Type t =
        is_floating(s.dtype) ? (task.dtype == DType::f64 ? Type::f64() : Type::f32()) : Type::i64();
    params.push_back({s.name, ParamKind::scalar, t});
  }
  return params;
}

Expr param_var(const Param& p) {
  KF_CHECK(p.kind == ParamKind::dim || p.kind == ParamKind::scalar)
      << "param_var of tensor " << p.name;
  return Var::make(p.type, p.name);
}

}  // namespace kf::ir
