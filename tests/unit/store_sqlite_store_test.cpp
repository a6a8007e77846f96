// SqliteStore beyond the shared contract (tests/contract/store_contract_test.cpp): persistence,
// crash safety under SIGKILL, and the files it must refuse.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <set>

#include "store/schema.h"
#include "store/sqlite_store.h"
#include "support/fs.h"
#include "unit/store_test_util.h"

namespace kf {
namespace {

using namespace store_test;
namespace fs = std::filesystem;

std::unique_ptr<SqliteStore> open_ok(const fs::path& path, const SqliteStoreOptions& o = {}) {
  auto s = SqliteStore::open(path, o);
  KF_CHECK(s.has_value()) << s.error().message();
  return std::move(*s);
}

void write_bytes(const fs::path& path, const std::string& bytes, std::streamoff at = 0) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!f) f.open(path, std::ios::out | std::ios::binary);
  f.seekp(at);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

TEST(SqliteStore, CreatesParentDirectoriesAndUsesWal) {
  TempDir dir("kforge-sqlite-store");
  fs::path path = dir.path() / "a" / "b" / "runs.db";
  auto store = open_ok(path);
  EXPECT_EQ(store->path(), path);
  ASSERT_TRUE(store->create_run(run("r1")).ok());
  EXPECT_TRUE(fs::exists(path.string() + "-wal"));  // the write went to the WAL
  // journal_mode is persistent: a fresh raw connection sees WAL.
  auto raw = sql::Db::open(path, 1000);
  ASSERT_TRUE(raw);
  auto st = sql::Statement::prepare(*raw, "PRAGMA journal_mode");
  ASSERT_TRUE(st && *st->step());
  EXPECT_EQ(st->text(0), "wal");
}

TEST(SqliteStore, ReopeningKeepsEverything) {
  TempDir dir("kforge-sqlite-store");
  fs::path path = dir.path() / "runs.db";
  EvaluationRecord e = evaluation("c1");
  {
    auto store = open_ok(path);
    ASSERT_TRUE(store->create_run(run("r1", "2026-01-01T00:00:00.000Z")).ok());
    ASSERT_TRUE(store->put_candidate(candidate("c1")).ok());
    ASSERT_TRUE(store->record_evaluation(e, attempt("r1", 1, "c1", e.key)).ok());
    ASSERT_TRUE(store->put_message(message("r1", 1, "Plan")).ok());
    ASSERT_TRUE(store->update_run("r1", "finished", "c1", {{"best", 1}}).ok());
  }
  auto store = open_ok(path);
  auto r = store->get_run("r1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, "finished");
  EXPECT_EQ(r->best_candidate, "c1");
  EXPECT_EQ((*store->get_candidate("c1"))->to_json(), candidate("c1").to_json());
  EXPECT_EQ((*store->find_evaluation(e.key))->to_json(), e.to_json());
  EXPECT_EQ((*store->attempts("r1"))[0].to_json(), attempt("r1", 1, "c1", e.key).to_json());
  EXPECT_EQ((*store->messages("r1"))[0].to_json(), message("r1", 1, "Plan").to_json());
  EXPECT_EQ(*store->next_attempt_seq("r1"), 2);
}

// The child writes evaluation + attempt pairs as fast as it can and reports each commit on a
// pipe; the parent kills it with SIGKILL mid-loop, then checks that the file reopens, holds every
// reported commit (plus at most the one that committed before it could be reported), and never
// half a pair. Three rounds on one file: each child resumes from next_attempt_seq.
TEST(SqliteStore, SigkillMidLoopKeepsExactlyTheCommittedPairs) {
  TempDir dir("kforge-sqlite-store");
  fs::path path = dir.path() / "runs.db";
  {
    auto store = open_ok(path);
    ASSERT_TRUE(store->create_run(run("r1")).ok());
    ASSERT_TRUE(store->put_candidate(candidate("c1")).ok());
  }
  const std::string payload(12000, 'x');
  int reported = 0;  // the last seq a child reported as committed
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // the child: no gtest, no return, only _exit
      close(fds[0]);
      auto s = SqliteStore::open(path);
      if (!s) _exit(2);
      for (int i = 0; i < 100000; ++i) {
        auto seq = (*s)->next_attempt_seq("r1");
        if (!seq) _exit(3);
        EvaluationRecord e = evaluation("c1", *seq);  // threads = seq: a fresh key each time
        e.result["padding"] = payload;                // several pages per transaction
        if (!(*s)->record_evaluation(e, attempt("r1", *seq, "c1", e.key)).ok()) _exit(4);
        int32_t done = *seq;
        if (write(fds[1], &done, sizeof done) != sizeof done) _exit(5);
      }
      _exit(0);
    }
    close(fds[1]);
    const int wait_for = 15 + 20 * round;  // commits this round before the kill
    int32_t seq = 0;
    for (int n = 0; n < wait_for; ++n) ASSERT_EQ(read(fds[0], &seq, sizeof seq), sizeof seq);
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
    while (read(fds[0], &seq, sizeof seq) == sizeof seq) {
    }  // commits reported before the kill landed
    close(fds[0]);
    ASSERT_GT(seq, reported);
    reported = seq;

    auto store = SqliteStore::open(path);
    ASSERT_TRUE(store) << store.error().message();
    auto attempts = (*store)->attempts("r1");
    ASSERT_TRUE(attempts) << attempts.error().message();
    const int stored = static_cast<int>(attempts->size());
    EXPECT_TRUE(stored == reported || stored == reported + 1)
        << "round " << round << ": " << stored << " attempts stored, " << reported << " reported";
    EXPECT_EQ(*(*store)->count_evaluations(), stored) << "an evaluation without its attempt";
    for (int i = 0; i < stored; ++i) {
      const AttemptRecord& a = (*attempts)[static_cast<size_t>(i)];
      ASSERT_EQ(a.seq, i + 1);
      auto e = (*store)->find_evaluation(a.evaluation_key);
      ASSERT_TRUE(e && e->has_value()) << "attempt " << a.seq << " without its evaluation";
      EXPECT_EQ((*e)->threads, a.seq);
      EXPECT_EQ((*e)->result["padding"], payload);
    }
    reported = stored;  // the next child resumes after everything stored
  }
}

TEST(SqliteStore, NewerSchemaIsRefusedWithAMessage) {
  TempDir dir("kforge-sqlite-store");
  fs::path path = dir.path() / "runs.db";
  open_ok(path).reset();
  {
    auto raw = sql::Db::open(path, 1000);
    ASSERT_TRUE(raw);
    ASSERT_TRUE(raw->exec("PRAGMA user_version = 99").ok());
  }
  auto s = SqliteStore::open(path);
  ASSERT_FALSE(s);
  const std::string& m = s.error().message();
  EXPECT_NE(m.find(path.string()), std::string::npos) << m;
  EXPECT_NE(m.find("newer kforge (schema version 99"), std::string::npos) << m;
}

TEST(SqliteStore, GarbageFileIsAnErrorNamingTheFile) {
  TempDir dir("kforge-sqlite-store");
  fs::path path = dir.path() / "runs.db";
  write_bytes(path, random_bytes(64 * 1024, 7));
  auto s = SqliteStore::open(path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find(path.string()), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("not a kforge run store, or corrupt"), std::string::npos);
}

// Damage past the header: the open or a later read fails; nothing crashes.
TEST(SqliteStore, DamagedPagesGiveErrorsNotCrashes) {
  TempDir dir("kforge-sqlite-store");
  fs::path path = dir.path() / "runs.db";
  {
    auto store = open_ok(path);
    ASSERT_TRUE(store->create_run(run("r1")).ok());
    ASSERT_TRUE(store->put_candidate(candidate("c1", std::string(20000, 'y'))).ok());
    for (int i = 1; i <= 20; ++i) {
      EvaluationRecord e = evaluation("c1", i);
      ASSERT_TRUE(store->record_evaluation(e, attempt("r1", i, "c1", e.key)).ok());
    }
  }  // the last connection checkpoints the WAL into the file
  ASSERT_FALSE(fs::exists(path.string() + "-wal"));
  auto size = static_cast<std::streamoff>(fs::file_size(path));
  write_bytes(path, random_bytes(static_cast<size_t>(size) - 4096, 9), 4096);
  auto s = SqliteStore::open(path);
  if (!s) {
    EXPECT_NE(s.error().message().find(path.string()), std::string::npos);
    return;
  }
  bool failed = !(*s)->attempts("r1") || !(*s)->get_candidate("c1") || !(*s)->list_runs() ||
                !(*s)->count_evaluations();
  EXPECT_TRUE(failed) << "random pages read back without an error";
}

TEST(SqliteStore, LockedDatabaseFailsAfterTheBusyTimeout) {
  TempDir dir("kforge-sqlite-store");
  fs::path path = dir.path() / "runs.db";
  auto store = open_ok(path, {.busy_timeout_ms = 100});
  auto other = sql::Db::open(path, 100);
  ASSERT_TRUE(other);
  {
    auto tx = sql::Transaction::begin(*other);  // another writer holds the lock
    ASSERT_TRUE(tx);
    Status s = store->create_run(run("r1"));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("database is locked"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(path.string()), std::string::npos) << s.message();
  }
  EXPECT_TRUE(store->create_run(run("r1")).ok());
}

TEST(SqliteStore, UncreatableDirectoryIsAnError) {
  TempDir dir("kforge-sqlite-store");
  write_bytes(dir.path() / "file", "not a directory");
  auto s = SqliteStore::open(dir.path() / "file" / "runs.db");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("cannot create directory"), std::string::npos)
      << s.error().message();
}

TEST(SqliteStore, TwoConnectionsSeeEachOthersCommits) {
  TempDir dir("kforge-sqlite-store");
  fs::path path = dir.path() / "runs.db";
  auto a = open_ok(path);
  auto b = open_ok(path);
  ASSERT_TRUE(a->create_run(run("r1")).ok());
  ASSERT_TRUE(b->put_attempt(attempt("r1", 1, "", "")).ok());
  EXPECT_EQ(a->attempts("r1")->size(), 1u);
  EXPECT_EQ(*b->next_attempt_seq("r1"), 2);
}

}  // namespace
}  // namespace kf
