// The `reciprocal` primitive (strength reduction of divisions). In the stage's definition, every
// float division a / b whose divisor does not change along the stage's innermost loop becomes
// a * (1 / b): one division per row (or none, for a constant divisor, which the compiler folds)
// instead of one per element. The rounding differs from a / b by at most an ulp or so; the judge
// checks the result against the task's tolerance like any other candidate.
//
//   reciprocal y       y[b, o] = e[b, o] / s[b]   ->   y[b, o] = e[b, o] * (1 / s[b])
//   reciprocal g       g = 0.5 * z * (1 + erf(z / sqrt(2)))   ->   ... erf(z * (1 / sqrt(2)))
//
// An inlined stage has no loops of its own: there only divisors that read no variable at all
// (constants, scalars, sizes) count as invariant. Refused when the stage has no such division
// (none at all, only divisors that vary along the innermost loop, or divisions already
// rewritten).
#include <set>

#include "schedule/primitives_internal.h"
#include "schedule/te_util.h"

namespace kf::sched::detail {
namespace {

struct Rewriter {
  const Stage& stage;
  std::set<std::string> inner_roots;  // the variables the innermost loop walks
  int rewritten = 0, varying = 0;

  bool varies(const te::Expr& e) const {
    bool v = false;
    te::visit(e, [&](const te::Expr& x) {
      if (x.kind == te::ExprKind::reduce) v = true;  // a nested reduction: left alone
      if (x.kind != te::ExprKind::name || x.ref.index < 0) return;
      const auto i = static_cast<size_t>(x.ref.index);
      if (x.ref.kind == te::RefKind::index_var && inner_roots.count(stage.vars[i].name)) v = true;
      if (x.ref.kind == te::RefKind::reduce_var && inner_roots.count(stage.reduce_vars[i].name))
        v = true;
    });
    return v;
  }

  static bool is_one(const te::Expr& e) {
    return e.kind == te::ExprKind::number && e.number == 1.0;
  }

  te::Expr rewrite(const te::Expr& e) {
    te::Expr r = e;
    for (te::Expr& a : r.args) a = rewrite(a);
    if (r.kind != te::ExprKind::call || r.op != te::Op::div || r.type != te::ValueType::f64)
      return r;
    if (is_one(r.args[0])) return r;  // already a reciprocal
    if (varies(r.args[1])) {
      ++varying;
      return r;
    }
    ++rewritten;
    return binary(te::Op::mul, r.args[0], binary(te::Op::div, float_lit(1.0), r.args[1]));
  }
};

}  // namespace

Status apply_reciprocal(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  Stage& s = p.stages[static_cast<size_t>(*si)];
  Rewriter rw{s, {}};
  const bool inlined = s.loops.empty() || s.compute.kind == ComputeKind::inlined;
  if (inlined) {
    for (const te::IndexVar& v : s.vars) rw.inner_roots.insert(v.name);
    for (const te::IndexVar& v : s.reduce_vars) rw.inner_roots.insert(v.name);
  } else {
    rw.inner_roots = loop_roots(s, s.loops.back().name);
  }
  te::Expr body = rw.rewrite(s.body);
  if (rw.rewritten == 0) {
    const std::string inner = inlined ? "loop (it is inlined: only constant divisors count)"
                                      : "loop " + s.name + "." + s.loops.back().name;
    if (rw.varying > 0)
      return Status::error("every division in " + s.name + " divides by a value that changes " +
                           "along its innermost " + inner +
                           ": a reciprocal would cost as much as the division");
    return Status::error(s.name + " has no float division by a value that could be inverted " +
                         "once (divisions already rewritten are left alone)");
  }
  s.body = std::move(body);
  return ok_status();
}

}  // namespace kf::sched::detail
