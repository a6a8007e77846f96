// `kforge chat` driven through a pipe, as a script or a test drives it: every step a person
// takes is a node of the run's graph in the store with proposer "human", the team's steps are
// "builtin", a later session continues the same graph, and bad commands are one-line errors
// that lose nothing. (The interactive screen, with completion, is driven through tmux.)
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "llm/replay_server.h"
#include "llm/transcript.h"
#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;

const fs::path kTask = testing::source_dir() / "tests/golden/tasks/f64_layernorm";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_chat_cli");
}

// `kforge chat ARGS...` with `script` on its stdin.
ProcessResult chat(std::vector<std::string> args, const std::string& script) {
  args.insert(args.begin(), "chat");
  return testing::run_kforge_with_input(args, script, 600);
}

// The run's judged nodes, in order: each attempt of kind "chat" with a move, not a duplicate.
std::vector<AttemptRecord> nodes_of(Store& store, const std::string& run) {
  auto attempts = store.attempts(run);
  KF_CHECK(attempts.has_value());
  std::vector<AttemptRecord> out;
  for (const AttemptRecord& a : *attempts)
    if (a.kind == "chat" && a.detail.contains("move") && a.verdict != "duplicate") out.push_back(a);
  return out;
}

std::string proposer(const AttemptRecord& a) {
  return a.detail["move"].value("proposer", std::string());
}

TEST(ChatCli, AScriptedSessionStoresEveryStepAsANodeWithItsProposerAndALaterOneContinuesIt) {
  const fs::path dir = temp_root() / "scripted", db = dir / "runs.db", out = dir / "exported";
  fs::create_directories(dir);
  // A scripted $EDITOR: the person adds a line to the kernel.
  const fs::path editor = dir / "editor.sh";
  ASSERT_TRUE(write_file_atomic(editor, "#!/bin/sh\nsed -i '1i // tuned by hand' \"$1\"\n").ok());
  fs::permissions(editor, fs::perms::owner_all);
  ProcessResult r = chat(
      {kTask.string(), "--store", db.string(), "--editor", editor.string(), "--min-time", "0.05"},
      "plan 3\napply 1\nedit\neval\nsearch greedy 2\nhistory\ndiff 1 2\n"
      "export " +
          out.string() + "\nquit\n");
  ASSERT_TRUE(r.ok()) << describe(r);
  // A transcript: each command echoed, then its answer.
  for (const char* echoed : {"> plan 3", "> apply 1", "> edit", "> eval", "> search greedy 2"})
    EXPECT_NE(r.out.find(echoed), std::string::npos) << echoed << "\n" << r.out;
  EXPECT_NE(r.out.find("proposals for #1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expected "), std::string::npos) << "the planner's reasons\n" << r.out;
  EXPECT_NE(r.out.find("ok on fresh inputs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+++ #2"), std::string::npos) << "diff 1 2\n" << r.out;
  EXPECT_TRUE(fs::exists(out / "CMakeLists.txt")) << r.out;

  auto store = testing::open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  auto rec = store->get_run(run);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->mode, "chat");
  EXPECT_EQ(rec->state, "finished");
  std::vector<AttemptRecord> nodes = nodes_of(*store, run);
  ASSERT_GE(nodes.size(), 4u) << "root, the applied plan, the edit, and the search's nodes";
  EXPECT_EQ(proposer(nodes[0]), "builtin") << "the implementer's first candidate";
  EXPECT_EQ(proposer(nodes[1]), "human") << "a plan the person chose";
  EXPECT_EQ(nodes[1].detail.value("planned_by", ""), "builtin");
  EXPECT_EQ(nodes[1].detail["parent"], nodes[0].candidate_key);
  EXPECT_EQ(proposer(nodes[2]), "human") << "the edit";
  EXPECT_EQ(nodes[2].detail["move"]["kind"], "human");
  EXPECT_EQ(nodes[2].detail["parent"], nodes[1].candidate_key);
  auto edited = store->get_candidate(nodes[2].candidate_key);
  ASSERT_TRUE(edited && edited->has_value());
  EXPECT_EQ((*edited)->provenance["kind"], "edited");
  EXPECT_EQ((*edited)->source.rfind("// tuned by hand\n", 0), 0u);
  for (size_t i = 3; i < nodes.size(); ++i) {
    EXPECT_EQ(proposer(nodes[i]), "builtin") << "the search's nodes are the team's";
    EXPECT_EQ(nodes[i].detail.value("policy", ""), "greedy");
  }
  // `eval` measured again, and is not a node.
  auto attempts = store->attempts(run);
  ASSERT_TRUE(attempts.has_value());
  EXPECT_EQ(std::count_if(attempts->begin(), attempts->end(),
                          [](const AttemptRecord& a) { return a.kind == "confirm"; }),
            1);
  // The planner's proposals are a message to the person.
  auto messages = store->messages(run);
  ASSERT_TRUE(messages.has_value());
  EXPECT_TRUE(std::any_of(messages->begin(), messages->end(), [](const MessageRecord& m) {
    return m.type == "Plan" && m.to_role == "human";
  }));

  // A later session continues the graph: nothing judged again, new nodes after the old ones.
  ProcessResult again =
      chat({"--run", run.substr(0, run.size() - 2), "--store", db.string(), "--min-time", "0.05"},
           "history\ngoto 1\nplan 2\napply 2\nquit\n");
  ASSERT_TRUE(again.ok()) << describe(again);
  EXPECT_NE(again.out.find("#" + std::to_string(nodes.size()) + " "), std::string::npos)
      << "history lists the stored nodes\n"
      << again.out;
  std::vector<AttemptRecord> after = nodes_of(*store, run);
  ASSERT_GE(after.size(), nodes.size()) << again.out << again.err;
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(after[i].seq, nodes[i].seq);
    EXPECT_EQ(after[i].candidate_key, nodes[i].candidate_key);
  }
  // `apply 2` from node 1 is a new node or a second path to one already judged.
  auto all = store->attempts(run);
  ASSERT_TRUE(all.has_value());
  EXPECT_GT(all->size(), attempts->size()) << again.out << again.err;
  EXPECT_EQ(proposer(all->back()), "human");
  EXPECT_EQ(all->back().detail["parent"], nodes[0].candidate_key);

  // `kforge show` prints the chat's graph as a tree, the person's nodes marked.
  ProcessResult show = testing::run_kforge({"show", run, "--store", db.string()});
  ASSERT_TRUE(show.ok()) << describe(show);
  EXPECT_NE(show.out.find("search graph:"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("[human"), std::string::npos) << show.out;
}

TEST(ChatCli, BadCommandsAreOneLineErrorsAndLoseNothing) {
  const fs::path dir = temp_root() / "bad", db = dir / "runs.db";
  fs::create_directories(dir);
  ProcessResult r =
      chat({kTask.string(), "--store", db.string(), "--editor", "false", "--min-time", "0.05"},
           "frobnicate\napply 1\ngoto 99\ngoto\ndiff 1 77\ntune x.y=z\n"
           "tune nosuch.knob=4\nsearch nosuch 3\nsearch greedy many\nedit\n"
           "apply \xff\xfe\x01 write it faster\n\n   \nhistory\n");
  // The end of the input ends the session as `quit` does.
  ASSERT_TRUE(r.ok()) << describe(r);
  for (const char* e :
       {"unknown command 'frobnicate'", "run `plan` first", "no node 99", "goto NODE",
        "no such node", "is not a whole number", "has no step 'nosuch'", "policy",
        "N from 1 to 1000", "the editor (false) failed", "cannot carry out free text"})
    EXPECT_NE(r.err.find(e), std::string::npos) << e << "\n" << r.err;
  auto store = testing::open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  EXPECT_EQ(nodes_of(*store, run).size(), 1u) << "nothing but the first candidate was judged";
  EXPECT_NE(r.out.find("#1 "), std::string::npos) << "history still answers\n" << r.out;
  auto rec = store->get_run(run);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->state, "finished");
  EXPECT_FALSE(rec->best_candidate.empty());
}

// tmux on a socket of the test's own: `tmux ARGS...`.
ProcessResult tmux(const fs::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"tmux", "-S", (dir / "tmux.sock").string()});
  auto r = run_process({.argv = args, .timeout_s = 30});
  KF_CHECK(r.has_value()) << r.error().message();
  return *r;
}

// Polls the pane until its text holds `what`; returns the last text seen.
std::string wait_for_pane(const fs::path& dir, const std::string& what, double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string text;
  while (std::chrono::steady_clock::now() < end) {
    text = tmux(dir, {"capture-pane", "-p", "-t", "chat"}).out;
    if (text.find(what) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return text;
}

TEST(ChatCli, OnATerminalCommandsCompleteWithTabAndTheSessionEndsWithQuit) {
  const fs::path dir = temp_root() / "tmux", db = dir / "runs.db";
  fs::create_directories(dir);
  const std::string cmd = testing::kforge_bin() + " chat " + kTask.string() + " --store " +
                          db.string() + " --min-time 0.05; echo chat-ended-$?; sleep 30";
  ProcessResult start =
      tmux(dir, {"new-session", "-d", "-s", "chat", "-x", "160", "-y", "50", cmd});
  ASSERT_TRUE(start.ok()) << describe(start);
  // (capture-pane drops a line's trailing spaces: the prompt reads "kforge>")
  std::string pane = wait_for_pane(dir, "kforge>", 120);
  ASSERT_NE(pane.find("kforge>"), std::string::npos) << pane;
  // "hist" and Tab complete to the command's name; Enter runs it.
  tmux(dir, {"send-keys", "-t", "chat", "hist", "Tab"});
  pane = wait_for_pane(dir, "kforge> history", 10);
  EXPECT_NE(pane.find("kforge> history"), std::string::npos) << pane;
  tmux(dir, {"send-keys", "-t", "chat", "Enter"});
  pane = wait_for_pane(dir, "(> the current node", 10);
  EXPECT_NE(pane.find(">#1 "), std::string::npos) << pane;
  // Line editing: a typo mended with the arrow keys before Enter.
  tmux(dir, {"send-keys", "-t", "chat", "qit", "Left", "Left", "u", "Enter"});
  pane = wait_for_pane(dir, "chat-ended-", 30);
  EXPECT_NE(pane.find("chat-ended-0"), std::string::npos) << pane;
  tmux(dir, {"kill-server"});
  auto store = testing::open_store_at(db);
  auto rec = store->get_run(testing::only_run_in(*store));
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->state, "finished");
}

TEST(ChatCli, WithAnLlmImplementerAFreeTextInstructionBecomesTheModelsKernel) {
  const fs::path dir = temp_root() / "llm", db = dir / "runs.db";
  fs::create_directories(dir);
  auto t = llm::read_transcript(testing::source_dir() / "tests/integration/llm/chat.json");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  auto server = llm::ReplayServer::start(*t);
  ASSERT_TRUE(server.has_value()) << server.error().message();
  const fs::path cfg = dir / "kforge.toml";
  ASSERT_TRUE(write_file_atomic(cfg, "[llm]\nbase_url = \"" + (*server)->base_url() +
                                         "\"\nmodel = \"coder\"\ntimeout_s = 30\n")
                  .ok());
  const fs::path task = testing::source_dir() / "tests/integration/written_source/task";
  ProcessResult r = chat({task.string(), "--brain", "implementer=llm", "--llm-config", cfg.string(),
                          "--store", db.string(), "--min-time", "0.05"},
                         "apply use eight partial sums per row\nquit\n");
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_NE(r.out.find("llm: 1 call"), std::string::npos) << "the usage line\n" << r.out;
  // The instruction reached the model as the implementer's plan.
  size_t asked = 0;
  for (const auto& q : (*server)->received())
    if (q.path.ends_with("/chat/completions")) {
      ++asked;
      EXPECT_EQ(q.role_tag, "implementer");
      EXPECT_NE(q.body.find("eight partial sums per row"), std::string::npos);
    }
  EXPECT_EQ(asked, 1u);
  auto store = testing::open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  std::vector<AttemptRecord> nodes = nodes_of(*store, run);
  ASSERT_EQ(nodes.size(), 2u) << r.out << r.err;
  EXPECT_EQ(proposer(nodes[1]), "human") << "the person's instruction";
  EXPECT_EQ(nodes[1].detail["move"]["kind"], "llm");
  EXPECT_EQ(nodes[1].verdict, "ok") << r.err;
  auto c = store->get_candidate(nodes[1].candidate_key);
  ASSERT_TRUE(c && c->has_value());
  EXPECT_EQ((*c)->provenance["kind"], "written") << "the model wrote it";
  auto exchanges = store->llm_exchanges(run);
  ASSERT_TRUE(exchanges.has_value());
  EXPECT_EQ(exchanges->size(), 1u) << "the exchange is stored with the run";
}

TEST(ChatCli, ContinuingARunThatIsNotAChatIsAClearError) {
  const fs::path dir = temp_root() / "not_chat", db = dir / "runs.db";
  fs::create_directories(dir);
  ProcessResult opt = testing::run_kforge(
      {"optimize", kTask.string(), "--budget-evals", "1", "--no-profile", "--min-time", "0.05",
       "--store", db.string(), "--out", (dir / "out").string(), "-q"},
      300);
  ASSERT_TRUE(opt.ok()) << describe(opt);
  auto store = testing::open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  ProcessResult r = chat({"--run", run, "--store", db.string()}, "quit\n");
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("was made by `kforge optimize`"), std::string::npos) << r.err;
  ProcessResult none = chat({"--store", db.string()}, "");
  EXPECT_EQ(none.exit_code, 2) << describe(none);
}

}  // namespace
}  // namespace kf
