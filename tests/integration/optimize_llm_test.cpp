// The LLM brain end to end: `kforge optimize --brain llm` through the replay server on loopback
// (llm/replay_server.h, in this test's process) with the real judge and store, from scripted
// transcripts (tests/integration/llm/*.json, written from llm/kernels/ by make_transcripts.py).
//
// story.json: the model first writes code that does not compile (the debugger's next exchange
// repairs it, as slow as the reference), then a wrong kernel (the mean over D - 1: caught; the
// debugger's two replies hold no code, a recorded failure), then one that normalizes only half
// the rows (caught; the debugger hands back the wrong kernel of before, reformatted: the store
// answers for it), then the fast kernel (kept), then stop. Run on tests/integration/slow_rmsnorm
// (its reference is slow on purpose, so which kernel is kept never hangs on timing noise) with
// and without its TE spec, killed with SIGKILL part-way and resumed; a mixed team (LLM planner,
// built-in implementer) on the task with its spec; faults of the endpoint and of the replies;
// and a cost budget reached mid-run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
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

const fs::path kTask = testing::source_dir() / "tests/integration/slow_rmsnorm";
const fs::path kLlm = testing::source_dir() / "tests/integration/llm";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_llm_e2e");
}

fs::path task_without_te() {
  static const fs::path dir = [] {
    const fs::path d = temp_root() / "task_no_te";
    fs::create_directories(d);
    fs::copy_file(kTask / "reference.cpp", d / "reference.cpp");
    std::string toml = read_file(kTask / "task.toml").value();
    toml.resize(toml.find("\n[te]") + 1);
    std::ofstream(d / "task.toml") << toml;
    return d;
  }();
  return dir;
}

std::unique_ptr<llm::ReplayServer> serve(const std::string& transcript) {
  auto t = llm::read_transcript(kLlm / transcript);
  KF_CHECK(t.has_value()) << t.error().message();
  auto s = llm::ReplayServer::start(*t);
  KF_CHECK(s.has_value()) << s.error().message();
  return std::move(*s);
}

// The chat requests the server answered (its /models probes aside).
size_t chats(const llm::ReplayServer& server) {
  size_t n = 0;
  for (const auto& r : server.received()) n += r.path.ends_with("/chat/completions");
  return n;
}

// An [llm] settings file pointing at the server (and pricing the model at $1 per Mtok).
fs::path settings_for(const llm::ReplayServer& server, const std::string& name,
                      int timeout_s = 30) {
  const fs::path p = temp_root() / (name + ".toml");
  std::ofstream(p) << "[llm]\nbase_url = \"" << server.base_url()
                   << "\"\nmodel = \"coder\"\ntimeout_s = " << timeout_s
                   << "\nmax_retries = 1\n"
                      "[llm.prices.coder]\ninput = 1.0\noutput = 1.0\n";
  return p;
}

std::vector<std::string> args(const fs::path& task, const std::string& brain, const fs::path& cfg,
                              const std::string& name) {
  return {"optimize",
          task.string(),
          "--brain",
          brain,
          "--llm-config",
          cfg.string(),
          "--min-time",
          "0.1",
          "--no-profile",
          "--store",
          (temp_root() / (name + ".db")).string(),
          "--out",
          (temp_root() / (name + "_out")).string()};
}

std::unique_ptr<SqliteStore> open_store(const std::string& name) {
  auto s = SqliteStore::open(temp_root() / (name + ".db"));
  KF_CHECK(s.has_value()) << s.error().message();
  return std::move(*s);
}

std::string only_run(Store& store) {
  auto runs = store.list_runs();
  KF_CHECK(runs && runs->size() == 1);
  return runs->front().id;
}

// The attempts as kind:verdict (confirmations aside: a near miss is timing noise).
std::vector<std::string> journey(Store& store, const std::string& run) {
  std::vector<std::string> out;
  const auto attempts = store.attempts(run);
  KF_CHECK(attempts.has_value()) << attempts.error().message();
  for (const AttemptRecord& a : *attempts)
    if (a.kind != "confirm") out.push_back(a.kind + ":" + a.verdict);
  return out;
}

const std::vector<std::string> kStory = {
    "baseline:ok",       "plan:compile_error", "debug:ok", "plan:wrong_answer",
    "plan:wrong_answer", "debug:wrong_answer", "plan:ok",  "final:ok"};

void expect_the_story(const std::string& name, const llm::ReplayServer& server, size_t asked = 13) {
  auto store = open_store(name);
  const std::string run = only_run(*store);
  EXPECT_EQ(journey(*store, run), kStory);
  EXPECT_EQ(store->get_run(run)->state, "finished");
  const auto summary =
      nlohmann::json::parse(read_file(temp_root() / (name + "_out") / "summary.json").value());
  EXPECT_EQ(summary["best"]["origin"], "llm:implementer") << summary.dump(2);
  EXPECT_NE(summary["stop_reason"].get<std::string>().find("nothing more to gain"),
            std::string::npos);
  EXPECT_EQ(read_file(temp_root() / (name + "_out") / "best.cpp").value(),
            read_file(kLlm / "kernels/i4_fast.cpp").value());
  // Every exchange is stored verbatim with the run, once.
  auto ex = store->llm_exchanges(run);
  ASSERT_TRUE(ex);
  ASSERT_EQ(ex->size(), 13u);
  EXPECT_EQ(chats(server), asked) << "none asked twice but the one the kill cut off";
  std::vector<std::string> roles;
  for (const auto& e : *ex) {
    roles.push_back(e.role);
    EXPECT_EQ(e.error, "");
    EXPECT_NE(e.request.find("\"messages\""), std::string::npos);
    EXPECT_GT(e.prompt_tokens, 0);
  }
  EXPECT_EQ(roles, (std::vector<std::string>{"planner", "implementer", "debugger", "planner",
                                             "implementer", "debugger", "debugger", "planner",
                                             "implementer", "debugger", "planner", "implementer",
                                             "planner"}));
  // The debugger was shown the compiler's error, and the repaired kernel is the written one.
  EXPECT_NE((*ex)[2].request.find("inv"), std::string::npos);
  EXPECT_NE((*ex)[2].request.find("error"), std::string::npos);
  const auto stored = store->attempts(run);
  ASSERT_TRUE(stored);
  const std::vector<AttemptRecord>& attempts = *stored;
  auto repaired = store->get_candidate(attempts[2].candidate_key);
  ASSERT_TRUE(repaired && repaired->has_value());
  EXPECT_EQ((*repaired)->source, read_file(kLlm / "kernels/d1_fixed.cpp").value());
  EXPECT_EQ((*repaired)->provenance["origin"], "llm:debugger");
  // The reformatted wrong kernel is the first one's key: read back, not judged again.
  std::string wrong_key;
  for (const auto& a : attempts)
    if (a.verdict == "wrong_answer" && wrong_key.empty()) wrong_key = a.candidate_key;
  EXPECT_EQ(attempts.back().kind, "final");
  bool reused = false;
  for (const auto& a : attempts)
    if (a.kind == "debug" && a.verdict == "wrong_answer") reused = a.candidate_key == wrong_key;
  EXPECT_TRUE(reused) << "the debugger's repeat of the wrong kernel has the same key";
}

TEST(OptimizeLlm, TheScriptedStoryOnATaskWithItsTeSpec) {
  auto server = serve("story.json");
  ProcessResult r = run_kforge(args(kTask, "llm", settings_for(*server, "te"), "te"), 300);
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_NE(r.out.find("llm: 13 calls"), std::string::npos) << r.out;
  expect_the_story("te", *server);
}

// Killed with SIGKILL while the planner's second request hangs (story_killed.json): the three
// exchanges before it are in the store, and the resumed run answers them from there.
TEST(OptimizeLlm, TheStoryWithoutATeSpecKilledAndResumed) {
  auto server = serve("story_killed.json");
  const fs::path cfg = settings_for(*server, "killed");
  testing::KforgeChild child(args(task_without_te(), "llm", cfg, "killed"),
                             temp_root() / "killed.log");
  std::string run;
  for (int i = 0; i < 2400 && run.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (chats(*server) < 4) continue;
    auto store = open_store("killed");
    auto runs = store->list_runs();
    if (runs && runs->size() == 1 && store->llm_exchanges(runs->front().id)->size() == 3)
      run = runs->front().id;
  }
  ASSERT_FALSE(run.empty()) << "kforge never reached the hung request";
  child.kill();
  {
    auto store = open_store("killed");
    EXPECT_EQ(store->get_run(run)->state, "running");
    EXPECT_EQ(journey(*store, run),
              (std::vector<std::string>{"baseline:ok", "plan:compile_error", "debug:ok"}));
  }
  ProcessResult resumed = run_kforge({"optimize", "--resume", run, "--llm-config", cfg.string(),
                                      "--store", (temp_root() / "killed.db").string()},
                                     300);
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  EXPECT_NE(resumed.out.find("(3 answered from the run's record)"), std::string::npos)
      << resumed.out;
  expect_the_story("killed", *server, 14);
}

TEST(OptimizeLlm, AMixedTeamLlmPlannerBuiltinImplementerOnATeTask) {
  auto server = serve("mixed.json");
  ProcessResult r = run_kforge(
      args(kTask, "planner=llm,default=builtin", settings_for(*server, "mixed"), "mixed"), 300);
  ASSERT_TRUE(r.ok()) << describe(r);
  auto store = open_store("mixed");
  const std::string run = only_run(*store);
  std::vector<std::string> planned;
  const auto attempts = store->attempts(run);
  ASSERT_TRUE(attempts);
  for (const AttemptRecord& a : *attempts) {
    if (a.kind != "plan") continue;
    planned.push_back(a.strategy);
    if (a.candidate_key.empty()) continue;
    auto c = store->get_candidate(a.candidate_key);
    ASSERT_TRUE(c && c->has_value());
    EXPECT_EQ((*c)->provenance["kind"], "generated") << "the built-in implementer's schedule";
  }
  EXPECT_EQ(planned, (std::vector<std::string>{"vectorize_inner", "rfactor_reduction"}));
  EXPECT_EQ(chats(*server), 3u);
  EXPECT_EQ(store->llm_exchanges(run)->size(), 3u);
}

// Faults through `kforge optimize` (faults.json, see make_transcripts.py): 429 and 500 retried,
// a body that is not JSON and a reply cut short each asked again once, a reply with no code block
// asked again and the re-ask's hang past the timeout retried; then a 401 stops the run,
// resumable, and `--resume` (no LLM option repeated: the run stored them) finishes it.
TEST(OptimizeLlm, FaultsAreRetriedReAskedOrStopTheRunResumably) {
  auto server = serve("faults.json");
  std::vector<std::string> a =
      args(task_without_te(), "llm", settings_for(*server, "faults", 3), "faults");
  ProcessResult r = run_kforge(a, 300);
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_NE(r.out.find("refused the key (HTTP 401)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--resume"), std::string::npos) << r.out;
  std::string run;
  {
    auto store = open_store("faults");
    run = only_run(*store);
    EXPECT_EQ(store->get_run(run)->state, "stopped");
    EXPECT_EQ(journey(*store, run),
              (std::vector<std::string>{"baseline:ok", "plan:not_applicable", "plan:ok"}));
    auto ex = store->llm_exchanges(run);
    ASSERT_TRUE(ex);
    ASSERT_EQ(ex->size(), 7u);
    EXPECT_EQ((*ex)[0].attempts, 2) << "the 429 was retried";
    EXPECT_EQ((*ex)[1].response, "{not json") << "a reply that did not read, kept verbatim";
    EXPECT_NE((*ex)[1].error.find("not JSON"), std::string::npos) << (*ex)[1].error;
    EXPECT_EQ((*ex)[1].attempts, 0);
    EXPECT_NE((*ex)[2].response.find("\"length\""), std::string::npos);
    EXPECT_EQ((*ex)[5].attempts, 2) << "the hung attempt was retried";
    EXPECT_TRUE((*ex)[6].unanswered());
    EXPECT_NE((*ex)[6].error.find("HTTP 401"), std::string::npos) << (*ex)[6].error;
    const auto attempts = store->attempts(run);
    ASSERT_TRUE(attempts);
    EXPECT_NE((*attempts)[1].detail.dump().find("broke the contract twice"), std::string::npos)
        << (*attempts)[1].detail.dump();
    const auto summary =
        nlohmann::json::parse(read_file(temp_root() / "faults_out" / "summary.json").value());
    EXPECT_EQ(summary["best"]["origin"], "llm:implementer");
    EXPECT_FALSE(summary.contains("final")) << "a stopped run has no final run yet";
  }
  EXPECT_EQ(chats(*server), 10u);
  ProcessResult resumed = run_kforge(
      {"optimize", "--resume", run, "--store", (temp_root() / "faults.db").string()}, 300);
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  EXPECT_NE(resumed.out.find("(6 answered from the run's record)"), std::string::npos)
      << resumed.out;
  auto store = open_store("faults");
  EXPECT_EQ(store->get_run(run)->state, "finished");
  EXPECT_EQ(journey(*store, run), (std::vector<std::string>{"baseline:ok", "plan:not_applicable",
                                                            "plan:ok", "final:ok"}));
  EXPECT_EQ(store->llm_exchanges(run)->size(), 8u);
  EXPECT_EQ(chats(*server), 11u) << "only the planner's stop was asked again";
  EXPECT_EQ(server->exchanges_left(), 0u);
}

// A cost budget reached mid-run stops the run, resumable: resumed with the stored budget it
// stops again at once; with a larger one it goes on to the end.
TEST(OptimizeLlm, ACostBudgetReachedMidRunStopsTheRunResumably) {
  auto server = serve("budget.json");
  std::vector<std::string> a =
      args(task_without_te(), "llm", settings_for(*server, "budget"), "budget");
  a.insert(a.end(), {"--max-cost", "0.008"});
  ProcessResult r = run_kforge(a, 300);
  ASSERT_TRUE(r.ok()) << describe(r);
  auto store = open_store("budget");
  const std::string run = only_run(*store);
  EXPECT_EQ(store->get_run(run)->state, "stopped");
  const auto summary =
      nlohmann::json::parse(read_file(temp_root() / "budget_out" / "summary.json").value());
  EXPECT_NE(summary["stop_reason"].get<std::string>().find("cost budget"), std::string::npos)
      << summary["stop_reason"];
  EXPECT_EQ(summary["best"]["origin"], "llm:implementer");
  EXPECT_TRUE(fs::exists(temp_root() / "budget_out" / "best.cpp"));
  EXPECT_EQ(chats(*server), 2u) << "the spent budget asked nothing more";
  auto ex = store->llm_exchanges(run);
  ASSERT_EQ(ex->size(), 2u);
  EXPECT_NEAR((*ex)[0].cost + (*ex)[1].cost, 0.010, 1e-9);
  const std::string db = (temp_root() / "budget.db").string();
  ProcessResult again = run_kforge({"optimize", "--resume", run, "--store", db}, 300);
  ASSERT_TRUE(again.ok()) << describe(again);
  EXPECT_NE(again.out.find("cost budget"), std::string::npos) << again.out;
  EXPECT_EQ(chats(*server), 2u) << "the stored budget is still spent";
  EXPECT_EQ(store->get_run(run)->state, "stopped");
  ProcessResult more =
      run_kforge({"optimize", "--resume", run, "--store", db, "--max-cost", "1"}, 300);
  ASSERT_TRUE(more.ok()) << describe(more);
  EXPECT_EQ(store->get_run(run)->state, "finished");
  EXPECT_EQ(chats(*server), 7u);
  EXPECT_EQ(store->llm_exchanges(run)->size(), 7u);
  ProcessResult done = run_kforge({"optimize", "--resume", run, "--store", db});
  EXPECT_EQ(done.exit_code, 2) << "a finished run is not resumed";
}

}  // namespace
}  // namespace kf
