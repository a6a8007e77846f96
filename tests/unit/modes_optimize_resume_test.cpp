// resume_point (modes/optimize_resume.h): where a resumed run picks up, read from the store, and
// whether the task changed since its attempts were measured.
#include <gtest/gtest.h>

#include "modes/optimize_resume.h"
#include "store/memory_store.h"
#include "unit/store_test_util.h"

namespace kf {
namespace {

// A run started on the task with identity "A" at epoch 100, with `attempts` plain attempts and
// `messages` messages stored.
void stored_run(Store& s, int attempts, int messages) {
  RunRecord r = store_test::run("r1");
  r.options = {{"task_dir", "t"}, {"task_identity", "A"}, {"started_epoch_s", 100.0}};
  ASSERT_TRUE(s.create_run(r).ok());
  for (int i = 1; i <= attempts; ++i)
    ASSERT_TRUE(s.put_attempt({.run_id = "r1", .seq = i, .kind = "plan", .verdict = "ok"}).ok());
  for (int i = 1; i <= messages; ++i)
    ASSERT_TRUE(s.put_message({.run_id = "r1",
                               .seq = i,
                               .from_role = "planner",
                               .to_role = "implementer",
                               .type = "Plan",
                               .body = {}})
                    .ok());
}

void mark_change(Store& s, int seq, const ResumePoint& p, const std::string& to) {
  ASSERT_TRUE(s.put_attempt({.run_id = "r1",
                             .seq = seq,
                             .kind = "task_changed",
                             .verdict = "restarted",
                             .detail = task_changed_detail(p, to)})
                  .ok());
}

TEST(ResumePoint, TheSameTaskReplaysFromTheStart) {
  MemoryStore s;
  stored_run(s, 3, 5);
  auto p = resume_point(s, "r1", "A", 999);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_FALSE(p->task_changed);
  EXPECT_EQ(p->stored_attempts, 3);
  EXPECT_EQ(p->stored_messages, 5);
  EXPECT_EQ(p->attempt_seq, 0);
  EXPECT_EQ(p->message_seq, 0);
  EXPECT_EQ(p->started_epoch_s, 100.0) << "the time budget counts from the run's start";
  EXPECT_FALSE(p->marker);
}

TEST(ResumePoint, AnEditedTaskStartsOverAfterWhatIsStored) {
  MemoryStore s;
  stored_run(s, 3, 5);
  auto p = resume_point(s, "r1", "B", 999);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_TRUE(p->task_changed);
  EXPECT_EQ(p->measured_for, "A");
  EXPECT_EQ(p->attempt_seq, 3);
  EXPECT_EQ(p->message_seq, 5);
  EXPECT_EQ(p->started_epoch_s, 999.0) << "a fresh time budget";
  const nlohmann::json d = task_changed_detail(*p, "B");
  EXPECT_EQ(d["task_identity"], "B");
  EXPECT_EQ(d["previous_task_identity"], "A");
  EXPECT_EQ(d["message_seq"], 5);
}

TEST(ResumePoint, AfterAChangeTheReplayStartsAtTheLastMarker) {
  MemoryStore s;
  stored_run(s, 3, 5);
  auto first = resume_point(s, "r1", "B", 500);
  ASSERT_TRUE(first);
  mark_change(s, 4, *first, "B");
  ASSERT_TRUE(s.put_attempt({.run_id = "r1", .seq = 5, .kind = "baseline", .verdict = "ok"}).ok());

  auto same = resume_point(s, "r1", "B", 999);
  ASSERT_TRUE(same) << same.error().message();
  EXPECT_FALSE(same->task_changed);
  EXPECT_EQ(same->stored_attempts, 5);
  EXPECT_EQ(same->attempt_seq, 4) << "the replay's first attempt follows the marker";
  EXPECT_EQ(same->message_seq, 5);
  EXPECT_EQ(same->started_epoch_s, 500.0);
  ASSERT_TRUE(same->marker);
  EXPECT_EQ(same->marker->seq, 4);

  // Edited back to the first content: that is a change from B, and starts over again.
  auto back = resume_point(s, "r1", "A", 999);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->task_changed);
  EXPECT_EQ(back->measured_for, "B");
  EXPECT_EQ(back->attempt_seq, 5);
}

TEST(ResumePoint, ARunStoredWithoutAnIdentityCountsAsChanged) {
  MemoryStore s;
  ASSERT_TRUE(s.create_run(store_test::run("r1")).ok());  // options without task_identity
  auto p = resume_point(s, "r1", "A", 1);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_TRUE(p->task_changed);
  EXPECT_EQ(p->measured_for, "");
}

TEST(ResumePoint, AnUnknownRunIsAnError) {
  MemoryStore s;
  EXPECT_FALSE(resume_point(s, "nope", "A", 1));
}

}  // namespace
}  // namespace kf
