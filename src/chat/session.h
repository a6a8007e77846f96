// `kforge chat`: a person steering one run's search graph, one command at a time. The person is
// one more brain: every step they take (a plan they chose, a kernel they edited, a knob they set)
// is a node of the run's graph with proposer "human", stored as the run's attempts like a
// search's nodes, so `kforge show`, `kforge report` and a later session read the same graph.
//
//   auto s = chat::Session::open({.task_dir = "bench/jaxbench/12_rmsnorm"}, store);
//   Expected<std::string> answer = (*s)->run("plan");      // the planner's ranked proposals
//   answer = (*s)->run("apply 1");                         // judged: a node, proposer human
//   (*s)->close();                                         // the run's summary and best.cpp
//
// Commands (help lists them): plan, apply N | apply TEXT, edit, eval [NODE], profile, tune
// [STRATEGY.KNOB=VALUE], explain, history, goto NODE, diff A B, search POLICY N, export [DIR],
// status, help, quit. Nodes are numbered in the order they joined the graph (#1 is the first
// candidate); a NODE is that number or a prefix of its candidate key.
//
// Who proposes. A plan chosen with `apply`, an edit and a knob set by hand are the person's
// (proposer "human"; a chosen plan keeps its planner in the detail). `tune` without a knob runs
// the autotuner's neighbourhood and `search` hands the wheel to a policy: their nodes are the
// team's (proposer "builtin", the policy named), and the session takes the wheel back at the
// best node when they end.
//
// Continuing. `--run RUN` continues a chat run: its nodes are rebuilt from the stored attempts,
// candidates and evaluations (nothing is judged again), and new attempts are numbered after
// them. Measurements follow the run log's rules (modes/run_log.h): a candidate measured before
// on this machine is read back, not judged again.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agents/roles.h"
#include "modes/events.h"
#include "modes/optimize.h"
#include "modes/run_env.h"
#include "modes/starting_point.h"
#include "search/graph.h"
#include "search/space.h"
#include "store/store.h"

namespace kf::chat {

struct ChatOptions {
  std::filesystem::path task_dir;
  std::string run;  // a chat run to continue ("": a new run)
  std::string brain = "builtin";
  std::filesystem::path sources;  // the files brain's folder
  int threads = 1;
  std::string backend = "cpu", target, cxx = "g++";
  uint64_t seed = 1;
  double min_time_s = 0.3, final_min_time_s = 1.0;
  StartingPoint from;  // the first candidate (empty: the implementer's first)
  agents::StrategyFilter strategies;
  agents::KnobPins pins;
  // The editor `edit` runs on a file (a shell command, the file's path appended): "" means
  // $VISUAL, then $EDITOR, then vi.
  std::string editor;
  // Whether the editor may read the terminal (false: its stdin is /dev/null, so an editor
  // started from a piped session cannot eat the commands that follow).
  bool editor_stdin = true;
  std::filesystem::path out_dir;  // "": default_output_dir(RUN)
  // As optimize's (RunEnv::options_of): a recording to replay instead of judging (tests), one to
  // append every judged result to, and measurements of this run's own.
  std::string simulate, record;
  double sim_latency_s = 0;
  bool remeasure = false;
  std::function<void(const std::string&)> progress;  // measurement lines, as optimize prints
  EventSink* events = nullptr;
  std::shared_ptr<agents::llm_brain::Session> llm;
  OptimizeOptions::LlmArgs llm_args;  // stored with the run, so that --run asks the same model

  nlohmann::json to_json() const;
  static Expected<ChatOptions> from_json(const nlohmann::json& j);
};

class Session {
 public:
  // Starts a new chat run (its first candidate judged) or continues `o.run`. Fails when the task
  // or the team cannot be set up, the first candidate fails, or the run is not a chat run.
  static Expected<std::unique_ptr<Session>> open(const ChatOptions& o, Store& store);
  ~Session();

  // Runs one command line and returns its answer for the person. An error is a one-line message
  // about that command (an unknown command, a node that does not exist, a plan that does not
  // apply); the session goes on after it.
  Expected<std::string> run(const std::string& line);
  bool quit_requested() const { return quit_; }
  // A person's edit given as text (the browser's editor): judged as `edit` judges a file's,
  // `name` its origin ("edit-4.cpp").
  Expected<std::string> edit_source(const std::string& text, bool schedule,
                                    const std::string& name);
  // Catches up with writes another session made to the run since this one last read it (a
  // terminal and a browser taking turns): the graph is rebuilt from the store when they moved.
  Status sync();
  // Asks a running `search` to hand the wheel back after the evaluation in flight; safe to call
  // from another thread (the browser's Stop).
  void request_stop() { stop_ = true; }
  // The run's summary, its best.cpp and its state ("finished"; `--run` continues it anyway).
  Status close();

  const std::string& run_id() const { return run_id_; }
  // The task, the current node and the best: time, % roofline, speedups over the reference and
  // the library.
  std::string status() const;
  // The command names, for completion.
  static std::vector<std::string> command_names();

  // Read access for tests and the browser.
  const search::SearchGraph& graph() const { return graph_; }
  const std::string& current() const { return current_; }

 private:
  struct Command;
  Session(ChatOptions o, Store& store, std::string run_id, bool continuing);
  Status setup();
  Status start_new();
  Status rebuild();

  // Judges a proposal's child (or reads it back) and adds it to the graph; a child already in
  // the graph becomes one more edge into it. The node becomes the current one when it passed.
  Expected<search::Node*> judge(search::Proposal p,
                                const nlohmann::json& extra = nlohmann::json::object());
  // The reference's and the library's median times (0: unknown): the run log's anchors, or on a
  // continued run the first stored result that timed them.
  std::pair<double, double> reference_times() const;
  Expected<std::string> run_editor(const std::filesystem::path& file) const;
  EvalOptions eval_options(int threads, const std::string& kind) const;
  Status publish();  // the run's best and summary in the store, for `runs` and the browser
  nlohmann::json summary() const;
  search::Node* node(const std::string& ref);  // a number or a key prefix
  int number_of(const std::string& key) const;
  std::string node_line(const search::Node& n) const;
  std::string result_line(const search::Node& n) const;

  // The commands (chat_commands.cpp).
  Expected<std::string> cmd_help(const std::vector<std::string>& args);
  Expected<std::string> cmd_status(const std::vector<std::string>& args);
  Expected<std::string> cmd_plan(const std::vector<std::string>& args);
  Expected<std::string> cmd_apply(const std::vector<std::string>& args);
  Expected<std::string> cmd_edit(const std::vector<std::string>& args);
  Expected<std::string> cmd_eval(const std::vector<std::string>& args);
  Expected<std::string> cmd_profile(const std::vector<std::string>& args);
  Expected<std::string> cmd_tune(const std::vector<std::string>& args);
  Expected<std::string> cmd_explain(const std::vector<std::string>& args);
  Expected<std::string> cmd_history(const std::vector<std::string>& args);
  Expected<std::string> cmd_goto(const std::vector<std::string>& args);
  Expected<std::string> cmd_diff(const std::vector<std::string>& args);
  Expected<std::string> cmd_search(const std::vector<std::string>& args);
  Expected<std::string> cmd_export(const std::vector<std::string>& args);
  Expected<std::string> cmd_quit(const std::vector<std::string>& args);
  static const std::vector<Command>& commands();

  ChatOptions o_;
  Store& store_;
  std::string run_id_;
  bool continuing_;
  ConsoleReporter console_;
  EventSinks events_;
  std::unique_ptr<RunEnv> env_;
  std::unique_ptr<RunLog> log_;
  std::unique_ptr<search::SearchSpace> space_;
  search::SearchGraph graph_;
  std::map<std::string, RunResult> results_;
  std::map<std::string, agents::Evidence> profiles_;  // by node key: `profile`'s findings
  std::map<std::string, nlohmann::json> details_;     // by node key: its attempt's detail
  std::string root_, current_;
  std::vector<search::Proposal> proposals_;  // the last `plan`'s, for `apply N`
  std::string proposals_for_;                // the node they were made for
  double started_ = 0;
  bool quit_ = false;
  std::atomic<bool> stop_{false};
};

}  // namespace kf::chat
