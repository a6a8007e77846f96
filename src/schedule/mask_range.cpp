// The `mask_range S [NEW]` primitive. A reduction whose range moves with the stage's variables
// (a causal row's `sum(j in 0..i + 1: ...)`) runs inline, as an inner loop of each point: its
// loop cannot be reordered with the variable it depends on, so no tile spans several rows. The
// primitive runs it over the static range that covers all its values instead, with the moving
// bounds as the stage's predicate (`where`: the update is skipped where it is false, so the
// result is exactly the original's):
//
//   o[b, h, i, d] = sum(j in 0..i + 1: pe[b, h, i, j] * v[b, h, j, d]) / den[b, h, i]
//   mask_range o o_m  ->  o_m[b, h, i, d] = sum(j in 0..S: pe[b, h, i, j] * v[b, h, j, d])
//                                           where j < i + 1
//                         o[b, h, i, d] = o_m[b, h, i, d] / den[b, h, i]
//
// A reduction nested in S's definition becomes the stage NEW (default: S_m), over the variables
// it reads, computed where the reduction ran (S's innermost loop outside its vector loop); when S's
// whole definition is the reduction (`m[i] = max(j in 0..i + 1: s[i, j])`), S itself becomes a
// reduction stage with the predicate, and no NEW is made. Either way j is then a loop of a stage,
// so `reorder` can put it outside a block of rows, and lowering bounds it by the predicate
// (guards_to_bounds) and bounds the regions it reads by it (required_region), so only the masked
// corner of each block of rows is extra work.
#include "schedule/primitives_internal.h"
#include "schedule/te_util.h"
#include "support/check.h"

namespace kf::sched::detail {
namespace {

using te::Expr;
using te::ExprKind;
using te::Op;
using te::ReduceOp;

bool maskable_op(ReduceOp op) {
  return op == ReduceOp::sum || op == ReduceOp::prod || op == ReduceOp::max || op == ReduceOp::min;
}

bool moves(const Stage& s, const Expr& r) {
  for (int rv : r.rvars)
    if (!s.reduce_vars[static_cast<size_t>(rv)].is_static) return true;
  return false;
}

// The static extent of a dimension that reduction variable `rv` indexes directly (as the whole
// index, with no `else`) somewhere in `e`: the range of every value the original reads it at.
std::optional<Expr> indexed_extent(const Pipeline& p, const Expr& e, int rv) {
  if (e.kind == ExprKind::access && !e.has_else &&
      (e.ref.kind == te::RefKind::input || e.ref.kind == te::RefKind::stage)) {
    const auto t = static_cast<size_t>(e.ref.index);
    for (size_t d = 0; d < e.index_count(); ++d) {
      const Expr& i = e.args[d];
      if (i.kind != ExprKind::name || i.ref.kind != te::RefKind::reduce_var || i.ref.index != rv)
        continue;
      if (e.ref.kind == te::RefKind::input)
        return formula_to_te(p.task->inputs[t].shape[d], *p.task);
      if (p.stages[t].vars[d].is_static) return p.stages[t].vars[d].hi;
    }
  }
  for (const Expr& a : e.args)
    if (auto x = indexed_extent(p, a, rv)) return x;
  return std::nullopt;
}

// The static range the masked reduction runs over: the cover of a range nondecreasing in the
// stage's variables (`0..i + 1` -> 0..S); else, for a bound read from a tensor (`0..pos[r] +
// 1`), the extent of a dimension the variable indexes directly (a read outside it would be out
// of bounds in the original too), from 0.
std::optional<std::pair<Expr, Expr>> mask_cover(const Pipeline& p, const Stage& s, const Expr& r,
                                                int rv) {
  const te::IndexVar& v = s.reduce_vars[static_cast<size_t>(rv)];
  if (auto c = covering_range(v, s)) return c;
  if (auto e = indexed_extent(p, r.args[0], rv)) return std::make_pair(int_lit(0), *e);
  return std::nullopt;
}

// The first reduce node (outermost, in evaluation order, outside select branches and `else`
// values) with a moving range every variable of which has a static cover.
Expr* find_masked(const Pipeline& p, Expr& e, const Stage& s) {
  if (e.kind == ExprKind::reduce && moves(s, e) && maskable_op(e.reduce_op)) {
    bool covered = true;
    for (int rv : e.rvars) covered = covered && mask_cover(p, s, e, rv).has_value();
    if (covered) return &e;
  }
  for (size_t i = 0; i < eager_operands(e); ++i)
    if (Expr* r = find_masked(p, e.args[i], s)) return r;
  return nullptr;
}

// Widens every moving variable of reduce node `r` of stage `s` to its static cover and returns
// the predicate of the original bounds (`lo <= j && j < hi`, each side only where it moved);
// nothing when no side differs from its cover.
std::optional<Expr> widen(const Pipeline& p, Stage& s, const Expr& r) {
  std::optional<Expr> pred;
  auto add = [&](Expr c) { pred = pred ? logical_and(std::move(*pred), std::move(c)) : c; };
  for (int rv : r.rvars) {
    te::IndexVar& v = s.reduce_vars[static_cast<size_t>(rv)];
    if (v.is_static) continue;
    const auto cover = mask_cover(p, s, r, rv);
    const Expr j = var_ref(te::RefKind::reduce_var, rv, v.name);
    if (te::to_string(v.lo) != te::to_string(cover->first)) add(binary(Op::le, v.lo, j));
    if (te::to_string(v.hi) != te::to_string(cover->second)) add(binary(Op::lt, j, v.hi));
    v.lo = cover->first;
    v.hi = cover->second;
    v.is_static = true;
  }
  return pred;
}

// Where the inline reduction ran: S's innermost loop outside its vector loop (a reduction inside
// a vector loop ran once per lane; the stage computes those lanes together), or at root when S's
// outermost loop is the vector loop. The stages computed inside S's loops for the reduction's
// reads then still enclose their new reader.
ComputeLoc inline_point(const Stage& s) {
  int at = -1;
  for (size_t l = 0; l < s.loops.size() && s.loops[l].kind != LoopKind::vectorized; ++l)
    at = static_cast<int>(l);
  if (at < 0) return {};
  return {ComputeKind::at, s.name, s.loops[static_cast<size_t>(at)].name};
}

bool unscheduled(const Pipeline& p, const Stage& s) {
  if (!s.splits.empty() || s.reduce_lanes != 0 || s.where || s.where_split) return false;
  const std::vector<Loop> d = default_loops(s);
  if (d.size() != s.loops.size()) return false;
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i].name != s.loops[i].name || s.loops[i].kind != LoopKind::serial) return false;
  for (const Stage& o : p.stages)
    if (o.compute.kind == ComputeKind::at && o.compute.stage == s.name) return false;
  return true;
}

// S's whole definition is the moving reduction: S becomes a reduction stage with a predicate.
Status mask_in_place(Pipeline& p, int si, const Primitive& prim) {
  Stage& s = p.stages[static_cast<size_t>(si)];
  if (prim.args.size() > 1)
    return Status::error(s.name + "'s whole definition is the reduction: it is masked in place, " +
                         "so there is no new stage to name (" + prim.args[1] + ")");
  if (!unscheduled(p, s))
    return Status::error(s.name + " already has a schedule: mask its range before scheduling it");
  Stage trial = s;
  trial.where = widen(p, trial, s.body);
  if (!trial.where) return Status::error(s.name + "'s range already is its static cover");
  trial.reduction = true;
  trial.loops = default_loops(trial);
  s = std::move(trial);
  return ok_status();
}

}  // namespace

Status apply_mask_range(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], true);
  if (!si) return si.error();
  const Stage& s = p.stages[static_cast<size_t>(*si)];
  if (s.is_recurrence())
    return Status::error(s.name + " is a recurrence: its reductions are not masked");
  Stage trial = s;
  Expr* r = find_masked(p, trial.body, trial);
  if (!r)
    return Status::error(s.name + " has no sum, product, max or min over a range that moves with " +
                         "its variables and has a static cover (such as `j in 0..i + 1`), " +
                         "outside select branches and else values");
  if (r == &trial.body) return mask_in_place(p, *si, prim);
  const std::string name =
      prim.args.size() > 1 ? prim.args[1] : unique_stage_name(p, s.name + "_m");
  if (Status st = check_new_stage_name(p, name); !st.ok()) return st;
  // The predicate rides in the reduction's body as a select while the reduction is lifted (the
  // lift renames the variables of both), then becomes the new stage's `where`.
  std::optional<Expr> pred = widen(p, trial, *r);
  if (!pred) return Status::error(s.name + ": the reduction's range already is its static cover");
  Expr zero = r->args[0].type == te::ValueType::i64 ? int_lit(0) : float_lit(0.0);
  Expr sel;
  sel.kind = ExprKind::call;
  sel.op = Op::select;
  sel.name = te::op_name(Op::select);
  sel.type = r->args[0].type;
  sel.args = {std::move(*pred), std::move(r->args[0]), std::move(zero)};
  r->args[0] = std::move(sel);
  if (!can_lift(trial, *r))
    return Status::error(s.name + ": the masked reduction reads a variable with no static range");
  // As in hoist: the pointer is into trial.body's child lists, which keep their storage when the
  // body moves.
  Expr* target = r;
  p.stages[static_cast<size_t>(*si)].body = std::move(trial.body);
  p.stages[static_cast<size_t>(*si)].reduce_vars = std::move(trial.reduce_vars);
  lift_subexpression(p, *si, *target, name, "the masked range of a reduction of " + s.name);
  Stage& n = p.stages[static_cast<size_t>(*si)];
  n.compute = inline_point(p.stages[static_cast<size_t>(*si) + 1]);
  Expr& body = n.body.args[0];
  n.where = std::move(body.args[0]);
  Expr kept = std::move(body.args[1]);
  body = std::move(kept);
  KF_CHECK(n.reduction) << "mask_range: " << n.name << " lifted with a moving range";
  return ok_status();
}

}  // namespace kf::sched::detail
