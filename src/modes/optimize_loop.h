// The optimize loop's class, shared by its two source files (optimize.cpp: the driver and one
// step; optimize_finish.cpp: tuning and the final run). Internal to kf_modes.
#pragma once

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
#include "modes/optimize.h"
#include "modes/optimize_evidence.h"
#include "modes/optimize_report.h"
#include "modes/optimize_resume.h"
#include "modes/run_env.h"
#include "modes/run_log.h"
#include "schedule/compiled_task.h"
#include "support/interrupt.h"

namespace kf::optimize_detail {

// The acceptance rule (margin, near misses, paired confirmation): agents/acceptance.h.
inline const agents::AcceptancePolicy& kAccept = agents::acceptance_policy();
// A budget below three tuning rounds cannot tune after every accepted strategy: the knobs of
// the newest step wait until the planner's best remaining proposal expects less than this (a
// knob's value is worth a few percent, a strategy's often a multiple).
inline constexpr double kTuneWhenBelow = 1.15;

using agents::CandidateMsg;

inline double now_s() {
  return now_epoch_s();
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
  // The planner says stop: the whole recipe is tuned once, then explore() (true: plan again),
  // or the search ends (at the roofline's stop line, or out of budget).
  Expected<bool> out_of_plans(const agents::Plan& plan, const agents::Evidence& evidence);
  // A local search once the rules and the tuning have nothing left and budget remains: the
  // catalog's other moves from the best, each judged like a plan, in a random order drawn from
  // the run's seed. The rules are what an expert tries first, not all that can help (a GEMV
  // stopped with 9 of 12 evaluations unused). True when one is faster: it becomes the best and
  // the planner plans again from it.
  Expected<bool> explore();
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
  agents::MoveContext move_context() const { return env_->move_context(o_.threads); }
  agents::WorkContext work(const CandidateMsg* best) const { return env_->work(best, o_.threads); }
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
  // The task, the team, the machine, the target and the judge (modes/run_env.h).
  std::unique_ptr<RunEnv> env_;
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
  // Why the run halts: Ctrl-C (support/interrupt.h) or its team (agents::Brain::halted). The
  // run stops there, resumable ("" while not).
  std::string halted_;
  bool halted() {
    if (halted_.empty()) halted_ = interrupted() ? interrupt_reason() : env_->brain.halted();
    return !halted_.empty();
  }
  // Candidates that passed (the run log's) that the final run falls back to, at most.
  static constexpr size_t kFinalFallbacks = 3;
};

}  // namespace kf::optimize_detail
