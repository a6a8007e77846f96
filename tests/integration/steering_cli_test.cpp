// Steering the built-in brain (cli/strategy_options.h): `--only` and `--skip` decide which
// strategies its planner may propose and `--pin` holds knobs, in optimize and in search; the run
// stores them, so a resume plans as the run did. `--from` starts a run from a person's kernel
// (C++ or a schedule), in optimize and in search.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::only_run_in;
using testing::open_store_at;
using testing::run_kforge;

const fs::path kTask = testing::source_dir() / "tests/integration/written_source/task";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_steering");
}

// The strategies of a run's plan attempts (a search's: the first word of each strategy move).
std::set<std::string> planned(const fs::path& db) {
  auto store = open_store_at(db);
  auto attempts = store->attempts(only_run_in(*store));
  KF_CHECK(attempts.has_value());
  std::set<std::string> out;
  for (const AttemptRecord& a : *attempts) {
    if (a.kind == "plan") out.insert(a.strategy);
    if (a.kind == "search" && a.detail.contains("move") &&
        a.detail["move"].value("kind", "") == "strategy") {
      const std::string text = a.detail["move"].value("text", "");
      out.insert(text.substr(0, text.find('(')));
    }
  }
  return out;
}

TEST(SteeringCli, SkippedStrategiesAreNeverPlannedAndTheSkipIsStoredWithTheRun) {
  const fs::path db = temp_root() / "skip.db";
  ProcessResult r = run_kforge({"optimize", kTask.string(), "--budget-evals", "5", "--min-time",
                                "0.02", "--no-final", "--skip", "rfactor_reduction,vectorize_inner",
                                "--store", db.string(), "--out", (temp_root() / "skip").string()},
                               300);
  ASSERT_TRUE(r.ok()) << describe(r);
  const std::set<std::string> p = planned(db);
  EXPECT_FALSE(p.empty());
  EXPECT_EQ(p.count("rfactor_reduction"), 0u);
  EXPECT_EQ(p.count("vectorize_inner"), 0u);
  // Unsteered, the planner's first choices on this task are exactly those two.
  const fs::path free_db = temp_root() / "free.db";
  ProcessResult f = run_kforge(
      {"optimize", kTask.string(), "--budget-evals", "3", "--min-time", "0.02", "--no-final",
       "--store", free_db.string(), "--out", (temp_root() / "free").string(), "-q"},
      300);
  ASSERT_TRUE(f.ok()) << describe(f);
  const std::set<std::string> unsteered = planned(free_db);
  EXPECT_TRUE(unsteered.count("rfactor_reduction") || unsteered.count("vectorize_inner"))
      << "the skip would not have been tested";

  auto store = open_store_at(db);
  auto run = store->get_run(only_run_in(*store));
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->options["strategies"]["skip"],
            nlohmann::json::array({"rfactor_reduction", "vectorize_inner"}));
}

TEST(SteeringCli, OnlyKeepsASearchToTheNamedStrategies) {
  const fs::path db = temp_root() / "only.db";
  ProcessResult r = run_kforge(
      {"search", kTask.string(), "--policy", "greedy", "--budget-evals", "5", "--min-time", "0.02",
       "--no-final", "--only", "fuse_into_consumer", "--only", "tile_2d", "--store", db.string(),
       "--out", (temp_root() / "only").string(), "-q"},
      300);
  ASSERT_TRUE(r.ok()) << describe(r);
  const std::set<std::string> p = planned(db);
  EXPECT_FALSE(p.empty());
  for (const std::string& s : p) EXPECT_TRUE(s == "fuse_into_consumer" || s == "tile_2d") << s;
}

// The recipes of a run's judged candidates.
std::vector<std::string> recipes(const fs::path& db) {
  auto store = open_store_at(db);
  auto attempts = store->attempts(only_run_in(*store));
  KF_CHECK(attempts.has_value());
  std::vector<std::string> out;
  for (const AttemptRecord& a : *attempts)
    if (a.detail.contains("recipe")) out.push_back(a.detail.value("recipe", ""));
  return out;
}

TEST(SteeringCli, APinnedKnobKeepsItsValueThroughPlansTuningAndSearchMoves) {
  for (const std::string cmd : {"optimize", "search"}) {
    SCOPED_TRACE(cmd);
    const fs::path db = temp_root() / ("pin_" + cmd + ".db");
    std::vector<std::string> args = {cmd,
                                     kTask.string(),
                                     "--budget-evals",
                                     "6",
                                     "--min-time",
                                     "0.02",
                                     "--no-final",
                                     "--only",
                                     "vectorize_inner,rfactor_reduction",
                                     "--pin",
                                     "vectorize_inner.lanes=8",
                                     "--store",
                                     db.string(),
                                     "--out",
                                     (temp_root() / ("pin_" + cmd)).string(),
                                     "-q"};
    if (cmd == "search") args.insert(args.begin() + 2, {"--policy", "greedy"});
    ProcessResult r = run_kforge(args, 300);
    ASSERT_TRUE(r.ok()) << describe(r);
    int with_step = 0;
    for (const std::string& recipe : recipes(db)) {
      if (recipe.find("vectorize_inner(") == std::string::npos) continue;
      ++with_step;
      EXPECT_NE(recipe.find("vectorize_inner(lanes=8)"), std::string::npos) << recipe;
    }
    EXPECT_GE(with_step, 1) << "vectorize_inner was never planned: the pin was not tested";
  }
}

TEST(SteeringCli, ABadPinIsRefusedNamingWhatIsWrong) {
  for (const auto& [pin, why] : std::vector<std::pair<std::string, std::string>>{
           {"vectorize_inner.lanes", "expected STRATEGY.KNOB=VALUE"},
           {"no_such.x=1", "no strategy 'no_such'"},
           {"vectorize_inner.nope=8", "vectorize_inner has no knob 'nope'"},
           {"vectorize_inner.lanes=-8", "positive integer"},
           {"vectorize_inner.lanes=8x", "positive integer"}}) {
    ProcessResult r = run_kforge({"optimize", kTask.string(), "--pin", pin, "--store",
                                  (temp_root() / "badpin.db").string()});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_NE((r.out + r.err).find(why), std::string::npos) << pin << "\n" << describe(r);
  }
  EXPECT_FALSE(fs::exists(temp_root() / "badpin.db"));
}

TEST(SteeringCli, AStrategyNotInTheCatalogIsRefusedBeforeAnythingRuns) {
  const fs::path db = temp_root() / "refused.db";
  for (const std::string cmd : {"optimize", "search"}) {
    ProcessResult r = run_kforge(
        {cmd, kTask.string(), "--skip", "vectorize_inner,no_such", "--store", db.string()});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_NE((r.out + r.err).find("'no_such' is not a strategy of the catalog"), std::string::npos)
        << describe(r);
  }
  EXPECT_FALSE(fs::exists(db));
}

// The first attempt of a run in `db`, and its candidate.
std::pair<AttemptRecord, CandidateRecord> first_of(const fs::path& db) {
  auto store = open_store_at(db);
  auto attempts = store->attempts(only_run_in(*store));
  KF_CHECK(attempts.has_value() && !attempts->empty());
  auto c = store->get_candidate(attempts->front().candidate_key);
  KF_CHECK(c.has_value() && c->has_value());
  return {attempts->front(), **c};
}

TEST(SteeringCli, FromAKernelFileTheRunStartsWithItAndStoresItsText) {
  const fs::path kernel = kTask / "../sources/a_unrolled.cpp";
  for (const std::string cmd : {"optimize", "search"}) {
    const fs::path db = temp_root() / ("from_cpp_" + cmd + ".db");
    ProcessResult r = run_kforge({cmd, kTask.string(), "--from", kernel.string(), "--budget-evals",
                                  "2", "--min-time", "0.02", "--no-final", "--store", db.string(),
                                  "--out", (temp_root() / ("from_cpp_" + cmd)).string()},
                                 300);
    ASSERT_TRUE(r.ok()) << describe(r);
    const auto [first, candidate] = first_of(db);
    EXPECT_EQ(first.verdict, "ok") << cmd;
    EXPECT_EQ(candidate.source, read_file(kernel).value()) << cmd;
    EXPECT_EQ(candidate.provenance["origin"], "from:a_unrolled.cpp") << cmd;
    EXPECT_EQ(candidate.provenance["kind"], "written") << cmd;
    auto store = open_store_at(db);
    const nlohmann::json options = store->get_run(only_run_in(*store))->options;
    EXPECT_EQ(options["from"]["content"], candidate.source) << "a resume starts from the same";
  }
}

TEST(SteeringCli, FromAScheduleTheRunStartsWithItsLoweredKernel) {
  const fs::path sched = temp_root() / "split.sched";
  KF_CHECK(write_file_atomic(sched,
                             "# y's inner loop in 16-wide vectors\n"
                             "split y.d d.o d.i 16\nvectorize y.d.i 16\n")
               .ok());
  const fs::path db = temp_root() / "from_sched.db";
  ProcessResult r =
      run_kforge({"optimize", kTask.string(), "--from", sched.string(), "--budget-evals", "1",
                  "--min-time", "0.02", "--no-final", "--store", db.string(), "--out",
                  (temp_root() / "from_sched").string()},
                 300);
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_NE(r.err.find("from:split.sched"), std::string::npos)
      << "not the default schedule's label\n"
      << r.err;
  const auto [first, candidate] = first_of(db);
  EXPECT_EQ(first.strategy, "from");
  EXPECT_EQ(candidate.provenance["kind"], "generated");
  EXPECT_NE(candidate.schedule.find("vectorize y.d.i 16"), std::string::npos) << candidate.schedule;
  EXPECT_NE(candidate.source.find("kforge: schedule-hash"), std::string::npos);
}

TEST(SteeringCli, AFromFileThatCannotStartARunIsRefusedNamingWhy) {
  const fs::path bad = temp_root() / "bad.sched", empty = temp_root() / "empty.cpp";
  KF_CHECK(write_file_atomic(bad, "bogus y\n").ok());
  KF_CHECK(write_file_atomic(empty, "").ok());
  for (const auto& [file, why] :
       std::vector<std::pair<fs::path, std::string>>{{temp_root() / "missing.cpp", "missing.cpp"},
                                                     {empty, "the file is empty"},
                                                     {bad, "bad.sched:1: expected a primitive"}}) {
    ProcessResult r = run_kforge({"optimize", kTask.string(), "--from", file.string(), "--store",
                                  (temp_root() / "badfrom.db").string()});
    EXPECT_NE(r.exit_code, 0) << describe(r);
    EXPECT_NE((r.out + r.err).find(why), std::string::npos) << file << "\n" << describe(r);
  }
}

}  // namespace
}  // namespace kf
