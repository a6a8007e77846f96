// The built-in implementer, debugger, tester and autotuner.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "agents/acceptance.h"
#include "agents/builtin/brain.h"
#include "agents/judge.h"
#include "lower/lower.h"
#include "schedule/primitives.h"
#include "support/json_text.h"
#include "support/text_scan.h"
#include "te/compile.h"

namespace kf::agents::builtin {

Expected<sched::Pipeline> pipeline_of(const sched::Pipeline& base, const Recipe& recipe,
                                      const MoveContext& ctx) {
  auto r = realize_recipe(base, recipe, ctx);
  if (!r) return r.error();
  sched::Pipeline p = base;
  Status s = sched::apply_schedule(p, r->schedule);
  if (!s.ok()) return s;
  return p;
}

namespace {

int recipe_threads(const Recipe& r, int requested) {
  for (const Step& s : r.steps)
    if (s.strategy == "thread_count") {
      auto it = s.knobs.find("threads");
      if (it != s.knobs.end() && it->second > 0)
        return static_cast<int>(std::min<int64_t>(it->second, requested));
    }
  return requested;
}

// A recipe with every knob spelled out (defaults filled in), so equal recipes compare equal.
std::string recipe_identity(const Recipe& r) {
  Recipe full = r;
  for (Step& st : full.steps)
    if (const Strategy* s = find_strategy(st.strategy))
      for (const auto& [n, v] : s->default_knobs()) st.knobs.emplace(n, v);
  return dump_json(full.to_json());
}

}  // namespace

const Recipe& recipe_of(const CandidateMsg* c) {
  static const Recipe kDefault;
  return c && c->generated ? c->generated->recipe : kDefault;
}

Expected<CandidateMsg> generate(const Recipe& recipe, const WorkContext& in,
                                const std::string& origin) {
  if (!in.task || !in.task->base || !in.task->program)
    return Status::error("the built-in brain generates kernels from a TE spec; " +
                         (in.task ? in.task->task.name : std::string("the task")) + " has none");
  const sched::Pipeline& base = *in.task->base;
  auto r = realize_recipe(base, recipe, in.ctx);
  if (!r) return r.error();
  for (size_t i = 0; i < recipe.steps.size(); ++i) {
    const Strategy* s = find_strategy(recipe.steps[i].strategy);
    if (s && s->moves && r->applied_groups[i] == 0)
      return Status::error(
          fmt::format("{} does not apply here: {}", recipe.steps[i].strategy,
                      r->skipped.empty() ? "nothing to transform" : r->skipped.back()));
  }
  r->schedule.file = "recipe";
  LowerOptions lo;
  if (in.ctx.target) lo.target = in.ctx.target->codegen;
  auto src = generate_kernel(in.task->task, *in.task->program, r->schedule, lo);
  if (!src) return Status::error("lowering failed (a kforge bug): " + src.error().message());
  CandidateMsg c;
  c.source = *src;
  c.kind = SourceKind::generated;
  c.generated =
      Generation{.schedule = r->schedule.to_string(), .recipe = recipe, .skipped = r->skipped};
  c.parent = in.best ? in.best->key : "";
  c.origin = origin;
  c.threads = recipe_threads(recipe, in.ctx.threads);
  c.key = candidate_key(c.source, in.compile);
  return c;
}

Expected<CandidateMsg> BuiltinImplementer::first(const WorkContext& in) {
  return generate({}, in, "naive");
}

Expected<CandidateMsg> BuiltinImplementer::implement(const Plan& plan, const WorkContext& in) {
  const Strategy* s = find_strategy(plan.strategy);
  if (plan.strategy.empty())
    return Status::error(
        "the built-in implementer applies catalog strategies; this plan names "
        "none");
  if (!s) return Status::error(fmt::format("unknown strategy '{}'", excerpt(plan.strategy)));
  if (!s->mechanical())
    return Status::error(
        fmt::format("{} has no mechanical form for the built-in implementer", plan.strategy));
  if (!in.task || !in.task->base)
    return generate({}, in, "builtin:" + plan.strategy);  // names the missing TE spec
  Recipe recipe = recipe_of(in.best);
  Knobs knobs = plan.knobs;
  if (in.ctx.pins) in.ctx.pins->apply(plan.strategy, knobs);  // a person's values win
  if (s->rewrite_first) {
    // After the rewrites already there, before every loop-scheduling step.
    auto at = recipe.steps.begin();
    while (at != recipe.steps.end()) {
      const Strategy* t = find_strategy(at->strategy);
      if (!t || !t->rewrite_first) break;
      ++at;
    }
    const auto pos = at - recipe.steps.begin();
    recipe.steps.insert(at, {plan.strategy, knobs});
    // The later steps replay on the rewritten stages; one left with nothing to do (an rfactor of
    // the normalizer the rewrite removed) is dropped.
    auto r = realize_recipe(*in.task->base, recipe, in.ctx);
    if (!r) return r.error();
    Recipe kept;
    for (size_t i = 0; i < recipe.steps.size(); ++i) {
      const Strategy* t = find_strategy(recipe.steps[i].strategy);
      if (static_cast<long>(i) != pos && t && t->moves && r->applied_groups[i] == 0) continue;
      kept.steps.push_back(recipe.steps[i]);
    }
    recipe = std::move(kept);
  } else {
    recipe.steps.push_back({plan.strategy, knobs});
  }
  return generate(recipe, in, "builtin:" + plan.strategy);
}

DebugOutcome BuiltinDebugger::debug(const CandidateMsg& c, const RunResult& r, int attempt,
                                    const WorkContext& in) {
  DebugOutcome out;
  out.diagnostics.message = r.message;
  out.diagnostics.details = r.diagnostics;
  switch (r.verdict) {
    case Verdict::ok:
      out.diagnostics.phase = "none";
      return out;
    case Verdict::compile_error:
      out.diagnostics.phase = "compile";
      for (const auto& d : r.compile.diagnostics)
        if (d.severity == "error")
          out.diagnostics.details.push_back(fmt::format("{}:{}: {}", d.line, d.column, d.message));
      break;
    case Verdict::wrong_answer:
      out.diagnostics.phase = "test";
      for (const auto& k : r.checks)
        if (!k.passed) out.diagnostics.details.push_back(k.shape + ": " + k.detail);
      break;
    case Verdict::crash:
    case Verdict::timeout:
    case Verdict::memory_limit:
    case Verdict::forbidden:
    case Verdict::suspicious:
      out.diagnostics.phase = "run";
      break;
  }
  // Generated code that does not compile or computes a wrong answer is a kforge bug (lowering
  // or codegen), not the candidate's: record it, and back out the last strategy step once.
  const bool generated = c.kind == SourceKind::generated;
  out.diagnostics.kforge_bug =
      generated && (r.verdict == Verdict::compile_error || r.verdict == Verdict::wrong_answer ||
                    r.verdict == Verdict::crash);
  const Recipe& recipe = recipe_of(&c);
  if (attempt == 1 && recipe.steps.size() > 1 && r.verdict == Verdict::timeout) {
    // Too slow to finish in time: the step's knobs may be pathological; retry with defaults.
    Recipe repaired = recipe;
    const Strategy* s = find_strategy(repaired.steps.back().strategy);
    if (s && repaired.steps.back().knobs != s->default_knobs()) {
      repaired.steps.back().knobs = s->default_knobs();
      const std::string origin =
          "debugger:" + (c.origin.starts_with("builtin:") ? c.origin.substr(8) : c.origin);
      auto fixed = generate(repaired, in, origin);
      if (fixed) out.repaired = std::move(*fixed);
    }
  }
  return out;
}

TestReport BuiltinTester::report(const RunResult& r, const RunResult* best) {
  TestReport t;
  t.verdict = r.verdict;
  t.message = r.message;
  for (const auto& k : r.checks) {
    ++t.checks_total;
    if (k.passed) ++t.checks_passed;
  }
  if (r.timing) {
    t.median_s = r.timing->median_s;
    t.min_s = r.timing->min_s;
  }
  if (r.verdict == Verdict::ok && best && best->timing && t.median_s > 0)
    t.speedup_vs_best = best->timing->median_s / t.median_s;
  return t;
}

namespace {

// A register tile of 16-lane vectors must fit AVX-512's 32 vector registers: MR x NR/16
// accumulators, NR/16 operand vectors and one broadcast. A trial value that breaks this (nr = 64
// at mr = 8: 32 accumulators alone) lowers mr to the largest of its choices that fits, so one
// step of the descent goes from 8 x 32 to 6 x 64; false (skip the trial) when none fits. The
// other way, a trial that narrows the tile (`changed` is nr, smaller than `before`'s) takes the
// rows it frees, up to the accumulators the tile had: 6 x 64 tries 12 x 32, not 6 x 32 (which
// leaves half the register file idle, and would need two steps of the descent to reach 12 x 32).
// Narrower vectors are left alone. The register file is the target's: 32 AVX-512 registers of
// 16 lanes, or 16 AVX2 registers of 8.
bool fit_register_tile(const Strategy& s, const Knobs& before, const std::string& changed,
                       const Target* target, Knobs& knobs) {
  const Knob* mr = nullptr;
  int64_t nr = 0, lanes = 0;
  auto value = [&](const Knobs& ks, const Knob& k) {
    auto it = ks.find(k.name);
    return it == ks.end() ? k.initial : it->second;
  };
  int64_t nr_before = 0;
  for (const Knob& k : s.knobs) {
    const int64_t v = value(knobs, k);
    if (k.name == "mr") mr = &k;
    if (k.name == "nr") {
      nr = v;
      nr_before = value(before, k);
    }
    if (k.name == "lanes") lanes = v;
  }
  if (!mr || nr <= 0 || lanes != 16) return true;
  // In the target's own registers: a 16-lane vector of the schedule is two AVX2 registers.
  const int64_t registers = target ? target->vector_registers : 32;
  const int64_t reg_lanes = target ? target->f32_lanes : 16;
  if (reg_lanes < 8) return true;  // no vector registers to fit
  auto vectors_of = [&](int64_t n) { return (n + reg_lanes - 1) / reg_lanes; };
  const int64_t vectors = vectors_of(nr);
  auto fits = [&](int64_t m) { return m * vectors + vectors + 1 <= registers; };
  int64_t now = value(knobs, *mr);
  if (changed == "nr" && nr < nr_before) {
    const int64_t accumulators = value(before, *mr) * vectors_of(nr_before);
    for (int64_t m : mr->values)
      if (m > now && m * vectors <= accumulators && fits(m)) now = m;
    if (now != value(knobs, *mr)) knobs["mr"] = now;
  }
  if (fits(now)) return true;
  int64_t best = 0;
  for (int64_t m : mr->values)
    if (m < now && fits(m)) best = std::max(best, m);
  if (best == 0) return false;
  knobs["mr"] = best;
  return true;
}

}  // namespace

bool BuiltinAutotuner::tunes(const Plan& accepted) const {
  // A rewrite-first step has no knobs and is not the recipe's newest step (the last).
  const Strategy* s = find_strategy(accepted.strategy);
  return !(s && s->rewrite_first);
}

void BuiltinAutotuner::tune(const CandidateMsg& best, double best_time, const MeasureFn& measure,
                            int budget, TuneScope scope, const WorkContext& in) {
  if (!best.generated || !in.task || !in.task->base) return;  // nothing to vary
  // A variant that does not generate (a knob value no move accepts) is a failed measurement.
  tune_recipe(
      best.generated->recipe, best_time,
      [&](const Recipe& r, const std::string& origin) -> std::optional<double> {
        auto c = generate(r, in, origin);
        if (!c) return std::nullopt;
        return measure(*c);
      },
      budget, scope, in.ctx);
}

Recipe tune_recipe(const Recipe& best, double best_time, const RecipeMeasureFn& measure, int budget,
                   TuneScope scope, const MoveContext& ctx) {
  // Coordinate descent: one knob at a time, each of its candidate values, keep what is faster
  // by more than the noise margin; repeat the sweep while it improves and budget remains.
  const AcceptancePolicy& accept = acceptance_policy();
  Recipe cur = best;
  double cur_time = best_time;
  // Recipes measured already (the starting one included): a later sweep never repeats them.
  std::set<std::string> seen = {recipe_identity(best)};
  // One pass over the knobs of step i; true if a value was kept.
  auto sweep = [&](size_t i) {
    bool kept = false;
    const Strategy* s = find_strategy(cur.steps[i].strategy);
    if (!s) return false;
    for (const Knob& k : s->knobs) {
      if (ctx.pins && ctx.pins->pinned(s->id, k.name)) continue;  // held by a person
      for (int64_t v : k.values) {
        if (budget <= 0) return kept;
        auto it = cur.steps[i].knobs.find(k.name);
        const int64_t now = it == cur.steps[i].knobs.end() ? k.initial : it->second;
        if (v == now) continue;
        Recipe trial = cur;
        Knobs& knobs = trial.steps[i].knobs;
        knobs[k.name] = v;
        const Knobs asked = knobs;
        if (!fit_register_tile(*s, cur.steps[i].knobs, k.name, ctx.target, knobs)) continue;
        if (ctx.pins && !ctx.pins->holds(s->id, knobs)) continue;  // the fit moved a pinned one
        if (!seen.insert(recipe_identity(trial)).second) continue;
        --budget;
        std::string label = fmt::format("autotune:{}.{}={}", s->id, k.name, v);
        if (knobs != asked) label += fmt::format(",mr={}", knobs.at("mr"));
        auto t = measure(trial, label);
        if (t && accept.faster(*t, cur_time)) {
          cur = trial;
          cur_time = *t;
          kept = true;
        }
      }
    }
    return kept;
  };
  if (cur.steps.empty()) return cur;
  if (scope == TuneScope::whole_recipe) {
    // The first step (the tile, usually) first: it sets the balance the later ones tune within.
    for (size_t i = 0; i < cur.steps.size() && budget > 0; ++i) sweep(i);
    return cur;
  }
  // The newest step with knobs first: a step with none (a loop's specialization) leaves the
  // tuning of the one before it (its tile) still to do. The earlier ones were tuned when they
  // were accepted: they are swept again only when the newest step's knobs moved (the balance
  // between the steps changed), so a step that needs no tuning costs one sweep of its own knobs,
  // not of the whole recipe's.
  size_t newest = cur.steps.size() - 1;
  const auto tunable = [&](size_t i) {
    const Strategy* s = find_strategy(cur.steps[i].strategy);
    return s && std::any_of(s->knobs.begin(), s->knobs.end(), [&](const Knob& k) {
             return !ctx.pins || !ctx.pins->pinned(s->id, k.name);
           });
  };
  while (newest > 0 && !tunable(newest)) --newest;
  bool improved = sweep(newest);
  while (improved && budget > 0) {
    improved = false;
    for (size_t i = cur.steps.size(); i-- > 0 && budget > 0;) improved = sweep(i) || improved;
  }
  return cur;
}

}  // namespace kf::agents::builtin
