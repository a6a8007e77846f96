// A run's measurements and its record: the one place where a mode turns a candidate into a
// stored, numbered attempt. Every mode that judges candidates for a run (optimize today, search
// next) measures through it, so evaluation identity, read-back, resume and events are the same
// everywhere.
//
//   RunLog log({.store = &store, .judge = &judge, .task = &task, .run_id = id,
//               .task_identity = hash, .machine_id = fp, .brain = "builtin", .events = &sinks});
//   log.resume_at(stored_attempts, stored_messages, attempt_seq, message_seq);  // after a kill
//   Expected<RunResult> r = log.measure(c, "plan", "tile", options);   // judged, or read back
//   log.set_reference_median(r->timing->median_s);          // speedups are over this time
//   log.anchors().reference_median_s;    // the task's reference, timed with the first candidate
//   log.note_attempt("plan", "tile", "not_applicable", {{"message", why}});
//   log.message("planner", "implementer", "Plan", plan.to_json());
//
// Identity. An evaluation's key is its candidate's key, the task's identity, the machine and the
// threads: a candidate measured before is read back, not judged again (`reused`), unless the kind
// asks for a measurement of its own: "final" (once per run) and "confirm" (numbered by its
// attempt, so that a resumed run finds it in the store).
//
// Budget. An evaluation spends one of the run's `--budget-evals` when this run measured it: a
// fresh measurement, or a read-back of one this run made before (a candidate met again, the
// replay of a resumed run). A read-back of what an earlier run measured costs nothing: a second
// run on a task gets its whole budget for candidates not yet measured. evaluations() counts the
// spent ones, reused() the read-backs among them, borrowed() the free ones. The attempt's detail
// records whether it spent ("budget"), so a resumed run's replay spends exactly as the
// interrupted run did.
//
// Anchors. Until the reference's time is known, every measurement but a final or a confirming
// one also times the task's reference (and its library baseline, when it has one) side by side:
// from then on each attempt's speedups over the reference and the library divide those times by
// its own median. They are what a person reads first; the final run measures them side by side
// again. The first measurement usually sets them (one that times out leaves them to the next).
// A reference or library that fails to run is no verdict on the candidate: it is judged again
// without them, and the run goes on with no anchors.
//
// Resume. Attempts and messages are numbered in the order the mode makes them; a resumed run
// replays its decisions from the start and the writes numbered up to what is stored are skipped.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "agents/judge.h"
#include "agents/messages.h"
#include "harness/evaluator.h"
#include "modes/events.h"
#include "store/store.h"
#include "task/task.h"

namespace kf {

// What a candidate is, for people: "default schedule", or where it came from.
std::string candidate_label(const agents::CandidateMsg& c);

class RunLog {
 public:
  struct Config {
    Store* store = nullptr;
    agents::Judge* judge = nullptr;
    const Task* task = nullptr;
    std::string run_id;
    std::string task_identity;  // the keys' task part (task hash, ":run:ID" when remeasuring)
    std::string machine_id;
    std::string brain;  // stored with each candidate's provenance
    int budget_evals = 0;
    // Read-backs of earlier runs' measurements spend budget too (a comparison of runs).
    bool earlier_runs_spend = false;
    const EventSinks* events = nullptr;
  };
  // A candidate that passed, with its fastest measurement.
  struct Passed {
    agents::CandidateMsg candidate;
    RunResult result;
    double median_s = 0;
  };

  explicit RunLog(Config c) : c_(std::move(c)) {}

  // Continues a run whose writes up to `stored_*` are stored, numbering the next attempt and
  // message after `attempt_seq` and `message_seq` (modes/optimize_resume.h says where).
  // Reads which of the stored attempts spent a budget slot; fails when the store does.
  Status resume_at(int stored_attempts, int stored_messages, int attempt_seq, int message_seq);
  // Spends budget as run `run_id` did, attempt by attempt (a replay of it); an attempt past its
  // end spends by the usual rule. Fails when the store does.
  Status spend_as(const std::string& run_id);
  // Judges `c` with `options` (or reads its evaluation back), stores the attempt and emits it.
  // Fails only when the store or the judge's environment fails; a bad candidate is a verdict.
  // `extra`: more fields for the attempt's detail (a search's edge: parent, move, proposer).
  Expected<RunResult> measure(const agents::CandidateMsg& c, const std::string& kind,
                              const std::string& strategy, const EvalOptions& options,
                              const nlohmann::json& extra = nlohmann::json::object());
  // `c`'s search measurement when this run has measured it already (nullopt otherwise): a
  // tuner that comes back to a setting it tried reads it here instead of spending budget on
  // the same candidate again. Fails when the store does.
  Expected<std::optional<RunResult>> measured_in_run(const agents::CandidateMsg& c) const;
  // An attempt that judged nothing (a plan that did not apply, a task edit found on resume).
  Status note_attempt(const std::string& kind, const std::string& strategy,
                      const std::string& verdict, const nlohmann::json& detail);
  // A message between roles, stored with the run.
  Status message(const std::string& from, const std::string& to, const std::string& type,
                 const nlohmann::json& body);
  // The reference's and the library's times from the side-by-side measurement that set them
  // (zero until then, and for the library when the task has none).
  struct Anchors {
    double reference_median_s = 0, reference_min_s = 0;
    double library_median_s = 0, library_min_s = 0;
    std::string library;  // the baseline's name
  };
  const Anchors& anchors() const { return anchors_; }
  // Speedups are reported over this median (the run's first candidate).
  void set_reference_median(double s) { reference_median_ = s; }
  double reference_median() const { return reference_median_; }
  // A journey entry that was stored before (a marker read back on resume).
  void add_to_journey(nlohmann::json j) { journey_.push_back(std::move(j)); }

  int evaluations() const { return evaluations_; }
  int reused() const { return reused_; }
  int borrowed() const { return borrowed_; }
  int attempts() const { return attempt_seq_; }
  const std::vector<nlohmann::json>& journey() const { return journey_; }
  const std::map<std::string, Passed>& passed() const { return passed_; }

 private:
  Config c_;
  // The measurement stored under evaluation key `ekey`, if any.
  Expected<std::optional<RunResult>> stored_result(const std::string& ekey) const;
  int attempt_seq_ = 0, message_seq_ = 0, stored_attempts_ = 0, stored_messages_ = 0;
  int evaluations_ = 0, reused_ = 0, borrowed_ = 0;
  // The evaluation keys this run has measured or read back so far, and, on resume, whether each
  // stored attempt spent a budget slot (by seq; one stored before the field existed did).
  std::set<std::string> run_keys_;
  std::map<int, bool> stored_spent_, spent_as_;
  // Stores the candidate (its source, schedule, knobs and provenance) once.
  Status put_candidate(const agents::CandidateMsg& c);
  // Whether the attempt about to be numbered `seq`, of evaluation `ekey`, spends a slot.
  bool spends(int seq, const std::string& ekey, bool fresh) const;
  // Judges `c` with `options`, timing the reference and the library too while the anchors are
  // unknown; sets them from the result.
  Expected<RunResult> judge_anchoring(const agents::CandidateMsg& c, const std::string& kind,
                                      EvalOptions e);
  // Sets the anchors from a result that timed the reference, once.
  void take_anchors(const RunResult& r);

  double reference_median_ = 0;
  Anchors anchors_;
  bool anchors_failed_ = false;
  std::vector<nlohmann::json> journey_;
  std::map<std::string, Passed> passed_;
};

}  // namespace kf
