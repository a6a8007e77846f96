#include "schedule/pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "schedule/te_util.h"
#include "support/check.h"
#include "te/static_eval.h"

namespace kf::sched {

using te::Expr;
using te::ExprKind;
using te::RefKind;

std::string to_string(LoopKind k) {
  switch (k) {
    case LoopKind::serial:
      return "serial";
    case LoopKind::parallel:
      return "parallel";
    case LoopKind::vectorized:
      return "vectorized";
    case LoopKind::unrolled:
      return "unrolled";
  }
  return "?";
}

std::string_view origin_name(StageOrigin origin) {
  switch (origin) {
    case StageOrigin::spec:
      return "spec";
    case StageOrigin::cache_read:
      return "cache_read";
    case StageOrigin::cache_write:
      return "cache_write";
    case StageOrigin::padded_copy:
      return "padded_copy";
    case StageOrigin::rfactor:
      return "rfactor";
    case StageOrigin::phase_split:
      return "phase_split";
    case StageOrigin::lifted:
      return "lifted";
  }
  return "?";
}

const std::vector<int>& Stage::loop_rvars() const {
  static const std::vector<int> none;
  return reduction ? body.rvars : none;
}

int Stage::find_loop(const std::string& loop) const {
  for (size_t i = 0; i < loops.size(); ++i)
    if (loops[i].name == loop) return static_cast<int>(i);
  return -1;
}

int Pipeline::find(const std::string& name) const {
  for (size_t i = 0; i < stages.size(); ++i)
    if (stages[i].name == name) return static_cast<int>(i);
  return -1;
}

namespace {

// Every expression of a stage's definition: body, where, reduction ranges.
template <typename F>
void for_each_expr(Stage& s, F&& f) {
  f(s.body);
  if (s.where) f(*s.where);
  if (s.where_split) f(s.where_split->extent);
  for (te::IndexVar& v : s.reduce_vars) {
    f(v.lo);
    f(v.hi);
  }
}

bool stage_reads(const Stage& s, int target) {
  Stage& m = const_cast<Stage&>(s);  // for_each_expr only reads here
  bool found = false;
  for_each_expr(m, [&](Expr& e) { found = found || reads_stage(e, target); });
  return found;
}

}  // namespace

std::vector<int> Pipeline::readers(int s) const {
  std::vector<int> out;
  for (size_t i = 0; i < stages.size(); ++i)
    if (static_cast<int>(i) != s && stage_reads(stages[i], s)) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<int> Pipeline::consumers(int s) const {
  std::set<int> out;
  for (int r : readers(s)) {
    if (stages[r].compute.kind == ComputeKind::inlined) {
      for (int c : consumers(r)) out.insert(c);
    } else {
      out.insert(r);
    }
  }
  return {out.begin(), out.end()};
}

void Pipeline::insert_stage(int pos, Stage stage) {
  KF_CHECK(pos >= 0 && pos <= static_cast<int>(stages.size())) << "insert_stage at " << pos;
  stages.insert(stages.begin() + pos, std::move(stage));
  for (Stage& s : stages)
    for_each_expr(
        s, [&](Expr& e) { remap_stage_refs(e, [&](int r) { return r >= pos ? r + 1 : r; }); });
}

void Pipeline::remove_stage(int pos) {
  KF_CHECK(pos >= 0 && pos < static_cast<int>(stages.size())) << "remove_stage at " << pos;
  KF_CHECK(readers(pos).empty()) << "remove_stage of " << stages[pos].name << ", which is read";
  stages.erase(stages.begin() + pos);
  for (Stage& s : stages)
    for_each_expr(
        s, [&](Expr& e) { remap_stage_refs(e, [&](int r) { return r > pos ? r - 1 : r; }); });
}

std::vector<Loop> default_loops(const Stage& s) {
  std::vector<Loop> loops;
  for (size_t d = 0; d < s.vars.size(); ++d) {
    Loop l;
    l.name = s.vars[d].name;
    l.scan = static_cast<int>(d) == s.scan_dim;
    loops.push_back(l);
  }
  for (int r : s.loop_rvars()) {
    Loop l;
    l.name = s.reduce_vars[r].name;
    l.reduce = true;
    loops.push_back(l);
  }
  return loops;
}

namespace {

// Adds integer constant c to e, folding `X - k + c` and `X + k + c` (bounds read better).
Expr add_const(Expr e, int64_t c) {
  if (c == 0) return e;
  if (auto v = const_int(e)) return int_lit(*v + c);
  if (e.kind == ExprKind::call && (e.op == te::Op::sub || e.op == te::Op::add)) {
    if (auto k = const_int(e.args[1])) {
      const int64_t folded = (e.op == te::Op::add ? *k : -*k) + c;
      if (folded == 0) return e.args[0];
      return binary(folded > 0 ? te::Op::add : te::Op::sub, e.args[0], int_lit(std::abs(folded)));
    }
  }
  return binary(c > 0 ? te::Op::add : te::Op::sub, std::move(e), int_lit(std::abs(c)));
}

}  // namespace

std::optional<Expr> static_max(const Expr& e, const Stage& s) {
  if (te::is_static(e)) return e;
  if (e.kind == ExprKind::name && e.ref.kind == RefKind::index_var)
    return add_const(s.vars[static_cast<size_t>(e.ref.index)].hi, -1);
  if (e.kind != ExprKind::call) return std::nullopt;
  switch (e.op) {
    case te::Op::add: {
      if (auto k = const_int(e.args[1])) {
        if (auto a = static_max(e.args[0], s)) return add_const(*a, *k);
        return std::nullopt;
      }
      auto a = static_max(e.args[0], s), b = static_max(e.args[1], s);
      if (a && b) return binary(te::Op::add, *a, *b);
      return std::nullopt;
    }
    case te::Op::sub: {
      if (!te::is_static(e.args[1])) return std::nullopt;  // decreasing in what it reads
      auto a = static_max(e.args[0], s);
      if (!a) return std::nullopt;
      if (auto k = const_int(e.args[1])) return add_const(*a, -*k);
      return binary(te::Op::sub, *a, e.args[1]);
    }
    case te::Op::min: {
      auto a = static_max(e.args[0], s), b = static_max(e.args[1], s);
      if (a && b) return binary(te::Op::min, *a, *b);
      return a ? a : b;  // min(a, b) <= either
    }
    case te::Op::div: {  // truncating division by a positive constant is nondecreasing
      auto k = const_int(e.args[1]);
      auto a = static_max(e.args[0], s);
      if (!k || *k <= 0 || !a) return std::nullopt;
      return binary(te::Op::div, *a, int_lit(*k));
    }
    case te::Op::mod: {  // a % k < k for a positive constant k (and a negative a gives <= 0)
      auto k = const_int(e.args[1]);
      if (!k || *k <= 0) return std::nullopt;
      return int_lit(*k - 1);
    }
    case te::Op::mul: {
      for (int i = 0; i < 2; ++i) {
        auto k = const_int(e.args[static_cast<size_t>(i)]);
        if (!k || *k < 0) continue;
        if (auto a = static_max(e.args[static_cast<size_t>(1 - i)], s))
          return binary(te::Op::mul, int_lit(*k), *a);
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

namespace {

// The smallest value of `e` over the stage's index space when `e` is nondecreasing in every index
// var it reads (`c * 64` -> 0); nullopt otherwise.
std::optional<Expr> static_min(const Expr& e, const Stage& s) {
  if (te::is_static(e)) return e;
  if (e.kind == ExprKind::name && e.ref.kind == RefKind::index_var) return int_lit(0);
  if (e.kind != ExprKind::call) return std::nullopt;
  std::optional<int64_t> k;
  if (e.args.size() == 2) k = const_int(e.args[1]);
  switch (e.op) {
    case te::Op::add: {
      auto a = static_min(e.args[0], s), b = static_min(e.args[1], s);
      if (!a || !b) return std::nullopt;
      if (auto kb = const_int(*b)) return add_const(*a, *kb);
      return binary(te::Op::add, *a, *b);
    }
    case te::Op::sub: {
      if (!te::is_static(e.args[1])) return std::nullopt;
      auto a = static_min(e.args[0], s);
      if (!a) return std::nullopt;
      return k ? add_const(*a, -*k) : binary(te::Op::sub, *a, e.args[1]);
    }
    case te::Op::mul:
    case te::Op::div: {
      if (!k || *k <= 0) return std::nullopt;
      auto a = static_min(e.args[0], s);
      if (!a) return std::nullopt;
      if (auto ka = const_int(*a)) return int_lit(e.op == te::Op::mul ? *ka * *k : *ka / *k);
      return binary(e.op, *a, int_lit(*k));
    }
    default:
      return std::nullopt;
  }
}

// Names of variables bound by reduce nodes inside `e` (including e itself).
void bound_rvars(const Expr& e, std::set<int>& out) {
  te::visit(e, [&](const Expr& x) {
    if (x.kind == ExprKind::reduce) out.insert(x.rvars.begin(), x.rvars.end());
  });
}

// Finds a reduce node in `e` that can become a stage; `top` is the stage body's top reduce (not
// a candidate itself). Returns a pointer into `e`, or nullptr.
Expr* find_extractable(Expr& e, const Expr* top, const Stage& s) {
  if (e.kind == ExprKind::reduce && &e != top) {
    bool ok = true;
    for (int r : e.rvars) ok = ok && s.reduce_vars[r].is_static;
    if (ok && can_lift(s, e)) return &e;
  }
  for (size_t i = 0; i < eager_operands(e); ++i)
    if (Expr* r = find_extractable(e.args[i], top, s)) return r;
  return nullptr;
}

// The reduce vars bound inside `e` (by e itself or nested reductions).
std::set<int> bound_in(const Expr& e) {
  std::set<int> bound;
  bound_rvars(e, bound);
  return bound;
}

// A lifted stage whose range was widened past where the original evaluated it (a free reduction
// var's covering range) evaluates its reads at points the original never did, where an index
// may fall outside its tensor: every access not surely in range reads 0 there instead (`else
// 0`). Those values are never read back: the original stage reads the lifted one only where it
// evaluated the expression itself, and there every index was in range.
Expr guard_accesses(const Pipeline& p, const Stage& e) {
  return map_accesses(e.body, [&](const Expr& a) -> std::optional<Expr> {
    if (a.has_else) return std::nullopt;
    const bool input = a.ref.kind == RefKind::input;
    if (!input && a.ref.kind != RefKind::stage) return std::nullopt;
    const auto t = static_cast<size_t>(a.ref.index);
    bool safe = true;
    for (size_t d = 0; d < a.index_count(); ++d) {
      const Expr extent =
          input ? formula_to_te(p.task->inputs[t].shape[d], *p.task) : p.stages[t].vars[d].hi;
      safe = safe && surely_within(a.args[d], e, extent);
    }
    if (safe) return std::nullopt;
    Expr g = a;
    g.has_else = true;
    g.args.push_back(a.type == te::ValueType::i64 ? int_lit(0) : float_lit(0.0));
    return g;
  });
}

// Every name node `e` reads, including those in the ranges of the reductions inside it
// (`sum(c3 in c2 + 1..c: ...)` reads c2 and c).
void visit_names(const Stage& s, const Expr& e, const std::function<void(const Expr&)>& f) {
  std::set<int> seen;
  std::function<void(const Expr&)> walk = [&](const Expr& x) {
    te::visit(x, [&](const Expr& y) {
      if (y.kind == ExprKind::name) f(y);
      if (y.kind != ExprKind::reduce) return;
      for (int rv : y.rvars) {
        if (!seen.insert(rv).second) continue;
        walk(s.reduce_vars[static_cast<size_t>(rv)].lo);
        walk(s.reduce_vars[static_cast<size_t>(rv)].hi);
      }
    });
  };
  walk(e);
}

}  // namespace

bool surely_within(const Expr& idx, const Stage& e, const Expr& extent) {
  if (idx.kind != ExprKind::name) return false;
  const te::IndexVar* v = nullptr;
  if (idx.ref.kind == RefKind::index_var) v = &e.vars[static_cast<size_t>(idx.ref.index)];
  if (idx.ref.kind == RefKind::reduce_var) v = &e.reduce_vars[static_cast<size_t>(idx.ref.index)];
  return v && v->is_static && const_int(v->lo) == 0 &&
         te::to_string(v->hi) == te::to_string(extent);
}

// A lifted stage evaluates its expression over all of the covering range, also at points the
// original never evaluated (guard_accesses keeps those reads in bounds); the original reads back
// only its own points.
std::optional<std::pair<Expr, Expr>> covering_range(const te::IndexVar& v, const Stage& s) {
  if (v.is_static) return std::make_pair(v.lo, v.hi);
  auto lo = static_min(v.lo, s);
  auto hi = static_max(v.hi, s);
  if (!lo || !hi) return std::nullopt;
  return std::make_pair(*lo, *hi);
}

bool can_lift(const Stage& s, const Expr& e) {
  const std::set<int> bound = bound_in(e);
  bool ok = true;
  visit_names(s, e, [&](const Expr& x) {
    if (x.ref.kind == RefKind::reduce_var && !bound.count(x.ref.index))
      ok = ok && covering_range(s.reduce_vars[static_cast<size_t>(x.ref.index)], s).has_value();
  });
  return ok;
}

void lift_subexpression(Pipeline& p, int si, Expr& r, const std::string& name,
                        const std::string& note) {
  Stage& s = p.stages[static_cast<size_t>(si)];
  KF_CHECK(can_lift(s, r)) << "lift_subexpression: " << name
                           << " has a variable without a static range";
  const std::set<int> bound = bound_in(r);
  std::set<int> free_index, free_reduce;
  visit_names(s, r, [&](const Expr& x) {
    if (x.ref.kind == RefKind::index_var) free_index.insert(x.ref.index);
    if (x.ref.kind == RefKind::reduce_var && !bound.count(x.ref.index))
      free_reduce.insert(x.ref.index);
  });

  Stage e;
  e.name = name;
  e.type = r.type;
  e.note = note;
  e.origin = StageOrigin::lifted;
  e.origin_of = s.name;
  std::vector<Expr> access_idx;
  std::map<int, int> index_pos, reduce_pos;
  std::map<int, Expr> reduce_lo;  // where each lifted reduction var's covering range starts
  for (int i : free_index) {
    index_pos[i] = static_cast<int>(e.vars.size());
    e.vars.push_back(s.vars[static_cast<size_t>(i)]);
    access_idx.push_back(var_ref(RefKind::index_var, i, s.vars[static_cast<size_t>(i)].name));
  }
  for (int rv : free_reduce) {
    const te::IndexVar& v = s.reduce_vars[static_cast<size_t>(rv)];
    const auto range = covering_range(v, s);
    reduce_pos[rv] = static_cast<int>(e.vars.size());
    reduce_lo[rv] = range->first;
    te::IndexVar nv = v;
    nv.lo = int_lit(0);
    nv.hi = const_int(range->first) == 0 ? range->second
                                         : binary(te::Op::sub, range->second, range->first);
    nv.is_static = true;
    e.vars.push_back(nv);
    access_idx.push_back(
        const_int(range->first) == 0
            ? var_ref(RefKind::reduce_var, rv, v.name)
            : binary(te::Op::sub, var_ref(RefKind::reduce_var, rv, v.name), range->first));
  }
  std::map<int, int> new_rvar;
  for (int b : bound) {
    new_rvar[b] = static_cast<int>(e.reduce_vars.size());
    e.reduce_vars.push_back(s.reduce_vars[static_cast<size_t>(b)]);
  }
  auto rename = [&](const Expr& n) -> std::optional<Expr> {
    if (n.ref.kind == RefKind::index_var && index_pos.count(n.ref.index))
      return var_ref(RefKind::index_var, index_pos[n.ref.index], n.name);
    if (n.ref.kind == RefKind::reduce_var && reduce_pos.count(n.ref.index)) {
      const Expr& lo = reduce_lo[n.ref.index];
      Expr at = var_ref(RefKind::index_var, reduce_pos[n.ref.index], n.name);
      return const_int(lo) == 0 ? at : binary(te::Op::add, at, lo);
    }
    return std::nullopt;
  };
  auto fix = [&](const Expr& x) {
    Expr y = map_names(x, rename);
    remap_rvars(y, [&](int b) { return new_rvar.count(b) ? new_rvar[b] : b; });
    return y;
  };
  e.body = fix(r);
  for (te::IndexVar& v : e.reduce_vars) {
    v.lo = fix(v.lo);
    v.hi = fix(v.hi);
  }
  bool widened = false;
  for (int rv : free_reduce) widened = widened || !s.reduce_vars[static_cast<size_t>(rv)].is_static;
  if (widened) e.body = guard_accesses(p, e);
  e.reduction = e.body.kind == ExprKind::reduce && e.body.reduce_op != te::ReduceOp::logsumexp;
  for (int rv : e.body.rvars)
    e.reduction = e.reduction && e.reduce_vars[static_cast<size_t>(rv)].is_static;
  e.loops = default_loops(e);
  e.storage_order.resize(e.vars.size());
  for (size_t d = 0; d < e.vars.size(); ++d) e.storage_order[d] = static_cast<int>(d);

  // In s, the subexpression becomes a read of the new stage (its index is si after insertion).
  r = stage_access(e.name, si, std::move(access_idx), e.type);
  // insert_stage shifts refs >= si, including the new access (which must then point at si).
  p.insert_stage(si, std::move(e));
  Stage& s2 = p.stages[static_cast<size_t>(si) + 1];
  const std::string lifted = p.stages[static_cast<size_t>(si)].name;
  std::function<void(Expr&)> walk = [&](Expr& y) {
    if (y.kind == ExprKind::access && y.ref.kind == RefKind::stage && y.ref.index == si + 1 &&
        y.name == lifted)
      y.ref.index = si;
    for (Expr& a : y.args) walk(a);
  };
  walk(s2.body);
}

namespace {

// Moves one extractable reduction of stage `si` into a new stage before it. False if none.
bool extract_one(Pipeline& p, int si) {
  Stage& s = p.stages[si];
  if (s.is_recurrence()) return false;
  // The top reduce stays (a logsumexp one too, which is inline but has nowhere better to go).
  const Expr* top = s.body.kind == ExprKind::reduce ? &s.body : nullptr;
  Expr* r = find_extractable(s.body, top, s);
  if (!r) return false;
  lift_subexpression(p, si, *r, unique_stage_name(p, s.name + "_r"), "reduction of " + s.name);
  return true;
}

}  // namespace

int root_host(const Pipeline& p, int s, std::string* loop) {
  if (loop) loop->clear();
  while (s >= 0 && p.stages[static_cast<size_t>(s)].compute.kind == ComputeKind::at) {
    const ComputeLoc& at = p.stages[static_cast<size_t>(s)].compute;
    if (loop) *loop = at.loop;
    s = p.find(at.stage);
  }
  return s;
}

std::set<std::string> loop_roots(const Stage& s, const std::string& loop) {
  for (const Split& sp : s.splits) {
    if (sp.kind == SplitKind::split && (sp.outer == loop || sp.inner == loop))
      return loop_roots(s, sp.parent);
    if (sp.kind == SplitKind::fuse && sp.parent == loop) {
      std::set<std::string> v = loop_roots(s, sp.outer);
      v.merge(loop_roots(s, sp.inner));
      return v;
    }
  }
  return {loop};
}

std::string unique_stage_name(const Pipeline& p, const std::string& base) {
  auto taken = [&](const std::string& n) {
    if (p.find(n) >= 0) return true;
    for (size_t i = 0; i < p.task->tensor_count(); ++i)
      if (p.task->tensor(i).name == n) return true;
    return std::find(p.task->dims.begin(), p.task->dims.end(), n) != p.task->dims.end();
  };
  if (!taken(base)) return base;
  for (int i = 2;; ++i)
    if (!taken(base + std::to_string(i))) return base + std::to_string(i);
}

Pipeline make_pipeline(const te::Program& program, const Task& task) {
  Pipeline p;
  p.task = &task;
  for (const te::Stage& ts : program.stages) {
    Stage s;
    s.name = ts.name;
    s.output = ts.output;
    s.type = ts.type;
    s.vars = ts.vars;
    s.reduce_vars = ts.reduce_vars;
    s.body = ts.body;
    s.scan_dim = ts.scan_dim;
    // A logsumexp keeps two running values, so it is never a stage's own reduction loops: it
    // runs inline (as an inner loop where its stage computes each point).
    s.reduction = ts.body.kind == ExprKind::reduce && ts.scan_dim < 0 &&
                  ts.body.reduce_op != te::ReduceOp::logsumexp;
    for (int r : ts.body.rvars) s.reduction = s.reduction && ts.reduce_vars[r].is_static;
    p.stages.push_back(std::move(s));
  }
  for (int i = 0; i < static_cast<int>(p.stages.size());) {
    if (extract_one(p, i)) {
      i = 0;  // the new stage may hold nested reductions; rescan (pipelines are small)
      continue;
    }
    ++i;
  }
  substitute_layout_copies(p);
  for (Stage& s : p.stages) {
    s.loops = default_loops(s);
    s.storage_order.resize(s.vars.size());
    for (size_t d = 0; d < s.vars.size(); ++d) s.storage_order[d] = static_cast<int>(d);
  }
  return p;
}

std::string Pipeline::to_string() const {
  std::ostringstream os;
  for (const Stage& s : stages) {
    te::Stage view;
    view.reduce_vars = s.reduce_vars;
    os << "stage " << s.name << "[";
    for (size_t d = 0; d < s.vars.size(); ++d)
      os << (d ? ", " : "") << s.vars[d].name << " in 0.." << te::to_string(s.vars[d].hi);
    os << "] = " << te::to_string(s.body, &view);
    if (s.where) os << " where " << te::to_string(*s.where, &view);
    if (s.where_split)
      os << " (partition " << s.where_split->outer << " by " << s.where_split->factor << ")";
    if (s.output >= 0) os << " -> output " << s.output;
    os << "\n  loops:";
    for (const Loop& l : s.loops) {
      os << " " << l.name;
      if (l.kind != LoopKind::serial) os << "(" << sched::to_string(l.kind);
      if (l.kind == LoopKind::vectorized && l.lanes) os << " " << l.lanes;
      if (l.kind != LoopKind::serial) os << ")";
      if (l.prefetch > 0) os << "(prefetch " << l.prefetch << ")";
      if (l.uniform) os << "(uniform)";
    }
    os << "\n  compute: ";
    switch (s.compute.kind) {
      case ComputeKind::root:
        os << "root";
        break;
      case ComputeKind::inlined:
        os << "inline";
        break;
      case ComputeKind::at:
        os << "at " << s.compute.stage << "." << s.compute.loop;
        break;
    }
    if (s.nontemporal) os << "\n  stores: nontemporal";
    if (s.row_align > 0) os << "\n  rows: padded to " << s.row_align << " elements";
    if (s.hoist_gathers) os << "\n  loops: by pages of their divisors (hoist_gathers)";
    if (s.reduce_lanes != 0)
      os << "\n  inline reductions: vectorized"
         << (s.reduce_lanes > 0 ? " " + std::to_string(s.reduce_lanes) : std::string());
    if (s.double_buffer)
      os << "\n  double buffered: a row every " << s.double_buffer->every << " iterations of "
         << s.double_buffer->stage << "." << s.double_buffer->loop;
    os << "\n";
  }
  return os.str();
}

}  // namespace kf::sched
