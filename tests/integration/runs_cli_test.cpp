// `kforge runs` (the table and --json against docs/runs.schema.json), run ids by prefix, and the
// top-level `--version` and bare `kforge`.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

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
  return testing::process_temp_dir("kf_runs_cli");
}

// Two short runs in one store: one with the final side-by-side run, one without.
const fs::path& store_with_two_runs() {
  static const fs::path db = [] {
    const fs::path d = temp_root() / "runs.db";
    for (const bool final_run : {true, false}) {
      std::vector<std::string> args = {"optimize",
                                       kTask.string(),
                                       "--budget-evals",
                                       "2",
                                       "--min-time",
                                       "0.02",
                                       "--store",
                                       d.string(),
                                       "--out",
                                       (temp_root() / (final_run ? "f" : "n")).string(),
                                       "-q"};
      if (!final_run) args.push_back("--no-final");
      ProcessResult r = run_kforge(args, 300);
      KF_CHECK(r.ok()) << describe(r);
    }
    return d;
  }();
  return db;
}

nlohmann::json runs_json() {
  ProcessResult r = run_kforge({"runs", "--json", "--store", store_with_two_runs().string()});
  KF_CHECK(r.ok()) << describe(r);
  return nlohmann::json::parse(r.out);
}

TEST(RunsCli, JsonMatchesItsSchemaAndCarriesTheBestAndTheSpeedups) {
  const fs::path out = temp_root() / "runs.json";
  ProcessResult r = run_kforge({"runs", "--json", "--store", store_with_two_runs().string()});
  ASSERT_TRUE(r.ok()) << describe(r);
  ASSERT_TRUE(write_file_atomic(out, r.out).ok());
  auto valid = run_process(
      {.argv = {"python3", "-c",
                "import json, sys, jsonschema\n"
                "schema = json.load(open(sys.argv[1]))\n"
                "jsonschema.Draft202012Validator.check_schema(schema)\n"
                "jsonschema.Draft202012Validator(schema).validate(json.load(open(sys.argv[2])))\n",
                (testing::source_dir() / "docs/runs.schema.json").string(), out.string()},
       .timeout_s = 60});
  ASSERT_TRUE(valid.has_value());
  EXPECT_TRUE(valid->ok()) << valid->out << valid->err;

  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "kforge-runs/1");
  ASSERT_EQ(j["runs"].size(), 2u);
  int with_final = 0;
  for (const nlohmann::json& run : j["runs"]) {
    EXPECT_EQ(run["state"], "finished");
    EXPECT_EQ(run["task"], "written_rmsnorm");
    EXPECT_EQ(run["evaluations"], 2);
    EXPECT_GT(run["best_median_s"].get<double>(), 0);
    if (run["vs_reference"].is_number()) ++with_final;
  }
  EXPECT_EQ(with_final, 1) << j.dump(2);
}

TEST(RunsCli, TheTableHasTheBestAndSpeedupColumns) {
  ProcessResult r = run_kforge({"runs", "--store", store_with_two_runs().string()});
  ASSERT_TRUE(r.ok()) << describe(r);
  for (const std::string col : {"run", "state", "best", "vs ref", "vs lib", "evals"})
    EXPECT_NE(r.out.find(col), std::string::npos) << col << "\n" << r.out;
  const nlohmann::json j = runs_json();
  for (const nlohmann::json& run : j["runs"])
    EXPECT_NE(r.out.find(run["id"].get<std::string>()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ms "), std::string::npos) << r.out;
}

TEST(RunsCli, ARunIsNamedByAnyPrefixOfExactlyOneId) {
  const std::string db = store_with_two_runs().string();
  const nlohmann::json j = runs_json();
  const std::string a = j["runs"][0]["id"], b = j["runs"][1]["id"];
  size_t common = 0;
  while (common < a.size() && a[common] == b[common]) ++common;
  ASSERT_LT(common, a.size());
  ProcessResult shown = run_kforge({"show", a.substr(0, common + 1), "--store", db});
  ASSERT_TRUE(shown.ok()) << describe(shown);
  EXPECT_NE(shown.out.find("run " + a + " "), std::string::npos) << shown.out;

  ProcessResult both = run_kforge({"show", a.substr(0, common), "--store", db});
  EXPECT_EQ(both.exit_code, 2) << describe(both);
  EXPECT_NE(both.err.find("matches 2 runs"), std::string::npos) << both.err;
  ProcessResult none = run_kforge({"show", "no-such-run", "--store", db});
  EXPECT_EQ(none.exit_code, 2) << describe(none);
  EXPECT_NE(none.err.find("no run 'no-such-run'"), std::string::npos) << none.err;
  ProcessResult resumed =
      run_kforge({"optimize", "--resume", a.substr(0, common + 1), "--store", db});
  EXPECT_EQ(resumed.exit_code, 2) << describe(resumed);
  EXPECT_NE(resumed.err.find(a + " has finished already"), std::string::npos) << resumed.err;
}

TEST(RunsCli, VersionAndABareKforgeSayWhatTheyAre) {
  ProcessResult v = run_kforge({"--version"});
  ASSERT_TRUE(v.ok()) << describe(v);
  EXPECT_EQ(v.out.rfind("kforge ", 0), 0u) << v.out;
  ProcessResult bare = run_kforge({});
  ASSERT_TRUE(bare.ok()) << describe(bare);
  EXPECT_NE(bare.out.find("Subcommands:"), std::string::npos) << bare.out;
  EXPECT_NE(bare.out.find("optimize"), std::string::npos) << bare.out;
}

// Where a run's store and outputs go without --store and --out: the user's data folder
// ($XDG_DATA_HOME/kforge), nothing in the working directory; with `kforge --here`, the working
// directory (.kforge/runs.db, kforge-out/RUN), and the data folder is left alone.
TEST(RunsCli, TheStoreAndOutputsLiveInTheUsersDataFolderUnlessHere) {
  const fs::path data = temp_root() / "xdg_data", work = temp_root() / "xdg_work";
  fs::create_directories(work);
  const auto kforge = [&](std::vector<std::string> args) {
    args.insert(args.begin(), testing::kforge_bin());
    auto r = run_process({.argv = args,
                          .cwd = work.string(),
                          .env_set = {{"XDG_DATA_HOME", data.string()}},
                          .timeout_s = 300});
    KF_CHECK(r.has_value()) << r.error().message();
    return *r;
  };
  const std::vector<std::string> optimize = {"optimize",   kTask.string(), "--budget-evals",
                                             "1",          "--min-time",   "0.02",
                                             "--no-final", "--no-profile"};
  ProcessResult r = kforge(optimize);
  ASSERT_TRUE(r.ok()) << describe(r);
  ASSERT_TRUE(fs::exists(data / "kforge" / "runs.db"));
  ProcessResult listed = kforge({"runs", "--json"});
  ASSERT_TRUE(listed.ok()) << describe(listed);
  const auto runs = nlohmann::json::parse(listed.out)["runs"];
  ASSERT_EQ(runs.size(), 1u) << listed.out;
  const std::string id = runs[0]["id"];
  EXPECT_TRUE(fs::exists(data / "kforge" / "runs" / id / "best.cpp"));
  EXPECT_NE(r.out.find("wrote " + (data / "kforge" / "runs" / id).string()), std::string::npos)
      << r.out;
  EXPECT_TRUE(fs::is_empty(work)) << "nothing in the working directory";

  std::vector<std::string> here = optimize;
  here.insert(here.begin(), "--here");
  r = kforge(here);
  ASSERT_TRUE(r.ok()) << describe(r);
  ASSERT_TRUE(fs::exists(work / ".kforge" / "runs.db"));
  ProcessResult local = kforge({"--here", "runs", "--json"});
  ASSERT_TRUE(local.ok()) << describe(local);
  const auto local_runs = nlohmann::json::parse(local.out)["runs"];
  ASSERT_EQ(local_runs.size(), 1u) << local.out;
  EXPECT_TRUE(
      fs::exists(work / "kforge-out" / local_runs[0]["id"].get<std::string>() / "best.cpp"));
  EXPECT_EQ(nlohmann::json::parse(kforge({"runs", "--json"}).out)["runs"].size(), 1u)
      << "the data folder's store has its one run still";
}

}  // namespace
}  // namespace kf
