// optimize after an edit of the task (modes/optimize.h, task/task_identity.h): measurements
// stored for the task before the edit are never read back, by a new run or by a resumed one,
// whichever field was edited; the unedited task reads them back (the control).
//
// One real run (the naive candidate of tests/check_tasks/gemv_ok, real store, real judge) makes a
// recording; the per-field runs replay it (simulation), so they cost no compile and no timing.
// The recorded judge answers whatever task it is given: a simulated run that reads nothing back
// calls it, one that reuses a stored evaluation does not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "modes/optimize.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "support/fs.h"
#include "unit/task_edit_util.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using task_edit::Edit;

OptimizeOptions one_candidate(const fs::path& task, const fs::path& out) {
  OptimizeOptions o;
  o.task_dir = task;
  o.budget_evals = 1;  // the naive candidate only
  o.min_time_s = 0.05;
  o.final_run = false;
  o.profile = false;
  o.stage_times = "off";
  o.out_dir = out;
  return o;
}

// The real run every test replays, and its temporary folder.
class TaskEdit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir("kforge-optimize-task-edit");
    task_edit::copy_fixture(original());
    auto store = SqliteStore::open(tmp_->path() / "runs.db");
    KF_CHECK(store.has_value()) << store.error().message();
    store_ = store->release();
    OptimizeOptions o = one_candidate(original(), tmp_->path() / "out-real");
    o.record = (tmp_->path() / "real.jsonl").string();
    auto r = optimize(o, *store_);
    if (r) {
      real_ = new OptimizeResult(*r);
    } else {
      error_ = new std::string(r.error().message());
    }
  }
  static void TearDownTestSuite() {
    delete real_;
    delete error_;
    delete store_;
    delete tmp_;
  }
  void SetUp() override {
    ASSERT_EQ(error_, nullptr) << *error_;
    ASSERT_NE(real_, nullptr);
  }
  static fs::path original() { return tmp_->path() / "original"; }
  // A fresh copy of the original task with `edit` applied.
  static fs::path edited(const Edit& edit) {
    const fs::path dir = tmp_->path() / ("edited-" + edit.field);
    task_edit::copy_fixture(dir);
    edit.apply(dir);
    return dir;
  }
  static OptimizeOptions simulated(const fs::path& task, const std::string& name) {
    OptimizeOptions o = one_candidate(task, tmp_->path() / ("out-" + name));
    o.simulate = (tmp_->path() / "real.jsonl").string();
    return o;
  }

  static TempDir* tmp_;
  static SqliteStore* store_;
  static OptimizeResult* real_;
  static std::string* error_;
};
TempDir* TaskEdit::tmp_ = nullptr;
SqliteStore* TaskEdit::store_ = nullptr;
OptimizeResult* TaskEdit::real_ = nullptr;
std::string* TaskEdit::error_ = nullptr;

// The case, with the real judge and the real store: the GEMV's bench shape made 64 times
// larger is measured at the new shape, not read back at the old one.
TEST_F(TaskEdit, ABenchShape64TimesLargerIsMeasuredAgainAtTheNewShape) {
  ASSERT_EQ(real_->evaluations, 1);
  ASSERT_EQ(real_->reused, 0);
  EXPECT_EQ(real_->best_result.shape, "M=256 K=512");

  auto again = optimize(one_candidate(original(), tmp_->path() / "out-again"), *store_);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->borrowed, 1) << "the unedited task reads its measurement back, free";

  const fs::path big =
      edited({"bench_64x", [](const fs::path& d) {
                task_edit::replace_all(d, "task.toml", "M = 256, K = 512", "M = 16384, K = 512");
              }});
  auto r = optimize(one_candidate(big, tmp_->path() / "out-big"), *store_);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->reused, 0);
  EXPECT_EQ(r->borrowed, 0) << "measured at the new shape, not read back";
  EXPECT_EQ(r->evaluations, 1);
  EXPECT_EQ(r->best_result.shape, "M=16384 K=512");
  ASSERT_TRUE(r->best_result.timing);
  EXPECT_GT(r->best_result.timing->median_s, 0);
}

class EveryFieldEdit : public TaskEdit, public ::testing::WithParamInterface<Edit> {};

// One store for every field: the original task's simulated measurement, and the edited tasks'
// runs (each edit has an identity of its own, so none can see another's).
MemoryStore& shared_store() {
  static MemoryStore* store = new MemoryStore;
  return *store;
}

TEST_F(TaskEdit, TheUneditedTaskReadsItsSimulatedMeasurementBack) {
  auto first = optimize(simulated(original(), "first"), shared_store());
  ASSERT_TRUE(first) << first.error().message();
  auto control = optimize(simulated(original(), "control"), shared_store());
  ASSERT_TRUE(control) << control.error().message();
  EXPECT_EQ(control->borrowed, 1) << "the first run's measurement, read back free";
}

TEST_P(EveryFieldEdit, ANewRunOnTheEditedTaskReusesNothing) {
  MemoryStore& store = shared_store();
  if (*store.count_evaluations() == 0) {
    auto first = optimize(simulated(original(), "first"), store);
    ASSERT_TRUE(first) << first.error().message();
  }
  ASSERT_GE(*store.count_evaluations(), 1);

  const Edit& edit = GetParam();
  const fs::path dir = edited(edit);
  if (HasFatalFailure()) return;
  auto r = optimize(simulated(dir, "edited-" + edit.field), store);
  if (edit.changes_candidate) {
    // A new candidate has no stored evaluation and no recorded one: the judge was asked, and
    // had nothing to replay.
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("no recorded measurement"), std::string::npos)
        << r.error().message();
    return;
  }
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->evaluations, 1);
  EXPECT_EQ(r->reused, 0) << "after editing " << edit.field;
  EXPECT_EQ(r->borrowed, 0) << "after editing " << edit.field;
}

INSTANTIATE_TEST_SUITE_P(Fields, EveryFieldEdit, ::testing::ValuesIn(task_edit::every_field()),
                         [](const auto& info) { return info.param.field; });

// A store whose update_run fails, as if the process died after the naive candidate's
// evaluation was stored: the run stays "running", with its evaluation and attempt.
class DiesAtUpdate final : public Store {
 public:
  explicit DiesAtUpdate(Store& inner) : inner_(inner) {}
  Status create_run(const RunRecord& r) override { return inner_.create_run(r); }
  Expected<RunRecord> get_run(const std::string& id) override { return inner_.get_run(id); }
  Expected<std::vector<RunRecord>> list_runs() override { return inner_.list_runs(); }
  Status update_run(const std::string&, const std::string&, const std::string&,
                    const nlohmann::json&) override {
    return Status::error("killed");
  }
  Status put_candidate(const CandidateRecord& c) override { return inner_.put_candidate(c); }
  Expected<std::optional<CandidateRecord>> get_candidate(const std::string& key) override {
    return inner_.get_candidate(key);
  }
  Expected<std::optional<EvaluationRecord>> find_evaluation(const std::string& key) override {
    return inner_.find_evaluation(key);
  }
  Status record_evaluation(const EvaluationRecord& e, const AttemptRecord& a) override {
    return inner_.record_evaluation(e, a);
  }
  Expected<int64_t> count_evaluations() override { return inner_.count_evaluations(); }
  Status put_attempt(const AttemptRecord& a) override { return inner_.put_attempt(a); }
  Expected<std::vector<AttemptRecord>> attempts(const std::string& run) override {
    return inner_.attempts(run);
  }
  Expected<int> next_attempt_seq(const std::string& run) override {
    return inner_.next_attempt_seq(run);
  }
  Status put_message(const MessageRecord& m) override { return inner_.put_message(m); }
  Expected<std::vector<MessageRecord>> messages(const std::string& run) override {
    return inner_.messages(run);
  }
  Expected<int> next_message_seq(const std::string& run) override {
    return inner_.next_message_seq(run);
  }

 private:
  Store& inner_;
};

// An unfinished simulated run on `task` in `store`; returns its id.
std::string unfinished_run(Store& store, const OptimizeOptions& o) {
  DiesAtUpdate dying(store);
  auto r = optimize(o, dying);
  KF_CHECK(!r.has_value()) << "the run was meant to die";
  auto runs = store.list_runs();
  KF_CHECK(runs.has_value() && !runs->empty());
  return runs->front().id;
}

std::vector<std::string> kinds(Store& store, const std::string& run) {
  auto attempts = store.attempts(run);
  KF_CHECK(attempts.has_value()) << attempts.error().message();
  std::vector<std::string> out;
  for (const AttemptRecord& a : *attempts) out.push_back(a.kind);
  return out;
}

TEST_F(TaskEdit, AResumedRunOnAnUnchangedTaskReusesItsMeasurements) {
  MemoryStore store;
  const std::string id = unfinished_run(store, simulated(original(), "resume-same"));
  std::vector<std::string> lines;
  OptimizeOptions progress;
  progress.progress = [&](const std::string& l) { lines.push_back(l); };
  auto r = resume_optimize(id, store, progress);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->reused, 1);
  EXPECT_EQ(kinds(store, id), (std::vector<std::string>{"baseline"}));
  for (const std::string& l : lines) EXPECT_EQ(l.find("the task changed"), std::string::npos) << l;
}

TEST_F(TaskEdit, AResumedRunOnAnEditedTaskSaysSoAndMeasuresAgain) {
  MemoryStore store;
  const fs::path dir = tmp_->path() / "resumed";
  task_edit::copy_fixture(dir);
  const std::string id = unfinished_run(store, simulated(dir, "resume-edit"));
  task_edit::replace_all(dir, "task.toml", "M = 256, K = 512", "M = 16384, K = 512");

  // Killed again, once the edited task's measurement is stored: a second resume of the same
  // edited task reads that one back and marks no second change.
  {
    DiesAtUpdate dying(store);
    std::vector<std::string> lines;
    OptimizeOptions progress;
    progress.progress = [&](const std::string& l) { lines.push_back(l); };
    ASSERT_FALSE(resume_optimize(id, dying, progress));
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.front().find("the task changed since run " + id), std::string::npos)
        << lines.front();
    EXPECT_EQ(*store.count_evaluations(), 2) << "measured again for the edited task";
  }
  std::vector<std::string> lines;
  OptimizeOptions progress;
  progress.progress = [&](const std::string& l) { lines.push_back(l); };
  auto r = resume_optimize(id, store, progress);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->reused, 1) << "the edited task's own measurement is read back";
  for (const std::string& l : lines) EXPECT_EQ(l.find("the task changed"), std::string::npos) << l;
  EXPECT_EQ(kinds(store, id), (std::vector<std::string>{"baseline", "task_changed", "baseline"}));
  auto attempts = store.attempts(id);
  ASSERT_TRUE(attempts);
  EXPECT_NE((*attempts)[0].evaluation_key, (*attempts)[2].evaluation_key);
  EXPECT_EQ((*attempts)[1].detail.value("previous_task_identity", ""),
            (*store.get_run(id)).options.value("task_identity", ""));
  EXPECT_EQ(store.get_run(id)->state, "finished");
}

}  // namespace
}  // namespace kf
