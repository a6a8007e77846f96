// The `approximate` primitive (fast approximations within the task's tolerance). Every exp,
// log, tanh, erf and sigmoid in the stage's definition is marked to be evaluated by kforge's
// fast f32 forms (codegen/cpp_prelude.h): the exponential's polynomial one degree lower
// (2.8e-6 relative error instead of ~1 ulp; sigmoid, tanh and erf build on it), and scalar code
// evaluates the vector polynomials too instead of calling libm. The judge checks the result
// against the task's tolerance like any other candidate; rel_l2 1e-5 leaves room for it.
//
//   approximate m       m[b, o] = z[b, o] * tanh(log(1 + exp(z[b, o])))
//                       ->  m[b, o] = z[b, o] * tanh~(log~(1 + exp~(z[b, o])))
//
// One composition is rewritten rather than approximated: tanh(softplus(x)) (Mish's
// tanh(log(1 + exp(x)))) becomes n / (n + 2) with n = e (e + 2), e = exp(min(x, 20)): the same
// function ((1 + e)^2 - 1 over (1 + e)^2 + 1), one exp and a division instead of an exp, a log
// and a tanh (itself an exp and a division). Past x = 20 both are 1 in f32; the clamp keeps n
// finite there.
//
// The marks travel with the expressions: a stage inlined into its readers keeps its fast forms
// there. Refused for f64 tasks (the forms are f32) and for a stage with no unmarked
// transcendental.
#include "schedule/primitives_internal.h"
#include "schedule/te_util.h"

namespace kf::sched::detail {
namespace {

// tanh(softplus(x)) -> n / (n + 2), n = e * (e + 2), e = exp(min(x, 20)), bottom-up.
te::Expr rewrite_tanh_softplus(const te::Expr& e, int& rewritten) {
  te::Expr r = e;
  for (te::Expr& a : r.args) a = rewrite_tanh_softplus(a, rewritten);
  if (r.kind != te::ExprKind::call || r.op != te::Op::tanh || r.type != te::ValueType::f64)
    return r;
  const te::Expr* x = softplus_arg(r.args[0]);
  if (!x) return r;
  ++rewritten;
  te::Expr ex = float_call(te::Op::exp, binary(te::Op::min, *x, float_lit(20.0)));
  te::Expr n = binary(te::Op::mul, ex, binary(te::Op::add, ex, float_lit(2.0)));
  return binary(te::Op::div, n, binary(te::Op::add, n, float_lit(2.0)));
}

int mark(te::Expr& e) {
  int n = 0;
  for (te::Expr& a : e.args) n += mark(a);
  if (e.kind == te::ExprKind::call && approximable(e.op) && !e.approx) {
    e.approx = true;
    ++n;
  }
  return n;
}

}  // namespace

Status apply_approximate(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  Stage& s = p.stages[static_cast<size_t>(*si)];
  if (p.task && p.task->dtype == DType::f64)
    return Status::error(
        "the task computes in f64: the fast forms of exp, log, tanh, erf and "
        "sigmoid are f32 only");
  int rewritten = 0;
  te::Expr body = rewrite_tanh_softplus(s.body, rewritten);
  if (mark(body) + rewritten == 0)
    return Status::error(s.name + " has no exp, log, tanh, erf or sigmoid left to approximate");
  s.body = std::move(body);
  if (s.where) mark(*s.where);
  return ok_status();
}

}  // namespace kf::sched::detail
