// The run log (modes/run_log.h) on a fake judge and the in-memory store: what is judged and what
// is read back, how attempts are numbered and stored, what a resumed run skips, and the events.
#include <gtest/gtest.h>

#include <vector>

#include "modes/run_log.h"
#include "store/memory_store.h"
#include "support/status.h"

namespace kf {
namespace {

// Answers every candidate ok with a time derived from its source's length; counts its calls.
class FakeJudge final : public agents::Judge {
 public:
  Expected<RunResult> judge(const Task&, const std::string& source,
                            const EvalOptions& options) override {
    ++calls;
    labels.push_back(options.label);
    timed_reference.push_back(options.time_reference);
    if (options.time_reference && reference_fails) return Status::error("the reference crashed");
    RunResult r;
    r.verdict = source.find("bad") != std::string::npos ? Verdict::wrong_answer : Verdict::ok;
    if (r.verdict == Verdict::ok) {
      r.timing = Timing{};
      r.timing->min_s = r.timing->median_s = 1e-3 * static_cast<double>(source.size());
      // The reference takes 8 ms a call, the library 2 ms, when timed beside it.
      if (options.time_reference) {
        r.reference_timing = Timing{.min_s = 8e-3, .median_s = 8e-3};
        r.vs_reference = {8e-3 / r.timing->median_s, 8e-3 / r.timing->min_s};
      }
    }
    return r;
  }
  std::string name() const override { return "fake"; }
  int calls = 0;
  bool reference_fails = false;
  std::vector<std::string> labels;
  std::vector<bool> timed_reference;
};

class Collect final : public EventSink {
 public:
  void on(const Event& e) override { events.push_back(e); }
  std::vector<Event> events;
};

agents::CandidateMsg candidate(const std::string& key, const std::string& source) {
  agents::CandidateMsg c;
  c.key = key;
  c.source = source;
  c.origin = "test:" + key;
  c.threads = 1;
  return c;
}

class RunLogTest : public ::testing::Test {
 protected:
  // A log of run `run` (created in SetUp for "r1"; a test makes the others).
  RunLog make_log(const std::string& run = "r1", bool earlier_runs_spend = false) {
    return RunLog({.store = &store,
                   .judge = &judge,
                   .task = &task,
                   .run_id = run,
                   .task_identity = "task-hash",
                   .machine_id = "m",
                   .brain = "builtin",
                   .budget_evals = 10,
                   .earlier_runs_spend = earlier_runs_spend,
                   .events = &sinks});
  }
  void SetUp() override {
    task.name = "t";
    sinks.add(&collect);
    ASSERT_TRUE(store.create_run({.id = "r1", .task_name = "t", .mode = "optimize"}).ok());
  }
  Task task;
  MemoryStore store;
  FakeJudge judge;
  Collect collect;
  EventSinks sinks;
};

TEST_F(RunLogTest, ACandidateMeasuredOnceIsReadBackAfterwards) {
  RunLog log = make_log();
  auto a = log.measure(candidate("k1", "xx"), "baseline", "default", {});
  ASSERT_TRUE(a) << a.error().message();
  log.set_reference_median(a->timing->median_s);
  auto b = log.measure(candidate("k2", "x"), "plan", "tile", {});
  auto again = log.measure(candidate("k1", "xx"), "plan", "other", {});
  ASSERT_TRUE(b && again);
  EXPECT_EQ(judge.calls, 2) << "k1's second measurement is read back";
  EXPECT_EQ(log.evaluations(), 3);
  EXPECT_EQ(log.reused(), 1);
  EXPECT_EQ(log.attempts(), 3);
  auto stored = store.attempts("r1");
  ASSERT_TRUE(stored);
  ASSERT_EQ(stored->size(), 3u);
  EXPECT_EQ((*stored)[1].speedup, 2.0) << "over the reference median";
  EXPECT_EQ((*stored)[2].detail["reused"], true);
  EXPECT_EQ((*stored)[2].evaluation_key, (*stored)[0].evaluation_key);
  EXPECT_EQ(log.passed().size(), 2u);
  EXPECT_EQ(log.journey().size(), 3u);

  // One attempt_judged event per measurement, the read-back one marked.
  std::vector<AttemptJudged> judged;
  for (const Event& e : collect.events)
    if (const auto* j = std::get_if<AttemptJudged>(&e)) judged.push_back(*j);
  ASSERT_EQ(judged.size(), 3u);
  EXPECT_FALSE(judged[0].reused);
  EXPECT_TRUE(judged[2].reused);
  EXPECT_EQ(judged[2].evaluation, 3);
  EXPECT_EQ(judged[1].speedup_vs_naive, 2.0);
}

// What the tuner asks before measuring a setting again: only this run's measurements answer,
// and asking spends nothing and stores nothing.
TEST_F(RunLogTest, MeasuredInRunAnswersOnlyForThisRunsMeasurements) {
  {
    RunLog earlier = make_log();  // run r1 measures k1
    ASSERT_TRUE(earlier.measure(candidate("k1", "xx"), "baseline", "default", {}));
  }
  ASSERT_TRUE(store.create_run({.id = "r2", .task_name = "t", .mode = "optimize"}).ok());
  RunLog log = make_log("r2");
  auto before = log.measured_in_run(candidate("k1", "xx"));
  ASSERT_TRUE(before) << before.error().message();
  EXPECT_FALSE(before->has_value()) << "r1's measurement is not this run's";
  ASSERT_TRUE(log.measure(candidate("k2", "xxxx"), "tune", "t", {}));
  auto known = log.measured_in_run(candidate("k2", "xxxx"));
  ASSERT_TRUE(known) << known.error().message();
  ASSERT_TRUE(known->has_value());
  ASSERT_TRUE((*known)->timing);
  EXPECT_DOUBLE_EQ((*known)->timing->min_s, 4e-3);
  auto other_threads = candidate("k2", "xxxx");
  other_threads.threads = 2;
  auto at2 = log.measured_in_run(other_threads);
  ASSERT_TRUE(at2);
  EXPECT_FALSE(at2->has_value()) << "another thread count is another measurement";
  EXPECT_EQ(log.evaluations(), 1);
  EXPECT_EQ(log.attempts(), 1);
  EXPECT_EQ(judge.calls, 2);
}

std::vector<AttemptJudged> judged_events(const std::vector<Event>& events) {
  std::vector<AttemptJudged> out;
  for (const Event& e : events)
    if (const auto* j = std::get_if<AttemptJudged>(&e)) out.push_back(*j);
  return out;
}

// The reference is timed beside the first candidate that can be timed, and only then: later
// attempts' speedups over it divide its time by theirs.
TEST_F(RunLogTest, TheReferenceIsTimedOnceBesideTheFirstTimedCandidateAndAnchorsTheSpeedups) {
  RunLog log = make_log();
  EvalOptions e;
  e.time_reference = false;  // what a mode asks for a search measurement
  ASSERT_TRUE(log.measure(candidate("k0", "bad"), "baseline", "default", e));  // not timed
  ASSERT_TRUE(log.measure(candidate("k1", "xxxx"), "plan", "a", e));           // 4 ms
  ASSERT_TRUE(log.measure(candidate("k2", "xx"), "plan", "b", e));             // 2 ms
  EXPECT_EQ(judge.timed_reference, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(log.anchors().reference_median_s, 8e-3);
  const auto judged = judged_events(collect.events);
  ASSERT_EQ(judged.size(), 3u);
  EXPECT_EQ(judged[0].vs_reference, 0) << "no time: no speedup";
  EXPECT_EQ(judged[1].vs_reference, 2.0) << "from the same run";
  EXPECT_EQ(judged[2].vs_reference, 4.0) << "over the anchor";
  auto stored = store.attempts("r1");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)[2].detail["vs_reference"], 4.0);
  // The line that says what the speedups are over follows the attempt that set them.
  bool said = false;
  for (const Event& ev : collect.events)
    if (const auto* n = std::get_if<Note>(&ev))
      said |= n->text.find("8.000 ms") != std::string::npos;
  EXPECT_TRUE(said);
}

// A reference that cannot be timed is no verdict on the candidate: judged again without it, and
// never asked for again.
TEST_F(RunLogTest, AReferenceThatFailsLeavesTheRunWithoutAnchors) {
  judge.reference_fails = true;
  RunLog log = make_log();
  EvalOptions e;
  e.time_reference = false;
  auto a = log.measure(candidate("k1", "xxxx"), "plan", "a", e);
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(a->verdict, Verdict::ok);
  ASSERT_TRUE(log.measure(candidate("k2", "xx"), "plan", "b", e));
  EXPECT_EQ(judge.timed_reference, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(log.anchors().reference_median_s, 0);
  for (const auto& j : judged_events(collect.events)) EXPECT_EQ(j.vs_reference, 0);
}

TEST_F(RunLogTest, FinalAndConfirmingMeasurementsAreMeasurementsOfTheirOwn) {
  RunLog log = make_log();
  ASSERT_TRUE(log.measure(candidate("k1", "xx"), "plan", "tile", {}));
  ASSERT_TRUE(log.measure(candidate("k1", "xx"), "confirm", "confirm:tile", {}));
  ASSERT_TRUE(log.measure(candidate("k1", "xx"), "final", "final", {}));
  EXPECT_EQ(judge.calls, 3);
  EXPECT_EQ(judge.labels, (std::vector<std::string>{"", "confirm:2", "final"}));
  EXPECT_EQ(log.passed().size(), 1u) << "a final run is no fallback of its own";
}

TEST_F(RunLogTest, AFailedCandidateIsNotAFallback) {
  RunLog log = make_log();
  auto r = log.measure(candidate("k1", "bad"), "plan", "tile", {});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verdict, Verdict::wrong_answer);
  EXPECT_TRUE(log.passed().empty());
}

TEST_F(RunLogTest, AResumedRunSkipsTheWritesAlreadyStored) {
  {
    RunLog first = make_log();
    ASSERT_TRUE(first.measure(candidate("k1", "xx"), "baseline", "default", {}));
    ASSERT_TRUE(first.message("planner", "implementer", "Plan", {{"n", 1}}).ok());
    ASSERT_TRUE(first.note_attempt("plan", "tile", "not_applicable", {}).ok());
  }
  // Killed here. The resumed run replays its decisions from the start.
  RunLog again = make_log();
  ASSERT_TRUE(again.resume_at(2, 1, 0, 0).ok());
  ASSERT_TRUE(again.measure(candidate("k1", "xx"), "baseline", "default", {}));
  ASSERT_TRUE(again.message("planner", "implementer", "Plan", {{"n", 1}}).ok());
  ASSERT_TRUE(again.note_attempt("plan", "tile", "not_applicable", {}).ok());
  ASSERT_TRUE(again.measure(candidate("k2", "x"), "plan", "vectorize", {}));
  EXPECT_EQ(judge.calls, 2) << "k1 is read back";
  auto attempts = store.attempts("r1");
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->size(), 3u) << "nothing stored twice";
  EXPECT_EQ((*attempts)[2].seq, 3);
  EXPECT_EQ((*attempts)[2].strategy, "vectorize");
  auto messages = store.messages("r1");
  ASSERT_TRUE(messages);
  EXPECT_EQ(messages->size(), 1u);
  auto count = store.count_evaluations();
  ASSERT_TRUE(count);
  EXPECT_EQ(*count, 2);
}

// Budget (modes/run_log.h): what an earlier run measured is read back at no cost; what this run
// measured costs a slot each time it is met, and a resumed run's replay spends as the
// interrupted run did.
TEST_F(RunLogTest, AnEarlierRunsMeasurementCostsNoBudgetAndAResumeSpendsAsBefore) {
  {
    RunLog earlier = make_log();  // run r1 measures k1
    ASSERT_TRUE(earlier.measure(candidate("k1", "xx"), "baseline", "default", {}));
  }
  ASSERT_TRUE(store.create_run({.id = "r2", .task_name = "t", .mode = "optimize"}).ok());
  {
    RunLog log = make_log("r2");
    ASSERT_TRUE(log.measure(candidate("k1", "xx"), "baseline", "default", {}));  // r1's: free
    EXPECT_EQ(log.evaluations(), 0);
    EXPECT_EQ(log.borrowed(), 1);
    ASSERT_TRUE(log.measure(candidate("k2", "x"), "plan", "tile", {}));    // measured: spent
    ASSERT_TRUE(log.measure(candidate("k1", "xx"), "plan", "again", {}));  // met again: spent
    EXPECT_EQ(judge.calls, 2);
    EXPECT_EQ(log.evaluations(), 2);
    EXPECT_EQ(log.reused(), 1);
    EXPECT_EQ(log.borrowed(), 1);
    const auto judged = judged_events(collect.events);
    ASSERT_EQ(judged.size(), 4u);
    EXPECT_FALSE(judged[1].spent);
    EXPECT_EQ(judged[1].evaluation, 0) << "the count before it";
    EXPECT_TRUE(judged[2].spent);
    EXPECT_EQ(judged[2].evaluation, 1);
    EXPECT_TRUE(judged[3].spent);
    EXPECT_EQ(judged[3].evaluation, 2);
    auto stored = store.attempts("r2");
    ASSERT_TRUE(stored);
    ASSERT_EQ(stored->size(), 3u);
    EXPECT_EQ((*stored)[0].detail["budget"], false);
    EXPECT_EQ((*stored)[1].detail["budget"], true);
  }
  // Killed here, resumed: the replay reads all three back and spends as the first pass did,
  // though k2 is now read back too; a new candidate after it is measured and spent.
  RunLog again = make_log("r2");
  ASSERT_TRUE(again.resume_at(3, 0, 0, 0).ok());
  ASSERT_TRUE(again.measure(candidate("k1", "xx"), "baseline", "default", {}));
  ASSERT_TRUE(again.measure(candidate("k2", "x"), "plan", "tile", {}));
  ASSERT_TRUE(again.measure(candidate("k1", "xx"), "plan", "again", {}));
  EXPECT_EQ(judge.calls, 2) << "nothing measured twice";
  ASSERT_TRUE(again.measure(candidate("k3", "xxx"), "plan", "new", {}));
  EXPECT_EQ(judge.calls, 3);
  EXPECT_EQ(again.evaluations(), 3);
  EXPECT_EQ(again.reused(), 2);
  EXPECT_EQ(again.borrowed(), 1);
}

// Runs compared in one store (kforge search --count-stored) spend a slot on every candidate.
TEST_F(RunLogTest, ComparedRunsSpendOnEarlierRunsMeasurementsToo) {
  {
    RunLog earlier = make_log();
    ASSERT_TRUE(earlier.measure(candidate("k1", "xx"), "baseline", "default", {}));
  }
  ASSERT_TRUE(store.create_run({.id = "r2", .task_name = "t", .mode = "search"}).ok());
  RunLog log = make_log("r2", /*earlier_runs_spend=*/true);
  ASSERT_TRUE(log.measure(candidate("k1", "xx"), "baseline", "default", {}));
  EXPECT_EQ(judge.calls, 1) << "read back";
  EXPECT_EQ(log.evaluations(), 1);
  EXPECT_EQ(log.reused(), 1);
  EXPECT_EQ(log.borrowed(), 0);
}

TEST(CandidateLabel, TheDefaultScheduleOrTheOrigin) {
  agents::CandidateMsg c;
  c.origin = "naive";
  c.kind = agents::SourceKind::generated;
  c.generated = agents::Generation{};
  EXPECT_EQ(candidate_label(c), "default schedule");
  c.generated->recipe.steps.push_back({"tile", {}});
  c.origin = "builtin:tile";
  EXPECT_EQ(candidate_label(c), "builtin:tile");
  agents::CandidateMsg reference;  // written or imported source: its origin, even with no steps
  reference.kind = agents::SourceKind::imported;
  reference.origin = "reference";
  EXPECT_EQ(candidate_label(reference), "reference");
}

}  // namespace
}  // namespace kf
