// The primitives that move or create stages: compute_at / compute_inline / compute_root,
// cache_read, cache_write, rfactor, reorder_storage. New stages are inserted just before the
// stage that reads them and start computed at root with the default loops.
#include <algorithm>
#include <map>

#include "schedule/primitives_internal.h"
#include "schedule/te_util.h"

namespace kf::sched::detail {

using te::Expr;
using te::ExprKind;
using te::RefKind;

std::vector<int> identity(size_t n) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i);
  return v;
}

std::vector<Expr> tensor_extents(const Pipeline& p, te::Ref ref) {
  std::vector<Expr> ext;
  if (ref.kind == RefKind::input) {
    for (const Formula& f : p.task->inputs[static_cast<size_t>(ref.index)].shape)
      ext.push_back(formula_to_te(f, *p.task));
  } else {
    for (const te::IndexVar& v : p.stages[static_cast<size_t>(ref.index)].vars) ext.push_back(v.hi);
  }
  return ext;
}

namespace {

// Names derived from the stage's reduction variables through its splits.
std::set<std::string> reduce_names(const Stage& s) {
  std::set<std::string> names;
  for (int r : s.loop_rvars()) names.insert(s.reduce_vars[r].name);
  for (const Split& sp : s.splits) {
    if (sp.kind == SplitKind::split && names.count(sp.parent)) names.insert({sp.outer, sp.inner});
    if (sp.kind == SplitKind::fuse && names.count(sp.outer)) names.insert(sp.parent);
  }
  return names;
}

// Drops the stage's reduction loops and their splits (the stage becomes pure).
void keep_pure_schedule(Stage& s, const std::string& keep_loop = "") {
  std::set<std::string> red = reduce_names(s);
  std::vector<Loop> loops;
  for (const Loop& l : s.loops)
    if (!l.reduce || l.name == keep_loop) loops.push_back(l);
  s.loops = loops;
  std::vector<Split> splits;
  for (const Split& sp : s.splits)
    if (!red.count(sp.kind == SplitKind::split ? sp.parent : sp.outer)) splits.push_back(sp);
  s.splits = splits;
}

std::vector<Expr> lhs_refs(const Stage& s) {
  std::vector<Expr> v;
  for (size_t d = 0; d < s.vars.size(); ++d)
    v.push_back(var_ref(RefKind::index_var, static_cast<int>(d), s.vars[d].name));
  return v;
}

// Rewrites accesses to tensor `ref` in a stage's body and predicate.
void redirect(Stage& s, te::Ref from, const std::string& name, int to) {
  auto f = [&](const Expr& a) -> std::optional<Expr> {
    if (a.ref.kind != from.kind || a.ref.index != from.index) return std::nullopt;
    Expr b = a;
    b.name = name;
    b.ref = {RefKind::stage, to};
    return b;
  };
  s.body = map_accesses(s.body, f);
  if (s.where) s.where = map_accesses(*s.where, f);
}

bool reads(const Stage& s, te::Ref ref) {
  bool found = false;
  auto check = [&](const Expr& e) {
    te::visit(e, [&](const Expr& x) {
      found = found ||
              (x.kind == ExprKind::access && x.ref.kind == ref.kind && x.ref.index == ref.index);
    });
  };
  check(s.body);
  if (s.where) check(*s.where);
  return found;
}

}  // namespace

Status apply_compute_at(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  auto at = find_loop(p, prim.args[1]);
  if (!at) return at.error();
  Stage& s = p.stages[*si];
  if (at->first == *si) return Status::error("cannot compute " + s.name + " at its own loop");
  if (s.output >= 0)
    return Status::error("cannot compute the output " + s.name + " at " + prim.args[1] +
                         ": outputs are written at root (cache_write it first)");
  s.compute = {ComputeKind::at, p.stages[at->first].name,
               p.stages[at->first].loops[at->second].name};
  return ok_status();
}

Status apply_compute_inline(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  Stage& s = p.stages[*si];
  if (s.output >= 0) return Status::error("cannot inline the output " + s.name);
  if (s.reduction)
    return Status::error("cannot inline " + s.name +
                         ": it is a reduction (compute it at a consumer's loop instead)");
  if (s.is_recurrence())
    return Status::error("cannot inline the recurrence " + s.name +
                         ": it reads its own earlier elements");
  s.compute = {ComputeKind::inlined, "", ""};
  return ok_status();
}

Status apply_compute_root(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  p.stages[*si].compute = {ComputeKind::root, "", ""};
  return ok_status();
}

Status apply_cache_read(Pipeline& p, const Primitive& prim) {
  const std::string &tensor = prim.args[0], &consumer = prim.args[1], &name = prim.args[2];
  KF_RETURN_IF_ERROR(check_new_stage_name(p, name));
  auto ci = find_stage(p, consumer, true);
  if (!ci) return ci.error();
  te::Ref ref;
  te::ValueType type = te::ValueType::f64;
  const Task& task = *p.task;
  for (size_t k = 0; k < task.inputs.size(); ++k) {
    if (task.inputs[k].name != tensor) continue;
    ref = {RefKind::input, static_cast<int>(k)};
    type = is_floating(task.inputs[k].dtype) ? te::ValueType::f64 : te::ValueType::i64;
  }
  if (ref.kind == RefKind::none) {
    int ti = p.find(tensor);
    if (ti < 0) return Status::error("cache_read: no input or stage named '" + tensor + "'");
    const Stage& t = p.stages[ti];
    if (t.compute.kind == ComputeKind::inlined)
      return Status::error("cannot cache_read " + tensor + ": it is inlined");
    if (ti == *ci) return Status::error("cannot cache_read " + tensor + " for itself");
    ref = {RefKind::stage, ti};
    type = t.type;
  }
  const std::vector<Expr> extents = tensor_extents(p, ref);
  Stage& c = p.stages[*ci];
  if (!reads(c, ref))
    return Status::error("cannot cache_read " + tensor + " for " + consumer + ": " + consumer +
                         " does not read " + tensor);

  // Name the copy's dims after the consumer's first access when it indexes by plain variables.
  std::vector<std::string> names;
  te::visit(c.body, [&](const Expr& x) {
    if (!names.empty() || x.kind != ExprKind::access || x.ref.kind != ref.kind ||
        x.ref.index != ref.index)
      return;
    for (size_t d = 0; d < x.index_count(); ++d) {
      const Expr& i = x.args[d];
      std::string n = i.kind == ExprKind::name ? i.name : "d" + std::to_string(d);
      if (std::find(names.begin(), names.end(), n) != names.end()) n = "d" + std::to_string(d);
      names.push_back(n);
    }
  });
  Stage n;
  n.name = name;
  n.type = type;
  n.note = "cache_read of " + tensor + " for " + consumer;
  n.origin = StageOrigin::cache_read;
  n.origin_of = tensor;
  std::vector<Expr> idx;
  for (size_t d = 0; d < extents.size(); ++d) {
    te::IndexVar v;
    v.name = d < names.size() ? names[d] : "d" + std::to_string(d);
    v.lo = int_lit(0);
    v.hi = extents[d];
    n.vars.push_back(v);
    idx.push_back(var_ref(RefKind::index_var, static_cast<int>(d), v.name));
  }
  n.body.kind = ExprKind::access;
  n.body.name = tensor;
  n.body.ref = ref;
  n.body.type = type;
  n.body.args = idx;
  n.loops = default_loops(n);
  n.storage_order = identity(n.vars.size());
  const int pos = *ci;
  p.insert_stage(pos, std::move(n));
  if (ref.kind == RefKind::stage && ref.index >= pos) ref.index += 1;
  redirect(p.stages[pos + 1], ref, name, pos);
  return ok_status();
}

Status apply_cache_write(Pipeline& p, const Primitive& prim) {
  const std::string& name = prim.args[1];
  auto si = find_stage(p, prim.args[0], true);
  if (!si) return si.error();
  KF_RETURN_IF_ERROR(check_new_stage_name(p, name));
  Stage& s = p.stages[*si];
  if (s.is_recurrence())
    return Status::error("cannot cache_write the recurrence " + s.name +
                         ": it reads its own earlier elements");
  Stage n = s;
  n.name = name;
  n.output = -1;
  n.note = "cache_write of " + s.name;
  n.origin = StageOrigin::cache_write;
  n.origin_of = s.name;
  n.loops = default_loops(n);
  n.splits.clear();
  n.compute = {};
  n.storage_order = identity(n.vars.size());
  for (const Stage& other : p.stages)
    if (other.compute.kind == ComputeKind::at && other.compute.stage == s.name &&
        s.find_loop(other.compute.loop) >= 0 && s.loops[s.find_loop(other.compute.loop)].reduce)
      return Status::error("cannot cache_write " + s.name + ": " + other.name +
                           " is computed at its reduction loop " + other.compute.loop);
  keep_pure_schedule(s);
  s.reduce_vars.clear();
  s.reduction = false;
  s.where.reset();
  s.where_split.reset();
  const int pos = *si;
  p.insert_stage(pos, std::move(n));
  Stage& s2 = p.stages[pos + 1];
  s2.body = stage_access(name, pos, lhs_refs(s2), s2.type);
  return ok_status();
}

namespace {

// Whether stage `s` can be rfactored over loop `L`: a reduction with partial results to combine,
// not already masked by an rfactor, over one of its reduction loops.
Status check_rfactor(const Stage& s, const Loop& L, const std::string& what) {
  if (!s.reduction) return Status::error(what + ": " + s.name + " is not a reduction");
  const te::ReduceOp op = s.body.reduce_op;
  if (op == te::ReduceOp::argmax || op == te::ReduceOp::argmin)
    return Status::error(what + ": " + te::reduce_name(op) + " has no partial results to combine");
  if (s.where)
    return Status::error(what + ": " + s.name +
                         " already has a predicate from an rfactor (rfactor the stage it feeds)");
  if (!L.reduce) return Status::error(what + ": it is not a reduction loop");
  return ok_status();
}

}  // namespace

Status apply_rfactor(Pipeline& p, const Primitive& prim) {
  auto at = find_loop(p, prim.args[0]);
  if (!at) return at.error();
  const std::string& name = prim.args[1];
  KF_RETURN_IF_ERROR(check_new_stage_name(p, name));
  auto [si, li] = *at;
  Stage& s = p.stages[si];
  const std::string what = "cannot rfactor " + prim.args[0];
  const Loop L = s.loops[li];
  KF_RETURN_IF_ERROR(check_rfactor(s, L, what));
  const te::ReduceOp op = s.body.reduce_op;

  // L is an original reduction variable, or one half of a split of one.
  int r = -1;
  const Split* sp = nullptr;
  for (int rv : s.loop_rvars())
    if (s.reduce_vars[rv].name == L.name) r = rv;
  for (const Split& x : s.splits)
    if (x.kind == SplitKind::split && (x.outer == L.name || x.inner == L.name))
      for (int rv : s.loop_rvars())
        if (s.reduce_vars[rv].name == x.parent) {
          r = rv;
          sp = &x;
        }
  const bool inner = sp && sp->inner == L.name;
  const std::string sibling = sp ? (inner ? sp->outer : sp->inner) : "";
  if (r < 0 || (sp && s.find_loop(sibling) < 0))
    return Status::error(what +
                         ": rfactor takes a reduction variable or one half of a single "
                         "split of one (" +
                         L.name + " is derived further)");

  const te::IndexVar rv = s.reduce_vars[r];
  const Expr extent = binary(te::Op::sub, rv.hi, rv.lo);
  const int u_index = static_cast<int>(s.vars.size());
  Expr u_ext = extent, u = var_ref(RefKind::index_var, u_index, L.name);
  Stage n;
  n.name = name;
  n.type = s.type;
  n.note = "rfactor of " + s.name + " over " + L.name;
  n.origin = StageOrigin::rfactor;
  n.origin_of = s.name;
  n.vars = s.vars;
  n.reduce_vars = s.reduce_vars;
  Expr value;  // what the original reduction variable becomes
  if (!sp) {
    value = binary(te::Op::add, u, rv.lo);
  } else {
    const int64_t f = sp->factor;
    Expr other = var_ref(RefKind::reduce_var, r, sibling);
    te::IndexVar ov;
    ov.name = sibling;
    ov.lo = int_lit(0);
    Expr chunks = binary(te::Op::ceildiv, extent, int_lit(f));
    ov.hi = inner ? chunks : int_lit(f);
    u_ext = inner ? int_lit(f) : chunks;
    n.reduce_vars[r] = ov;
    Expr o = inner ? other : u, i = inner ? u : other;
    Expr pos = binary(te::Op::add, binary(te::Op::mul, o, int_lit(f)), i);
    value = binary(te::Op::add, pos, rv.lo);
    auto e = const_int(extent);
    if (!e || *e % f != 0) {
      n.where = binary(te::Op::lt, pos, extent);
      if (inner) n.where_split = WhereSplit{sibling, L.name, f, extent};
    }
  }
  te::IndexVar uv;
  uv.name = L.name;
  uv.lo = int_lit(0);
  uv.hi = u_ext;
  n.vars.push_back(uv);
  Expr body = map_names(s.body.args[0], [&](const Expr& x) -> std::optional<Expr> {
    if (x.ref.kind == RefKind::reduce_var && x.ref.index == r) return value;
    return std::nullopt;
  });
  std::vector<int> rest = s.body.rvars;
  if (!sp) rest.erase(std::find(rest.begin(), rest.end(), r));
  if (rest.empty()) {
    n.body = body;
  } else {
    n.body = s.body;
    n.body.rvars = rest;
    n.body.args = {body};
    n.reduction = true;
  }
  n.loops = s.loops;
  n.loops[li].reduce = false;
  for (const Split& x : s.splits)
    if (&x != sp) n.splits.push_back(x);
  n.storage_order = identity(n.vars.size());
  // The partials are computed where s is: s (their one reader) is there, and so are the stages
  // s reads that are computed at a loop (07's seq at o.r, read by the scores at o.h).
  if (s.compute.kind == ComputeKind::at) n.compute = s.compute;

  // s merges the partial results: s[vars] = op(u: name[vars, u]).
  keep_pure_schedule(s, L.name);
  te::IndexVar merged = uv;
  merged.is_static = true;
  s.reduce_vars = {merged};
  const int pos = si;
  p.insert_stage(pos, std::move(n));
  Stage& s2 = p.stages[pos + 1];
  std::vector<Expr> idx = lhs_refs(s2);
  idx.push_back(var_ref(RefKind::reduce_var, 0, L.name));
  Expr red;
  red.kind = ExprKind::reduce;
  red.name = te::reduce_name(op);
  red.reduce_op = op;
  red.type = s2.type;
  red.rvars = {0};
  red.args = {stage_access(name, pos, idx, s2.type)};
  s2.body = red;
  s2.reduction = true;
  return ok_status();
}

Status apply_reorder_storage(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  Stage& s = p.stages[*si];
  if (s.output >= 0)
    return Status::error("cannot reorder the storage of the output " + s.name +
                         ": outputs keep the task's layout");
  std::vector<int> order;
  for (size_t a = 1; a < prim.args.size(); ++a) {
    int d = -1;
    for (size_t k = 0; k < s.vars.size(); ++k)
      if (s.vars[k].name == prim.args[a]) d = static_cast<int>(k);
    if (d < 0) return Status::error(s.name + " has no dimension '" + prim.args[a] + "'");
    if (std::find(order.begin(), order.end(), d) != order.end())
      return Status::error("reorder_storage lists " + prim.args[a] + " twice");
    order.push_back(d);
  }
  if (order.size() != s.vars.size())
    return Status::error("reorder_storage must list all " + std::to_string(s.vars.size()) +
                         " dimensions of " + s.name);
  s.storage_order = order;
  return ok_status();
}

Status apply_nontemporal(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  Stage& s = p.stages[*si];
  if (s.output < 0)
    return Status::error("nontemporal applies to outputs only: the intermediate " + s.name +
                         " is read again soon after it is written, so it should stay in cache");
  const DType dt = p.task->outputs[static_cast<size_t>(s.output)].dtype;
  if (dt != DType::f32)
    return Status::error("nontemporal needs an f32 output; " + s.name + " is " +
                         std::string(dtype_name(dt)));
  if (std::none_of(s.loops.begin(), s.loops.end(),
                   [](const Loop& l) { return l.kind == LoopKind::vectorized; }))
    return Status::error("nontemporal needs a vectorized loop in " + s.name +
                         ": only full-vector stores bypass the caches (vectorize it first)");
  if (s.nontemporal) return Status::error(s.name + "'s stores are nontemporal already");
  s.nontemporal = true;
  return ok_status();
}

Status apply_align_storage(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  Stage& s = p.stages[*si];
  const std::string what = "cannot align the rows of " + s.name;
  if (s.output >= 0) return Status::error(what + ": outputs keep the task's layout");
  if (s.vars.size() < 2)
    return Status::error(what + ": it has one dimension, so a single row (already aligned)");
  if (s.row_align > 0) return Status::error(what + ": they are padded already");
  // A cache line (64 bytes) of the stage's stored elements.
  const int bytes = s.type == te::ValueType::boolean                              ? 1
                    : s.type == te::ValueType::i64 || p.task->dtype == DType::f64 ? 8
                                                                                  : 4;
  long long elems = 64 / bytes;
  if (prim.args.size() > 1) {
    elems = std::stoll(prim.args[1]);
    if (elems < 2 || elems > 1024 || (elems & (elems - 1)) != 0)
      return Status::error(what + ": ELEMENTS must be a power of two from 2 to 1024, got " +
                           prim.args[1]);
  }
  s.row_align = static_cast<int>(elems);
  return ok_status();
}

Status apply_hoist_gathers(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  Stage& s = p.stages[*si];
  const std::string what = "cannot hoist the gathers of " + s.name;
  if (s.compute.kind == ComputeKind::inlined)
    return Status::error(what + ": it is inlined (its readers' loops run its reads)");
  if (s.hoist_gathers) return Status::error(what + ": they are hoisted already");
  int n = divided_gathers(s.body);
  if (s.where) n += divided_gathers(*s.where);
  if (n == 0)
    return Status::error(what +
                         ": no read indexes through a tensor read at a variable divided by "
                         "a dim (such as page_table[n, t / PS])");
  s.hoist_gathers = true;
  return ok_status();
}

Status apply_vectorize_reductions(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  Stage& s = p.stages[*si];
  const std::string what = "cannot vectorize the reductions of " + s.name;
  int lanes = -1;
  if (prim.args.size() > 1) {
    const long long w = std::stoll(prim.args[1]);
    if (w < 2 || w > 64 || (w & (w - 1)) != 0)
      return Status::error(what + ": the width must be a power of two from 2 to 64, got " +
                           prim.args[1]);
    lanes = static_cast<int>(w);
  }
  if (s.compute.kind == ComputeKind::inlined)
    return Status::error(what + ": it is inlined (its reductions run in its readers)");
  // The reductions this applies to: inside the definition (not the stage's own reduction loops),
  // over one variable, sum/prod/max/min of floats, with no reduction inside them.
  int found = 0;
  te::visit(s.body, [&](const te::Expr& x) {
    if (!(s.reduction && &x == &s.body) && vectorizable_reduce(x)) ++found;
  });
  if (found == 0)
    return Status::error(what +
                         ": its definition has no reduction computed inside it (a sum, "
                         "product, max or min of floats over one variable, e.g. over a range "
                         "that moves with its variables)");
  for (const Loop& l : s.loops)
    if (l.kind == LoopKind::vectorized)
      return Status::error(what + ": its loop " + l.name +
                           " is vectorized already (each lane runs its own reductions)");
  if (s.reduce_lanes != 0) return Status::error(what + ": they are vectorized already");
  s.reduce_lanes = lanes;
  return ok_status();
}

Status apply_double_buffer(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], false);
  if (!si) return si.error();
  Stage& s = p.stages[*si];
  if (s.compute.kind != ComputeKind::at)
    return Status::error("double_buffer needs " + s.name +
                         " computed at a loop (compute_at first): it fills the copy for that "
                         "loop's next iteration");
  if (s.reduction || s.loops.empty())
    return Status::error("double_buffer needs a pure stage filled row by row; " + s.name +
                         (s.reduction ? " is a reduction" : " has no loops"));
  auto at = find_loop(p, prim.args[1]);
  if (!at) return at.error();
  if (at->first == *si)
    return Status::error("double_buffer " + s.name +
                         ": the rows go into a loop of a stage that "
                         "runs inside " +
                         s.compute.stage + "." + s.compute.loop + ", not of " + s.name + " itself");
  int64_t every = 32;
  if (prim.args.size() > 2) every = std::stoll(prim.args[2]);
  if (every < 1 || every > 4096 || (every & (every - 1)) != 0)
    return Status::error("double_buffer EVERY must be a power of two in 1..4096, got " +
                         std::to_string(every));
  const Stage& c = p.stages[at->first];
  s.double_buffer = DoubleBuffer{c.name, c.loops[at->second].name, every};
  return ok_status();
}

}  // namespace kf::sched::detail
