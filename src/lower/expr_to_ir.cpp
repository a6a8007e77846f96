#include "lower/expr_to_ir.h"

#include <cmath>
#include <limits>

#include "ir/simplify.h"
#include "ir/substitute.h"
#include "lower/interval.h"
#include "schedule/te_util.h"
#include "support/check.h"

namespace kf::lowering {

using ir::Expr;
using ir::Type;
using te::Op;
using te::RefKind;

Type compute_type(const Task& task) {
  return task.dtype == DType::f64 ? Type::f64() : Type::f32();
}

Type value_type(const Task& task, te::ValueType t) {
  switch (t) {
    case te::ValueType::f64:
      return compute_type(task);
    case te::ValueType::i64:
      return Type::i64();
    case te::ValueType::boolean:
      return Type::boolean();
    case te::ValueType::unknown:
      break;
  }
  KF_CHECK(false) << "expression of unknown type";
  return Type::i64();
}

Expr reduce_identity(te::ReduceOp op, Type t) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case te::ReduceOp::sum:
      return ir::make_zero(t);
    case te::ReduceOp::prod:
      return ir::make_one(t);
    case te::ReduceOp::max:
    case te::ReduceOp::argmax:
      return t.is_float() ? ir::make_const(t, -inf)
                          : ir::IntImm::make(t, std::numeric_limits<int64_t>::min());
    case te::ReduceOp::min:
    case te::ReduceOp::argmin:
      return t.is_float() ? ir::make_const(t, inf)
                          : ir::IntImm::make(t, std::numeric_limits<int64_t>::max());
    case te::ReduceOp::logsumexp:
      return ir::make_const(t, -inf);  // the running maximum's (the sum starts at 0)
  }
  return ir::make_zero(t);
}

Expr reduce_combine(te::ReduceOp op, const Expr& acc, const Expr& value) {
  switch (op) {
    case te::ReduceOp::sum:
      return acc + value;
    case te::ReduceOp::prod:
      return acc * value;
    case te::ReduceOp::max:
      return ir::max(acc, value);
    case te::ReduceOp::min:
      return ir::min(acc, value);
    case te::ReduceOp::argmax:
    case te::ReduceOp::argmin:
    case te::ReduceOp::logsumexp:
      break;
  }
  KF_CHECK(false) << "reduce_combine of an arg reduction or logsumexp (two-value states)";
  return acc;
}

ir::Stmt with_preludes(const std::vector<Prelude>& pre, ir::Stmt use) {
  for (size_t i = pre.size(); i-- > 0;) {
    use = ir::Block::make({pre[i].compute, use});
    for (const auto& b : pre[i].buffers)
      use = ir::Allocate::make(b.name, b.type, ir::i64(b.extent), ir::MemoryKind::stack, use);
  }
  return use;
}

ExprLowerer::ExprLowerer(const sched::Pipeline& p, int stage, Bindings b, NameGen& names)
    : p_(p),
      task_(*p.task),
      stage_(stage),
      b_(std::move(b)),
      names_(names),
      ctype_(compute_type(*p.task)) {}

std::vector<Prelude> ExprLowerer::take_preludes() {
  std::vector<Prelude> out;
  out.swap(preludes_);
  return out;
}

Expr ExprLowerer::convert(const Expr& v, Type t) {
  if (v.type() == t) return v;
  if (v.type().is_bool()) return ir::select(v, ir::make_one(t), ir::make_zero(t));
  return ir::cast(t, v);
}

Expr ExprLowerer::lower_static(const te::Expr& e) {
  return ir::simplify(lower(e));
}

Expr ExprLowerer::input_extent(int input, int d) {
  return lower_static(sched::formula_to_te(task_.inputs[input].shape[d], task_));
}

Expr ExprLowerer::stage_extent(int stage, int d) {
  return lower_static(p_.stages[stage].vars[d].hi);
}

Expr ExprLowerer::lower(const te::Expr& e) {
  switch (e.kind) {
    case te::ExprKind::number:
      if (e.type == te::ValueType::i64) return ir::i64(static_cast<int64_t>(e.number));
      return ir::make_const(ctype_, e.number);
    case te::ExprKind::name:
      switch (e.ref.kind) {
        case RefKind::index_var:
          return b_.index_var(e.ref.index);
        case RefKind::reduce_var: {
          auto it = inline_rvars_.find(e.ref.index);
          return it != inline_rvars_.end() ? it->second : b_.reduce_var(e.ref.index);
        }
        case RefKind::dim:
          return ir::Var::make(Type::i64(), task_.dims[e.ref.index]);
        case RefKind::derived:
          return lower(sched::formula_to_te(task_.derived[e.ref.index].second, task_));
        case RefKind::scalar: {
          const ScalarSpec& s = task_.scalars[e.ref.index];
          return ir::Var::make(is_floating(s.dtype) ? ctype_ : Type::i64(), s.name);
        }
        case RefKind::none:
        case RefKind::input:
        case RefKind::stage:
          break;
      }
      KF_CHECK(false) << "unresolved name " << e.name;
      return Expr();
    case te::ExprKind::access:
      return access(e);
    case te::ExprKind::call:
      return call(e);
    case te::ExprKind::reduce:
      return inline_reduce(e);
  }
  return Expr();
}

Expr ExprLowerer::load(Type t, const std::string& buffer, const Expr& index, Expr pred) {
  for (const Expr& g : guards_) pred = pred.defined() ? ir::logical_and(pred, g) : g;
  return ir::Load::make(t, buffer, ir::simplify(index), pred);
}

Expr ExprLowerer::access(const te::Expr& e) {
  const size_t n = e.index_count();
  std::vector<Expr> idx(n), extents(n), mins(n), strides(n);
  std::vector<te::Expr> te_extents(n);
  std::string buffer;
  Type storage;
  if (e.ref.kind == RefKind::input) {
    for (size_t d = 0; d < n; ++d)
      te_extents[d] = sched::formula_to_te(task_.inputs[e.ref.index].shape[d], task_);
    const TensorSpec& t = task_.inputs[e.ref.index];
    buffer = t.name;
    storage = ir::type_of(t.dtype);
    for (size_t d = 0; d < n; ++d) extents[d] = input_extent(e.ref.index, static_cast<int>(d));
    Expr stride = ir::i64(1);
    for (size_t d = n; d-- > 0;) {
      strides[d] = stride;
      mins[d] = ir::i64(0);
      stride = ir::simplify(stride * extents[d]);
    }
  } else {
    KF_CHECK(e.ref.kind == RefKind::stage) << "access to " << e.name;
    for (size_t d = 0; d < n; ++d) te_extents[d] = p_.stages[e.ref.index].vars[d].hi;
    const BufferView& v = b_.stage_view(e.ref.index);
    buffer = v.name;
    storage = v.storage;
    mins = v.mins;
    strides = v.strides;
    for (size_t d = 0; d < n; ++d) extents[d] = stage_extent(e.ref.index, static_cast<int>(d));
  }
  Expr flat, cond;
  for (size_t d = 0; d < n; ++d) {
    idx[d] = convert(lower(e.args[d]), Type::i64());
    Expr off = ir::is_const(mins[d], 0) ? idx[d] : idx[d] - mins[d];
    Expr term = ir::is_const(strides[d], 1) ? off : off * strides[d];
    flat = flat.defined() ? flat + term : term;
    if (e.has_else && !sched::index_within(e.args[d], p_.stages[stage_].vars, te_extents[d])) {
      Expr c = ir::lt(idx[d], extents[d]);
      auto lo = const_lower_bound(idx[d]);
      if (!lo || *lo < 0) c = ir::logical_and(ir::ge(idx[d], ir::i64(0)), c);
      cond = cond.defined() ? ir::logical_and(cond, c) : c;
    }
  }
  if (!flat.defined()) flat = ir::i64(0);
  if (e.ref.kind == RefKind::stage) {
    const BufferView& v = b_.stage_view(e.ref.index);
    if (v.offset.defined()) flat = flat + v.offset;
  }
  const Type vt = value_type(task_, e.type);
  Expr v = convert(load(storage, buffer, flat, cond), vt);
  if (!cond.defined()) return v;
  return ir::select(cond, v, convert(lower(e.args.back()), vt));
}

Expr ExprLowerer::call(const te::Expr& e) {
  const Type rt = value_type(task_, e.type);
  auto arg = [&](size_t i, Type t) { return convert(lower(e.args[i]), t); };
  auto operand_type = [&]() {
    for (const te::Expr& a : e.args)
      if (a.type == te::ValueType::f64) return ctype_;
    return Type::i64();
  };
  auto fn = [&](ir::MathFn f) { return ir::Call::make(f, {arg(0, ctype_)}, e.approx); };
  switch (e.op) {
    case Op::neg:
      return ir::make_zero(rt) - arg(0, rt);
    case Op::logical_not:
      return ir::logical_not(lower(e.args[0]));
    case Op::add:
      return arg(0, rt) + arg(1, rt);
    case Op::sub:
      return arg(0, rt) - arg(1, rt);
    case Op::mul:
      return arg(0, rt) * arg(1, rt);
    case Op::div:
      return arg(0, rt) / arg(1, rt);
    case Op::mod: {
      Expr a = arg(0, rt), b = arg(1, rt);
      if (rt.is_int()) return a % b;
      Expr q = a / b;  // fmod: a - trunc(a / b) * b
      Expr t = ir::select(ir::lt(q, ir::make_zero(rt)), ir::Call::make(ir::MathFn::ceil, {q}),
                          ir::Call::make(ir::MathFn::floor, {q}));
      return a - t * b;
    }
    case Op::lt:
      return ir::lt(arg(0, operand_type()), arg(1, operand_type()));
    case Op::le:
      return ir::le(arg(0, operand_type()), arg(1, operand_type()));
    case Op::gt:
      return ir::gt(arg(0, operand_type()), arg(1, operand_type()));
    case Op::ge:
      return ir::ge(arg(0, operand_type()), arg(1, operand_type()));
    case Op::eq:
      return ir::eq(arg(0, operand_type()), arg(1, operand_type()));
    case Op::ne:
      return ir::ne(arg(0, operand_type()), arg(1, operand_type()));
    case Op::logical_and:
      return ir::logical_and(lower(e.args[0]), lower(e.args[1]));
    case Op::logical_or:
      return ir::logical_or(lower(e.args[0]), lower(e.args[1]));
    case Op::exp:
      return fn(ir::MathFn::exp);
    case Op::log:
      return fn(ir::MathFn::log);
    case Op::sqrt:
      return fn(ir::MathFn::sqrt);
    case Op::rsqrt:
      return fn(ir::MathFn::rsqrt);
    case Op::tanh:
      return fn(ir::MathFn::tanh);
    case Op::erf:
      return fn(ir::MathFn::erf);
    case Op::sigmoid:
      return fn(ir::MathFn::sigmoid);
    case Op::abs:
      return ir::Call::make(ir::MathFn::abs, {arg(0, rt)});
    case Op::floor:
      return rt.is_int() ? arg(0, rt) : ir::Call::make(ir::MathFn::floor, {arg(0, rt)});
    case Op::ceil:
      return rt.is_int() ? arg(0, rt) : ir::Call::make(ir::MathFn::ceil, {arg(0, rt)});
    case Op::min:
      return ir::min(arg(0, rt), arg(1, rt));
    case Op::max:
      return ir::max(arg(0, rt), arg(1, rt));
    case Op::pow:
      return ir::Call::make(ir::MathFn::pow, {arg(0, ctype_), arg(1, ctype_)});
    case Op::ceildiv: {
      Expr a = arg(0, Type::i64()), b = arg(1, Type::i64());
      auto la = const_lower_bound(a), lb = const_lower_bound(b);
      if (la && lb && *la >= 0 && *lb > 0) return (a + b - 1) / b;
      Expr zero = ir::i64(0);
      Expr same_sign = ir::logical_or(ir::logical_and(ir::lt(a, zero), ir::lt(b, zero)),
                                      ir::logical_and(ir::ge(a, zero), ir::ge(b, zero)));
      Expr up = ir::logical_and(ir::ne(a % b, zero), same_sign);
      return a / b + ir::select(up, ir::i64(1), zero);
    }
    case Op::select: {
      Expr c = lower(e.args[0]);
      guards_.push_back(c);
      Expr t = arg(1, rt);
      guards_.back() = ir::logical_not(c);
      Expr f = arg(2, rt);
      guards_.pop_back();
      return ir::select(c, t, f);
    }
    case Op::cast: {
      Expr v = lower(e.args[0]);
      const Type target = ir::type_of(e.cast_to);
      if (is_floating(e.cast_to)) {
        v = convert(v, ctype_);
        return target == ctype_ ? v : ir::cast(ctype_, ir::cast(target, v));
      }
      if (v.type().is_bool()) return convert(v, Type::i64());
      return convert(ir::cast(target, v), Type::i64());
    }
  }
  KF_CHECK(false) << "unknown op";
  return Expr();
}

// An inline reduction's running state at index i of its buffer(s). logsumexp keeps two: `a` the
// largest value so far and `b` the sum of exp(value - a), rescaled whenever a grows (online
// softmax's normalizer: one pass, one exp per value, no overflow); its value is a + log(b).
// Every other (non-arg) reduction keeps its accumulator in `a`.
struct ReduceState {
  te::ReduceOp op;
  Type t;
  std::string a, b;

  bool pair() const { return op == te::ReduceOp::logsumexp; }
  Expr load_a(const Expr& i) const { return ir::Load::make(t, a, i); }
  Expr load_b(const Expr& i) const { return ir::Load::make(t, b, i); }

  ir::Stmt init(const Expr& i) const {
    ir::Stmt first = ir::Store::make(a, i, reduce_identity(op, t));
    if (!pair()) return first;
    return ir::Block::make({first, ir::Store::make(b, i, ir::make_zero(t))});
  }
  // Takes value v (evaluated once).
  ir::Stmt update(const Expr& i, const Expr& v, NameGen& names) const {
    if (!pair()) return ir::Store::make(a, i, reduce_combine(op, load_a(i), v));
    // m' = max(m, x); s' = s * exp(m - x) + 1 where x > m, else s + exp(x - m): one of the two
    // exponents is 0, so one exp of min - max serves both. Where both are -inf nothing is added
    // (exp(-inf - -inf) would be NaN).
    const std::string xn = names.fresh(a + ".x"), mn = names.fresh(a + ".m");
    const std::string tn = names.fresh(a + ".top"), en = names.fresh(a + ".e");
    const Expr x = ir::Var::make(t, xn), m = ir::Var::make(t, mn);
    const Expr top = ir::Var::make(t, tn), e = ir::Var::make(t, en);
    const Expr scale = ir::select(ir::eq(top, ir::make_const(t, -kInf)), ir::make_zero(t),
                                  ir::Call::make(ir::MathFn::exp, {ir::min(m, x) - top}));
    const Expr s = load_b(i);
    ir::Stmt body = ir::Block::make(
        {ir::Store::make(b, i, ir::select(ir::gt(x, m), s * e + ir::make_one(t), s + e)),
         ir::Store::make(a, i, top)});
    body = ir::LetStmt::make(tn, ir::max(m, x), ir::LetStmt::make(en, scale, body));
    return ir::LetStmt::make(xn, v, ir::LetStmt::make(mn, load_a(i), body));
  }
  // Combines the state of `from` at j into this one at i.
  ir::Stmt merge(const Expr& i, const ReduceState& from, const Expr& j, NameGen& names) const {
    if (!pair()) return update(i, from.load_a(j), names);
    const std::string n1 = names.fresh(a + ".m"), n2 = names.fresh(a + ".m");
    const std::string tn = names.fresh(a + ".top");
    const Expr m1 = ir::Var::make(t, n1), m2 = ir::Var::make(t, n2), top = ir::Var::make(t, tn);
    auto scale = [&](const Expr& m) { return ir::Call::make(ir::MathFn::exp, {m - top}); };
    const Expr sum = load_b(i) * scale(m1) + from.load_b(j) * scale(m2);
    ir::Stmt body = ir::Block::make(
        {ir::Store::make(b, i,
                         ir::select(ir::eq(top, ir::make_const(t, -kInf)), ir::make_zero(t), sum)),
         ir::Store::make(a, i, top)});
    body = ir::LetStmt::make(tn, ir::max(m1, m2), body);
    return ir::LetStmt::make(n1, load_a(i), ir::LetStmt::make(n2, from.load_a(j), body));
  }
  // -inf for an empty range (a = -inf, b = 0).
  Expr result(const Expr& i) const {
    if (!pair()) return load_a(i);
    return load_a(i) + ir::Call::make(ir::MathFn::log, {load_b(i)});
  }
  void declare(Prelude& pre, int64_t extent) const {
    pre.buffers.push_back({a, t, extent});
    if (pair()) pre.buffers.push_back({b, t, extent});
  }

  static constexpr double kInf = std::numeric_limits<double>::infinity();
};

Expr ExprLowerer::inline_reduce(const te::Expr& e) {
  const sched::Stage& s = p_.stages[stage_];
  const bool arg_op = e.reduce_op == te::ReduceOp::argmax || e.reduce_op == te::ReduceOp::argmin;
  const Type vt = value_type(task_, e.args[0].type);
  const bool lse = e.reduce_op == te::ReduceOp::logsumexp;
  const Type rt = arg_op ? Type::i64() : lse ? ctype_ : vt;
  const std::string acc = names_.fresh(s.name + ".acc");
  const std::string best = acc + ".val";
  const ReduceState state{e.reduce_op, rt, acc, acc + ".s"};

  std::vector<Prelude> outer;
  outer.swap(preludes_);
  std::vector<std::string> loop_names;
  for (int r : e.rvars) {
    loop_names.push_back(acc + "." + s.reduce_vars[r].name);
    inline_rvars_[r] = ir::Var::make(Type::i64(), loop_names.back());
  }
  Expr v = convert(lower(e.args[0]), lse ? rt : vt);
  std::vector<Prelude> inner = take_preludes();
  preludes_.swap(outer);

  ir::Stmt update;
  if (!arg_op) {
    update = state.update(ir::i64(0), v, names_);
  } else {
    Expr old = ir::Load::make(vt, best, ir::i64(0));
    Expr better =
        ir::logical_or(ir::lt(ir::Load::make(rt, acc, ir::i64(0)), ir::i64(0)),
                       e.reduce_op == te::ReduceOp::argmax ? ir::gt(v, old) : ir::lt(v, old));
    update = ir::IfThenElse::make(
        better, ir::Block::make({ir::Store::make(best, ir::i64(0), v),
                                 ir::Store::make(acc, ir::i64(0), inline_rvars_[e.rvars[0]])}));
  }
  ir::Stmt body = with_preludes(inner, update);
  for (size_t k = e.rvars.size(); k-- > 0;) {
    const te::IndexVar& rv = s.reduce_vars[e.rvars[k]];
    Expr lo = convert(lower(rv.lo), Type::i64()), hi = convert(lower(rv.hi), Type::i64());
    body = ir::For::make(loop_names[k], ir::simplify(lo),
                         ir::simplify(ir::max(hi - lo, ir::i64(0))), ir::ForKind::serial, body);
  }
  Prelude pre;
  const int lanes = s.reduce_lanes < 0 ? b_.natural_lanes : s.reduce_lanes;
  if (lanes > 1 && sched::vectorizable_reduce(e)) {
    // vectorize_reductions: the partial results of `lanes` consecutive values at a time.
    state.declare(pre, 1);
    std::vector<ir::Stmt> code = {state.init(ir::i64(0))};
    code.push_back(vector_reduce_loop(e, loop_names[0], inner, v, state, lanes, pre));
    pre.compute = ir::Block::make(code);
    preludes_.push_back(pre);
    for (int r : e.rvars) inline_rvars_.erase(r);
    return state.result(ir::i64(0));
  }
  std::vector<ir::Stmt> init;
  if (arg_op) {
    pre.buffers.push_back({acc, rt});
    pre.buffers.push_back({best, vt});
    init.push_back(ir::Store::make(best, ir::i64(0), reduce_identity(e.reduce_op, vt)));
    init.push_back(ir::Store::make(acc, ir::i64(0), ir::i64(-1)));
  } else {
    state.declare(pre, 1);
    init.push_back(state.init(ir::i64(0)));
  }
  init.push_back(body);
  pre.compute = ir::Block::make(init);
  preludes_.push_back(pre);
  for (int r : e.rvars) inline_rvars_.erase(r);
  return arg_op ? ir::Load::make(rt, acc, ir::i64(0)) : state.result(ir::i64(0));
}

// n = max(hi - lo, 0) values in full vectors of `lanes` (loop jo), then one masked vector for
// the remaining n % lanes; lane l of vector jo takes the value at lo + jo * lanes + l. The lanes
// start at the identity, so a masked lane changes nothing; the fold combines them in lane order.
ir::Stmt ExprLowerer::vector_reduce_loop(const te::Expr& e, const std::string& var,
                                         const std::vector<Prelude>& inner, const ir::Expr& value,
                                         const ReduceState& state, int lanes, Prelude& pre) {
  const sched::Stage& s = p_.stages[stage_];
  const te::IndexVar& rv = s.reduce_vars[e.rvars[0]];
  const std::string acc = state.a;
  const ReduceState part{state.op, state.t, acc + ".lanes", state.b + ".lanes"};
  part.declare(pre, lanes);
  const std::string lane = acc + ".l", jo = acc + ".jo", count = acc + ".n";
  const Expr lo = ir::simplify(convert(lower(rv.lo), Type::i64()));
  const Expr hi = ir::simplify(convert(lower(rv.hi), Type::i64()));
  const Expr n = ir::Var::make(Type::i64(), count), l = ir::Var::make(Type::i64(), lane);
  const Expr w = ir::i64(lanes), full = n / w * w;
  auto lanes_loop = [&](ir::Stmt body) {
    return ir::For::make(lane, ir::i64(0), w, ir::ForKind::vectorized, std::move(body));
  };
  auto step = [&](const Expr& first, const Expr& active) {
    ir::Stmt update = with_preludes(inner, part.update(l, value, names_));
    // The variable itself, not a Let of it: the vectorizer then sees first + lane, a dense
    // vector of consecutive indices, and loads it whole instead of gathering lane by lane.
    ir::Stmt body = ir::substitute(var, first + l, update);
    return lanes_loop(active.defined() ? ir::IfThenElse::make(active, body) : body);
  };
  const std::string fold = acc + ".f";
  std::vector<ir::Stmt> code = {
      lanes_loop(part.init(l)),
      ir::For::make(jo, ir::i64(0), n / w, ir::ForKind::serial,
                    step(lo + ir::Var::make(Type::i64(), jo) * w, Expr())),
      ir::IfThenElse::make(ir::lt(full, n), step(lo + full, ir::lt(l, n - full))),
      ir::For::make(fold, ir::i64(0), w, ir::ForKind::serial,
                    state.merge(ir::i64(0), part, ir::Var::make(Type::i64(), fold), names_))};
  return ir::LetStmt::make(count, ir::simplify(ir::max(hi - lo, ir::i64(0))),
                           ir::Block::make(code));
}

}  // namespace kf::lowering
