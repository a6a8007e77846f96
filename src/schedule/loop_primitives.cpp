// The primitives that reshape one stage's loops: split, tile, reorder, fuse, and the loop kinds
// (vectorize, unroll, parallel). Tails are never a legality question here: lowering makes every
// split correct at every extent (docs/schedule.md, "Tails").
#include <algorithm>

#include "schedule/primitives_internal.h"
#include "schedule/te_util.h"

namespace kf::sched::detail {

Status apply_split(Pipeline& p, const std::string& ref, const std::string& outer,
                   const std::string& inner, int64_t factor) {
  auto at = find_loop(p, ref);
  if (!at) return at.error();
  auto [si, li] = *at;
  Stage& s = p.stages[si];
  if (factor <= 0)
    return Status::error("cannot split " + ref + ": the factor must be positive, got " +
                         std::to_string(factor));
  if (outer == inner)
    return Status::error("cannot split " + ref + ": the outer and inner loops need two names");
  KF_RETURN_IF_ERROR(check_new_loop_name(s, outer));
  KF_RETURN_IF_ERROR(check_new_loop_name(s, inner));
  const Loop old = s.loops[li];
  Loop o = old, i = old;
  o.name = outer;
  i.name = inner;
  o.kind = i.kind = LoopKind::serial;
  o.lanes = i.lanes = 0;
  o.uniform = i.uniform = false;  // its body is not the body that was specialized
  s.loops[li] = o;
  s.loops.insert(s.loops.begin() + li + 1, i);
  s.splits.push_back({SplitKind::split, old.name, outer, inner, factor});
  return ok_status();
}

Status apply_tile(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], true);
  if (!si) return si.error();
  const std::string& x = prim.args[1];
  const std::string& y = prim.args[2];
  auto xi = find_loop_in(p, *si, x);
  if (!xi) return xi.error();
  auto yi = find_loop_in(p, *si, y);
  if (!yi) return yi.error();
  if (*yi != *xi + 1)
    return Status::error("cannot tile " + prim.args[0] + " " + x + " " + y + ": " + x +
                         " must be directly outside " + y);
  const std::string stage = prim.args[0];
  KF_RETURN_IF_ERROR(apply_split(p, stage + "." + x, x + ".o", x + ".i", std::stoll(prim.args[3])));
  KF_RETURN_IF_ERROR(apply_split(p, stage + "." + y, y + ".o", y + ".i", std::stoll(prim.args[4])));
  Stage& s = p.stages[*si];
  // x.o x.i y.o y.i -> x.o y.o x.i y.i
  std::swap(s.loops[*xi + 1], s.loops[*xi + 2]);
  return ok_status();
}

Status apply_reorder(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], true);
  if (!si) return si.error();
  Stage& s = p.stages[*si];
  std::vector<int> pos;
  std::vector<Loop> order;
  for (size_t a = 1; a < prim.args.size(); ++a) {
    auto l = find_loop_in(p, *si, prim.args[a]);
    if (!l) return l.error();
    if (std::find(pos.begin(), pos.end(), *l) != pos.end())
      return Status::error("reorder lists " + s.name + "." + prim.args[a] + " twice");
    pos.push_back(*l);
    order.push_back(s.loops[*l]);
  }
  std::sort(pos.begin(), pos.end());
  for (size_t k = 0; k < pos.size(); ++k) s.loops[pos[k]] = order[k];
  return ok_status();
}

Status apply_fuse(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], true);
  if (!si) return si.error();
  Stage& s = p.stages[*si];
  const std::string &outer = prim.args[1], &inner = prim.args[2], &fused = prim.args[3];
  auto oi = find_loop_in(p, *si, outer);
  if (!oi) return oi.error();
  auto ii = find_loop_in(p, *si, inner);
  if (!ii) return ii.error();
  const std::string what = "cannot fuse " + s.name + "." + outer + " and " + s.name + "." + inner;
  if (*ii != *oi + 1)
    return Status::error(what + ": " + outer + " must be directly outside " + inner);
  const Loop &o = s.loops[*oi], &i = s.loops[*ii];
  if (o.reduce != i.reduce)
    return Status::error(what + ": one is a reduction loop and the other is not");
  if (has_tail_ancestry(s, inner))
    return Status::error(
        what + ": " + inner +
        " is (part of) the inner loop of a split, whose extent shrinks in the tail");
  KF_RETURN_IF_ERROR(check_new_loop_name(s, fused));
  Loop f;
  f.name = fused;
  f.reduce = o.reduce;
  f.scan = o.scan || i.scan;
  s.loops[*oi] = f;
  s.loops.erase(s.loops.begin() + *ii);
  s.splits.push_back({SplitKind::fuse, fused, outer, inner, 0});
  return ok_status();
}

Status apply_vectorize(Pipeline& p, const Primitive& prim) {
  auto at = find_loop(p, prim.args[0]);
  if (!at) return at.error();
  Stage& s = p.stages[at->first];
  Loop& l = s.loops[at->second];
  int lanes = 0;
  if (prim.args.size() > 1) {
    const long long w = std::stoll(prim.args[1]);
    if (w < 2 || w > 64 || (w & (w - 1)) != 0)
      return Status::error("cannot vectorize " + prim.args[0] +
                           ": the width must be a power of two from 2 to 64, got " + prim.args[1]);
    lanes = static_cast<int>(w);
  }
  std::string why = dependence_of(s, l);
  if (!why.empty()) return Status::error("cannot vectorize " + prim.args[0] + ": " + why);
  if (s.reduce_lanes != 0)
    return Status::error("cannot vectorize " + prim.args[0] + ": the reductions inside " + s.name +
                         " run as vectors already (vectorize_reductions)");
  l.kind = LoopKind::vectorized;
  l.lanes = lanes;
  return ok_status();
}

Status apply_unroll(Pipeline& p, const Primitive& prim) {
  auto at = find_loop(p, prim.args[0]);
  if (!at) return at.error();
  Loop& l = p.stages[at->first].loops[at->second];
  l.kind = LoopKind::unrolled;
  l.lanes = 0;
  return ok_status();
}

Status apply_prefetch(Pipeline& p, const Primitive& prim) {
  auto at = find_loop(p, prim.args[0]);
  if (!at) return at.error();
  const int64_t d = std::stoll(prim.args[1]);
  if (d < 1)
    return Status::error("prefetch distance must be at least 1 iteration, got " + prim.args[1]);
  p.stages[at->first].loops[at->second].prefetch = d;
  return ok_status();
}

Status apply_parallel(Pipeline& p, const Primitive& prim) {
  auto at = find_loop(p, prim.args[0]);
  if (!at) return at.error();
  Stage& s = p.stages[at->first];
  Loop& l = s.loops[at->second];
  std::string why = dependence_of(s, l);
  if (!why.empty()) return Status::error("cannot parallelize " + prim.args[0] + ": " + why);
  l.kind = LoopKind::parallel;
  l.lanes = 0;
  return ok_status();
}

// The mark is a lowering hint: whatever the data, the specialized body runs only where the reads
// it merges hold one value (lower/specialize_uniform.h), so the only conditions are that the loop
// exists as a loop (not replicated or turned into lanes) and that something in it gathers.
Status apply_specialize_uniform(Pipeline& p, const Primitive& prim) {
  auto at = find_loop(p, prim.args[0]);
  if (!at) return at.error();
  auto [si, li] = *at;
  Stage& s = p.stages[si];
  Loop& l = s.loops[li];
  const std::string what = "cannot specialize " + prim.args[0];
  if (s.compute.kind == ComputeKind::inlined)
    return Status::error(what + ": " + s.name + " is inlined (its readers' loops run its reads)");
  if (l.kind == LoopKind::vectorized || l.kind == LoopKind::unrolled)
    return Status::error(what + ": it is " + to_string(l.kind) +
                         " (its body is replicated or runs as lanes); mark a loop around it");
  if (l.uniform) return Status::error(what + ": it is specialized already");
  int gathers = 0;
  for (size_t q = 0; q < p.stages.size(); ++q) {
    if (!computed_inside(p, static_cast<int>(q), si, static_cast<int>(li))) continue;
    gathers += gathered_reads(p.stages[q].body);
    if (p.stages[q].where) gathers += gathered_reads(*p.stages[q].where);
  }
  if (gathers == 0)
    return Status::error(what + ": no read in " + s.name +
                         " or the stages computed inside the loop indexes through a tensor read "
                         "(such as rhs[grp[m], k, n])");
  l.uniform = true;
  return ok_status();
}

}  // namespace kf::sched::detail
