#include "schedule/pipeline.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "schedule/te_util.h"
#include "support/check.h"

namespace kf::sched {

using te::Expr;
using te::ExprKind;
using te::RefKind;

std::string to_string(LoopKind k) {
  switch (k) {
    case LoopKind::serial: return "serial";
    case LoopKind::parallel: return "parallel";
    case LoopKind::vectorized: return "vectorized";
    case LoopKind::unrolled: return "unrolled";
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
    for_each_expr(s, [&](Expr& e) { remap_stage_refs(e, [&](int r) { return r >= pos ? r + 1 : r; }); });
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
    std::set<int> bound;
    bound_rvars(e, bound);
    te::visit(e, [&](const Expr& x) {
      if (x.kind == ExprKind::name && x.ref.kind == RefKind::reduce_var && !bound.count(x.ref.index))
        ok = ok && s.reduce_vars[x.ref.index].is_static;
    });
    if (ok) return &e;
  }
  // Do not look into select branches or else values: those are evaluated lazily.
  size_t n = e.args.size();
  if (e.kind == ExprKind::call && e.op == te::Op::select) n = 1;
  if (e.kind == ExprKind::access && e.has_else) n -= 1;
  for (size_t i = 0; i < n; ++i)
    if (Expr* r = find_extractable(e.args[i], top, s)) return r;
  return nullptr;
}

std::string unique_name(const Pipeline& p, const std::string& base) {
  auto taken = [&](const std::string& n) {
    if (p.find(n) >= 0) return true;
    for (const TensorSpec& t : p.task->inputs)
      if (t.name == n) return true;
    return false;
  };
  if (!taken(base)) return base;
  for (int i = 2;; ++i)
    if (!taken(base + std::to_string(i))) return base + std::to_string(i);
}

// Moves one extractable reduction of stage `si` into a new stage before it. False if none.
bool extract_one(Pipeline& p, int si) {
  Stage& s = p.stages[si];
  if (s.is_recurrence()) return false;
  const Expr* top = s.reduction ? &s.body : nullptr;
  Expr* r = find_extractable(s.body, top, s);
  if (!r) return false;

  std::set<int> bound;
  bound_rvars(*r, bound);
  std::set<int> free_index, free_reduce;
  te::visit(*r, [&](const Expr& x) {
    if (x.kind != ExprKind::name) return;
    if (x.ref.kind == RefKind::index_var) free_index.insert(x.ref.index);
    if (x.ref.kind == RefKind::reduce_var && !bound.count(x.ref.index))
      free_reduce.insert(x.ref.index);
  });

  Stage e;
  e.name = unique_name(p, s.name + "_r");
  e.type = r->type;
  e.note = "reduction of " + s.name;
  std::vector<Expr> access_idx;
  std::map<int, int> index_pos, reduce_pos;
  for (int i : free_index) {
    index_pos[i] = static_cast<int>(e.vars.size());
    e.vars.push_back(s.vars[i]);
    access_idx.push_back(var_ref(RefKind::index_var, i, s.vars[i].name));
  }
  for (int rv : free_reduce) {
    const te::IndexVar& v = s.reduce_vars[rv];
    reduce_pos[rv] = static_cast<int>(e.vars.size());
    te::IndexVar nv = v;
    nv.lo = int_lit(0);
    nv.hi = binary(te::Op::sub, v.hi, v.lo);
    e.vars.push_back(nv);
    access_idx.push_back(binary(te::Op::sub, var_ref(RefKind::reduce_var, rv, v.name), v.lo));
  }
  std::map<int, int> new_rvar;
  for (int b : bound) {
    new_rvar[b] = static_cast<int>(e.reduce_vars.size());
    e.reduce_vars.push_back(s.reduce_vars[b]);
  }
  auto rename = [&](const Expr& n) -> std::optional<Expr> {
    if (n.ref.kind == RefKind::index_var && index_pos.count(n.ref.index))
      return var_ref(RefKind::index_var, index_pos[n.ref.index], n.name);
    if (n.ref.kind == RefKind::reduce_var && reduce_pos.count(n.ref.index)) {
      const te::IndexVar& v = s.reduce_vars[n.ref.index];
      return binary(te::Op::add, var_ref(RefKind::index_var, reduce_pos[n.ref.index], n.name), v.lo);
    }
    return std::nullopt;
  };
  auto fix = [&](const Expr& x) {
    Expr y = map_names(x, rename);
    remap_rvars(y, [&](int b) { return new_rvar.count(b) ? new_rvar[b] : b; });
    return y;
  };
  e.body = fix(*r);
  for (te::IndexVar& v : e.reduce_vars) {
    v.lo = fix(v.lo);
    v.hi = fix(v.hi);
  }
  e.reduction = true;
  for (int rv : e.body.rvars) e.reduction = e.reduction && e.reduce_vars[rv].is_static;
  e.loops = default_loops(e);
  e.storage_order.resize(e.vars.size());
  for (size_t d = 0; d < e.vars.size(); ++d) e.storage_order[d] = static_cast<int>(d);

  // In s, the reduction becomes a read of the new stage (its index is si after insertion).
  *r = stage_access(e.name, si, std::move(access_idx), e.type);
  // insert_stage shifts refs >= si, including the new access (which must then point at si).
  p.insert_stage(si, std::move(e));
  Stage& s2 = p.stages[si + 1];
  auto point_back = [&](Expr& x) {
    std::function<void(Expr&)> walk = [&](Expr& y) {
      if (y.kind == ExprKind::access && y.ref.kind == RefKind::stage && y.ref.index == si + 1 &&
          y.name == p.stages[si].name)
        y.ref.index = si;
      for (Expr& a : y.args) walk(a);
    };
    walk(x);
  };
  point_back(s2.body);
  return true;
}

}  // namespace

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
    s.reduction = ts.body.kind == ExprKind::reduce && ts.scan_dim < 0;
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
    }
    os << "\n  compute: ";
    switch (s.compute.kind) {
      case ComputeKind::root: os << "root"; break;
      case ComputeKind::inlined: os << "inline"; break;
      case ComputeKind::at: os << "at " << s.compute.stage << "." << s.compute.loop; break;
    }
    if (s.nontemporal) os << "\n  stores: nontemporal";
    if (s.double_buffer)
      os << "\n  double buffered: a row every " << s.double_buffer->every << " iterations of "
         << s.double_buffer->stage << "." << s.double_buffer->loop;
    os << "\n";
  }
  return os.str();
}

}  // namespace kf::sched
