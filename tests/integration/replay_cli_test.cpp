// `kforge replay RUN` (cli/replay_command.h): an LLM run re-run from its stored exchanges, with
// no model, reaches the same candidates; a changed record is caught; a run with nothing to
// replay is an error.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "llm/replay_server.h"
#include "store/sqlite_store.h"
#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::run_kforge;

const fs::path kTask = testing::source_dir() / "tests/integration/written_source/task";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_replay_cli");
}

// The scripted story (tests/integration/llm/story.json) run once for real through the replay
// server; returns the run's id in `db`.
std::string recorded_run(const fs::path& db) {
  auto t = llm::read_transcript(testing::source_dir() / "tests/integration/llm/story.json");
  KF_CHECK(t.has_value()) << t.error().message();
  auto server = llm::ReplayServer::start(*t);
  KF_CHECK(server.has_value()) << server.error().message();
  const fs::path cfg = temp_root() / "llm.toml";
  std::ofstream(cfg) << "[llm]\nbase_url = \"" << (*server)->base_url()
                     << "\"\nmodel = \"coder\"\ntimeout_s = 30\n";
  ProcessResult r = run_kforge({"optimize", kTask.string(), "--brain", "llm", "--llm-config",
                                cfg.string(), "--min-time", "0.1", "--no-profile", "--store",
                                db.string(), "--out", (temp_root() / "recorded").string(), "-q"},
                               300);
  KF_CHECK(r.ok()) << describe(r);
  auto store = SqliteStore::open(db);
  KF_CHECK(store.has_value()) << store.error().message();
  auto runs = (*store)->list_runs();
  KF_CHECK(runs && runs->size() == 1);
  return runs->front().id;
}

ProcessResult replay(const std::string& run, const fs::path& db, const std::string& out) {
  return run_kforge(
      {"replay", run, "--store", db.string(), "--out", (temp_root() / out).string(), "-q"}, 300);
}

TEST(ReplayCli, ARecordedLlmRunReplaysToTheSameCandidatesAndATamperedOneDoesNot) {
  const fs::path db = temp_root() / "runs.db";
  const std::string run = recorded_run(db);
  const ProcessResult same = replay(run, db, "same");
  EXPECT_EQ(same.exit_code, 0) << describe(same);
  // As many attempts as the recorded run made (a near miss adds a confirmation).
  EXPECT_NE(same.out.find("attempts, from 13 recorded exchanges"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find(": the same "), std::string::npos) << same.out;

  // The fast kernel's reply, edited in the store: the replay writes another candidate.
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  const std::string edit =
      "UPDATE llm_exchanges SET response = replace(response, 'Eight independent partial sums', "
      "'Eight partial sums') WHERE run_id = '" +
      run + "'";
  ASSERT_EQ(sqlite3_exec(h, edit.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_GT(sqlite3_changes(h), 0);
  sqlite3_close(h);
  const ProcessResult different = replay(run, db, "different");
  EXPECT_EQ(different.exit_code, 1) << describe(different);
  EXPECT_NE(different.out.find("differs"), std::string::npos) << different.out;
  EXPECT_NE(different.out.find("DIFFERENT"), std::string::npos) << different.out;
}

TEST(ReplayCli, ARunWithNothingToReplayIsAnError) {
  const ProcessResult missing = replay("r-no-such-run", temp_root() / "empty.db", "missing");
  EXPECT_EQ(missing.exit_code, 2) << describe(missing);
  EXPECT_NE(missing.err.find("r-no-such-run"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace kf
