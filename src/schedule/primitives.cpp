// Dispatch, validation and the helpers shared by the primitive implementations
// (loop_primitives.cpp, stage_primitives.cpp).
#include "schedule/primitives.h"

#include <algorithm>
#include <map>

#include "schedule/primitive_table.h"
#include "schedule/primitives_internal.h"

namespace kf::sched {
namespace detail {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string loop_list(const Stage& s) {
  std::vector<std::string> names;
  for (const Loop& l : s.loops) names.push_back(l.name);
  return join(names, " ");
}

Expected<int> find_stage(const Pipeline& p, const std::string& name, bool need_loops) {
  int i = p.find(name);
  if (i < 0) {
    std::vector<std::string> names;
    for (const Stage& s : p.stages) names.push_back(s.name);
    if (std::find(p.substituted.begin(), p.substituted.end(), name) != p.substituted.end())
      return Status::error("no stage named '" + name +
                           "': it only copies an input in another layout for reductions, so its "
                           "readers read the input directly (pack it with cache_read)");
    return Status::error("no stage named '" + name + "' (stages: " + join(names) + ")");
  }
  if (need_loops && p.stages[i].compute.kind == ComputeKind::inlined)
    return Status::error("stage " + name + " is inlined: it has no loops of its own");
  return i;
}

Expected<int> find_loop_in(const Pipeline& p, int stage, const std::string& loop) {
  const Stage& s = p.stages[stage];
  int l = s.find_loop(loop);
  if (l < 0)
    return Status::error("stage " + s.name + " has no loop '" + loop +
                         "' (its loops: " + loop_list(s) + ")");
  return l;
}

Expected<std::pair<int, int>> find_loop(const Pipeline& p, const std::string& ref) {
  LoopRef r = split_loop_ref(ref);
  auto s = find_stage(p, r.stage, true);
  if (!s) return s.error();
  auto l = find_loop_in(p, *s, r.loop);
  if (!l) return l.error();
  return std::make_pair(*s, *l);
}

std::set<std::string> tree_names(const Stage& s) {
  std::set<std::string> names;
  for (const te::IndexVar& v : s.vars) names.insert(v.name);
  for (int r : s.loop_rvars()) names.insert(s.reduce_vars[r].name);
  for (const Split& sp : s.splits) names.insert({sp.parent, sp.outer, sp.inner});
  for (const Loop& l : s.loops) names.insert(l.name);
  return names;
}

Status check_new_loop_name(const Stage& s, const std::string& name) {
  if (name.empty() || name.find('.') == 0)
    return Status::error("'" + name + "' is not a valid loop name");
  if (tree_names(s).count(name))
    return Status::error("loop name '" + name + "' is already used in stage " + s.name +
                         "; choose a new name");
  return ok_status();
}

std::set<std::string> leaves_of(const Stage& s, const std::string& node) {
  if (s.find_loop(node) >= 0) return {node};
  std::set<std::string> out;
  for (const Split& sp : s.splits) {
    std::vector<std::string> children;
    if (sp.kind == SplitKind::split && sp.parent == node) children = {sp.outer, sp.inner};
    if (sp.kind == SplitKind::fuse && (sp.outer == node || sp.inner == node))
      children = {sp.parent};
    for (const std::string& c : children)
      for (const std::string& l : leaves_of(s, c)) out.insert(l);
  }
  return out;
}

bool has_tail_ancestry(const Stage& s, const std::string& node) {
  for (const Split& sp : s.splits) {
    if (sp.kind == SplitKind::split && sp.inner == node) return true;
    if (sp.kind == SplitKind::split && sp.outer == node) return has_tail_ancestry(s, sp.parent);
    if (sp.kind == SplitKind::fuse && sp.parent == node)
      return has_tail_ancestry(s, sp.outer) || has_tail_ancestry(s, sp.inner);
  }
  return false;
}

bool computed_inside(const Pipeline& p, int q, int s, int loop) {
  if (q == s) return true;
  const ComputeLoc& c = p.stages[q].compute;
  if (c.kind != ComputeKind::at) return false;
  int t = p.find(c.stage);
  if (t < 0) return false;
  if (t == s) return p.stages[t].find_loop(c.loop) >= loop;
  return computed_inside(p, t, s, loop);
}

std::string dependence_of(const Stage& s, const Loop& l) {
  if (l.reduce)
    return "it is a reduction loop: every iteration accumulates into the same element of " +
           s.name + " (rfactor it first to get a pure loop over partial results)";
  if (l.scan)
    return "it is the scan loop of the recurrence " + s.name + ": each step reads the one before";
  return "";
}

Status check_new_stage_name(const Pipeline& p, const std::string& name) {
  if (name.find('.') != std::string::npos)
    return Status::error("stage name '" + name + "' must not contain '.'");
  if (p.find(name) >= 0) return Status::error("a stage named '" + name + "' already exists");
  for (size_t i = 0; i < p.task->tensor_count(); ++i)
    if (p.task->tensor(i).name == name)
      return Status::error("'" + name + "' is a tensor of the task; choose a new stage name");
  for (const std::string& d : p.task->dims)
    if (d == name) return Status::error("'" + name + "' is a dim of the task");
  return ok_status();
}

namespace {

Status validate_stage(const Pipeline& p, int i) {
  const Stage& s = p.stages[i];
  if (s.compute.kind == ComputeKind::inlined) {
    if (s.output >= 0) return Status::error("the output " + s.name + " cannot be inlined");
    if (s.reduction) return Status::error(s.name + " is a reduction and cannot be inlined");
    if (s.is_recurrence()) return Status::error("the recurrence " + s.name + " cannot be inlined");
  }
  int parallel = -1, vectorized = -1;
  for (size_t l = 0; l < s.loops.size(); ++l) {
    const Loop& loop = s.loops[l];
    const std::string ref = s.name + "." + loop.name;
    if (loop.kind == LoopKind::parallel || loop.kind == LoopKind::vectorized) {
      std::string why = dependence_of(s, loop);
      if (!why.empty())
        return Status::error(
            "cannot " +
            std::string(loop.kind == LoopKind::parallel ? "parallelize " : "vectorize ") + ref +
            ": " + why);
    }
    if (loop.kind == LoopKind::parallel) {
      if (parallel >= 0)
        return Status::error("cannot parallelize " + ref + ": " + s.name + "." +
                             s.loops[parallel].name + " is already parallel (one per stage)");
      if (vectorized >= 0)
        return Status::error("cannot parallelize " + ref + ": it is inside the vectorized loop " +
                             s.name + "." + s.loops[vectorized].name);
      parallel = static_cast<int>(l);
    }
    if (loop.kind == LoopKind::vectorized) {
      if (vectorized >= 0)
        return Status::error("cannot vectorize " + ref + ": " + s.name + "." +
                             s.loops[vectorized].name + " is already vectorized (one per stage)");
      vectorized = static_cast<int>(l);
    }
  }
  // A recurrence's scan loops run in ascending order: outer parts of a split stay outside.
  for (const Split& sp : s.splits) {
    if (sp.kind != SplitKind::split) continue;
    std::set<std::string> outer = leaves_of(s, sp.outer), inner = leaves_of(s, sp.inner);
    bool scan = false;
    for (const std::string& l : outer) scan = scan || s.loops[s.find_loop(l)].scan;
    if (!scan) continue;
    for (const std::string& o : outer)
      for (const std::string& in : inner)
        if (s.find_loop(in) < s.find_loop(o))
          return Status::error("the scan loop " + s.name + "." + in + " of recurrence " + s.name +
                               " cannot be outside " + s.name + "." + o +
                               ": the scan must run in ascending order");
  }
  if (s.compute.kind != ComputeKind::at) return ok_status();

  const std::string where = s.compute.stage + "." + s.compute.loop;
  if (s.output >= 0)
    return Status::error("the output " + s.name + " is computed at root (cache_write it first)");
  if (s.is_recurrence())
    return Status::error("the recurrence " + s.name +
                         " reads its own earlier elements and must be computed at root");
  int t = p.find(s.compute.stage);
  if (t < 0) return Status::error(s.name + " is computed at " + where + ", which no longer exists");
  const Stage& ts = p.stages[t];
  if (ts.compute.kind == ComputeKind::inlined)
    return Status::error(s.name + " is computed at " + where + ", but " + ts.name + " is inlined");
  int l = ts.find_loop(s.compute.loop);
  if (l < 0)
    return Status::error(s.name + " is computed at " + where + ", which is no longer a loop of " +
                         ts.name + " (its loops: " + loop_list(ts) + ")");
  if (t <= i || computed_inside(p, t, i, 0))
    return Status::error(s.name + " cannot be computed inside " + ts.name + ", which " +
                         (t <= i ? "comes before it" : "is computed inside it"));
  for (int v = 0; v <= l; ++v)
    if (ts.loops[v].kind == LoopKind::vectorized)
      return Status::error(s.name + " cannot be computed at " + where + ": it is " +
                           (v == l ? "" : "inside ") + "the vectorized loop " + ts.name + "." +
                           ts.loops[v].name);
  for (int c : p.consumers(i))
    if (!computed_inside(p, c, t, l))
      return Status::error("cannot compute " + s.name + " at " + where + ": it is also read by " +
                           p.stages[c].name + ", which is computed outside that loop");
  return ok_status();
}

bool has_parallel(const Stage& s, int upto) {
  for (int l = 0; l < static_cast<int>(s.loops.size()) && l <= upto; ++l)
    if (s.loops[l].kind == LoopKind::parallel) return true;
  return false;
}

}  // namespace
}  // namespace detail

Status validate(const Pipeline& p) {
  for (size_t i = 0; i < p.stages.size(); ++i)
    KF_RETURN_IF_ERROR(detail::validate_stage(p, static_cast<int>(i)));
  // No parallel loop inside another, through compute_at chains.
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const Stage& s = p.stages[i];
    if (!detail::has_parallel(s, static_cast<int>(s.loops.size()))) continue;
    for (const Stage* cur = &s; cur->compute.kind == ComputeKind::at;) {
      const Stage& t = p.stages[p.find(cur->compute.stage)];
      if (detail::has_parallel(t, t.find_loop(cur->compute.loop)))
        return Status::error("stage " + s.name +
                             " has a parallel loop but is computed inside a "
                             "parallel loop of " +
                             t.name + " (no nested parallelism)");
      cur = &t;
    }
  }
  return ok_status();
}

Status apply_primitive(Pipeline& p, const Primitive& prim) {
  Pipeline work = p;
  Status s = primitive_info(prim.kind).apply(work, prim);
  if (s.ok()) s = validate(work);
  if (!s.ok()) return s;
  p = std::move(work);
  return ok_status();
}

Status apply_schedule(Pipeline& p, const Schedule& sched) {
  for (const Primitive& prim : sched.steps) {
    Status s = apply_primitive(p, prim);
    if (!s.ok())
      return Status::error(sched.file + ":" + std::to_string(prim.line) + ": " + s.message());
  }
  return ok_status();
}

}  // namespace kf::sched
