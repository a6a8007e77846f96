// The optimize loop (see optimize.h for the cycle and the resume design).
#include "modes/optimize.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <memory>

#include "agents/acceptance.h"
#include "agents/judge.h"
#include "agents/roles.h"
#include "harness/backend.h"
#include "harness/machine.h"
#include "modes/eval_settings.h"
#include "modes/events.h"
#include "modes/optimize_evidence.h"
#include "modes/optimize_report.h"
#include "modes/optimize_resume.h"
#include "modes/run_log.h"
#include "schedule/compiled_task.h"

namespace kf {
namespace {

// The acceptance rule (margin, near misses, paired confirmation): agents/acceptance.h.
const agents::AcceptancePolicy& kAccept = agents::acceptance_policy();
// A budget below three tuning rounds cannot tune after every accepted strategy: the knobs of
// the newest step wait until the planner's best remaining proposal expects less than this (a
// knob's value is worth a few percent, a strategy's often a multiple).
constexpr double kTuneWhenBelow = 1.15;

using agents::CandidateMsg;

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class Loop {
 public:
  Loop(OptimizeOptions o, Store& store, std::string run_id, bool resuming)
      : o_(std::move(o)),
        store_(store),
        run_id_(std::move(run_id)),
        resuming_(resuming),
        console_(o_.progress) {
    events_.add(&console_);
    events_.add(o_.events);
  }

  Expected<OptimizeResult> run();

 private:
  Status setup();
  Status start();        // the run's record (a new run) and its RunStarted event
  Status judge_first();  // the implementer's first candidate becomes the best
  // One cycle: evidence, plan, then tune, stop or carry the plan out; false ends the search.
  Expected<bool> step();
  // The planner says stop: the whole recipe is tuned once (true: plan again) or the search ends.
  Expected<bool> out_of_plans(const agents::Plan& plan, const agents::Evidence& evidence);
  // Implements, judges, debugs and confirms the plan's candidate; true when it is the new best.
  Expected<bool> carry_out(const agents::Plan& plan);
  // The final side-by-side run and the outputs.
  Expected<OptimizeResult> finish();
  // On resume: where the replay starts, and whether the task changed since the run measured it.
  Status resume_state();
  // Judges c (or reads its evaluation back from the store). `rival`: a candidate timed side by
  // side with it in the same run (a confirmation against the best).
  Expected<RunResult> measure(const CandidateMsg& c, const std::string& kind,
                              const std::string& strategy, const CandidateMsg* rival = nullptr);
  Status attempt_without_evaluation(const std::string& kind, const std::string& strategy,
                                    const std::string& verdict, const nlohmann::json& detail) {
    return log_->note_attempt(kind, strategy, verdict, detail);
  }
  Status message(const std::string& from, const std::string& to, const std::string& type,
                 const nlohmann::json& body) {
    return log_->message(from, to, type, body);
  }
  int evals() const { return log_->evaluations(); }
  bool budget_left() const {
    return evals() < o_.budget_evals && now_s() - started_ < o_.budget_time_s;
  }
  // Evaluations the budget still allows: the count left, or fewer when the time left at this
  // run's average time per evaluation allows fewer.
  int evals_left() const {
    int left = o_.budget_evals - evals();
    const double elapsed = now_s() - started_;
    if (evals() > 0 && elapsed > 0) {
      const double by_time = (o_.budget_time_s - elapsed) / (elapsed / evals());
      if (by_time < left) left = std::max(0, static_cast<int>(by_time));
    }
    return left;
  }
  void say(const std::string& line) const { events_.emit(Note{run_id_, line}); }
  // The best changed: `best_` and `best_result_` hold it.
  void new_best() const {
    const double median = best_result_.timing ? best_result_.timing->median_s : 0;
    events_.emit(NewBest{.run_id = run_id_,
                         .candidate = best_.key,
                         .label = candidate_label(best_),
                         .median_s = median,
                         .min_s = best_result_.timing ? best_result_.timing->min_s : 0,
                         .speedup_vs_naive = median > 0 && log_->reference_median() > 0
                                                 ? log_->reference_median() / median
                                                 : 0});
  }
  agents::MoveContext move_context() const { return {&machine_, o_.threads, &target_}; }
  agents::WorkContext work(const CandidateMsg* best) const;
  // One tuning pass over the best recipe's knobs within `budget` evaluations; true when it
  // found a faster recipe (which is then the best).
  Expected<bool> tune_best(int budget, agents::TuneScope scope);
  // The newest recipe step's knobs, with at most a third of what is left: a small budget spent
  // on one strategy's knobs would leave none for the strategies after it (on attention, the
  // P @ V stage's vectorization came after the scores' tile).
  Expected<bool> tune_newest_step() {
    return tune_best(std::min(o_.tune_budget, std::max(1, evals_left() / 3)),
                     agents::TuneScope::newest_step);
  }

  OptimizeOptions o_;
  Store& store_;
  std::string run_id_;
  bool resuming_;
  ConsoleReporter console_;
  EventSinks events_;
  CompiledTask compiled_;  // the task, loaded once
  agents::Brain brain_;
  agents::HarnessJudge harness_;
  std::unique_ptr<agents::RecordedJudge> recorded_;
  std::unique_ptr<agents::RecordingJudge> recording_;
  agents::Judge* judge_ = nullptr;
  MachineInfo machine_;
  const Backend* backend_ = nullptr;  // what compiles, runs and profiles them
  Target target_;                     // what the kernels are generated and compiled for
  std::string machine_id_;
  std::string task_hash_, task_identity_;  // the task's identity; the keys' task part
  double started_ = 0;
  // The run's measurements and record (modes/run_log.h); made once the judge is known.
  std::unique_ptr<RunLog> log_;
  CandidateMsg best_;
  RunResult best_result_;
  std::string first_label_;  // the first candidate's label: speedups are over it
  EvidenceCache evidence_cache_;
  std::set<std::string> tried_;  // plans tried from the current best (no gain or refused)
  bool final_tuned_ = false;     // the whole recipe was tuned once
  bool tune_pending_ = false;    // the newest accepted step's knobs are not tuned yet
  std::string stop_reason_ = "budget spent";
  // Candidates that passed (the run log's) that the final run falls back to, at most.
  static constexpr size_t kFinalFallbacks = 3;
};

Status Loop::setup() {
  auto task = compile_task(o_.task_dir);
  if (!task) return task.error();
  compiled_ = std::move(*task);
  task_hash_ = compiled_.identity.hash;
  auto brain = agents::make_brain(o_.brain, {.sources = o_.sources, .llm = o_.llm});
  if (!brain) return brain.error();
  brain_ = std::move(*brain);
  if (!compiled_.has_te_spec())
    if (auto roles = agents::roles_needing_te_spec(brain_); !roles.empty())
      return Status::error(fmt::format(
          "{} has no TE spec, and the {} of this team generate kernels from one: give those "
          "roles a brain that writes source (brains:\n{})",
          compiled_.task.name, fmt::join(roles, " and "), agents::brain_summaries()));
  auto backend = backend_named(o_.backend);
  if (!backend) return backend.error();
  backend_ = *backend;
  machine_ = describe_machine(o_.cxx);
  if (o_.simulate.empty()) {
    auto m = backend_->probe({.cxx = o_.cxx});
    if (!m) return m.error().with_context("machine probe");
    machine_ = *m;
    KF_RETURN_IF_ERROR(
        backend_->supports(machine_).with_context(fmt::format("backend {}", backend_->name)));
    judge_ = &harness_;
    machine_id_ = machine_.fingerprint;
  } else {
    auto rj = agents::RecordedJudge::open(o_.simulate);
    if (!rj) return rj.error();
    recorded_ = std::move(*rj);
    recorded_->set_latency(o_.sim_latency_s);
    judge_ = recorded_.get();
    machine_id_ = "simulated:" + machine_.fingerprint;
  }
  auto target = backend_->target(o_.target, machine_);
  if (!target) return target.error();
  target_ = *target;
  if (!o_.record.empty()) {
    recording_ = std::make_unique<agents::RecordingJudge>(*judge_, o_.record);
    judge_ = recording_.get();
  }
  // Every evaluation key holds the hash of the task folder's files (task/task_identity.h): a
  // measurement of the task before an edit of any of its fields is never read back after it.
  task_identity_ = task_hash_;
  if (o_.remeasure) task_identity_ += ":run:" + run_id_;  // keys of this run's own measurements
  if (o_.seed == 0) o_.seed = std::hash<std::string>{}(run_id_) | 1;
  log_ = std::make_unique<RunLog>(RunLog::Config{.store = &store_,
                                                 .judge = judge_,
                                                 .task = &compiled_.task,
                                                 .run_id = run_id_,
                                                 .task_identity = task_identity_,
                                                 .machine_id = machine_id_,
                                                 .brain = brain_.name,
                                                 .budget_evals = o_.budget_evals,
                                                 .events = &events_});
  if (resuming_) return resume_state();
  return {};
}

// Replays from the start, skipping the writes made before; starts over after a task edit.
Status Loop::resume_state() {
  auto p = resume_point(store_, run_id_, task_hash_, now_s());
  if (!p) return p.error();
  log_->resume_at(p->stored_attempts, p->stored_messages, p->attempt_seq, p->message_seq);
  started_ = p->started_epoch_s;
  if (!p->task_changed) {
    if (p->marker) log_->add_to_journey(p->marker->to_json());
    return {};
  }
  say(
      fmt::format("the task changed since run {} measured it ({} is {}, was {}): nothing "
                  "measured before is reused, and the run starts over on the task as it is now",
                  run_id_, o_.task_dir.string(), task_hash_,
                  p->measured_for.empty() ? "not recorded" : p->measured_for));
  return attempt_without_evaluation("task_changed", "", "restarted",
                                    task_changed_detail(*p, task_hash_));
}

agents::WorkContext Loop::work(const CandidateMsg* best) const {
  agents::WorkContext in;
  in.task = &compiled_;
  in.best = best;
  in.ctx = move_context();
  in.compile.cxx = o_.cxx;
  in.compile.extra_flags = target_.compile_flags;
  return in;
}

Expected<bool> Loop::tune_best(int budget, agents::TuneScope scope) {
  if (budget <= 0 || !best_result_.timing) return false;
  const std::string before = best_.key;
  std::optional<Status> failure;
  std::optional<std::pair<CandidateMsg, RunResult>> near;  // faster by the median only
  agents::MeasureFn fn = [&](const CandidateMsg& c) -> std::optional<double> {
    if (failure || !budget_left()) return std::nullopt;
    auto t = measure(c, "tune", c.origin);
    if (!t) {
      failure = t.error();
      return std::nullopt;
    }
    if (t->verdict != Verdict::ok || !t->timing) return std::nullopt;
    // The same margin as a plan's: a knob value a hair faster by the minimum is noise, and
    // once kept it stays in every later candidate.
    if (kAccept.faster(t->timing->min_s, best_result_.timing->min_s)) {
      best_ = c;
      best_result_ = *t;
    } else if (kAccept.faster_by_median_only(*t, best_result_) &&
               (!near || t->timing->median_s < near->second.timing->median_s)) {
      near = {c, *t};
    }
    return t->timing->min_s;
  };
  // The tuner varies a copy: `fn` moves best_ as it finds faster variants.
  const CandidateMsg start = best_;
  brain_.autotuner->tune(start, best_result_.timing->min_s, fn, budget, scope, work(&start));
  if (failure) return *failure;
  // The tuner decides by minimum times; a setting clearly faster by the median whose minimum
  // was not (the best's minimum a lucky sample, or this one's timing disturbed) is measured
  // again side by side with the best, as a near miss of the planner's is, and that pair decides.
  if (near && kAccept.faster(near->second.timing->median_s, best_result_.timing->median_s) &&
      budget_left()) {
    auto again = measure(near->first, "confirm", "confirm:" + near->first.origin, &best_);
    if (!again) return again.error();
    if (kAccept.wins_pair(*again)) {
      best_ = near->first;
      best_result_ = *again;
    }
  }
  KF_RETURN_IF_ERROR(store_.update_run(run_id_, "running", best_.key, {}));
  if (best_.key != before) new_best();
  return best_.key != before;
}

Expected<RunResult> Loop::measure(const CandidateMsg& c, const std::string& kind,
                                  const std::string& strategy, const CandidateMsg* rival) {
  const EvalSettings settings{.seed = o_.seed,
                              .min_time_s = o_.min_time_s,
                              .final_min_time_s = o_.final_min_time_s,
                              .cxx = o_.cxx,
                              .compile_flags = target_.compile_flags,
                              .backend = backend_,
                              .machine = &machine_,
                              .simulated = !o_.simulate.empty()};
  const EvalOptions e =
      eval_options_for(settings, compiled_, c.threads, kind, &best_result_, rival);
  return log_->measure(c, kind, strategy, e);
}

// The driver, top to bottom: the first candidate, then plan → carry out → accept and tune until
// the budget, the planner or the roofline stops it, then the final run.
Expected<OptimizeResult> Loop::run() {
  KF_RETURN_IF_ERROR(setup());
  KF_RETURN_IF_ERROR(start());
  KF_RETURN_IF_ERROR(judge_first());
  while (budget_left()) {
    auto go_on = step();
    if (!go_on) return go_on.error();
    if (!*go_on) break;
  }
  if (!budget_left() && stop_reason_ == "budget spent")
    stop_reason_ = evals() >= o_.budget_evals ? "evaluation budget spent" : "time budget spent";
  say("stop: " + stop_reason_);
  return finish();
}

Status Loop::start() {
  if (!resuming_) {
    started_ = now_s();
    nlohmann::json opts = o_.to_json();
    opts["started_epoch_s"] = started_;
    opts["task_identity"] = task_hash_;
    KF_RETURN_IF_ERROR(store_.create_run({.id = run_id_,
                                          .task_dir = o_.task_dir.string(),
                                          .task_name = compiled_.task.name,
                                          .mode = "optimize",
                                          .brain = brain_.name,
                                          .options = opts}));
  }
  events_.emit(RunStarted{.run_id = run_id_,
                          .task = compiled_.task.name,
                          .mode = "optimize",
                          .brain = brain_.name,
                          .target = target_.name,
                          .threads = o_.threads,
                          .budget_evals = o_.budget_evals,
                          .budget_time_s = o_.budget_time_s,
                          .resumed = resuming_});
  return {};
}

Status Loop::judge_first() {
  auto naive = brain_.implementer->first(work(nullptr));
  if (!naive) return naive.error().with_context("the first candidate");
  auto first = measure(*naive, "baseline", "default");
  if (!first) return first.error();
  // A first candidate too slow to time at the bench shape (a naive scan over a long sequence)
  // is no reason to stop: the planner works from the program's structure, and the first
  // candidate judged ok with a time becomes the best. Anything else ends the run: generated, it
  // is a kforge bug; imported (the task's reference), the task's.
  const bool naive_too_slow = first->verdict == Verdict::timeout;
  if (!naive_too_slow && (first->verdict != Verdict::ok || !first->timing))
    return Status::error(
        fmt::format("the first candidate ({}) was judged {}: {}{}", candidate_label(*naive),
                    verdict_name(first->verdict), first->message,
                    naive->kind == agents::SourceKind::generated ? " (a kforge bug)" : ""));
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
  pi.task = &compiled_;
  pi.best = &best_;
  pi.evidence = evidence_cache_.get(o_.profile ? brain_.profiler.get() : nullptr,
                                    {.task = &compiled_,
                                     .candidate = &best_,
                                     .result = &best_result_,
                                     .machine = &machine_,
                                     .target = &target_,
                                     .cxx = o_.cxx,
                                     .stage_times = o_.stage_times,
                                     .stage_time_s = o_.stage_time_s});
  pi.tried = tried_;
  pi.ctx = move_context();
  pi.stop_fraction = o_.stop_fraction;
  KF_RETURN_IF_ERROR(message("profiler", "planner", "Profile", pi.evidence.to_json()));
  agents::Plan plan = brain_.planner->plan(pi);
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
  if (!brain_.autotuner->tunes(plan) || !brain_.autotuner->varies(best_)) return true;
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
  // Out of strategies below the roofline's stop line: the knobs of the earlier steps were
  // chosen while later-fixed stages still dominated the time, so the whole recipe is swept
  // once against the finished schedule. A better value opens the plan again.
  const bool at_roofline = !evidence.bound.empty() && evidence.fraction >= o_.stop_fraction;
  if (final_tuned_ || at_roofline || !best_result_.timing || !budget_left() ||
      !brain_.autotuner->varies(best_))
    return false;
  final_tuned_ = true;
  say("out of strategies: tuning the whole recipe's knobs once more");
  auto tuned = tune_best(std::min(2 * o_.tune_budget, o_.budget_evals - evals()),
                         agents::TuneScope::whole_recipe);
  if (!tuned) return tuned.error();
  if (!*tuned) return false;
  tried_.clear();
  return true;
}

Expected<bool> Loop::carry_out(const agents::Plan& plan) {
  const std::string plan_id = plan.id();
  auto cand = brain_.implementer->implement(plan, work(&best_));
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
  auto report = brain_.tester->report(*r, &best_result_);
  KF_RETURN_IF_ERROR(message("tester", "planner", "TestReport", report.to_json()));
  if (r->verdict != Verdict::ok) {
    auto d = brain_.debugger->debug(*cand, *r, 1, work(&best_));
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

Expected<OptimizeResult> Loop::finish() {
  OptimizeResult out;
  out.run_id = run_id_;
  out.best = best_;
  out.best_result = best_result_;
  out.evaluations = evals();
  out.attempts = log_->attempts();
  out.reused = log_->reused();
  out.stop_reason = stop_reason_;
  out.first_label = first_label_;
  if (o_.final_run) {
    auto f = measure(best_, "final", "final");
    if (!f) return f.error();
    // The final run judges the best again on fresh inputs. A best that fails there (a thin
    // margin the search's inputs did not expose, or a crash) is not handed out: the next
    // fastest candidate that passed takes its place and is judged the same way.
    std::set<std::string> failed;
    while (f->verdict != Verdict::ok && failed.size() < kFinalFallbacks) {
      failed.insert(best_.key);
      const RunLog::Passed* next = nullptr;
      for (const auto& [key, p] : log_->passed())
        if (!failed.count(key) && (!next || p.median_s < next->median_s)) next = &p;
      if (!next) break;
      say(
          fmt::format("final: the best ({}) failed on fresh inputs: {}; the next fastest candidate "
                      "that passed, {}, takes its place",
                      best_.describe(), f->message, next->candidate.describe()));
      out.final_failures.push_back({{"key", best_.key},
                                    {"recipe", best_.describe()},
                                    {"verdict", verdict_name(f->verdict)},
                                    {"message", f->message}});
      best_ = next->candidate;
      best_result_ = next->result;
      new_best();
      f = measure(best_, "final", "final");
      if (!f) return f.error();
    }
    out.best = best_;
    out.best_result = best_result_;
    out.final_result = *f;
  }
  out.out_dir = o_.out_dir.empty() ? std::filesystem::path("kforge-out") / run_id_ : o_.out_dir;
  out.summary =
      optimize_summary(compiled_.task, o_, out, log_->reference_median(), log_->journey());
  KF_RETURN_IF_ERROR(write_optimize_outputs(compiled_.task, out));
  KF_RETURN_IF_ERROR(store_.update_run(run_id_, "finished", best_.key, out.summary));
  events_.emit(RunEnded{.run_id = run_id_,
                        .stop_reason = stop_reason_,
                        .best_candidate = best_.key,
                        .evaluations = evals(),
                        .attempts = log_->attempts(),
                        .reused = log_->reused(),
                        .best_median_s = best_result_.timing ? best_result_.timing->median_s : 0,
                        .final_verdict = out.final_result
                                             ? std::string(verdict_name(out.final_result->verdict))
                                             : ""});
  return out;
}

}  // namespace

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
  if (run->state == "finished") return Status::error("run " + run_id + " has finished already");
  auto o = OptimizeOptions::from_json(run->options);
  if (!o) return o.error();
  o->progress = overrides.progress;
  o->events = overrides.events;
  o->llm = overrides.llm;
  Loop loop(*o, store, run_id, true);
  return loop.run();
}

}  // namespace kf
