// A brain that writes plain C++ (no recipe, no schedule) through `kforge optimize`, with the real
// judge and store: the files brain (agents/files/brain.h) on a copy of a task without its TE
// spec, uninterrupted and killed with SIGKILL part-way then resumed; and a mixed team, the
// built-in planner with the files implementer, on the task with its spec.
//
// Fixture (tests/integration/written_source/): task/ (RMSNorm at a small shape, with a [te]
// spec), sources/ (a_unrolled.cpp ~2x faster than c_twice.cpp, b_wrong_mean.cpp wrong; both
// correct ones far faster than the reference of tests/integration/slow_rmsnorm, the task the
// files brain runs on, without its spec, so that which is kept never hangs on noise), by_strategy/
// (the fast kernel as rfactor_reduction.cpp and vectorize_inner.cpp, for the built-in planner's
// plans).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

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

const fs::path kFixture = testing::source_dir() / "tests/integration/written_source";

// This program's own directory (support/process_temp_dir.h).
const fs::path& temp_root() {
  return testing::process_temp_dir("kf_written");
}

// slow_rmsnorm copied without its [te] section (made once).
fs::path task_without_te() {
  static const fs::path dir = [] {
    const fs::path d = temp_root() / "task_no_te";
    const fs::path slow = testing::source_dir() / "tests/integration/slow_rmsnorm";
    fs::create_directories(d);
    fs::copy_file(slow / "reference.cpp", d / "reference.cpp");
    std::string toml = read_file(slow / "task.toml").value();
    const size_t te = toml.find("\n[te]");
    KF_CHECK(te != std::string::npos) << "the fixture has a [te] section";
    toml.resize(te + 1);
    std::ofstream(d / "task.toml") << toml;
    return d;
  }();
  return dir;
}

std::vector<std::string> files_run_args(const fs::path& db, const fs::path& out) {
  return {"optimize",   task_without_te().string(),
          "--brain",    "files",
          "--sources",  (kFixture / "sources").string(),
          "--min-time", "0.3",
          "--store",    db.string(),
          "--out",      out.string()};
}

std::unique_ptr<SqliteStore> open_store(const fs::path& db) {
  auto s = SqliteStore::open(db);
  KF_CHECK(s.has_value()) << s.error().message();
  return std::move(*s);
}

std::string only_run(Store& store) {
  auto runs = store.list_runs();
  KF_CHECK(runs.has_value()) << runs.error().message();
  KF_CHECK(runs->size() == 1) << runs->size() << " runs";
  return runs->front().id;
}

nlohmann::json summary_of(const fs::path& out) {
  return nlohmann::json::parse(read_file(out / "summary.json").value());
}

// An attempt as the comparisons see it (times aside: they are measured, not replayed).
struct Step {
  int seq = 0;
  std::string kind, strategy, candidate, evaluation, verdict;
  bool operator==(const Step&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Step& s) {
  return os << s.seq << " " << s.kind << " " << s.strategy << " " << s.verdict
            << " c=" << s.candidate << " e=" << s.evaluation;
}

std::vector<Step> steps_of(Store& store, const std::string& run) {
  auto a = store.attempts(run);
  KF_CHECK(a.has_value()) << a.error().message();
  std::vector<Step> out;
  for (const AttemptRecord& r : *a)
    out.push_back({r.seq, r.kind, r.strategy, r.candidate_key, r.evaluation_key, r.verdict});
  return out;
}

// The kinds and plans of a files run over sources/, in order.
std::vector<std::pair<std::string, std::string>> plan_order(const std::vector<Step>& steps) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Step& s : steps) out.emplace_back(s.kind, s.strategy);
  return out;
}

const std::vector<std::pair<std::string, std::string>> kFilesJourney = {
    {"baseline", "default"},
    {"plan", "a_unrolled.cpp"},
    {"plan", "b_wrong_mean.cpp"},
    {"plan", "c_twice.cpp"},
    {"final", "final"}};

TEST(OptimizeWrittenSource, ATeamThatNeedsATeSpecIsRefusedWithoutOne) {
  ProcessResult r = run_kforge({"optimize", task_without_te().string(), "--store",
                                (temp_root() / "refused.db").string(), "--no-final"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("slow_rmsnorm has no TE spec"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("planner (builtin) and implementer (builtin)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("files "), std::string::npos) << "names a brain that writes source";
  // Half a team is refused as well: the built-in planner plans over the spec's pipeline.
  r = run_kforge({"optimize", task_without_te().string(), "--brain",
                  "planner=builtin,default=files", "--sources", (kFixture / "sources").string(),
                  "--store", (temp_root() / "refused.db").string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("the planner (builtin) of this team"), std::string::npos) << r.err;
  // The files brain needs its folder.
  r = run_kforge({"optimize", task_without_te().string(), "--brain", "files", "--store",
                  (temp_root() / "refused.db").string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("--sources"), std::string::npos) << r.err;
}

TEST(OptimizeWrittenSource, TheFilesBrainOptimizesATaskWithoutATeSpec) {
  const fs::path db = temp_root() / "files.db", out = temp_root() / "files_out";
  ProcessResult r = run_kforge(files_run_args(db, out), 300);
  ASSERT_TRUE(r.ok()) << describe(r);
  const nlohmann::json s = summary_of(out);
  EXPECT_EQ(s["brain"], "files");
  EXPECT_EQ(s["first_candidate"], "reference");
  EXPECT_EQ(s["best"]["kind"], "written");
  EXPECT_EQ(s["best"]["origin"], "files:a_unrolled.cpp") << s.dump(2);
  EXPECT_TRUE(s["best"]["recipe_steps"].is_null()) << "written source has no recipe";
  EXPECT_EQ(s["best"]["schedule"], "");
  EXPECT_GT(s["best"]["speedup_vs_naive"].get<double>(), 1.0);
  EXPECT_EQ(s["final"]["verdict"], "ok");
  EXPECT_NE(s["stop_reason"].get<std::string>().find("every source"), std::string::npos);
  EXPECT_EQ(read_file(out / "best.cpp").value(),
            read_file(kFixture / "sources/a_unrolled.cpp").value());
  EXPECT_FALSE(fs::exists(out / "best.sched")) << "no schedule to write";

  auto store = open_store(db);
  const std::string run = only_run(*store);
  const std::vector<Step> steps = steps_of(*store, run);
  EXPECT_EQ(plan_order(steps), kFilesJourney);
  ASSERT_EQ(steps.size(), kFilesJourney.size());
  EXPECT_EQ(steps[0].verdict, "ok");
  EXPECT_EQ(steps[1].verdict, "ok");
  EXPECT_EQ(steps[2].verdict, "wrong_answer") << "the judge caught the mean over D - 1";
  EXPECT_EQ(steps[3].verdict, "ok");
  // The candidates are stored as what they are: imported and written, with no schedule.
  auto reference = store->get_candidate(steps[0].candidate);
  ASSERT_TRUE(reference && reference->has_value());
  EXPECT_EQ((*reference)->provenance["kind"], "imported");
  EXPECT_EQ((*reference)->provenance["origin"], "reference");
  auto written = store->get_candidate(steps[1].candidate);
  ASSERT_TRUE(written && written->has_value());
  EXPECT_EQ((*written)->provenance["kind"], "written");
  EXPECT_EQ((*written)->schedule, "");
  EXPECT_EQ((*written)->source, read_file(kFixture / "sources/a_unrolled.cpp").value());
  // The conversation names the files as the plans' text.
  auto messages = store->messages(run);
  ASSERT_TRUE(messages);
  std::set<std::string> texts;
  for (const MessageRecord& m : *messages)
    if (m.type == "Plan") texts.insert(m.body.value("text", ""));
  EXPECT_TRUE(texts.count("a_unrolled.cpp") && texts.count("c_twice.cpp"));
}

TEST(OptimizeWrittenSource, KilledAndResumedItLosesNothing) {
  const fs::path db = temp_root() / "killed.db", out = temp_root() / "killed_out";
  const fs::path log = temp_root() / "killed.log";
  testing::KforgeChild child(files_run_args(db, out), log);
  auto killed = testing::kill_after_attempts(child, log, db, 2, 120);
  ASSERT_TRUE(killed) << killed.error().message();
  const std::string run = *killed;

  std::vector<Step> before;
  int64_t killed_evaluations = 0;
  {
    auto store = open_store(db);
    EXPECT_EQ(store->get_run(run)->state, "running");
    before = steps_of(*store, run);
    killed_evaluations = *store->count_evaluations();
  }
  ASSERT_GE(before.size(), 2u);
  ASSERT_LT(before.size(), kFilesJourney.size()) << "killed before the end";

  ProcessResult resumed = run_kforge({"optimize", "--resume", run, "--store", db.string()}, 300);
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  auto store = open_store(db);
  EXPECT_EQ(only_run(*store), run);
  const std::vector<Step> after = steps_of(*store, run);
  EXPECT_EQ(plan_order(after), kFilesJourney);
  // What the killed run stored is all there, unchanged.
  ASSERT_GE(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]);
  for (size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].seq, static_cast<int>(i) + 1);
  // Every evaluation stored once; none stored before the kill was measured again.
  std::set<std::string> keys;
  for (const Step& s : after) keys.insert(s.evaluation);
  EXPECT_EQ(*store->count_evaluations(), static_cast<int64_t>(keys.size()));
  const nlohmann::json s = summary_of(out);
  const int fresh = s["evaluations"].get<int>() - s["reused_evaluations"].get<int>();
  EXPECT_EQ(killed_evaluations + fresh + 1, *store->count_evaluations())
      << "the search's stored evaluations are read back (the final run is measured afresh)";
  EXPECT_EQ(s["best"]["origin"], "files:a_unrolled.cpp");
  EXPECT_EQ(store->get_run(run)->state, "finished");
}

TEST(OptimizeWrittenSource, AMixedTeamFromAFileBuiltinPlannerWithTheFilesImplementer) {
  const fs::path db = temp_root() / "mixed.db", out = temp_root() / "mixed_out";
  // The team from a file (agents/brain_config.h), its folder relative to the file.
  const fs::path team = temp_root() / "team" / "mixed.toml";
  fs::create_directories(team.parent_path());
  fs::create_directory_symlink(kFixture / "by_strategy", team.parent_path() / "by_strategy");
  std::ofstream(team) << "[brain]\nplanner = \"builtin\"\nimplementer = \"files\"\n"
                         "sources = \"by_strategy\"\n";
  ProcessResult r = run_kforge({"optimize", (kFixture / "task").string(), "--config", team.string(),
                                "--min-time", "0.1", "--budget-evals", "8", "--no-profile",
                                "--stop-at", "100", "--store", db.string(), "--out", out.string()},
                               300);
  ASSERT_TRUE(r.ok()) << describe(r);
  const nlohmann::json s = summary_of(out);
  EXPECT_EQ(s["brain"],
            "planner=builtin,implementer=files,debugger=builtin,tester=builtin,profiler=builtin,"
            "autotuner=builtin");
  auto store = open_store(db);
  const std::string run = only_run(*store);
  EXPECT_EQ(store->get_run(run)->brain,
            "planner=builtin,implementer=files,debugger=builtin,tester=builtin,profiler=builtin,"
            "autotuner=builtin");
  const std::vector<Step> steps = steps_of(*store, run);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps[0].kind, "baseline");
  // The built-in planner's strategies, carried out by the files implementer: a file for a plan
  // is judged, a plan with no file is not applicable. The roofline never stops the planner here
  // (--stop-at 100): on a fast machine the first written kernel can reach 90% of it, and the
  // planner would stop before proposing a strategy with no file.
  int judged = 0, missing = 0;
  for (const Step& st : steps) {
    if (st.kind != "plan") continue;
    if (st.verdict == "not_applicable") {
      ++missing;
      continue;
    }
    ++judged;
    EXPECT_TRUE(st.strategy == "rfactor_reduction" || st.strategy == "vectorize_inner")
        << st.strategy;
    auto c = store->get_candidate(st.candidate);
    ASSERT_TRUE(c && c->has_value());
    EXPECT_EQ((*c)->provenance["kind"], "written");
    EXPECT_EQ((*c)->provenance["origin"], "files:" + st.strategy + ".cpp");
  }
  EXPECT_GE(judged, 1);
  EXPECT_GE(missing, 1);
  EXPECT_EQ(s["best"]["kind"], "written") << "a hand-written kernel beat the reference";
  EXPECT_EQ(s["final"]["verdict"], "ok");
}

}  // namespace
}  // namespace kf
