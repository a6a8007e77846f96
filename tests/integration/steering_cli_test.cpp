// Steering the built-in brain (cli/strategy_options.h): `--only` and `--skip` decide which
// strategies its planner may propose and `--pin` holds knobs, in optimize and in search; the run
// stores them, so a resume plans as the run did.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace
}  // namespace kf
