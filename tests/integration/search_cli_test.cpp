// `kforge search` end to end on the rmsnorm fixture (tests/integration/written_source/task). One
// real run with --record makes a recording; the other runs replay it (--simulate), so their
// decisions see the same measurements every time: every policy to its budget, and a search
// killed with SIGKILL at random points and resumed reaching the same graph and best as one left
// alone. A real run with --jobs 2 compiles in parallel.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

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
  return testing::process_temp_dir("kf_search_cli");
}

using testing::only_run_in;
using testing::open_store_at;

// The recording every simulated run replays: an MCTS search judged for real.
const fs::path& recording() {
  static const fs::path rec = [] {
    const fs::path r = temp_root() / "recording.jsonl";
    ProcessResult p = run_kforge(
        {"search", kTask.string(), "--policy", "mcts", "--budget-evals", "12", "--min-time", "0.02",
         "--no-final", "--record", r.string(), "--store", (temp_root() / "rec.db").string(),
         "--out", (temp_root() / "rec_out").string(), "-q"},
        600);
    KF_CHECK(p.ok()) << describe(p);
    return r;
  }();
  return rec;
}

std::vector<std::string> simulated(const std::string& policy, const std::string& name,
                                   int budget = 10) {
  return {"search",
          kTask.string(),
          "--policy",
          policy,
          "--budget-evals",
          std::to_string(budget),
          "--no-final",
          "--simulate",
          recording().string(),
          "--store",
          (temp_root() / (name + ".db")).string(),
          "--out",
          (temp_root() / (name + "_out")).string()};
}

nlohmann::json summary_of(const std::string& name) {
  return nlohmann::json::parse(read_file(temp_root() / (name + "_out") / "summary.json").value());
}

// The run's attempts as kind:candidate:verdict, and the checks every search graph passes: each
// judged node's parent was judged before it, and no candidate is judged twice.
std::vector<std::string> checked_attempts(Store& store, const std::string& run) {
  auto attempts = store.attempts(run);
  KF_CHECK(attempts.has_value());
  std::vector<std::string> out;
  std::set<std::string> judged;
  for (const AttemptRecord& a : *attempts) {
    out.push_back(a.kind + ":" + a.candidate_key + ":" + a.verdict);
    if (a.kind != "search") continue;
    EXPECT_TRUE(a.detail.contains("move")) << a.detail.dump();
    const std::string parent = a.detail.value("parent", std::string());
    if (a.verdict == "duplicate") {
      EXPECT_TRUE(judged.count(a.detail.value("same_as", std::string()))) << a.detail.dump();
      continue;
    }
    EXPECT_TRUE(parent.empty() ? judged.empty() : judged.count(parent) == 1)
        << "attempt " << a.seq << ": its parent was not judged before it";
    EXPECT_TRUE(judged.insert(a.candidate_key).second) << "judged twice: " << a.candidate_key;
  }
  return out;
}

// Every policy on one recording (one test, so the recording is made once).
TEST(SearchCli, EveryPolicyRunsToItsBudgetOnOneGraphAndShowsItAsATree) {
  for (const std::string policy : {"greedy", "best-of-n", "beam", "mcts", "evolve"}) {
    SCOPED_TRACE(policy);
    const std::string name = "policy_" + policy;
    ProcessResult r = run_kforge(simulated(policy, name), 300);
    ASSERT_TRUE(r.ok()) << describe(r);
    const fs::path db = temp_root() / (name + ".db");
    auto store = open_store_at(db);
    const std::string run = only_run_in(*store);
    EXPECT_EQ(store->get_run(run)->state, "finished");
    EXPECT_EQ(store->get_run(run)->mode, "search");
    checked_attempts(*store, run);
    const nlohmann::json s = summary_of(name);
    EXPECT_EQ(s["search"]["policy"], policy);
    EXPECT_LE(s["evaluations"].get<int>(), 10);
    if (s["stop_reason"] == "evaluation budget spent") {
      EXPECT_EQ(s["evaluations"].get<int>(), 10);
    }
    EXPECT_GE(s["search"]["nodes"].get<int>(), 2);
    EXPECT_GE(s["search"]["evals_to_90pct"].get<int>(), 1);
    EXPECT_NE(r.out.find("search: policy " + policy), std::string::npos) << r.out;
    ProcessResult shown = run_kforge({"show", run, "--store", db.string()});
    ASSERT_TRUE(shown.ok()) << describe(shown);
    const size_t tree = shown.out.find("search graph:\n");
    ASSERT_NE(tree, std::string::npos) << shown.out;
    const std::string first = shown.out.substr(tree + 14, 20);  // the root, '*' when the best
    EXPECT_TRUE(first == "- default schedule [" || first == "* default schedule [") << shown.out;
    EXPECT_NE(shown.out.find("\n  "), std::string::npos) << "children are indented";
    EXPECT_NE(shown.out.find("* "), std::string::npos) << "the best is marked";
  }
}

// Killed with SIGKILL three times at random points (after a random number of attempts), resumed
// each time: the same attempts, graph and best as the search left alone, nothing judged twice.
TEST(SearchCli, KilledAtRandomPointsAndResumedReachesTheSameBest) {
  ProcessResult alone = run_kforge(simulated("mcts", "alone", 12), 300);
  ASSERT_TRUE(alone.ok()) << describe(alone);
  auto store_alone = open_store_at(temp_root() / "alone.db");
  const auto expected = checked_attempts(*store_alone, only_run_in(*store_alone));
  ASSERT_GE(expected.size(), 10u);

  std::vector<std::string> args = simulated("mcts", "killed", 12);
  args.insert(args.end(), {"--sim-latency", "0.15"});
  const fs::path db = temp_root() / "killed.db", log = temp_root() / "killed.log";
  std::mt19937 rng(20261206);
  std::string run;
  size_t stored = 0;
  for (int kill = 0; kill < 3; ++kill) {
    const size_t more = std::uniform_int_distribution<size_t>(1, 3)(rng);
    std::vector<std::string> a =
        run.empty() ? args
                    : std::vector<std::string>{"search", "--resume", run, "--store", db.string()};
    testing::KforgeChild child(a, log);
    auto killed = testing::kill_after_attempts(child, log, db, stored + more, 120);
    ASSERT_TRUE(killed) << killed.error().message();
    run = *killed;
    auto store = open_store_at(db);
    EXPECT_EQ(store->get_run(run)->state, "running");
    stored = store->attempts(run)->size();
    ASSERT_LT(stored, expected.size()) << "killed before the end";
  }
  ProcessResult resumed = run_kforge({"search", "--resume", run, "--store", db.string()}, 300);
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  auto store = open_store_at(db);
  EXPECT_EQ(store->get_run(run)->state, "finished");
  EXPECT_EQ(checked_attempts(*store, run), expected);
  EXPECT_EQ(summary_of("killed")["best"]["key"], summary_of("alone")["best"]["key"]);
  // Every evaluation stored once: as many as the run judged distinct candidates.
  std::set<std::string> keys;
  const auto all = store->attempts(run);
  ASSERT_TRUE(all);
  for (const AttemptRecord& a : *all)
    if (!a.evaluation_key.empty()) keys.insert(a.evaluation_key);
  EXPECT_EQ(*store->count_evaluations(), static_cast<int64_t>(keys.size()));
}

// Judged for real with two compiles at a time: each candidate judged once, the run finished.
TEST(SearchCli, TwoJobsCompileInParallelAndJudgeEachCandidateOnce) {
  const fs::path db = temp_root() / "jobs.db";
  ProcessResult r =
      run_kforge({"search", kTask.string(), "--policy", "beam", "--jobs", "2", "--budget-evals",
                  "6", "--min-time", "0.02", "--no-final", "--store", db.string(), "--out",
                  (temp_root() / "jobs_out").string(), "-q"},
                 600);
  ASSERT_TRUE(r.ok()) << describe(r);
  auto store = open_store_at(db);
  const std::string run = only_run_in(*store);
  checked_attempts(*store, run);
  const nlohmann::json s = summary_of("jobs");
  EXPECT_EQ(s["search"]["jobs"], 2);
  EXPECT_EQ(s["evaluations"], 6);
}

TEST(SearchCli, BadRequestsGetClearErrors) {
  ProcessResult unknown = run_kforge({"search", kTask.string(), "--policy", "annealing"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE((unknown.out + unknown.err).find("annealing"), std::string::npos) << describe(unknown);
  const fs::path db = temp_root() / "empty.db";
  ProcessResult none = run_kforge({"search", "--resume", "r-none", "--store", db.string()});
  EXPECT_EQ(none.exit_code, 2) << describe(none);
  EXPECT_NE(none.err.find("r-none"), std::string::npos) << none.err;
  ProcessResult nothing = run_kforge({"search", "--store", db.string()});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_NE(nothing.err.find("name a task directory"), std::string::npos) << nothing.err;
}

TEST(SearchCli, AFinishedSearchIsNotResumedNorAnOptimizeRunAsASearch) {
  const fs::path db = temp_root() / "done.db";
  ProcessResult r = run_kforge(
      {"search", kTask.string(), "--policy", "greedy", "--budget-evals", "2", "--min-time", "0.02",
       "--no-final", "--store", db.string(), "--out", (temp_root() / "done_out").string(), "-q"},
      300);
  ASSERT_TRUE(r.ok()) << describe(r);
  const std::string run = only_run_in(*open_store_at(db));
  ProcessResult again = run_kforge({"search", "--resume", run, "--store", db.string()});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("has finished already"), std::string::npos) << again.err;
  ProcessResult opt = run_kforge({"optimize", "--resume", run, "--store", db.string()});
  EXPECT_EQ(opt.exit_code, 2);
  EXPECT_NE(opt.err.find("is a search run"), std::string::npos) << opt.err;
}

// A team with an LLM planner (the replay server answering from tests/integration/llm/mixed.json)
// and the built-in implementer: the planner's strategies are the search's moves, proposed by
// "llm", and its exchanges are stored with the run.
TEST(SearchCli, AnLlmPlannerProposesTheMovesOfAGreedySearch) {
  auto t = llm::read_transcript(testing::source_dir() / "tests/integration/llm/mixed.json");
  ASSERT_TRUE(t) << t.error().message();
  auto server = llm::ReplayServer::start(*t);
  ASSERT_TRUE(server) << server.error().message();
  const fs::path cfg = temp_root() / "llm.toml";
  std::ofstream(cfg) << "[llm]\nbase_url = \"" << (*server)->base_url()
                     << "\"\nmodel = \"coder\"\ntimeout_s = 30\nmax_retries = 0\n";
  const fs::path db = temp_root() / "llm.db";
  ProcessResult r = run_kforge(
      {"search", kTask.string(), "--policy", "greedy", "--brain", "planner=llm,default=builtin",
       "--llm-config", cfg.string(), "--budget-evals", "3", "--refine-share", "0", "--min-time",
       "0.02", "--no-final", "--store", db.string(), "--out", (temp_root() / "llm_out").string()},
      300);
  ASSERT_TRUE(r.ok()) << describe(r);
  auto store = open_store_at(db);
  const std::string run = only_run_in(*store);
  std::vector<std::string> moves;
  const auto attempts = store->attempts(run);
  ASSERT_TRUE(attempts);
  for (const AttemptRecord& a : *attempts)
    if (a.kind == "search" && a.detail["move"]["kind"] == "strategy") {
      EXPECT_EQ(a.detail["move"]["proposer"], "llm");
      moves.push_back(a.strategy);
    }
  ASSERT_FALSE(moves.empty());
  EXPECT_NE(moves[0].find("vectorize_inner"), std::string::npos) << moves[0];
  EXPECT_GE(store->llm_exchanges(run)->size(), 1u);
  EXPECT_NE(r.out.find("llm: "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kf
