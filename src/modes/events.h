// Typed events of a run, for whoever watches it: the console, a JSON-lines file (`kforge optimize
// --events FILE`), later a browser or a chat session. A mode emits events; it formats nothing.
//
//   EventSinks sinks;
//   ConsoleReporter console([](const std::string& line) { fmt::print("{}\n", line); });
//   JsonLinesReporter file;  KF_RETURN_IF_ERROR(file.open("run.events.jsonl"));
//   sinks.add(&console); sinks.add(&file);
//   sinks.emit(RunStarted{...});   // every sink gets every event, in order
//
// The JSON form of each event is documented in docs/events.md and checked against
// docs/events.schema.json ("kforge-events/2") by a test.
#pragma once

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "support/status.h"

namespace kf {

inline constexpr const char* kEventsSchema = "kforge-events/2";

struct RunStarted {
  std::string run_id, task, mode, brain, target;
  int threads = 1;
  int budget_evals = 0;
  double budget_time_s = 0;
  bool resumed = false;
};

// A candidate judged (or its evaluation read back from the store).
struct AttemptJudged {
  std::string run_id;
  int seq = 0;         // the attempt's number in the run
  int evaluation = 0;  // evaluations so far, this one included
  int budget_evals = 0;
  std::string kind;       // baseline, plan, tune, debug, confirm, final
  std::string strategy;   // the plan's strategy ("default", "confirm:X", "final")
  std::string label;      // what the candidate is, for people ("default schedule", an origin)
  std::string candidate;  // the candidate key
  std::string verdict;
  std::string message;
  double median_s = 0, min_s = 0;  // 0 when not timed
  double speedup_vs_naive = 0;     // 0 when not timed
  // The reference's and the library's median over this one's (modes/run_log.h, "Anchors"): 0
  // when not timed or not known yet.
  double vs_reference = 0, vs_library = 0;
  // The timing's (p90 - p10) / median; -1 when not timed or timed once (a candidate whose first
  // sample was already too slow to keep: one sample has no spread).
  double spread = -1;
  double roofline_fraction = -1;  // -1 when unknown
  // Side by side with the best (a confirmation): its time over this one's, by median and min.
  double vs_best_median = 0, vs_best_min = 0;
  bool reused = false;  // read back from the store, not measured again
  // Whether it spent a slot of the budget (modes/run_log.h, "Budget"): false for a read-back of
  // an earlier run's measurement, whose `evaluation` is then the count before it.
  bool spent = true;
};

// The run's best changed.
struct NewBest {
  std::string run_id, candidate, label;
  double median_s = 0, min_s = 0, speedup_vs_naive = 0;
};

// A decision of the mode worth a line of its own ("tuning the whole recipe's knobs").
struct Note {
  std::string run_id, text;
};

struct RunEnded {
  std::string run_id, stop_reason, best_candidate;
  int evaluations = 0, attempts = 0, reused = 0;
  int borrowed = 0;  // read back from earlier runs, no budget spent (modes/run_log.h)
  double best_median_s = 0;
  std::string final_verdict;  // "" when there was no final run
};

using Event = std::variant<RunStarted, AttemptJudged, NewBest, Note, RunEnded>;

// The event's type name ("run_started", ...) and its JSON line: {"schema", "type", "time", ...}.
std::string event_type(const Event& e);
nlohmann::json event_json(const Event& e, double unix_time_s);

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on(const Event& e) = 0;
};

// Every sink, in the order added; sinks are not owned.
class EventSinks {
 public:
  void add(EventSink* s) {
    if (s) sinks_.push_back(s);
  }
  void emit(const Event& e) const {
    for (EventSink* s : sinks_) s->on(e);
  }

 private:
  std::vector<EventSink*> sinks_;
};

// The progress text people read: one line per event (none for NewBest, which the attempt's line
// already shows).
std::string console_line(const Event& e);

class ConsoleReporter final : public EventSink {
 public:
  explicit ConsoleReporter(std::function<void(const std::string&)> print)
      : print_(std::move(print)) {}
  void on(const Event& e) override;

 private:
  std::function<void(const std::string&)> print_;
};

// Appends one JSON line per event to a file, flushed after each (a run killed mid-way leaves
// every line of the events before it). Text is written through dump_json.
class JsonLinesReporter final : public EventSink {
 public:
  JsonLinesReporter() = default;
  ~JsonLinesReporter() override;
  JsonLinesReporter(const JsonLinesReporter&) = delete;
  JsonLinesReporter& operator=(const JsonLinesReporter&) = delete;
  Status open(const std::string& path);
  void on(const Event& e) override;
  // The first write error, if any (a full disk does not stop the run).
  const Status& status() const { return status_; }

 private:
  std::FILE* f_ = nullptr;
  Status status_;
};

}  // namespace kf
