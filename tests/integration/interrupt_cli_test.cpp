// Ctrl-C (support/interrupt.h): `optimize` driven in a terminal through tmux shows its progress
// bar with an estimate of the time left, and Ctrl-C leaves a summary, a best kernel and a run
// marked interrupted that `--resume` finishes; `search` stopped by SIGINT the same way. `eval` in
// a terminal shows its timing loop's live line with an estimate, gone once it ends.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "support/fs.h"
#include "support/json_text.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::open_store_at;
using testing::run_kforge;

const fs::path kTask = testing::source_dir() / "tests/integration/written_source/task";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_interrupt");
}

// A tmux server of this test's own (its own socket), killed when the object goes.
class Tmux {
 public:
  explicit Tmux(const std::string& name) : socket_(name + std::to_string(::getpid())) {}
  ~Tmux() { (void)tmux({"kill-server"}); }
  ProcessResult tmux(std::vector<std::string> args) const {
    args.insert(args.begin(), {"tmux", "-L", socket_});
    auto r = run_process({.argv = args, .timeout_s = 20});
    KF_CHECK(r.has_value()) << r.error().message();
    return *r;
  }
  // The screen's text now.
  std::string screen() const { return tmux({"capture-pane", "-p", "-t", "kf"}).out; }
  // Waits until the screen shows every one of `texts`; false after `timeout_s`.
  bool wait_for(const std::vector<std::string>& texts, double timeout_s) const {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < end) {
      const std::string s = screen();
      bool all = true;
      for (const std::string& t : texts) all = all && s.find(t) != std::string::npos;
      if (all) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

 private:
  std::string socket_;
};

nlohmann::json summary_in(const fs::path& out) {
  auto text = read_file(out / "summary.json");
  KF_CHECK(text.has_value()) << "no summary.json in " << out;
  return nlohmann::json::parse(*text);
}

// Checks the run was left interrupted with its best kernel and summary; its evaluations.
int evaluations_of_interrupted(Store& store, const std::string& run, const fs::path& out) {
  EXPECT_EQ(store.get_run(run)->state, "interrupted");
  EXPECT_TRUE(fs::exists(out / "best.cpp"));
  const nlohmann::json s = summary_in(out);
  EXPECT_EQ(s["stop_reason"], "interrupted (SIGINT)");
  return s["evaluations"].get<int>();
}

// Each candidate judged at most once over the run's attempts (the interrupted part and the
// resumed part together), and no attempt records the interruption as a verdict.
void expect_nothing_judged_twice(Store& store, const std::string& run) {
  auto attempts = store.attempts(run);
  ASSERT_TRUE(attempts.has_value());
  std::set<std::string> judged;
  for (const AttemptRecord& a : *attempts) {
    EXPECT_EQ(a.detail.value("message", std::string()).find("interrupted"), std::string::npos)
        << a.to_json().dump();
    if (a.kind == "final" || a.kind == "confirm" || a.evaluation_key.empty()) continue;
    if (a.detail.value("reused", false)) continue;
    EXPECT_TRUE(judged.insert(a.evaluation_key).second) << "judged twice: " << a.candidate_key;
  }
}

TEST(InterruptCli, EvalInATerminalShowsTheTimingLoopsEtaAndClearsIt) {
  const fs::path exit_file = temp_root() / "eval.exit";
  Tmux t("kf_eval_");
  const std::string cmd = testing::kforge_bin() + " eval " + kTask.string() + " " +
                          (kTask / "../sources/a_unrolled.cpp").string() +
                          " --min-time 4 --no-reference; echo $? > " + exit_file.string() +
                          "; sleep 60";
  ASSERT_TRUE(t.tmux({"new-session", "-d", "-s", "kf", "-x", "180", "-y", "50", cmd}).ok());
  ASSERT_TRUE(t.wait_for({"... timing [", "% ", "elapsed  ETA ~"}, 120)) << t.screen();
  ASSERT_TRUE(t.wait_for({"verdict:  ok", "time:     median"}, 120)) << t.screen();
  EXPECT_EQ(t.screen().find("ETA"), std::string::npos) << "the live line is cleared\n"
                                                       << t.screen();
  for (int i = 0; i < 100 && !fs::exists(exit_file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(testing::log_text(exit_file), "0\n") << t.screen();
}

TEST(InterruptCli, OptimizeInATerminalShowsItsEtaAndCtrlCLeavesAResumableRun) {
  const fs::path db = temp_root() / "tmux.db", out = temp_root() / "tmux_out";
  const fs::path exit_file = temp_root() / "tmux.exit";
  Tmux t("kf_interrupt_");
  const std::string cmd = testing::kforge_bin() + " optimize " + kTask.string() +
                          " --budget-evals 14 --min-time 0.02 --store " + db.string() + " --out " +
                          out.string() + "; echo $? > " + exit_file.string() + "; sleep 60";
  ASSERT_TRUE(t.tmux({"new-session", "-d", "-s", "kf", "-x", "180", "-y", "50", cmd}).ok());
  // The bar: evaluations against the budget, and an estimate once one was measured.
  ASSERT_TRUE(t.wait_for({"[  3/14]", "/14 evaluations", "elapsed", "ETA ~"}, 240)) << t.screen();
  ASSERT_TRUE(t.tmux({"send-keys", "-t", "kf", "C-c"}).ok());
  ASSERT_TRUE(t.wait_for({"stopped: interrupted (SIGINT)", "--resume"}, 120)) << t.screen();
  for (int i = 0; i < 100 && !fs::exists(exit_file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(testing::log_text(exit_file), "130\n") << t.screen();

  auto store = open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  const int before = evaluations_of_interrupted(*store, run, out);
  EXPECT_GE(before, 3);
  EXPECT_LT(before, 14);
  ProcessResult shown = run_kforge({"show", run, "--store", db.string()});
  EXPECT_NE(shown.out.find("interrupted"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("--resume " + run), std::string::npos) << shown.out;

  ProcessResult resumed = run_kforge(
      {"optimize", "--resume", run, "--store", db.string(), "--out", out.string(), "-q"}, 600);
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  EXPECT_EQ(store->get_run(run)->state, "finished");
  const nlohmann::json done = summary_in(out);
  EXPECT_NE(done["stop_reason"], "interrupted (SIGINT)");
  EXPECT_GE(done["reused_evaluations"].get<int>(), before - 1) << done.dump();
  expect_nothing_judged_twice(*store, run);
}

TEST(InterruptCli, SearchStoppedBySigintIsInterruptedAndResumes) {
  const fs::path db = temp_root() / "search.db", out = temp_root() / "search_out";
  const fs::path log = temp_root() / "search.log";
  testing::KforgeChild child(
      {"search", kTask.string(), "--policy", "beam", "--budget-evals", "12", "--min-time", "0.02",
       "--no-final", "--store", db.string(), "--out", out.string()},
      log);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (testing::log_text(log).find("[  3/") == std::string::npos &&
         std::chrono::steady_clock::now() < end && !child.ended())
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_FALSE(child.ended()) << testing::log_text(log);
  child.signal(SIGINT);
  while (!child.ended() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(child.ended());
  ASSERT_TRUE(WIFEXITED(child.status())) << testing::log_text(log);
  EXPECT_EQ(WEXITSTATUS(child.status()), 130) << testing::log_text(log);
  // Not a terminal: progress lines, no bar.
  EXPECT_EQ(testing::log_text(log).find("ETA"), std::string::npos) << testing::log_text(log);

  auto store = open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  const int before = evaluations_of_interrupted(*store, run, out);

  // The beam's path follows the measurements, so the search may end before its budget.
  ProcessResult resumed =
      run_kforge({"search", "--resume", run, "--store", db.string(), "--out", out.string()}, 600);
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  EXPECT_EQ(store->get_run(run)->state, "finished");
  const nlohmann::json done = summary_in(out);
  EXPECT_NE(done["stop_reason"], "interrupted (SIGINT)");
  EXPECT_GE(done["evaluations"].get<int>(), before);
  EXPECT_LE(done["evaluations"].get<int>(), 12);
  EXPECT_GE(done["reused_evaluations"].get<int>(), before - 1) << done.dump();
  expect_nothing_judged_twice(*store, run);
}

}  // namespace
}  // namespace kf
