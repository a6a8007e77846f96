#include "modes/run_log.h"

#include <fmt/format.h>

#include "support/interrupt.h"

namespace kf {

std::string candidate_label(const agents::CandidateMsg& c) {
  // A schedule given with --from has no recipe either, but it is not the default one.
  return c.generated && c.generated->recipe.steps.empty() && !c.origin.starts_with("from:")
             ? "default schedule"
             : c.origin;
}

namespace {
// A speedup over the reference or the library: from the same run when it timed them, else an
// anchor's time over this median (0 when either is unknown).
double speedup_over(const std::optional<Timing>& same_run, double same_run_ratio, double anchor_s,
                    double median_s) {
  if (same_run && same_run_ratio > 0) return same_run_ratio;
  return median_s > 0 && anchor_s > 0 ? anchor_s / median_s : 0.0;
}
}  // namespace

Expected<RunResult> RunLog::judge_anchoring(const agents::CandidateMsg& c, const std::string& kind,
                                            EvalOptions e) {
  const bool anchoring = anchors_.reference_median_s == 0 && !anchors_failed_ && kind != "final" &&
                         kind != "confirm" && e.time;
  if (!anchoring) return c_.judge->judge(*c_.task, c.source, e);
  EvalOptions anchored = e;
  anchored.time_reference = true;
  anchored.time_baseline = c_.task->baseline.has_value();
  // The reference runs in the candidate's batches: a deadline set from the best's time is none
  // for a reference many times slower, and the candidate is timed to the end for the pair.
  anchored.run_timeout_s = EvalOptions{}.run_timeout_s;
  anchored.stop_slower_than_s = 0;
  auto judged = c_.judge->judge(*c_.task, c.source, anchored);
  if (judged || interrupted()) return judged;
  anchors_failed_ = true;
  if (c_.events)
    c_.events->emit(Note{c_.run_id, "the reference or the library could not be timed (" +
                                        judged.error().message() +
                                        "): no speedups over them before the final run"});
  return c_.judge->judge(*c_.task, c.source, e);
}

void RunLog::take_anchors(const RunResult& r) {
  if (anchors_.reference_median_s > 0 || !r.reference_timing || r.reference_timing->median_s <= 0)
    return;
  anchors_.reference_median_s = r.reference_timing->median_s;
  anchors_.reference_min_s = r.reference_timing->min_s;
  if (r.baseline_timing && r.baseline_timing->median_s > 0) {
    anchors_.library_median_s = r.baseline_timing->median_s;
    anchors_.library_min_s = r.baseline_timing->min_s;
    anchors_.library = r.baseline_name;
  }
  if (!c_.events) return;
  std::string text = fmt::format("timed side by side with it: the reference {:.3f} ms",
                                 anchors_.reference_median_s * 1e3);
  if (anchors_.library_median_s > 0)
    text += fmt::format(", the library ({}) {:.3f} ms", anchors_.library,
                        anchors_.library_median_s * 1e3);
  text += " by median; 'ref' and 'lib' are their times over each candidate's";
  c_.events->emit(Note{c_.run_id, "  " + text});
}

Status RunLog::resume_at(int stored_attempts, int stored_messages, int attempt_seq,
                         int message_seq) {
  stored_attempts_ = stored_attempts;
  stored_messages_ = stored_messages;
  attempt_seq_ = attempt_seq;
  message_seq_ = message_seq;
  auto stored = c_.store->attempts(c_.run_id);
  if (!stored) return stored.error();
  for (const AttemptRecord& a : *stored)
    if (!a.evaluation_key.empty()) stored_spent_[a.seq] = a.detail.value("budget", true);
  return {};
}

Status RunLog::spend_as(const std::string& run_id) {
  auto stored = c_.store->attempts(run_id);
  if (!stored) return stored.error();
  for (const AttemptRecord& a : *stored)
    if (!a.evaluation_key.empty()) spent_as_[a.seq] = a.detail.value("budget", true);
  return {};
}

bool RunLog::spends(int seq, const std::string& ekey, bool fresh) const {
  if (auto it = stored_spent_.find(seq); it != stored_spent_.end() && seq <= stored_attempts_)
    return it->second;
  if (auto it = spent_as_.find(seq); it != spent_as_.end()) return it->second;
  return fresh || c_.earlier_runs_spend || run_keys_.contains(ekey);
}

Status RunLog::put_candidate(const agents::CandidateMsg& c) {
  return c_.store->put_candidate(
      {.key = c.key,
       .source = c.source,
       .schedule = c.generated ? c.generated->schedule : "",
       .knobs = c.generated ? c.generated->recipe.to_json() : nlohmann::json(),
       .provenance = {{"kind", agents::source_kind_name(c.kind)},
                      {"origin", c.origin},
                      {"parent", c.parent},
                      {"brain", c_.brain}}});
}

Expected<std::optional<RunResult>> RunLog::stored_result(const std::string& ekey) const {
  auto found = c_.store->find_evaluation(ekey);
  if (!found) return found.error();
  if (!found->has_value()) return std::optional<RunResult>();
  auto back = RunResult::from_json((*found)->result);
  if (!back) return back.error().with_context("evaluation " + ekey + " in the store");
  return std::optional<RunResult>(std::move(*back));
}

Expected<std::optional<RunResult>> RunLog::measured_in_run(const agents::CandidateMsg& c) const {
  const std::string ekey = evaluation_key(c.key, c_.task_identity, c_.machine_id, c.threads);
  if (!run_keys_.contains(ekey)) return std::optional<RunResult>();
  return stored_result(ekey);
}

Expected<RunResult> RunLog::measure(const agents::CandidateMsg& c, const std::string& kind,
                                    const std::string& strategy, const EvalOptions& options,
                                    const nlohmann::json& extra) {
  Store& store = *c_.store;
  KF_RETURN_IF_ERROR(put_candidate(c));
  // A final or confirming measurement is a measurement of its own, never the stored one again
  // (a confirmation is numbered by its attempt, so a resumed run finds it in the store).
  std::string label;
  if (kind == "final") label = "final";
  if (kind == "confirm") label = "confirm:" + std::to_string(attempt_seq_ + 1);
  const std::string identity = label.empty() ? c_.task_identity : c_.task_identity + ":" + label;
  const std::string ekey = evaluation_key(c.key, identity, c_.machine_id, c.threads);
  auto stored = stored_result(ekey);
  if (!stored) return stored.error();
  RunResult r;
  const bool fresh = !stored->has_value();
  if (!fresh) {
    r = std::move(**stored);
  } else {
    EvalOptions e = options;
    e.label = label;
    e.origin = candidate_label(c);
    // An interrupted run records nothing more: a judgement cut short is not a verdict on the
    // candidate, and a resume measures it again (support/interrupt.h).
    if (interrupted()) return Status::error(kInterrupted);
    auto judged = judge_anchoring(c, kind, e);
    if (!judged) return judged.error();
    if (interrupted()) return Status::error(kInterrupted);
    r = *judged;
  }
  const bool spent = spends(attempt_seq_ + 1, ekey, fresh);
  run_keys_.insert(ekey);
  if (spent) {
    ++evaluations_;
    if (!fresh) ++reused_;
  } else {
    ++borrowed_;
  }
  const double median = r.timing ? r.timing->median_s : 0;
  const double speedup = median > 0 && reference_median_ > 0 ? reference_median_ / median : 0;
  const bool anchored_here = anchors_.reference_median_s == 0 && r.reference_timing;
  const double vs_reference =
      speedup_over(r.reference_timing, r.vs_reference.median, anchors_.reference_median_s, median);
  const double vs_library =
      speedup_over(r.baseline_timing, r.vs_baseline.median, anchors_.library_median_s, median);
  const int seq = ++attempt_seq_;
  AttemptRecord a{.run_id = c_.run_id,
                  .seq = seq,
                  .kind = kind,
                  .strategy = strategy,
                  .candidate_key = c.key,
                  .evaluation_key = ekey,
                  .verdict = std::string(verdict_name(r.verdict)),
                  .median_s = median,
                  .speedup = speedup,
                  .detail = {{"origin", c.origin},
                             {"kind", agents::source_kind_name(c.kind)},
                             {"recipe", c.describe()},
                             {"message", r.message},
                             {"reused", !fresh},
                             {"budget", spent},
                             {"roofline_fraction", r.roofline ? r.roofline->fraction : 0.0}}};
  if (extra.is_object()) a.detail.update(extra);
  if (r.rival_timing)
    a.detail["vs_best"] = {{"median", r.vs_rival.median}, {"min", r.vs_rival.min}};
  if (vs_reference > 0) a.detail["vs_reference"] = vs_reference;
  if (vs_library > 0) a.detail["vs_library"] = vs_library;
  if (r.timing && !r.timing->stopped_early.empty())
    a.detail["timing_stopped_early"] = r.timing->stopped_early;
  journey_.push_back(a.to_json());
  if (r.verdict == Verdict::ok && median > 0 && kind != "final") {
    auto [it, added] = passed_.try_emplace(c.key, Passed{c, r, median});
    if (!added && median < it->second.median_s) it->second = Passed{c, r, median};
  }
  if (seq > stored_attempts_) {
    if (fresh) {
      EvaluationRecord ev{.key = ekey,
                          .candidate_key = c.key,
                          .task = c_.task->name,
                          .machine = c_.machine_id,
                          .threads = c.threads,
                          .verdict = a.verdict,
                          .median_s = median,
                          .min_s = r.timing ? r.timing->min_s : 0,
                          .result = r.to_json()};
      KF_RETURN_IF_ERROR(store.record_evaluation(ev, a));
    } else {
      KF_RETURN_IF_ERROR(store.put_attempt(a));
    }
  }
  if (c_.events)
    c_.events->emit(
        AttemptJudged{.run_id = c_.run_id,
                      .seq = seq,
                      .evaluation = evaluations_,
                      .budget_evals = c_.budget_evals,
                      .kind = kind,
                      .strategy = strategy,
                      .label = candidate_label(c),
                      .candidate = c.key,
                      .verdict = a.verdict,
                      .message = r.message,
                      .median_s = median,
                      .min_s = r.timing ? r.timing->min_s : 0,
                      .speedup_vs_naive = speedup,
                      .vs_reference = vs_reference,
                      .vs_library = vs_library,
                      .spread = r.timing && r.timing->samples >= 2 ? r.timing->spread : -1,
                      .roofline_fraction = r.roofline ? r.roofline->fraction : -1,
                      .vs_best_median = r.rival_timing ? r.vs_rival.median : 0,
                      .vs_best_min = r.rival_timing ? r.vs_rival.min : 0,
                      .reused = !fresh,
                      .spent = spent});
  if (anchored_here) take_anchors(r);
  return r;
}

Status RunLog::note_attempt(const std::string& kind, const std::string& strategy,
                            const std::string& verdict, const nlohmann::json& detail) {
  const int seq = ++attempt_seq_;
  journey_.push_back({{"seq", seq},
                      {"kind", kind},
                      {"strategy", strategy},
                      {"verdict", verdict},
                      {"detail", detail}});
  if (seq <= stored_attempts_) return {};
  return c_.store->put_attempt({.run_id = c_.run_id,
                                .seq = seq,
                                .kind = kind,
                                .strategy = strategy,
                                .verdict = verdict,
                                .detail = detail});
}

Status RunLog::message(const std::string& from, const std::string& to, const std::string& type,
                       const nlohmann::json& body) {
  const int seq = ++message_seq_;
  if (seq <= stored_messages_) return {};  // written before the interruption
  return c_.store->put_message({.run_id = c_.run_id,
                                .seq = seq,
                                .from_role = from,
                                .to_role = to,
                                .type = type,
                                .body = body});
}

}  // namespace kf
