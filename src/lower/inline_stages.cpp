#include "lower/inline_stages.h"

#include "schedule/te_util.h"

namespace kf::lowering {

namespace {

using sched::ComputeKind;
using sched::Stage;
using te::Expr;
using te::RefKind;

// The body of `src` evaluated at the indices of `access`, in the context of stage `dst` (whose
// reduce_vars receive src's inline reduction variables).
Expr instantiate(const Stage& src, const Expr& access, Stage& dst) {
  const int base = static_cast<int>(dst.reduce_vars.size());
  // src's reduction variables move to the reader's numbering first; then src's index
  // variables become the access's indices (which are in the reader's numbering already).
  auto shift = [&](Expr x) {
    sched::remap_rvars(x, [&](int r) { return base + r; });
    return sched::map_names(x, [&](const Expr& n) -> std::optional<Expr> {
      if (n.ref.kind == RefKind::index_var) return access.args[n.ref.index];
      return std::nullopt;
    });
  };
  for (const te::IndexVar& v : src.reduce_vars) {
    te::IndexVar nv = v;
    nv.lo = shift(v.lo);
    nv.hi = shift(v.hi);
    dst.reduce_vars.push_back(nv);
  }
  Expr value = shift(src.body);
  if (!access.has_else) return value;
  Expr cond;
  for (size_t d = 0; d < access.index_count(); ++d) {
    Expr in = sched::logical_and(sched::binary(te::Op::ge, access.args[d], sched::int_lit(0)),
                                 sched::binary(te::Op::lt, access.args[d], src.vars[d].hi));
    cond = d == 0 ? in : sched::logical_and(cond, in);
  }
  Expr sel;
  sel.kind = te::ExprKind::call;
  sel.op = te::Op::select;
  sel.name = "select";
  const Expr& other = access.args.back();
  sel.type = value.type == te::ValueType::i64 && other.type == te::ValueType::i64
                 ? te::ValueType::i64
                 : te::ValueType::f64;
  sel.args = {cond, value, other};
  return sel;
}

void inline_into(const Stage& src, int src_index, Stage& dst) {
  auto f = [&](const Expr& a) -> std::optional<Expr> {
    if (a.ref.kind != RefKind::stage || a.ref.index != src_index) return std::nullopt;
    return instantiate(src, a, dst);
  };
  dst.body = sched::map_accesses(dst.body, f);
  if (dst.where) dst.where = sched::map_accesses(*dst.where, f);
  for (size_t r = 0; r < dst.reduce_vars.size(); ++r) {
    te::IndexVar& v = dst.reduce_vars[r];
    v.lo = sched::map_accesses(v.lo, f);
    v.hi = sched::map_accesses(v.hi, f);
  }
}

}  // namespace

sched::Pipeline inline_stages(const sched::Pipeline& p) {
  sched::Pipeline out = p;
  for (size_t i = 0; i < out.stages.size(); ++i) {
    if (out.stages[i].compute.kind != ComputeKind::inlined) continue;
    const Stage src = out.stages[i];
    for (size_t j = i + 1; j < out.stages.size(); ++j)
      inline_into(src, static_cast<int>(i), out.stages[j]);
  }
  return out;
}

}  // namespace kf::lowering
