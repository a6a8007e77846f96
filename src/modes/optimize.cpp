// The optimize loop (see optimize.h for the cycle and the resume design): the driver and one
// step; tuning and the final run are in optimize_finish.cpp.
#include "modes/optimize.h"

#include <algorithm>
#include <random>

#include "modes/optimize_loop.h"
#include "support/hash.h"

namespace kf {
namespace optimize_detail {

Status Loop::setup() {
  auto env = RunEnv::make(RunEnv::options_of(o_, run_id_));
  if (!env) return env.error();
  env_ = std::move(*env);
  if (o_.seed == 0) o_.seed = std::hash<std::string>{}(run_id_) | 1;
  log_ = std::make_unique<RunLog>(env_->log_config(store_, run_id_, o_.budget_evals, &events_));
  if (!o_.spend_as.empty()) KF_RETURN_IF_ERROR(log_->spend_as(o_.spend_as));
  if (resuming_) return resume_state();
  return {};
}

// Replays from the start, skipping the writes made before; starts over after a task edit.
Status Loop::resume_state() {
  auto p = resume_point(store_, run_id_, env_->task_hash, now_s());
  if (!p) return p.error();
  KF_RETURN_IF_ERROR(
      log_->resume_at(p->stored_attempts, p->stored_messages, p->attempt_seq, p->message_seq));
  started_ = p->started_epoch_s;
  if (!p->task_changed) {
    if (p->marker) log_->add_to_journey(p->marker->to_json());
    return {};
  }
  say(
      fmt::format("the task changed since run {} measured it ({} is {}, was {}): nothing "
                  "measured before is reused, and the run starts over on the task as it is now",
                  run_id_, o_.task_dir.string(), env_->task_hash,
                  p->measured_for.empty() ? "not recorded" : p->measured_for));
  return attempt_without_evaluation("task_changed", "", "restarted",
                                    task_changed_detail(*p, env_->task_hash));
}

Expected<RunResult> Loop::measure(const CandidateMsg& c, const std::string& kind,
                                  const std::string& strategy, const CandidateMsg* rival) {
  const EvalOptions e =
      eval_options_for(env_->eval_settings(o_.seed, o_.min_time_s, o_.final_min_time_s),
                       env_->compiled, c.threads, kind, &best_result_, rival);
  return log_->measure(c, kind, strategy, e);
}

// The driver, top to bottom: the first candidate, then plan → carry out → accept and tune until
// the budget, the planner or the roofline stops it, then the final run.
Expected<OptimizeResult> Loop::run() {
  KF_RETURN_IF_ERROR(setup());
  KF_RETURN_IF_ERROR(start());
  if (Status first = judge_first(); !first.ok())
    return halted() ? halted_before_a_best(store_, run_id_, "optimize", halted_) : first;
  while (budget_left()) {
    auto go_on = step();
    if (!go_on && !halted()) return go_on.error();
    if (!go_on || !*go_on || halted()) break;
  }
  // A halted run (Ctrl-C, a spent LLM budget, an endpoint that stopped answering) is left
  // interrupted or stopped, not finished: the step it was in wrote nothing (an error on the way
  // out of it is the halt's), so a resume replays to this point and goes on from it.
  if (halted()) {
    stop_reason_ = halted_;
    say(fmt::format("stopped: {}\n  `kforge optimize --resume {}` continues the run", halted_,
                    run_id_));
    return finish();
  }
  if (!budget_left() && stop_reason_ == "budget spent")
    stop_reason_ = evals() >= o_.budget_evals ? "evaluation budget spent" : "time budget spent";
  say("stop: " + stop_reason_);
  return finish();
}

Status Loop::start() {
  if (!resuming_) started_ = now_s();
  return env_->start_run(store_, events_, run_id_,
                         {.mode = "optimize",
                          .options = o_.to_json(),
                          .threads = o_.threads,
                          .budget_evals = o_.budget_evals,
                          .budget_time_s = o_.budget_time_s,
                          .resumed = resuming_,
                          .started_epoch_s = started_});
}

Status Loop::judge_first() {
  auto naive = o_.from.empty() ? env_->brain.implementer->first(work(nullptr))
                               : starting_candidate(o_.from, work(nullptr));
  if (!naive) return naive.error().with_context("the first candidate");
  auto first = measure(*naive, "baseline", o_.from.empty() ? "default" : "from");
  if (!first) return first.error();
  // A first candidate too slow to time at the bench shape (a naive scan over a long sequence)
  // is no reason to stop: the planner works from the program's structure, and the first
  // candidate judged ok with a time becomes the best. Anything else ends the run: generated, it
  // is a kforge bug; imported (the task's reference), the task's.
  const bool naive_too_slow = first->verdict == Verdict::timeout;
  if (!naive_too_slow && (first->verdict != Verdict::ok || !first->timing))
    return Status::error(fmt::format(
        "the first candidate ({}) was judged {}: {}{}", candidate_label(*naive),
        verdict_name(first->verdict), first->message,
        naive->kind == agents::SourceKind::generated && o_.from.empty() ? " (a kforge bug)" : ""));
  if (naive_too_slow)
    say("the first candidate (" + candidate_label(*naive) + ") ran past the time limit (" +
        first->message +
        "): planning from the program's structure; the first candidate judged ok becomes the best");
  best_ = *naive;
  best_result_ = *first;
  first_label_ = candidate_label(*naive);
  log_->set_reference_median(first->timing ? first->timing->median_s : 0);
  new_best();
  return {};
}

Expected<bool> Loop::step() {
  agents::PlanInput pi;
  pi.task = &env_->compiled;
  pi.best = &best_;
  pi.evidence = evidence_cache_.get(o_.profile ? env_->brain.profiler.get() : nullptr,
                                    {.task = &env_->compiled,
                                     .candidate = &best_,
                                     .result = &best_result_,
                                     .machine = &env_->machine,
                                     .target = &env_->target,
                                     .cxx = o_.cxx,
                                     // Stage timers run here: on the workers' machine only.
                                     .stage_times = env_->judge().remote() ? "off" : o_.stage_times,
                                     .stage_time_s = o_.stage_time_s});
  pi.tried = tried_;
  pi.ctx = move_context();
  pi.stop_fraction = o_.stop_fraction;
  pi.filter = env_->strategies();
  KF_RETURN_IF_ERROR(message("profiler", "planner", "Profile", pi.evidence.to_json()));
  agents::Plan plan = env_->brain.planner->plan(pi);
  if (halted()) return false;
  KF_RETURN_IF_ERROR(message("planner", "implementer", "Plan", plan.to_json()));
  if (tune_pending_ && plan.strategy != "stop" && plan.expected_speedup < kTuneWhenBelow) {
    tune_pending_ = false;
    say(fmt::format(
        "  the best remaining plan expects ~{:.2f}x: tuning the newest step's knobs first",
        plan.expected_speedup));
    auto tuned = tune_newest_step();
    if (!tuned) return tuned.error();
    if (*tuned) {
      tried_.clear();
      return true;  // plan again from the tuned best
    }
    if (!budget_left()) return false;
  }
  if (plan.strategy == "stop") return out_of_plans(plan, pi.evidence);
  auto accepted = carry_out(plan);
  if (!accepted) return accepted.error();
  if (!*accepted) return true;
  // A candidate with no knobs of its own (a rewrite of the program, written source): nothing
  // to tune.
  if (!env_->brain.autotuner->tunes(plan) || !env_->brain.autotuner->varies(best_)) return true;
  // Tune the knobs of the recipe that just won; below three tuning rounds of budget, only
  // once the strategies left expect little (kTuneWhenBelow).
  if (o_.budget_evals < 3 * o_.tune_budget) {
    tune_pending_ = true;
    return true;
  }
  auto tuned = tune_newest_step();
  if (!tuned) return tuned.error();
  return true;
}

Expected<bool> Loop::out_of_plans(const agents::Plan& plan, const agents::Evidence& evidence) {
  tune_pending_ = false;  // the whole recipe is swept below
  stop_reason_ = plan.why;
  if (agents::at_roofline(evidence, o_.stop_fraction) || !best_result_.timing || !budget_left() ||
      !env_->brain.autotuner->varies(best_))
    return false;
  // Out of strategies below the roofline's stop line: the knobs of the earlier steps were
  // chosen while later-fixed stages still dominated the time, so the whole recipe is swept
  // once against the finished schedule. A better value opens the plan again.
  if (!final_tuned_) {
    final_tuned_ = true;
    say("out of strategies: tuning the whole recipe's knobs once more");
    auto tuned = tune_best(std::min(2 * o_.tune_budget, o_.budget_evals - evals()),
                           agents::TuneScope::whole_recipe);
    if (!tuned) return tuned.error();
    if (*tuned) {
      tried_.clear();
      return true;
    }
    if (!budget_left()) return false;
  }
  // A planner of another brain (an LLM, a person) that says stop has decided to: the local
  // search stands in for the built-in rules only.
  if (env_->brain.roles.at("planner") != "builtin") return false;
  return explore();
}

Expected<bool> Loop::explore() {
  const agents::StrategyFilter filter = env_->strategies();
  std::vector<const agents::Strategy*> moves;
  // Only moves that apply to the best and change it (the implementer is asked here, without a
  // record; a move that does not apply is no attempt).
  for (const agents::Strategy& s : agents::strategy_catalog()) {
    if (!s.moves || !filter.allows(s.id) || tried_.count(s.id) ||
        (best_.generated && best_.generated->recipe.has(s.id)))
      continue;
    auto c = env_->brain.implementer->implement({.strategy = s.id, .knobs = s.default_knobs()},
                                                work(&best_));
    if (c && c->key != best_.key) moves.push_back(&s);
  }
  // The order is drawn from the run's seed and the best (content_hash is the same on every
  // build), so a resumed run replays it.
  std::mt19937_64 rng(o_.seed ^ std::stoull(content_hash(best_.key).substr(0, 16), nullptr, 16));
  std::shuffle(moves.begin(), moves.end(), rng);
  if (!moves.empty())
    say(
        fmt::format("out of strategies with {} evaluations left: trying the catalog's {} other "
                    "moves from the best, in a random order",
                    evals_left(), moves.size()));
  for (const agents::Strategy* s : moves) {
    if (!budget_left() || halted()) return false;
    agents::Plan plan{.strategy = s->id,
                      .knobs = s->default_knobs(),
                      .why = "exploring: a move of the catalog the rules did not suggest here"};
    KF_RETURN_IF_ERROR(message("planner", "implementer", "Plan", plan.to_json()));
    auto accepted = carry_out(plan);
    if (!accepted) return accepted.error();
    if (*accepted) return true;  // the planner plans again from the new best
  }
  if (budget_left())
    stop_reason_ += moves.empty() ? "; no other move of the catalog applies to the best"
                                  : "; none of the catalog's other moves was faster";
  return false;
}

Expected<bool> Loop::carry_out(const agents::Plan& plan) {
  const std::string plan_id = plan.id();
  auto cand = env_->brain.implementer->implement(plan, work(&best_));
  if (!cand && halted()) return false;
  if (!cand) {
    tried_.insert(plan_id);
    KF_RETURN_IF_ERROR(attempt_without_evaluation("plan", plan_id, "not_applicable",
                                                  {{"message", cand.error().message()}}));
    return false;
  }
  // The best again (a brain that wrote the same source, a plan already carried out): nothing
  // new to judge.
  if (cand->key == best_.key) {
    tried_.insert(plan_id);
    KF_RETURN_IF_ERROR(attempt_without_evaluation(
        "plan", plan_id, "not_applicable",
        {{"message", "the implementer's candidate is the best itself"}}));
    return false;
  }
  KF_RETURN_IF_ERROR(message("implementer", "tester", "Candidate", cand->to_json()));
  auto r = measure(*cand, "plan", plan_id);
  if (!r) return r.error();
  auto report = env_->brain.tester->report(*r, &best_result_);
  KF_RETURN_IF_ERROR(message("tester", "planner", "TestReport", report.to_json()));
  if (r->verdict != Verdict::ok) {
    auto d = env_->brain.debugger->debug(*cand, *r, 1, work(&best_));
    if (halted()) return false;
    KF_RETURN_IF_ERROR(message("debugger", "planner", "Diagnostics", d.diagnostics.to_json()));
    if (d.diagnostics.kforge_bug)
      say("  kforge bug recorded: generated code was judged " +
          std::string(verdict_name(r->verdict)) + ": " + r->message);
    bool repaired = false;
    if (d.repaired && budget_left()) {
      auto r2 = measure(*d.repaired, "debug", plan_id);
      if (!r2) return r2.error();
      if (r2->verdict == Verdict::ok) {
        cand = *d.repaired;
        r = r2;
        repaired = true;
      }
    }
    if (!repaired) {
      tried_.insert(plan_id);
      return false;
    }
  }
  // Decisions compare minimum times: on a shared machine the minimum is the measurement least
  // disturbed by other work (the median is reported, the minimum decides).
  bool better = r->timing && (!best_result_.timing ||
                              kAccept.faster(r->timing->min_s, best_result_.timing->min_s));
  // A near miss (within the noise of this machine) is measured again: the best and the
  // candidate back to back, and that pair decides.
  const bool near_miss = !better && kAccept.near_miss(*r, best_result_);
  if (near_miss && budget_left()) {
    auto again = measure(*cand, "confirm", "confirm:" + plan_id, &best_);
    if (!again) return again.error();
    if (kAccept.wins_pair(*again)) {
      better = true;
      r = again;
    }
  }
  if (!better) {
    tried_.insert(plan_id);
    return false;
  }
  best_ = *cand;
  best_result_ = *r;
  new_best();
  tried_.clear();
  KF_RETURN_IF_ERROR(store_.update_run(run_id_, "running", best_.key, {}));
  return true;
}

}  // namespace optimize_detail

using optimize_detail::Loop;

Expected<OptimizeResult> optimize(const OptimizeOptions& options, Store& store) {
  Loop loop(options, store, new_run_id(), false);
  return loop.run();
}

Expected<OptimizeResult> resume_optimize(const std::string& run_id, Store& store,
                                         const OptimizeOptions& overrides) {
  auto run = store.get_run(run_id);
  if (!run) return run.error();
  if (run->mode != "optimize")
    return Status::error("run " + run_id + " is a " + run->mode + " run");
  if (!resumable_state(run->state))
    return Status::error("run " + run_id + " has " + run->state + " already");
  auto o = OptimizeOptions::from_json(run->options);
  if (!o) return o.error();
  o->progress = overrides.progress;
  o->events = overrides.events;
  o->llm = overrides.llm;
  o->broker = overrides.broker.over(o->broker);
  Loop loop(*o, store, run_id, true);
  return loop.run();
}

}  // namespace kf
