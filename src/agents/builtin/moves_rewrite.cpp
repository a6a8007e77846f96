// Mechanical forms of the strategies that change what a stage computes, or how often, rather
// than its loops: strength_reduce (reciprocals), recompute_vs_store, hoist_invariants and
// fast_approximations.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "agents/builtin/moves.h"
#include "agents/builtin/moves_internal.h"
#include "schedule/primitives.h"
#include "schedule/te_util.h"
#include "te/static_eval.h"

namespace kf::agents::builtin {
namespace {

bool transcendental(te::Op op) {
  return sched::approximable(op) || op == te::Op::pow;
}

}  // namespace

std::vector<int> recomputed_transcendentals(const sched::Pipeline& p) {
  std::vector<int> out;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const sched::Stage& s = p.stages[i];
    if (s.compute.kind != sched::ComputeKind::inlined || s.reduction || s.loops.empty()) continue;
    bool costly = false;
    te::visit(s.body, [&](const te::Expr& e) {
      if (e.kind == te::ExprKind::call && transcendental(e.op)) costly = true;
    });
    if (costly && p.consumers(static_cast<int>(i)).size() >= 2) out.push_back(static_cast<int>(i));
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_recompute_vs_store(const sched::Pipeline& p, const Knobs& k,
                                                          const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (int i : recomputed_transcendentals(p)) {
    const sched::Stage& s = p.stages[static_cast<size_t>(i)];
    // Computed once per outer iteration of its last reader (a row, for a softmax), where every
    // other reader is computed too: the values stay in L1 between the readers. A reader
    // computed inside another stage (a row sum's vector partials) moves with the stage at root
    // that hosts it. They move latest first: an earlier one may be read by a later one (y_r
    // reads m through e).
    const std::vector<int> readers = p.consumers(i);
    const int last_index = readers.back();
    const sched::Stage& last = p.stages[static_cast<size_t>(last_index)];
    if (last.loops.empty() || last.loops[0].reduce || last.loops[0].scan) continue;
    const std::string at = last.name + "." + last.loops[0].name;
    std::set<int> hosts;
    for (int r : readers) {
      r = sched::root_host(p, r);
      if (r >= 0 && r != last_index) hosts.insert(r);
    }
    MoveGroup mg{s.name, {}};
    for (auto h = hosts.rbegin(); h != hosts.rend(); ++h)
      mg.moves.push_back(
          prim(fmt::format("compute_at {} {}", p.stages[static_cast<size_t>(*h)].name, at)));
    mg.moves.push_back(prim(fmt::format("compute_at {} {}", s.name, at)));
    const sched::Loop& inner = s.loops.back();
    if (!inner.reduce && !inner.scan && inner.kind == sched::LoopKind::serial)
      mg.moves.push_back(prim(fmt::format("vectorize {}.{} {}", s.name, inner.name, lanes)));
    g.push_back(std::move(mg));
  }
  return g;
}

int64_t bench_extent(const Bindings* bench, const te::Expr& hi) {
  if (!bench) return 1;
  auto v = te::eval_static_int(hi, *bench);
  return v ? std::max<int64_t>(1, *v) : 1;
}

namespace {

// Fewer repeats than this are not worth a stage and its buffer.
constexpr int64_t kMinRepeats = 8;

// The innermost reduction body of `e` that contains an access to stage `name` (or `e` itself).
const te::Expr* loop_body_of(const te::Expr& e, const std::string& name) {
  const te::Expr* found = nullptr;
  std::function<bool(const te::Expr&, const te::Expr*)> walk = [&](const te::Expr& x,
                                                                   const te::Expr* body) {
    if (x.kind == te::ExprKind::access && x.ref.kind == te::RefKind::stage && x.name == name) {
      found = body;
      return true;
    }
    const te::Expr* inner = x.kind == te::ExprKind::reduce ? &x.args[0] : body;
    for (const te::Expr& a : x.args)
      if (walk(a, inner)) return true;
    return false;
  };
  walk(e, &e);
  return found ? found : &e;
}

// `hoist S NAME vars...` on a copy of p: the candidate it makes, if it applies and frees loops
// the C++ compiler could not hoist out of by itself.
std::optional<HoistCandidate> try_hoist(const sched::Pipeline& p, const sched::Stage& s,
                                        const std::vector<std::string>& vars,
                                        const Bindings* bench) {
  sched::Pipeline trial = p;
  const std::string name = sched::unique_stage_name(p, s.name + "_h");
  std::string list;
  for (const std::string& v : vars) list += " " + v;
  if (!sched::apply_primitive(trial, prim(fmt::format("hoist {} {}{}", s.name, name, list))).ok())
    return std::nullopt;
  const sched::Stage& h = trial.stages[static_cast<size_t>(trial.find(name))];
  const sched::Stage& after = trial.stages[static_cast<size_t>(trial.find(s.name))];
  HoistCandidate c{s.name, {}, 0};
  // The compiler hoists an invariant out of the loops inside the last one it reads (reductions
  // run innermost); the repeats it cannot remove are those of the freed loops outside that one.
  // A term that reads no variable is a constant it folds.
  std::vector<std::string> order;
  for (const te::IndexVar& w : s.vars) order.push_back(w.name);
  for (const te::IndexVar& w : s.reduce_vars) order.push_back(w.name);
  int innermost = -1;
  for (size_t d = 0; d < order.size(); ++d)
    for (const te::IndexVar& x : h.vars)
      if (x.name == order[d]) innermost = static_cast<int>(d);
  int64_t repeats = 1;
  for (size_t d = 0; d < s.vars.size(); ++d) {
    bool read = false;
    for (const te::IndexVar& x : h.vars) read = read || x.name == s.vars[d].name;
    if (read) continue;
    c.vars.push_back(s.vars[d].name);
    if (static_cast<int>(d) < innermost) repeats *= bench_extent(bench, s.vars[d].hi);
  }
  if (innermost < 0 || repeats < kMinRepeats) return std::nullopt;
  // Its share of the work of the loop it sat in (the reduction body, or the stage's point).
  const double moved = sched::expr_cost(h.body);
  const double left = sched::expr_cost(*loop_body_of(after.body, name));
  c.saved = moved / (moved + left);
  return c;
}

}  // namespace

std::vector<HoistCandidate> hoist_candidates(const sched::Pipeline& p) {
  std::vector<HoistCandidate> out;
  const BenchShape shape(*p.task);
  const Bindings* bench = shape.env;
  for (const sched::Stage& s : p.stages) {
    if (s.loops.empty() || s.compute.kind == sched::ComputeKind::inlined || s.is_recurrence())
      continue;
    // From each variable, grow the set of freed variables while the hoist still applies: the
    // more loops freed, the smaller the hoisted stage (and the more repeats saved).
    std::optional<HoistCandidate> best;
    for (const te::IndexVar& v : s.vars) {
      std::optional<HoistCandidate> c = try_hoist(p, s, {v.name}, bench);
      if (!c) continue;
      for (const te::IndexVar& w : s.vars) {
        if (std::find(c->vars.begin(), c->vars.end(), w.name) != c->vars.end()) continue;
        std::vector<std::string> more = c->vars;
        more.push_back(w.name);
        if (auto bigger = try_hoist(p, s, more, bench)) c = bigger;
      }
      if (!best || c->vars.size() > best->vars.size() ||
          (c->vars.size() == best->vars.size() && c->saved > best->saved))
        best = c;
    }
    if (best) out.push_back(*best);
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_hoist_invariants(const sched::Pipeline& p, const Knobs&,
                                                        const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const HoistCandidate& c : hoist_candidates(p)) {
    std::string vars;
    for (const std::string& v : c.vars) vars += " " + v;
    g.push_back({c.stage,
                 {prim(fmt::format("hoist {} {}{}", c.stage,
                                   sched::unique_stage_name(p, c.stage + "_h"), vars))}});
  }
  return g;
}

bool reciprocal_applies(const sched::Pipeline& p, const std::string& stage) {
  sched::Pipeline trial = p;
  return sched::apply_primitive(trial, prim("reciprocal " + stage)).ok();
}

Expected<std::vector<MoveGroup>> moves_strength_reduce(const sched::Pipeline& p, const Knobs&,
                                                       const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const sched::Stage& s : p.stages) {
    if (reciprocal_applies(p, s.name)) g.push_back({s.name, {prim("reciprocal " + s.name)}});
  }
  return g;
}

bool approximation_allowed(const Task& task) {
  if (task.dtype == DType::f64) return false;
  // The fast exponential's 2.8e-6 relative error, carried through a softmax or a Mish, stays
  // within rel_l2 1e-5 with room for the kernel's other roundings (27: 7.9e-7 -> 2.0e-6).
  return task.tolerance_for(task.dtype).rel_l2 >= 1e-5;
}

std::vector<int> approximable_stages(const sched::Pipeline& p) {
  std::vector<int> out;
  if (!p.task || !approximation_allowed(*p.task)) return out;
  for (size_t i = 0; i < p.stages.size(); ++i)
    if (sched::approximable_calls(p.stages[i].body) > 0) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<int> gathered_stages(const sched::Pipeline& p) {
  std::vector<int> out;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const sched::Stage& s = p.stages[i];
    if (s.compute.kind == sched::ComputeKind::inlined || s.hoist_gathers) continue;
    if (sched::divided_gathers(s.body) == 0) continue;
    // Computed inside a stage that runs by pages already (06's dot products at s_r.t).
    bool covered = false;
    for (int h = static_cast<int>(i);
         p.stages[static_cast<size_t>(h)].compute.kind == sched::ComputeKind::at;) {
      h = p.find(p.stages[static_cast<size_t>(h)].compute.stage);
      if (h < 0) break;
      covered = covered || p.stages[static_cast<size_t>(h)].hoist_gathers;
    }
    if (!covered) out.push_back(static_cast<int>(i));
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_gather_hoisting(const sched::Pipeline& p, const Knobs&,
                                                       const MoveContext&) {
  return per_stage(p, gathered_stages(p), "hoist_gathers");
}

std::vector<PhaseSplit> phase_split_candidates(const sched::Pipeline& p) {
  std::vector<PhaseSplit> out;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const sched::Stage& s = p.stages[i];
    if (!s.reduction) continue;
    const std::string name = sched::unique_stage_name(p, s.name + "_ph");
    sched::Pipeline trial = p;
    if (!sched::apply_primitive(trial, prim("phase_split " + s.name + " " + name)).ok()) continue;
    // The phase vars lead the new stage's vars, one per decomposed pair, each over 0..stride.
    const sched::Stage& ph = trial.stages[static_cast<size_t>(trial.find(name))];
    int64_t kept = 1;
    for (size_t d = 0; d + s.vars.size() < ph.vars.size(); ++d)
      kept *= sched::const_int(ph.vars[d].hi).value_or(1);
    out.push_back({static_cast<int>(i), name, kept});
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_phase_split(const sched::Pipeline& p, const Knobs&,
                                                   const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const PhaseSplit& c : phase_split_candidates(p)) {
    const std::string& s = p.stages[static_cast<size_t>(c.stage)].name;
    g.push_back({s, {prim(fmt::format("phase_split {} {}", s, c.name))}});
  }
  return g;
}

std::vector<OnlineSoftmax> online_softmax_candidates(const sched::Pipeline& p) {
  std::vector<OnlineSoftmax> out;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const sched::Stage& s = p.stages[i];
    if (s.body.kind != te::ExprKind::reduce || s.body.reduce_op != te::ReduceOp::max) continue;
    sched::Pipeline trial = p;
    if (!sched::apply_primitive(trial, prim("online_softmax " + s.name)).ok()) continue;
    // The exp stages left (pe = exp(x - m)) are read by more than the normalizer: the
    // probabilities are used, so each value's exp is evaluated twice (in the logsumexp, then
    // in pe) where the two-pass form stored it once.
    OnlineSoftmax c{s.name, false};
    for (int r : trial.readers(static_cast<int>(i))) {
      const sched::Stage& e = trial.stages[static_cast<size_t>(r)];
      if (e.body.kind == te::ExprKind::call && e.body.op == te::Op::exp &&
          !trial.readers(r).empty())
        c.probabilities_used = true;
    }
    out.push_back(c);
  }
  return out;
}

Expected<std::vector<MoveGroup>> moves_online_softmax(const sched::Pipeline& p, const Knobs&,
                                                      const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const OnlineSoftmax& c : online_softmax_candidates(p)) {
    const std::string& m = c.stage;
    // The logsumexp as vector lanes where it can be (a scalar one calls exp once per value).
    MoveGroup mg{m, {prim("online_softmax " + m), prim("vectorize_reductions " + m)}};
    sched::Pipeline trial = p;
    for (const auto& move : mg.moves)
      if (!sched::apply_primitive(trial, move).ok()) {
        mg.moves.pop_back();
        break;
      }
    g.push_back(std::move(mg));
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_fast_approximations(const sched::Pipeline& p, const Knobs&,
                                                           const MoveContext&) {
  return per_stage(p, approximable_stages(p), "approximate");
}

}  // namespace kf::agents::builtin
