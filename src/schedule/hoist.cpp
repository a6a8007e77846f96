// The `hoist S NEW V...` primitive (loop-invariant code motion across a whole loop nest). In
// stage S's definition, the costliest subexpression that reads none of S's variables V... becomes
// a stage NEW of its own, over the variables it does read; S reads NEW instead. It was evaluated
// extent(V1) * extent(V2) ... times for each value it has; NEW computes each value once.
//
//   y[b, t, h, p] = sum(s in 0..t + 1: G[b, t, s] * exp(c[b, h, t] - c[b, h, s]) * x[b, s, h, p])
//   hoist y W p  ->  W[b, t, h, s in 0..T] = G[b, t, s] * exp(c[b, h, t] - c[b, h, s])
//                    y[b, t, h, p] = sum(s in 0..t + 1: W[b, t, h, s] * x[b, s, h, p])
//
// A free reduction var (s above) is lifted over the static range that covers its values
// (pipeline.h, lift_subexpression). Products are regrouped so the V-free factors form one
// subexpression (`x * G * e` hoists `G * e` along x's var): a reassociation that changes the
// rounding by an ulp or so, which the judge checks against the task's tolerance like any other
// change. Only subexpressions worth a stage count: one with a reduction, a transcendental, a
// division or a square root. Select branches and `else` values are not searched (they are evaluated
// lazily; computing them everywhere could read out of bounds).
#include <vector>

#include "schedule/primitives_internal.h"
#include "schedule/te_util.h"

namespace kf::sched::detail {
namespace {

using te::Expr;
using te::ExprKind;
using te::Op;

constexpr int kWorthAStage = 8;

bool is_fmul(const Expr& e) {
  return e.kind == ExprKind::call && e.op == Op::mul && e.type == te::ValueType::f64;
}

Expr product(std::vector<Expr> factors) {
  Expr r = factors[0];
  for (size_t i = 1; i < factors.size(); ++i) r = binary(Op::mul, r, factors[i]);
  return r;
}

struct Finder {
  const Stage& stage;
  std::vector<int> vars;  // indices of V... in stage.vars
  Expr* best = nullptr;
  int best_cost = 0;

  bool free_of_v(const Expr& e) const {
    for (int v : vars)
      if (uses_var(e, te::RefKind::index_var, v)) return false;
    return true;
  }

  void consider(Expr& e) {
    const int c = expr_cost(e);
    if (c >= kWorthAStage && c > best_cost && can_lift(stage, e)) {
      best = &e;
      best_cost = c;
    }
  }

  // Regroups a product whose V-free factors are not already one subtree: (free...) * (rest...).
  void regroup(Expr& e) {
    std::vector<Expr> factors;
    flatten_product(e, factors);
    std::vector<Expr> free, rest;
    for (Expr& f : factors) (free_of_v(f) ? free : rest).push_back(std::move(f));
    if (free.size() < 2 || rest.empty()) return;
    e = binary(Op::mul, product(std::move(free)), product(std::move(rest)));
  }

  void walk(Expr& e, bool top) {
    if (!top && free_of_v(e)) {
      consider(e);
      return;  // the largest V-free subtree; nothing inside it is better
    }
    if (is_fmul(e)) regroup(e);
    if (e.kind == ExprKind::access) return;  // an index is not worth a stage of its own
    for (size_t i = 0; i < eager_operands(e); ++i) walk(e.args[i], false);
  }
};

}  // namespace

Status apply_hoist(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], true);
  if (!si) return si.error();
  if (Status st = check_new_stage_name(p, prim.args[1]); !st.ok()) return st;
  const Stage& s = p.stages[static_cast<size_t>(*si)];
  std::vector<int> vars;
  for (size_t a = 2; a < prim.args.size(); ++a) {
    int var = -1;
    for (size_t d = 0; d < s.vars.size(); ++d)
      if (s.vars[d].name == prim.args[a]) var = static_cast<int>(d);
    if (var < 0) {
      std::vector<std::string> names;
      for (const te::IndexVar& v : s.vars) names.push_back(v.name);
      return Status::error(s.name + " has no variable " + prim.args[a] +
                           " (its variables: " + join(names) + ")");
    }
    vars.push_back(var);
  }
  if (s.is_recurrence())
    return Status::error(s.name + " is a recurrence: its terms are not hoisted");
  Stage trial = s;  // regrouping edits the body; the original stays if nothing is hoisted
  Finder f{trial, vars};
  f.walk(trial.body, true);
  if (!f.best)
    return Status::error(s.name + " has no subexpression free of " +
                         join({prim.args.begin() + 2, prim.args.end()}) +
                         " worth a stage (a reduction, a transcendental, a division or a square "
                         "root whose variables all have static ranges)");
  // The finder's pointer is into a child list of trial.body (never the top node itself); moving
  // the body into the pipeline moves those lists' storage, so the pointer stays valid.
  const std::string note = "hoisted out of " + s.name + "'s " +
                           join({prim.args.begin() + 2, prim.args.end()}) + " loops";
  Expr* target = f.best;
  p.stages[static_cast<size_t>(*si)].body = std::move(trial.body);
  lift_subexpression(p, *si, *target, prim.args[1], note);
  return ok_status();
}

}  // namespace kf::sched::detail
