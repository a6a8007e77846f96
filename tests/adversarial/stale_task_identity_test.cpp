// The task identity (task/task_identity.h): an edit of any field of a task folder gives a new
// identity, so an evaluation stored in the real store under the old task's key is not found
// under the edited task's; a copy elsewhere, or a file the task does not name, changes nothing.
#include <gtest/gtest.h>

#include <memory>

#include "store/sqlite_store.h"
#include "support/fs.h"
#include "task/task_identity.h"
#include "unit/store_test_util.h"
#include "unit/task_edit_util.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using task_edit::Edit;

TaskIdentity identity_ok(const fs::path& dir) {
  auto t = load_identified_task(dir);
  KF_CHECK(t.has_value()) << t.error().message();
  return t->identity;
}

// A real store holding one evaluation of candidate "cand" measured on the task with identity
// `task_hash`, keyed as optimize keys it.
class StoredEvaluation {
 public:
  StoredEvaluation(const fs::path& db, const std::string& task_hash) {
    auto s = SqliteStore::open(db);
    KF_CHECK(s.has_value()) << s.error().message();
    store_ = std::move(*s);
    KF_CHECK(store_->create_run(store_test::run("r1")).ok());
    KF_CHECK(store_->put_candidate(store_test::candidate("cand")).ok());
    EvaluationRecord e = store_test::evaluation("cand", 1);
    e.key = key(task_hash);
    KF_CHECK(store_->record_evaluation(e, store_test::attempt("r1", 1, "cand", e.key)).ok());
  }
  static std::string key(const std::string& task_hash) {
    return evaluation_key("cand", task_hash, "machine-fp", 1);
  }
  bool found_for(const std::string& task_hash) {
    auto f = store_->find_evaluation(key(task_hash));
    KF_CHECK(f.has_value()) << f.error().message();
    return f->has_value();
  }

 private:
  std::unique_ptr<SqliteStore> store_;
};

class EveryField : public ::testing::TestWithParam<Edit> {};

TEST_P(EveryField, AnEditChangesTheIdentityAndTheStoredEvaluationIsNotReadBack) {
  TempDir tmp("kforge-task-identity");
  const fs::path original = tmp.path() / "original", edited = tmp.path() / "edited";
  task_edit::copy_fixture(original);
  task_edit::copy_fixture(edited);
  GetParam().apply(edited);
  if (::testing::Test::HasFatalFailure()) return;

  const TaskIdentity before = identity_ok(original);
  auto after = load_identified_task(edited);
  ASSERT_TRUE(after) << "the edit must leave a valid task: " << after.error().message();
  EXPECT_NE(after->identity.hash, before.hash) << GetParam().field;

  StoredEvaluation stored(tmp.path() / "runs.db", before.hash);
  EXPECT_TRUE(stored.found_for(before.hash)) << "the unedited task reads its evaluation back";
  EXPECT_FALSE(stored.found_for(after->identity.hash))
      << "after editing " << GetParam().field << " the stored evaluation must not be reused";
}

INSTANTIATE_TEST_SUITE_P(TaskIdentity, EveryField, ::testing::ValuesIn(task_edit::every_field()),
                         [](const auto& info) { return info.param.field; });

TEST(TaskIdentity, HashesTheFilesTheTaskNamesInOrder) {
  auto t = load_identified_task(task_edit::fixture());
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->identity.files,
            (std::vector<std::string>{"task.toml", "reference.cpp", "baseline.cpp"}));
  EXPECT_EQ(t->identity.hash.size(), 32u);
  auto again = task_identity(t->task);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->hash, t->identity.hash) << "loading and hashing agree on the same files";
}

TEST(TaskIdentity, IsTheContentNotTheLocationAndIgnoresFilesTheTaskDoesNotName) {
  TempDir tmp("kforge-task-identity");
  const TaskIdentity original = identity_ok(task_edit::fixture());
  const fs::path copy = tmp.path() / "somewhere" / "else";
  task_edit::copy_fixture(copy);
  EXPECT_EQ(identity_ok(copy).hash, original.hash);
  task_edit::spit(copy / "README.md", "notes about the task\n");
  task_edit::spit(copy / "unused.cpp", "int unused;\n");
  EXPECT_EQ(identity_ok(copy).hash, original.hash);
}

TEST(TaskIdentity, AReferenceReachedThroughASymlinkIsHashedByItsContent) {
  TempDir tmp("kforge-task-identity");
  const fs::path dir = tmp.path() / "linked", target = tmp.path() / "shared_reference.cpp";
  task_edit::copy_fixture(dir);
  fs::rename(dir / "reference.cpp", target);
  fs::create_symlink(target, dir / "reference.cpp");
  const std::string before = identity_ok(dir).hash;
  EXPECT_EQ(before, identity_ok(task_edit::fixture()).hash);
  task_edit::replace_all(tmp.path(), "shared_reference.cpp", "Acc s = 0;", "Acc s{};");
  EXPECT_NE(identity_ok(dir).hash, before) << "an edit of the linked file is an edit of the task";
}

TEST(TaskIdentity, ATaskThatDoesNotLoadHasNoIdentity) {
  TempDir tmp("kforge-task-identity");
  const fs::path dir = tmp.path() / "broken";
  task_edit::copy_fixture(dir);
  fs::remove(dir / "baseline.cpp");
  auto t = load_identified_task(dir);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message().find("baseline.cpp"), std::string::npos) << t.error().message();
  auto none = load_identified_task(tmp.path() / "missing");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("not a task directory"), std::string::npos);
}

}  // namespace
}  // namespace kf
