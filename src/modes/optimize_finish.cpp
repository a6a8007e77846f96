// The optimize loop's tuning passes and its final side-by-side run (optimize_loop.h).
#include "modes/optimize_loop.h"
#include "support/fs.h"

namespace kf::optimize_detail {

Expected<bool> Loop::tune_best(int budget, agents::TuneScope scope) {
  if (budget <= 0 || !best_result_.timing) return false;
  const std::string before = best_.key;
  std::optional<Status> failure;
  std::optional<std::pair<CandidateMsg, RunResult>> near;  // faster by the median only
  agents::MeasureFn fn = [&](const CandidateMsg& c) -> std::optional<double> {
    if (failure) return std::nullopt;
    // A setting this run measured already (the same best tuned again after a strategy that
    // did not win) is read back and spends nothing.
    auto known = log_->measured_in_run(c);
    if (!known) {
      failure = known.error();
      return std::nullopt;
    }
    if (!*known && !budget_left()) return std::nullopt;
    Expected<RunResult> t =
        *known ? Expected<RunResult>(std::move(**known)) : measure(c, "tune", c.origin);
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
  env_->brain.autotuner->tune(start, best_result_.timing->min_s, fn, budget, scope, work(&start));
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

Expected<OptimizeResult> Loop::finish() {
  OptimizeResult out;
  out.run_id = run_id_;
  out.best = best_;
  out.best_result = best_result_;
  out.evaluations = evals();
  out.attempts = log_->attempts();
  out.reused = log_->reused();
  out.borrowed = log_->borrowed();
  out.stop_reason = stop_reason_;
  out.first_label = first_label_;
  if (o_.final_run && !halted()) {
    auto f = measure(best_, "final", "final");
    if (!f && halted()) {  // interrupted during the final run: finished without it
      stop_reason_ = halted_;
      return finish();
    }
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
      if (!f && halted()) {
        stop_reason_ = halted_;
        return finish();
      }
      if (!f) return f.error();
    }
    out.best = best_;
    out.best_result = best_result_;
    out.final_result = *f;
  }
  out.out_dir = o_.out_dir.empty() ? default_output_dir(run_id_) : o_.out_dir;
  out.summary =
      optimize_summary(env_->compiled.task, o_, out, log_->reference_median(), log_->journey());
  KF_RETURN_IF_ERROR(write_optimize_outputs(env_->compiled.task, out));
  KF_RETURN_IF_ERROR(store_.update_run(run_id_, end_state(halted_), best_.key, out.summary));
  events_.emit(RunEnded{.run_id = run_id_,
                        .stop_reason = stop_reason_,
                        .best_candidate = best_.key,
                        .evaluations = evals(),
                        .attempts = log_->attempts(),
                        .reused = log_->reused(),
                        .borrowed = log_->borrowed(),
                        .best_median_s = best_result_.timing ? best_result_.timing->median_s : 0,
                        .final_verdict = out.final_result
                                             ? std::string(verdict_name(out.final_result->verdict))
                                             : ""});
  return out;
}

}  // namespace kf::optimize_detail
